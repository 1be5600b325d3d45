"""Properties of reconcile/tidy over generated drafts and ground truths (hypothesis).

* no inline marker lacks a definition afterwards (protected keys aside), no
  definition is left uncited, and no bare ``[N]`` (nor a ``[N](url)`` link, nor a
  malformed ``[^ E1]``) survives;
* every http(s)/www URL left in the output outside code is in the ground truth;
* prose words never change: with markers, definitions, the house headings, link
  destinations, autolinks and bare URLs removed (and the writer's own sources
  list, which is apparatus), the words are identical, in order, and the other
  characters only lose punctuation left around removed URLs; a draft without
  URLs outside its definitions keeps every non-space character, in order;
* ``tidy`` and ``reconcile`` are idempotent;
* no claim loses its citation to ``tidy``: every sentence that ended with a
  citation before it still ends with one after it;
* the parser agrees with mdit-py-plugins' token stream on random markdown.
"""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin

from sourcedesk.core.citations import DEFAULT_PROTECTED, reconcile, tidy
from sourcedesk.core.citations.bare_urls import find_bare_urls
from sourcedesk.core.citations.house import HOUSE_HEADINGS
from sourcedesk.core.citations.parse import parse
from sourcedesk.core.citations.sentences import ClaimIndex
from sourcedesk.core.net.urls import normalise_url
from tests.conftest import examples_per_pass
from tests.test_citations_fixtures import plugin_view

SETTINGS = settings(max_examples=examples_per_pass(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORDS = [
    "Synadia",
    "raised",
    "funding",
    "NATS",
    "messaging",
    "open",
    "source",
    "cloud",
    "weather",
    "storms",
    "$25M",
    "2022",
    "Series",
    "customers",
    "growth",
    "analysts",
    "expect",
    "margins",
    "the",
    "a",
    "and",
]
FOOTNOTE_LABELS = ["1", "2", "3", "7", "E1", "E2", "E5", "E9", "V1", "deck", "x", "note", "e1", "internal"]
POOL = {
    "E1": ("https://nats.io/about", "About NATS", "NATS open source messaging system for cloud"),
    "E2": ("https://synadia.com/blog/series-a", "Synadia raises $25M", "Synadia raised $25M Series A funding 2022"),
    "E3": ("https://nats.io/blog", "NATS blog", "Customers growth analysts"),
    "E4": ("https://en.wikipedia.org/wiki/NATS_(company)", "NATS (company)", "NATS air traffic storms weather"),
    "V1": ("file:///notes/call.md", "Call notes", "margins expect growth"),
}
WEB_POOL = [
    ("https://news.org/storms", "Storms", "weather storms expect growth"),
    ("https://news.org/funding", "Funding news", "Synadia funding Series customers"),
    ("https://blog.org/cloud", "Cloud", "cloud messaging"),
    ("https://www.nats.io/about/", "NATS again", "duplicate of E1 by URL"),
]
INVENTED = [
    "https://example.com/x",
    "https://bloomberg.com/news/XXXX",
    "https://synadia.com/invented",
    "https://a.org/p",
    "https://fabricated.io/nats-overview",
    "http://made-up.com/a_(b)",
]
URLS = [u for u, _, _ in POOL.values()] + [u for u, _, _ in WEB_POOL] + INVENTED
WEB_URLS = [u for u in URLS if u.startswith("http")]
# what a writer types in prose: the URLs above, and some without a scheme
PROSE_URLS = [*WEB_URLS, "www.nats.io/about", "www.fabricated.io/x"]


@st.composite
def marker(draw):
    kind = draw(st.integers(0, 9))
    if kind <= 4:
        return f"[^{draw(st.sampled_from(FOOTNOTE_LABELS))}]"
    if kind == 5:
        return f"[{draw(st.integers(1, 6))},{draw(st.sampled_from(['', ' ']))}{draw(st.integers(1, 6))}]"
    if kind == 6:
        return f"[{draw(st.integers(1, 6))}]({draw(st.sampled_from(WEB_URLS))})"
    if kind == 7:
        return f"[^ {draw(st.sampled_from(['E1', 'E2', 'E9', '3']))}]"
    return f"[{draw(st.integers(0, 6))}]"


@st.composite
def url_piece(draw, refs: list[str]):
    """A URL outside a footnote: inline link, autolink, bare (maybe in brackets), reference link."""
    url = draw(st.sampled_from(WEB_URLS))
    text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return f"[{text}]({url})"
    if kind == 1:
        return f"<{url}>"
    if kind == 2:
        return draw(st.sampled_from(PROSE_URLS))
    if kind == 3:
        return f"({draw(st.sampled_from(PROSE_URLS))})"
    if kind == 4:
        refs.append(url)
        return f"[{text}][r{len(refs)}]"
    return f"**{draw(st.sampled_from(PROSE_URLS))}**"


@st.composite
def sentence(draw, refs: list[str]):
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=8))
    words[0] = words[0].capitalize()
    pieces = []
    for w in words:
        pieces.append(w)
        if draw(st.integers(0, 9)) == 0:
            pieces.append(draw(st.sampled_from(["", " "])) + draw(marker()))
        if draw(st.integers(0, 14)) == 0:
            pieces.append("`" + draw(st.sampled_from([draw(marker()), draw(st.sampled_from(WEB_URLS))])) + "`")
        if draw(st.integers(0, 11)) == 0:
            pieces.append(draw(url_piece(refs)))
    text = " ".join(pieces)
    end = draw(st.sampled_from([".", "!", "?"]))
    placement = draw(st.integers(0, 3))
    if placement == 1:
        text += draw(marker()) + end
    elif placement == 2:
        text += end + draw(st.sampled_from(["", " "])) + draw(marker()) + draw(marker())
    else:
        text += end
    return text


@st.composite
def paragraph(draw, refs: list[str]):
    body = " ".join(draw(st.lists(sentence(refs), min_size=1, max_size=4)))
    kind = draw(st.sampled_from(["p", "p", "li", "quote", "lines", "heading", "table", "alone", "url"]))
    if kind == "heading":
        return "## " + body.replace("\n", " ")
    if kind == "table":
        return "| Claim | Note |\n|---|---|\n| " + body + " | " + draw(marker()) + " |"
    if kind == "alone":
        return body + "\n" + draw(marker()) + "\n" + draw(sentence(refs))
    if kind == "li":
        return "- " + body
    if kind == "quote":
        return "> " + body
    if kind == "lines":
        return body.replace(". ", ".\n", 1)
    if kind == "url":  # a list item that is nothing but a URL
        return "- " + body + "\n- " + draw(url_piece(refs))
    return body


FENCE = "```\ncode [^1] [2] x[^E9]. https://fabricated.io/in-code\n```"


@st.composite
def bibliography(draw):
    """A writer's own sources list (apparatus: the output never has it)."""
    urls = draw(st.lists(st.sampled_from(WEB_URLS), min_size=1, max_size=4))
    label, numbered = draw(
        st.sampled_from(
            [
                ("**Sources:**", "[{n}] {u}"),
                ("## References", "{n}. {u}"),
                ("Citations:", "- [Some title]({u}), 2024"),
                (None, "[{n}] {u}"),
            ]
        )
    )
    if label is None and len(urls) < 2:
        urls.append(WEB_URLS[0])
    lines = [numbered.format(n=n, u=u) for n, u in enumerate(urls, 1)]
    if label is None:
        return "\n".join(lines)
    return label + ("\n\n" if label.startswith("#") else "\n") + "\n".join(lines)


@st.composite
def draft(draw, with_bibliography: bool = False):
    refs: list[str] = []
    paras = draw(st.lists(paragraph(refs), min_size=1, max_size=4))
    if draw(st.booleans()):
        paras.insert(draw(st.integers(0, len(paras))), FENCE)
    defs = []
    for label in draw(st.lists(st.sampled_from(FOOTNOTE_LABELS), max_size=6, unique=True)):
        if label == "deck":
            defs.append("[^deck]: Board deck, slide 3")
        elif label == "internal":
            defs.append(f"[^internal]: Internal memo, see {draw(st.sampled_from(PROSE_URLS))} and notes")
        else:
            url = draw(st.sampled_from(URLS))
            form = draw(st.integers(0, 2))
            defs.append(f"[^{label}]: " + ([f"[Some title]({url})", f"<{url}>", f"{url} 2021-01-05"][form]))
    text = "\n\n".join(paras)
    bib = draw(bibliography()) if with_bibliography and draw(st.booleans()) else ""
    if bib:
        text += "\n\n" + bib
    if defs:
        text += "\n\n" + "\n".join(defs)
    if refs:
        text += "\n\n" + "\n".join(f"[r{n}]: {u}" for n, u in enumerate(refs, 1))
    return text + "\n", bib


@st.composite
def ground_truth(draw):
    retrieved = draw(st.lists(st.sampled_from(sorted(POOL)), unique=True, max_size=5))
    web = draw(st.lists(st.sampled_from(WEB_POOL), unique=True, max_size=4))
    items = [
        {"marker": m, "url": POOL[m][0], "title": POOL[m][1], "summary": POOL[m][2], "date": "2022-03-01"}
        for m in retrieved
    ]
    items += [{"url": u, "title": t, "snippet": s} for u, t, s in web]
    return items


def _without_urls(text: str) -> str:
    for a, b in reversed(find_bare_urls(text)):
        text = text[:a] + " " + text[b:]
    return text


def _block_text(doc, bi: int) -> str:
    """A block's text without markers, link destinations, autolinks and bare URLs (link text stays)."""
    block = doc.blocks[bi]
    markers = [(doc.markers[i].cstart, doc.markers[i].cend) for i in block.markers]
    chars = list(block.content)
    for a, b in markers:  # a marker is a separator, never part of a word or a URL
        chars[a:b] = [" "] * (b - a)
    c = "".join(chars)
    spans = sorted(
        (
            s
            for s in block.spans
            if not s.nested
            and s.rule in ("link", "image", "autolink", "backticks")
            and not any(a <= s.start < b for a, b in markers)
        ),
        key=lambda s: s.start,
    )
    out, pos = [], 0
    for s in spans:
        out.append(_without_urls(c[pos : s.start]))
        if s.rule in ("link", "image") and s.label_end is not None:
            out.append(_without_urls(c[s.start + (2 if s.rule == "image" else 1) : s.label_end]))
        elif s.rule == "backticks":
            out.append(c[s.start : s.end])
        else:
            out.append(" ")
        pos = max(pos, s.end)
    out.append(_without_urls(c[pos:]))
    return "".join(out)


def prose_text(text: str) -> str:
    """The prose of a draft or note: its inline blocks outside unprotected definitions and the house
    headings, each without markers, link destinations and URLs (see ``_block_text``)."""
    doc = parse(text, malformed=True)
    parts = []
    for bi, block in enumerate(doc.blocks):
        if block.definition is not None and doc.definitions[block.definition].label.lower() not in DEFAULT_PROTECTED:
            continue
        if block.heading and "## " + block.content.strip() in HOUSE_HEADINGS:
            continue
        parts.append(_block_text(doc, bi))
    return "\n".join(parts)


def prose_signature(text: str) -> str:
    """Non-whitespace characters outside markers (as the reconciler reads them, ``[^ E1]`` included),
    definitions and the house headings (no URL removed)."""
    doc = parse(text, malformed=True)
    drop = [(m.start, m.end) for m in doc.markers]
    drop += [(d.start, d.end) for d in doc.definitions]
    out, pos = [], 0
    for a, b in sorted(drop):
        if a >= pos:
            out.append(doc.source[pos:a])
            pos = b
        else:
            pos = max(pos, b)
    out.append(doc.source[pos:])
    kept = "".join(out)
    lines = [ln for ln in kept.split("\n") if ln.strip() not in HOUSE_HEADINGS]
    return "".join("".join(lines).split())


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def assert_prose_kept(before: str, after: str) -> None:
    a, b = prose_text(before), prose_text(after)
    assert re.findall(r"\w+", b) == re.findall(r"\w+", a), (a, b)  # the words, in order
    sa, sb = "".join(a.split()), "".join(b.split())
    assert _is_subsequence(sb, sa), (sa, sb)  # nothing added or reordered; only punctuation dropped


_CODE_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(footnote_plugin)


def urls_outside_code(text: str) -> list[str]:
    """Every web URL written outside code blocks and code spans (an oracle independent of the product:
    a plain regex, with code found by a stock markdown-it)."""
    lines = text.split("\n")
    for tok in _CODE_MD.parse(text):
        if tok.type in ("fence", "code_block") and tok.map:
            for i in range(*tok.map):
                lines[i] = ""
    text = re.sub(r"(`+)(?:(?!\1).)+?\1", " ", "\n".join(lines), flags=re.S)
    return [m.group() for m in re.finditer(r"(?i)(?:https?://|(?<![\w./])www\.)[^\s<>\[\]`\"]+", text)]


def in_ground_truth(url: str, truth: set[str]) -> bool:
    """Trailing punctuation aside, is this URL (or, parentheses being ambiguous, a prefix ending
    before a ")") in the ground truth?"""
    url = url.rstrip(".,;:!?*_~'")
    while True:
        if normalise_url(url) in truth:
            return True
        if not url.endswith(")"):
            return False
        url = url[:-1].rstrip(".,;:!?*_~'")


def fence_kept(before: str, after: str) -> None:
    if FENCE in before:
        assert FENCE in after


@SETTINGS
@given(draft(with_bibliography=True), ground_truth())
@example(  # two identical bare groups became one cluster with repeats, which tidy then changed
    ("Synadia Synadia.[1,2][1,2]\n", ""),
    [
        {"url": "https://news.org/storms", "title": "Storms", "snippet": "weather storms expect growth"},
        {"url": "https://news.org/funding", "title": "Funding news", "snippet": "Synadia funding Series customers"},
    ],
)
def test_reconcile_invariants(generated, sources):
    text, bib = generated
    result = reconcile(text, sources)
    doc = parse(result.text, malformed=True)
    defined = {d.label for d in doc.definitions}
    # No orphan: every unprotected marker has a definition, every definition is cited, no bare [N] left.
    for m in doc.markers:
        assert m.kind == "footnote", f"bare marker left: {m.text}"
        assert m.raw is None, f"malformed marker left: {m.text}"
        if m.label.lower() not in DEFAULT_PROTECTED:
            assert m.label in defined, f"orphan {m.text} in {result.text!r}"
    for d in doc.definitions:
        if d.label.lower() not in DEFAULT_PROTECTED:
            assert any(m.label == d.label for m in doc.markers), f"unused definition [^{d.label}]"
    # No URL that retrieval did not return, anywhere outside code.
    truth = {normalise_url(s["url"]) for s in sources}
    for url in urls_outside_code(result.text):
        assert in_ground_truth(url, truth), f"unretrieved {url} in {result.text!r}"
    # Prose words are never rewritten (the writer's own sources list is apparatus and goes).
    # (a heading label stays when something it labels is left, e.g. a protected definition)
    label = bib.split("\n")[0] if bib.startswith("#") else ""
    kept_label = label if label and re.search(f"^{re.escape(label)}$", result.text, re.M) else ""
    assert_prose_kept(text.replace(bib, kept_label) if bib else text, result.text)
    if not re.search(r"(?i)https?://|www\.", re.sub(r"(?ms)^\[\^[^\]]+\]:[^\n]*$|^```.*?^```", "", text)):
        assert prose_signature(result.text) == prose_signature(text)  # without URLs: every character kept
    fence_kept(text, result.text)
    if bib:
        assert all(line not in result.text for line in bib.splitlines() if line.strip() and line != kept_label)
    # The counts are the statuses of the rows; nothing is verified against nothing.
    report = result.report.to_json()
    statuses = Counter(c["status"] for c in report["citations"])
    for status in ("verified", "substituted", "dropped", "out_of_range", "protected"):
        assert report[status] == statuses[status]
    assert report["retitled"] <= report["verified"]
    # every removed URL is named: one warning per link, a sources list's unretrieved URLs in its warning
    named: list[object] = [w for w in result.report.warnings if w.code == "unretrieved_link"]
    for w in result.report.warnings:
        listed = re.search(r"never retrieved: ([^;]*);", w.message) if w.code == "writer_sources_list_removed" else None
        named += listed.group(1).split(", ") if listed else []
    assert report["links_removed"] == len(named)
    if not sources:
        assert report["verified"] == report["substituted"] == 0
    # Idempotent: the finished text is already reconciled and tidy.
    again = reconcile(result.text, sources)
    assert again.text == result.text
    assert again.report.links_removed == 0
    assert tidy(result.text) == result.text


@SETTINGS
@given(draft())
def test_tidy_is_idempotent_and_keeps_prose(generated):
    text, _ = generated
    once = tidy(text)
    assert tidy(once) == once
    assert prose_signature(once) == prose_signature(text)

    def urls(t: str) -> list[str]:
        return [u.rstrip(".,;:!?*_~')") for u in urls_outside_code(t)]

    assert urls(once) == urls(text)  # tidy never touches a URL (punctuation after one may move)


_CLOSING = re.compile(r"[\s.!?…。！？\"'”’)\]»*_]*")


def sentences_ending_with_a_citation(text: str) -> Counter[str]:
    """Each sentence (markers removed) that ends with a footnote citation, counted."""
    doc = parse(text)
    claims = ClaimIndex(doc)
    out: Counter[str] = Counter()
    for bi, block in enumerate(doc.blocks):
        if block.definition is not None or block.html:
            continue
        index = claims.index(bi)
        ending = set()
        for i in block.markers:
            m = doc.markers[i]
            if m.kind != "footnote":
                continue
            start, end = index.sentence_for(m.cstart)
            after = block.content[m.cend : max(end, m.cend)]
            for j in block.markers:  # other markers of the cluster are transparent
                o = doc.markers[j]
                if m.cend <= o.cstart and o.cend <= end:
                    after = after.replace(block.content[o.cstart : o.cend], " ")
            if _CLOSING.fullmatch(after):
                ending.add((start, end))
        for start, end in ending:
            claim = " ".join(index.claim_text(start, end).rstrip(".!?…。！？ ").split())
            if claim:  # a "sentence" of citations only ("[1](url)[^1]") has no claim to lose one from
                out[claim] += 1
    return out


@SETTINGS
@given(draft())
def test_tidy_never_takes_a_citation_off_a_sentence(generated):
    text, _ = generated
    before = sentences_ending_with_a_citation(text)
    after = sentences_ending_with_a_citation(tidy(text))
    lost = {s: n for s, n in before.items() if after[s] < n}
    assert not lost, lost


PIECES = [
    "word",
    "Text.",
    "[^a]",
    "[^1]",
    "[^b c]",
    "`code [^a]`",
    "``x [^1] y``",
    "[link [2]](http://x.y/z)",
    "[t [^a]](http://x.y)",
    "![img [^c]](i.png)",
    "**bold [^1]**",
    "\\[^a]",
    "<span>[^d]</span>",
    "^[inline [^a]]",
    "[3]",
    "[^",
    "]",
    "[^e]:",
    "*",
    "_x_",
    "<http://a.b/[^1]>",
    "&amp;",
    "[^a][^1]",
    "~~s[^f]~~",
]
LINE_PREFIX = ["", "", "", "> ", "- ", "1. ", "    ", "# ", "[^a]: ", "[^1]: ", "| ", "```\n"]


@st.composite
def random_markdown(draw):
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        prefix = draw(st.sampled_from(LINE_PREFIX))
        body = " ".join(draw(st.lists(st.sampled_from(PIECES), min_size=0, max_size=6)))
        lines.append(prefix + body)
        if draw(st.booleans()):
            lines.append("")
    return "\n".join(lines) + "\n"


@settings(max_examples=examples_per_pass(200), deadline=None)
@given(random_markdown())
def test_parser_agrees_with_the_plugin_token_stream(text):
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.use(footnote_plugin, always_match_refs=True, move_to_end=False)
    labels, inline_notes, defs = plugin_view(md, text)
    doc = parse(text)
    assert Counter(m.label for m in doc.markers if m.kind == "footnote") + Counter(doc.link_text_refs) == labels
    assert len(doc.inline_notes) == inline_notes
    assert Counter(d.label for d in doc.definitions) == defs
    assert doc.unmapped == 0
    for m in doc.markers:
        assert doc.source[m.start : m.end] == m.text
