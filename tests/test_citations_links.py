"""No unretrieved URL outside the citations either: a link in the prose reaches the reader
just like a footnote does, so it is held to the same rule.

Inline links, autolinks, bare URLs, reference links, Perplexity ``[N](url)``,
raw HTML and protected definitions: a URL stays only when retrieval returned it.
Each removed URL is named in a warning and counted in ``links_removed``.
"""

from __future__ import annotations

import re

import pytest

from sourcedesk.core.citations import reconcile, tidy
from sourcedesk.core.citations.bare_urls import find_bare_urls
from sourcedesk.core.net.hosts import excluded_by

RETRIEVED = [
    {
        "marker": "E1",
        "url": "https://nats.io/about",
        "title": "About NATS",
        "summary": "NATS is an open source messaging system for cloud native applications.",
    },
    {
        "marker": "E2",
        "url": "https://en.wikipedia.org/wiki/NATS_(company)",
        "title": "NATS (company)",
        "summary": "NATS Holdings provides air traffic control services in the United Kingdom.",
    },
]
WEB = [
    {
        "url": "https://www.techcrunch.com/2022/03/01/synadia-raises",
        "title": "Synadia raises $25M",
        "snippet": "Synadia raised a $25M Series A led by Forbion.",
    },
    {"url": "https://nats.io/download", "title": "Download NATS", "snippet": "Binaries for every platform."},
]


def run(draft: str, sources=RETRIEVED, search_results=WEB, **kw):
    result = reconcile(draft, sources, search_results=search_results, **kw)
    # every result is finished: tidy, and reconciling it again changes nothing and removes nothing
    assert tidy(result.text) == result.text
    again = reconcile(result.text, sources, search_results=search_results, **kw)
    assert again.text == result.text and again.report.links_removed == 0
    return result


def warnings(result) -> list[str]:
    return result.report.to_json()["warnings"]


def test_an_unretrieved_inline_link_becomes_its_text_and_a_retrieved_one_stays():
    result = run(
        "NATS is a messaging system, see [the docs](https://nats.io/about) "
        "and [the review](https://fabricated.io/docs).\n"
    )
    assert result.text == ("NATS is a messaging system, see [the docs](https://nats.io/about) and the review.\n")
    assert result.report.links_removed == 1
    assert warnings(result) == [
        'removed the link to https://fabricated.io/docs (never retrieved); kept its text "the review"'
    ]
    assert [w.code for w in result.report.warnings] == ["unretrieved_link"]


def test_autolinks_and_bare_urls_go_with_the_space_and_brackets_around_them():
    draft = (
        "Per <https://bloomberg.com/news/fake> the company grew (https://x.io/y) and "
        "https://bloomberg.com/news/fake2 says so. See www.fabricated.io/page too.\n"
    )
    result = run(draft)
    assert result.text == "Per the company grew and says so. See too.\n"
    assert result.report.links_removed == 4
    assert warnings(result) == [
        f"removed {u} (never retrieved)"
        for u in (
            "https://bloomberg.com/news/fake",
            "https://x.io/y",
            "https://bloomberg.com/news/fake2",
            "www.fabricated.io/page",
        )
    ]


def test_links_to_retrieved_pages_become_the_urls_retrieval_returned():
    draft = (
        "See <https://nats.io/about>, https://en.wikipedia.org/wiki/NATS_(company), www.nats.io/about/ "
        "and [download](http://nats.io/download?utm_source=x).\n"
    )
    result = run(draft)
    assert result.text == (
        "See <https://nats.io/about>, https://en.wikipedia.org/wiki/NATS_(company), https://nats.io/about "
        "and [download](https://nats.io/download).\n"
    )
    assert result.report.links_removed == 0
    assert run(result.text).text == result.text


def test_credentials_and_variants_of_a_retrieved_page_never_reach_the_note():
    result = run(
        "See [about](https://editor:pw@m.nats.io/about/?utm_source=x) and "
        '<a href="https://amp.nats.io/download/amp?amp=1">download</a>.\n'
    )
    assert result.text == 'See [about](https://nats.io/about) and <a href="https://nats.io/download">download</a>.\n'
    assert "pw@" not in result.text


def test_an_image_of_a_retrieved_page_keeps_no_credentials_or_tracking():
    result = run('A chart: ![chart](https://editor:pw@nats.io/about/?utm_source=x "NATS").\n')
    assert result.text == 'A chart: ![chart](https://nats.io/about "NATS").\n'


def test_a_list_item_or_paragraph_that_was_only_a_url_goes_with_its_line():
    draft = "Links we found:\n\n- https://fake.io/a\n- a real item\n- **<https://fake.io/b>**\n\nhttps://fake.io/c\n\nEnd.\n"
    result = run(draft)
    assert result.text == "Links we found:\n\n- a real item\n\nEnd.\n"
    assert result.report.links_removed == 3


def test_urls_separated_by_commas_go_as_one():
    result = run("Competitors (https://a.io/x, https://b.io/y) are larger.\n")
    assert result.text == "Competitors are larger.\n"
    assert result.report.links_removed == 2


def test_words_on_both_sides_of_a_removed_url_stay_apart():
    result = run("The site(https://fake.io)lists prices and the<https://fake.io/b>report too.\n")
    assert result.text == "The site lists prices and the report too.\n"


def test_code_spans_and_code_blocks_are_never_touched():
    draft = "Run `curl https://fake.io/x` first.\n\n```\nhttps://fake.io/y\n```\n\n    https://fake.io/z\n"
    result = run(draft)
    assert result.text == draft and result.report.links_removed == 0


def test_reference_links_to_an_unretrieved_url_become_their_text_and_the_definition_goes():
    draft = (
        "NATS grew [fast][press] and [slow][docs], see also [press].\n\n"
        '[press]: https://fabricated.io/a "Press"\n[docs]: https://nats.io/about\n'
    )
    result = run(draft)
    assert result.text == ("NATS grew fast and [slow][docs], see also press.\n\n[docs]: https://nats.io/about\n")
    assert result.report.links_removed == 1  # one URL: the definition's warning speaks for its links
    assert warnings(result) == [
        "removed the link reference definition [press]: https://fabricated.io/a "
        "(never retrieved); links through it became their text"
    ]


def test_a_url_in_a_link_title_makes_the_link_go():
    result = run('See [the docs](https://nats.io/about "mirror at https://fabricated.io/m").\n')
    assert result.text == "See the docs.\n"


def test_an_image_with_an_unretrieved_source_becomes_its_alt_text():
    result = run("Revenue chart: ![ARR by quarter](https://fabricated.io/chart.png)\n")
    assert result.text == "Revenue chart: ARR by quarter\n"
    assert (
        'removed the image to https://fabricated.io/chart.png (never retrieved); kept its text "ARR by quarter"'
        in warnings(result)
    )


def test_urls_in_inline_notes_and_raw_html_are_screened_too():
    result = run(
        'Note ^[see https://fake.io/n and [x](https://nats.io/about)] and <a href="https://fake.io/h">h</a>.\n'
    )
    # the attribute carrying the unretrieved URL goes whole; the tag and its text stay
    assert result.text == "Note ^[see and [x](https://nats.io/about)] and <a>h</a>.\n"
    assert result.report.links_removed == 2


def test_table_cells_keep_the_table():
    result = run("| Source | Note |\n|---|---|\n| https://fake.io/c | x |\n")
    assert result.text == "| Source | Note |\n|---|---|\n|  | x |\n"


def test_a_link_to_a_rejected_domain_is_removed_like_an_unretrieved_one():
    web = [*WEB, {"url": "https://www.nats.aero/about", "title": "NATS air traffic"}]
    draft = "NATS runs UK air traffic, see [their site](https://www.nats.aero/about).\n"
    assert run(draft, search_results=web).text == draft
    rejected = run(draft, search_results=web, exclude=lambda u: excluded_by(u, ["nats.aero"]))
    assert rejected.text == "NATS runs UK air traffic, see their site.\n"


def test_empty_ground_truth_keeps_no_url():
    result = run("See [the docs](https://nats.io/about) and https://nats.io/about.\n", sources=[], search_results=[])
    assert result.text == "See the docs and.\n"


# -- Perplexity-style [N](url): the citation it is --------------------------------------------


def test_a_numeric_link_is_a_bare_citation_decided_by_its_url():
    draft = (
        "NATS is an open source messaging system [1](https://fabricated.io/x). "
        "Synadia raised $25M [2](https://www.techcrunch.com/2022/03/01/synadia-raises/). "
        "Margins are above eighty percent [3](https://fabricated.io/margins).\n"
    )
    result = run(draft)
    assert result.body == (
        "NATS is an open source messaging system. [^E1] Synadia raised $25M. [^1] Margins are above eighty percent.\n"
    )
    rows = {c["key"]: c for c in result.report.to_json()["citations"]}
    assert (rows["1"]["status"], rows["1"]["cited_url"], rows["1"]["resolved_url"]) == (
        "substituted",
        "https://fabricated.io/x",
        "https://nats.io/about",
    )
    assert rows["2"]["status"] == "verified"
    assert rows["3"]["status"] == "dropped" and rows["3"]["cited_url"] == "https://fabricated.io/margins"
    assert "fabricated.io" not in result.text
    assert result.report.links_removed == 0  # citations are reported as citations


def test_a_numeric_link_with_a_retrieved_url_is_verified_even_past_the_search_results():
    result = run("NATS is a messaging system [7](https://nats.io/about).\n")
    assert result.body == "NATS is a messaging system. [^E1]\n"
    assert result.report.to_json()["citations"][0]["status"] == "verified"


# -- protected keys (rule 3) ------------------------------------------------------------------


def test_a_protected_definition_keeps_its_text_but_not_an_unretrieved_url():
    draft = (
        "Revenue grew 40% [^internal].\n\n[^internal]: Internal memo, see https://bloomberg.com/news/invented "
        "and [the plan](https://bloomberg.com/x), p. 4\n"
    )
    result = run(draft)
    assert result.text == "Revenue grew 40%. [^internal]\n\n[^internal]: Internal memo, see and the plan, p. 4\n"
    assert result.report.to_json()["citations"][0]["status"] == "protected"
    assert warnings(result) == [
        "removed https://bloomberg.com/news/invented from the protected definition [^internal] (never retrieved)",
        "removed the link to https://bloomberg.com/x from the protected definition [^internal] (never retrieved); "
        'kept its text "the plan"',
    ]


def test_a_protected_definition_that_was_only_a_url_stays_defined():
    result = run("Revenue grew [^internal].\n\n[^internal]: https://bloomberg.com/news/invented\n")
    assert result.text == "Revenue grew. [^internal]\n\n[^internal]:\n"
    assert result.report.links_removed == 1


def test_a_protected_definition_may_cite_a_retrieved_url():
    draft = "Revenue grew [^deck].\n\n[^deck]: Board deck, slide 3; public version https://nats.io/about\n"
    assert (
        run(draft).text
        == "Revenue grew. [^deck]\n\n[^deck]: Board deck, slide 3; public version https://nats.io/about\n"
    )


# -- the report --------------------------------------------------------------------------------


def test_links_removed_is_an_extra_json_key_and_placeholders_are_counted():
    result = run("See https://example.com/placeholder and [x](https://fabricated.io/a).\n")
    report = result.report.to_json()
    assert report["links_removed"] == 2 and result.report.placeholder_urls == 1
    assert list(report)[:8] == [
        "verified",
        "retitled",
        "substituted",
        "dropped",
        "out_of_range",
        "protected",
        "citations",
        "warnings",
    ]


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("see https://en.wikipedia.org/wiki/NATS_(company).", ["https://en.wikipedia.org/wiki/NATS_(company)"]),
        ("(see https://nats.io/about)", ["https://nats.io/about"]),
        ("a https://x.org/a_(b)_(c) b", ["https://x.org/a_(b)_(c)"]),
        ('quoted "https://x.org/a", then', ["https://x.org/a"]),
        ("**https://x.org/b**", ["https://x.org/b"]),
        ("glued:https://x.org/c[1] and www.x.org/d? and awww.x.org", ["https://x.org/c", "www.x.org/d"]),
        ("https:// alone and http://", []),
    ],
)
def test_bare_urls_end_where_gfm_ends_them(text, urls):
    assert [text[a:b] for a, b in find_bare_urls(text)] == urls


def test_no_unretrieved_url_is_left_anywhere_in_a_mixed_draft():
    draft = (
        "Synadia [raised](https://fabricated.io/a) $25M [1](https://fabricated.io/b) "
        "per <https://fabricated.io/c> and https://fabricated.io/d.\n\n"
        "> Quote (www.fabricated.io/e)\n\n## Heading https://fabricated.io/f\n\n"
        "[^deck]: Deck https://fabricated.io/g\n\n[r]: https://fabricated.io/h\n"
    )
    result = run(draft)
    assert "fabricated" not in result.text
    assert result.report.links_removed == 7
    assert re.findall(r"fabricated\.io/(\w)", " ".join(warnings(result))) == list("acdefgh")


@pytest.mark.parametrize("target", ["//evil.io/x", "https:/evil.io/y", "https:\\\\evil.io/z", "&#104;ttps://evil.io/e"])
def test_targets_a_browser_opens_as_web_addresses_are_screened_too(target):
    result = run(f"NATS is fast, see [the benchmark]({target}).\n")
    assert result.body == "NATS is fast, see the benchmark.\n"
    assert result.report.links_removed == 1


def test_a_protocol_relative_link_to_a_retrieved_page_stays_as_the_retrieved_url():
    result = run("See [about](//nats.io/about) for more.\n")
    assert result.body == "See [about](https://nats.io/about) for more.\n" and result.report.links_removed == 0


@pytest.mark.parametrize(
    ("draft", "body"),
    [
        ("NATS is at https://evil.io—the company is fast.\n", "NATS is at—the company is fast.\n"),
        ("NATS 详见https://evil.io/x。这是消息系统。\n", "NATS 详见。这是消息系统。\n"),
        ("NATS https://evil.io/x\u200bok.\n", "NATS\u200bok.\n"),
    ],
)
def test_removing_a_bare_url_never_takes_the_prose_glued_to_it(draft, body):
    assert run(draft).body == body


def test_an_idn_host_is_one_url():
    assert find_bare_urls("see https://bücher.de/katalog now") == [(4, 29)]


def test_prose_glued_under_a_footnote_definition_stays_prose():
    draft = (
        "NATS is an open source messaging system.[^1]\n[^1]: https://nats.io/about\n"
        "Synadia raised a $25M Series A led by Forbion.[^2]\n[^2]: https://www.techcrunch.com/2022/03/01/synadia-raises\n"
    )
    result = run(draft)
    assert result.body == (
        "NATS is an open source messaging system. [^E1]\n\nSynadia raised a $25M Series A led by Forbion. [^1]\n"
    )
    assert [c["status"] for c in result.report.to_json()["citations"]] == ["verified", "verified"]
    assert any("no blank line" in w for w in warnings(result))


def test_an_indented_continuation_is_still_part_of_its_definition():
    draft = "NATS is fast.[^1]\n\n[^1]: https://nats.io/about\n    more about the page\n"
    result = run(draft)
    assert "more about the page" not in result.body and not any("no blank line" in w for w in warnings(result))


# -- raw HTML read with a real tokenizer, and a draft's front matter -------------------------------


@pytest.mark.parametrize(
    ("html", "kept"),
    [
        ('<img src="https://evil.io/p.png" alt="chart">', '<img alt="chart">'),
        ('<img srcset="https://nats.io/about 1x, https://evil.io/b.png 2x">', "<img>"),
        ("<script src=//cdn.evil.io/x.js></script>", "<script></script>"),
        (
            '<form action="https://collect.evil.io/s"><button formaction="//c.evil.io/go">Go</button></form>',
            "<form><button>Go</button></form>",
        ),
        (
            '<video poster="https://evil.io/p.jpg" src="https://nats.io/download"></video>',
            '<video src="https://nats.io/download"></video>',
        ),
        ('<blockquote cite="https://evil.io/q">Said so.</blockquote>', "<blockquote>Said so.</blockquote>"),
        ('<a href="&#104;ttps://evil.io/e">about</a>', "<a>about</a>"),
        ('<a href="https:\\\\evil.io\\z">about</a>', "<a>about</a>"),
        ('<meta http-equiv="refresh" content="0; url=https://evil.io/r">', '<meta http-equiv="refresh">'),
        ('<div data-href="https://evil.io/d">x</div>', "<div>x</div>"),
        # a browser drops tabs and newlines from a URL before reading it: these are https://evil.io
        ('<a href="ht&#x09;tps://evil.io/t">about</a>', "<a>about</a>"),
        ('<a href="ht&NewLine;tps://evil.io/n">about</a>', "<a>about</a>"),
        ('<img src="//evil&#9;.io/i.png" alt="i">', '<img alt="i">'),
    ],
)
def test_every_url_bearing_attribute_in_an_html_block_is_screened(html, kept):
    result = run(f"NATS is open source. [^E1]\n\n{html}\n")
    assert result.body == f"NATS is open source. [^E1]\n\n{kept}\n"
    assert "evil.io" not in result.text and result.report.links_removed >= 1


def test_inline_html_attributes_are_screened_and_the_tag_text_stays():
    result = run('NATS is <a href="//evil.io/x" title="t">open source</a> software. [^E1]\n')
    assert result.body == 'NATS is <a title="t">open source</a> software. [^E1]\n'
    assert "removed //evil.io/x (never retrieved)" in warnings(result)


def test_a_marker_in_an_html_block_is_reconciled_and_never_left_orphaned():
    draft = (
        "<p>NATS is an open source messaging system [^1]</p>\n\n[^1]: [About](https://nats.io/about/?utm_source=x)\n"
    )
    result = run(draft)
    assert result.body == "<p>NATS is an open source messaging system [^E1]</p>\n"
    dropped = run("<p>Kestra bakes bread [^1]</p>\n\n[^1]: https://invented.io/k\n")
    assert dropped.body == "<p>Kestra bakes bread</p>\n" and "[^1]" not in dropped.text


def test_a_drafts_front_matter_is_screened():
    draft = (
        "---\ntitle: Draft\nsource: https://fabricated.io/x\nhome: https://nats.io/about\n---\nNATS is fast. [^E1]\n"
    )
    result = run(draft)
    assert "fabricated.io" not in result.text and "https://nats.io/about" in result.text
    assert "removed https://fabricated.io/x (never retrieved)" in warnings(result)


def test_credentials_in_html_text_and_front_matter_never_reach_the_note():
    result = run(
        "---\nhome: https://ed:pw@nats.io/about\n---\n<div>See https://ed:pw@nats.io/about now</div>\n\n"
        "NATS is fast. [^E1]\n"
    )
    assert "pw@" not in result.text
    assert result.text.count("https://nats.io/about") >= 3  # front matter, HTML text and the definition


def test_query_parameters_that_look_like_entities_keep_a_retrieved_link():
    """``&region=`` and ``&param=`` are query parameters, not the entities ``&reg`` and ``&para``: a
    renderer (which decodes only ``&name;``) and a browser reading an attribute (which leaves a
    legacy entity followed by ``=`` or a letter alone) both open the retrieved page, so the link stays."""
    page = "https://shop.io/p?id=1&region=eu&param=x&amp=1"
    src = [{"marker": "E1", "url": "https://shop.io/p?id=1&region=eu&param=x", "title": "Shop", "snippet": "x"}]
    draft = f'See [page]({page}), {page} and <a href="{page}">here</a>.\n'
    result = reconcile(draft, src)
    assert result.report.links_removed == 0, result.report.warnings
    assert result.body.count("https://shop.io/p?id=1&region=eu&param=x") == 2
    assert 'href="https://shop.io/p?id=1&amp;region=eu&amp;param=x"' in result.body  # escaped as HTML
    assert "®" not in result.text and "¶" not in result.text


def test_an_entity_with_its_semicolon_is_still_decoded_before_the_url_is_judged():
    src = [{"marker": "E1", "url": "https://nats.io/about?a=1&b=2", "title": "About", "snippet": "x"}]
    draft = (
        'A <a href="&#104;ttps://evil.io/x">one</a>, <a href="&#104ttps://evil.io/y">two</a>, '
        "[three](&#104;ttps://evil.io/z) and [ok](https://nats.io/about?a=1&amp;b=2).\n"
    )
    body = reconcile(draft, src).body
    assert "evil.io" not in body
    assert "[ok](https://nats.io/about?a=1&amp;b=2)" in body  # the same URL, as a renderer reads it
