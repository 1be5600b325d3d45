"""The reconciler's rules on concrete drafts: verified, retitled, substituted only on clear
support, dropped with every marker — on the cases met in the field (fabricated paths on
real domains, wrong titles and dates, placeholder URLs, numbering holes)."""

from __future__ import annotations

import json
import re

import pytest

from sourcedesk.core.citations import reconcile, tidy
from sourcedesk.core.domain.models import Source
from tests.conftest import API_FIXTURES

RETRIEVED = [
    {
        "marker": "E1",
        "url": "https://nats.io/about",
        "title": "About NATS",
        "summary": "NATS is an open source messaging system for cloud native applications, IoT and microservices.",
    },
    {
        "marker": "E2",
        "url": "https://www.synadia.com/blog/series-a",
        "title": "Synadia raises $25M Series A",
        "date": "2022-03-01",
        "snippet": "Synadia, the company behind NATS founded by Derek Collison, raised $25M "
        "in a Series A round led by Forbion.",
    },
    {
        "marker": "E3",
        "url": "https://docs.nats.io/jetstream",
        "title": "JetStream",
        "summary": "JetStream is the persistence layer built into the NATS server.",
    },
    {"marker": "E4", "url": "https://nats.io/community", "title": "Community", "summary": "Slack and GitHub."},
    {"marker": "E5", "url": "https://nats.io/download", "title": "Download", "summary": "Binaries."},
    {"marker": "E6", "url": "https://nats.io/blog/v2", "title": "NATS 2.0", "summary": "Multi-tenancy release."},
]
WEB = [
    {
        "url": f"https://news{i}.test-site.org/story-{i}",
        "title": f"Story {i}",
        "date": f"2024-0{i}-1{i}",
        "last_updated": f"2024-0{i}-2{i}",
        "snippet": f"Snippet number {i} about weather patterns.",
    }
    for i in range(1, 9)
]
SOURCES = RETRIEVED + WEB


def defs(text: str) -> dict[str, str]:
    return {m.group(1): m.group(0) for m in re.finditer(r"^\[\^([^\]]+)\]:.*$", text, re.M)}


def row(result, key: str) -> dict:
    rows = [c for c in result.report.to_json()["citations"] if c["key"] == key]
    assert len(rows) == 1, rows
    return rows[0]


def test_verified_url_keeps_its_source_and_gets_the_true_title_and_date():
    draft = (
        "NATS is a messaging system. [^1]\n\n"
        "[^1]: 2019, Jan 01. [NATS homepage](https://NATS.io/about/?utm_source=x). nats.io. Published: 2019-01-01\n"
    )
    result = reconcile(draft, SOURCES)
    assert result.text.startswith("NATS is a messaging system. [^E1]\n")
    assert defs(result.text) == {"E1": "[^E1]: [About NATS](https://nats.io/about). nats.io."}
    r = row(result, "1")
    assert r["status"] == "verified" and r["retitled"] is True
    assert r["cited_url"] == "https://NATS.io/about/?utm_source=x" and r["resolved_url"] == "https://nats.io/about"
    assert result.report.to_json()["retitled"] == 1


def test_wrong_date_alone_is_retitled_and_a_matching_one_is_not():
    right = "Synadia raised money. [^a]\n\n[^a]: [Synadia raises $25M Series A](https://synadia.com/blog/series-a), 2022-03-01\n"
    wrong = right.replace("2022-03-01", "2021-07-15")
    assert row(reconcile(right, SOURCES), "a")["retitled"] is False
    assert row(reconcile(wrong, SOURCES), "a")["retitled"] is True
    text = reconcile(wrong, SOURCES).text
    assert "2021" not in text and "[^E2]: 2022, Mar 01. [Synadia raises $25M Series A]" in text


def test_example_com_on_an_unsupported_claim_is_dropped_with_its_markers():
    draft = (
        "Analysts expect an initial public offering within eighteen months. [^1]\n\n"
        "[^1]: [IPO rumours](https://example.com/ipo-rumours)\n"
    )
    result = reconcile(draft, SOURCES)
    assert result.text == "Analysts expect an initial public offering within eighteen months.\n"
    assert row(result, "1")["status"] == "dropped"
    assert result.report.placeholder_urls == 1
    assert any("placeholder" in w for w in result.report.to_json()["warnings"])


@pytest.mark.parametrize(
    "url", ["https://bloomberg.com/news/XXXX", "https://techcrunch.com/path/to/article", "https://forbes.com/{slug}"]
)
def test_placeholder_patterns_are_counted(url):
    result = reconcile(f"Filler words only here. [^1]\n\n[^1]: <{url}>\n", SOURCES)
    assert result.report.placeholder_urls == 1 and row(result, "1")["status"] == "dropped"


def test_invented_url_on_a_real_domain_is_substituted_by_the_supporting_source():
    draft = (
        "Synadia was founded by Derek Collison and raised $25M in a Series A round[^7].\n\n"
        "[^7]: [Synadia closes round](https://synadia.com/news/2023/invented-funding-story)\n"
    )
    result = reconcile(draft, SOURCES)
    assert result.text.splitlines()[0] == (
        "Synadia was founded by Derek Collison and raised $25M in a Series A round. [^E2]"
    )
    r = row(result, "7")
    assert r["status"] == "substituted" and r["resolved_url"] == "https://www.synadia.com/blog/series-a"
    assert r["score"] is not None and r["score"] >= 0.2
    assert r["claim"] == "Synadia was founded by Derek Collison and raised $25M in a Series A round"
    assert r["support"] == "supported" and "raised $25M" in r["evidence"]
    assert "invented-funding-story" not in result.text


def test_unsupported_invented_citation_loses_every_inline_marker():
    draft = (
        "Gross margins sit above eighty percent [^9] according to insiders.\n\n"
        "- Headcount doubles next year.[^9]\n\n"
        "| Metric | Value |\n|---|---|\n| Margin | 80% [^9] |\n\n"
        "> Quoted claim [^9]\n\n"
        "[^9]: [Insider report](https://www.reuters.com/invented/insider-report)\n"
    )
    result = reconcile(draft, SOURCES)
    assert "[^9]" not in result.text and "reuters" not in result.text
    assert result.text == (
        "Gross margins sit above eighty percent according to insiders.\n\n"
        "- Headcount doubles next year.\n\n"
        "| Metric | Value |\n|---|---|\n| Margin | 80% |\n\n"
        "> Quoted claim\n"
    )
    assert row(result, "9")["status"] == "dropped" and result.report.dropped == 1


def test_retrieved_marker_out_of_range_is_removed_and_never_repointed():
    draft = "NATS has a persistence layer called JetStream. [^E9]\n"
    result = reconcile(draft, SOURCES)
    assert result.text == "NATS has a persistence layer called JetStream.\n"
    r = row(result, "E9")
    assert r["status"] == "out_of_range" and r["resolved_url"] is None
    (warning,) = [w for w in result.report.to_json()["warnings"] if "E9" in w]
    assert "6 E-sources" in warning


def test_bare_number_out_of_range_is_removed_and_flagged():
    result = reconcile("Weather patterns changed in 2024 [3][12].\n", SOURCES)
    assert result.text.startswith("Weather patterns changed in 2024. [^1]\n")
    assert row(result, "12")["status"] == "out_of_range"
    assert any("[12]" in w and "8 results" in w for w in result.report.to_json()["warnings"])
    assert defs(result.text)["1"] == (
        "[^1]: 2024, Mar 13. [Story 3](https://news3.test-site.org/story-3). "
        "news3.test-site.org. Published: 2024-03-13 · Updated: 2024-03-23"
    )


def test_bare_numbers_become_footnotes_with_non_colliding_keys():
    draft = "Weather shifted [2]. Storms grew [^1].\n\n[^1]: [Story 5](https://news5.test-site.org/story-5)\n"
    result = reconcile(draft, SOURCES)
    assert result.text.splitlines()[0] == "Weather shifted. [^1] Storms grew. [^2]"
    assert "Story 2" in defs(result.text)["1"] and "Story 5" in defs(result.text)["2"]
    assert {c["key"]: c["status"] for c in result.report.to_json()["citations"]} == {"2": "verified", "1": "verified"}


def test_a_marker_moves_past_punctuation_only_to_the_end_of_its_own_sentence():
    draft = "The market is worth $50B according to NATS[^E1]. It grows[^E1], slowly.\n"
    assert reconcile(draft, SOURCES).text.splitlines()[0] == (
        "The market is worth $50B according to NATS. [^E1] It grows [^E1], slowly."
    )


def test_the_same_source_on_three_sentences_stays_on_all_three():
    draft = (
        "NATS is fast [^E1]. NATS is small [^a]. NATS is simple [^E1].\n\nNATS again [^E1].\n\n"
        "[^a]: [About](https://nats.io/about)\n"
    )
    result = reconcile(draft, SOURCES)
    assert result.body == "NATS is fast. [^E1] NATS is small. [^E1] NATS is simple. [^E1]\n\nNATS again. [^E1]\n"


def test_one_marker_per_source_per_paragraph_is_opt_in_and_never_strips_a_sentence():
    draft = (
        "Synadia raised $25M [^E2]. NATS is open source [^E1] and fast [^E2]. Again NATS [^E1].\n\n"
        "NATS is small [^E1].\n"
    )
    result = reconcile(draft, SOURCES, one_marker_per_source=True)
    # the first E2 is its sentence's only citation: it stays; the second sentence keeps E1 and E2 once
    assert result.body == (
        "Synadia raised $25M. [^E2] NATS is open source and fast. [^E2] Again NATS. [^E1]\n\nNATS is small. [^E1]\n"
    )


def test_two_writer_keys_for_one_source_merge_into_one_key():
    draft = (
        "Storms [^x] and floods [^y] hit.\n\n"
        "[^x]: [Story 4](https://news4.test-site.org/story-4)\n"
        "[^y]: <http://www.news4.test-site.org/story-4/#top>\n"
    )
    result = reconcile(draft, SOURCES)
    assert result.body == "Storms [^1] and floods [^1] hit.\n"  # one key; each claim keeps its marker
    assert list(defs(result.text)) == ["1"]
    assert [c["status"] for c in result.report.to_json()["citations"]] == ["verified", "verified"]


def test_definitions_without_inline_markers_are_removed_and_reported():
    draft = (
        "NATS is a messaging system. [^E1]\n\n[^E1]: About NATS\n[^4]: [Story 4](https://news4.test-site.org/story-4)\n"
    )
    result = reconcile(draft, SOURCES)
    assert list(defs(result.text)) == ["E1"]
    assert row(result, "4") == {
        "key": "4",
        "status": "dropped",
        "retitled": False,
        "cited_url": "https://news4.test-site.org/story-4",
        "resolved_url": None,
        "score": None,
        "claim": "",
        "support": None,
        "evidence": None,
        "weak": False,
        "reason": "",
        "about": None,
    }
    assert any("[^4]" in w and "never cited" in w for w in result.report.to_json()["warnings"])


def test_inline_marker_without_any_definition_is_dropped_when_nothing_supports_it():
    result = reconcile("Former executives praise the culture. [^ghost]\n", SOURCES)
    assert result.text == "Former executives praise the culture.\n"
    assert row(result, "ghost")["status"] == "dropped"


def test_markers_in_code_link_text_and_fences_are_not_citations():
    # x.org/b is retrieved, so the link and the image stay (an unretrieved or non-web one, such as a relative
    # c.png, would become its text; see test_links)
    draft = (
        "Use `[^E9]` and `[3]` literally; see [doc [2]](https://x.org/b) and ![chart [^E9]](https://x.org/b).\n\n"
        "```\nvalue[12] = x[^E9]\n```\n\n    indented [^zz] [4]\n"
    )
    result = reconcile(draft, [*SOURCES, {"url": "https://x.org/b", "title": "B"}])
    assert result.text == draft
    assert result.report.to_json()["citations"] == []
    assert result.report.links_removed == 0


def test_markers_in_raw_html_are_citations_like_any_other():
    draft = "<div>Weather shifted [^E9] [5]</div>\n\n<p>NATS is a messaging system [^1]</p>\n\n[^1]: https://nats.io/about\n"
    result = reconcile(draft, SOURCES)
    assert result.body == "<div>Weather shifted [^1]</div>\n\n<p>NATS is a messaging system [^E1]</p>\n"
    assert {c["key"]: c["status"] for c in result.report.to_json()["citations"]} == {
        "E9": "out_of_range",
        "5": "verified",
        "1": "verified",
    }
    assert set(defs(result.text)) == {"1", "E1"}  # no orphan either way


def test_a_footnote_inside_brackets_breaks_the_link_as_markdown_it_says():
    # CommonMark forbids links inside link text and the footnote plugin's [^1] counts as one,
    # so "[the [^1] docs](…)" is literal text around a real citation, not a link.
    # The URL after it is then a bare URL in brackets: never retrieved, so it goes with them.
    result = reconcile("See [the [^1] docs](https://x.org/a).\n", SOURCES)
    assert row(result, "1")["status"] == "dropped"
    assert result.text == "See [the docs].\n"
    assert result.report.links_removed == 1
    assert "removed https://x.org/a (never retrieved)" in result.report.to_json()["warnings"]


def test_a_numeric_reference_link_is_a_citation_of_its_url():
    # "[2]" with "[2]: url" is a link to url: the citation the writer gave, decided by that URL.
    draft = "See the filing [2] for details.\n\n[2]: https://sec.gov/filing\n"
    result = reconcile(draft, SOURCES)
    assert result.text == "See the filing for details.\n"
    assert row(result, "2") | {"claim": "", "reason": ""} == {
        "key": "2",
        "status": "dropped",
        "retitled": False,
        "cited_url": "https://sec.gov/filing",
        "resolved_url": None,
        "score": None,
        "claim": "",
        "support": None,
        "evidence": None,
        "weak": False,
        "reason": "",
        "about": None,
    }
    retrieved = reconcile(draft.replace("https://sec.gov/filing", "https://news5.test-site.org/story-5"), SOURCES)
    assert retrieved.body == "See the filing [^1] for details.\n"
    assert "Story 5" in defs(retrieved.text)["1"] and row(retrieved, "2")["status"] == "verified"


def test_numeric_links_to_non_web_references_are_removed_and_flagged():
    """Only http(s) links to retrieved sources survive (issue 20): ``[2]`` through a reference to a local
    file is a citation to nothing a reader can open; it goes with its definition, and the report says so."""
    draft = "See the filing [2] for details.\n\n[2]: ./filings/10-k.pdf\n"
    result = reconcile(draft, SOURCES)
    assert result.text == "See the filing for details.\n"
    assert any("a relative path" in w and "only http(s) links" in w for w in result.report.to_json()["warnings"])


def test_empty_ground_truth_drops_every_unprotected_citation():
    draft = (
        "Fact one [^1]. Fact two [2]. Fact three [^E1]. Deck says so [^deck].\n\n"
        "[^1]: [A](https://nats.io/about)\n[^deck]: Company deck, p. 4\n"
    )
    result = reconcile(draft, [])
    assert result.text == "Fact one. Fact two. Fact three. Deck says so. [^deck]\n\n[^deck]: Company deck, p. 4\n"
    report = result.report.to_json()
    assert (report["dropped"], report["protected"], report["verified"]) == (3, 1, 0)
    assert any("no retrieved sources" in w for w in report["warnings"])


def test_protected_keys_pass_through_untouched_and_are_configurable():
    draft = (
        "Revenue was $3M [^deck]. Churn is low [^crm].\n\n[^deck]: Series A deck, slide 12\n"
        "[^crm]: CRM export (not a URL)\n"
    )
    default = reconcile(draft, SOURCES)
    assert "[^deck]: Series A deck, slide 12" in default.text and "[^crm]" not in default.text
    assert row(default, "deck")["status"] == "protected"
    custom = reconcile(draft, SOURCES, protected=("crm",))
    assert "[^crm]: CRM export (not a URL)" in custom.text and "[^deck]" not in custom.text


def test_sentence_scope_binds_a_marker_after_the_full_stop_to_the_sentence_before():
    supported = "Analysts are cautious. Synadia raised $25M in a Series A round led by Forbion. [^x]\n"
    unsupported = "Synadia raised $25M in a Series A round led by Forbion. Analysts are cautious. [^x]\n"
    a = reconcile(supported + "\n[^x]: https://invented.example.org/a\n", SOURCES)
    b = reconcile(unsupported + "\n[^x]: https://invented.example.org/a\n", SOURCES)
    assert row(a, "x")["status"] == "substituted"
    assert row(a, "x")["claim"] == "Synadia raised $25M in a Series A round led by Forbion."
    assert row(b, "x") | {"score": None} == {
        "key": "x",
        "status": "dropped",
        "retitled": False,
        "cited_url": "https://invented.example.org/a",
        "resolved_url": None,
        "score": None,
        "claim": "Analysts are cautious.",
        "support": None,
        "evidence": None,
        "weak": False,
        "reason": "its URL was never retrieved and no retrieved source clearly supports it",
        "about": None,
    }
    assert [u.model_dump() for u in b.report.uncited] == [
        {"claim": "Synadia raised $25M in a Series A round led by Forbion.", "reason": "states $25M with no citation"},
        {
            "claim": "Analysts are cautious.",
            "reason": "citation dropped: its URL was never retrieved and no retrieved source clearly supports it",
        },
    ]


def test_one_shared_word_is_not_support():
    result = reconcile("Kestra cares about weather. [^x]\n\n[^x]: https://nowhere.io/k\n", SOURCES)
    assert row(result, "x")["status"] == "dropped"


def test_two_sources_that_support_a_claim_equally_are_no_clear_winner():
    twins = [
        {"url": "https://a.org/1", "title": "Rocket launch", "snippet": "The rocket launch was delayed by storms."},
        {"url": "https://b.org/2", "title": "Rocket launch", "snippet": "The rocket launch was delayed by storms."},
        {"url": "https://c.org/3", "title": "Harvest", "snippet": "The harvest came early this year."},
    ]
    result = reconcile("The rocket launch was delayed by storms. [^1]\n\n[^1]: https://fake.org/x\n", twins)
    assert row(result, "1")["status"] == "dropped"  # a guess between twins would launder the fabrication
    alone = reconcile("The rocket launch was delayed by storms. [^1]\n\n[^1]: https://fake.org/x\n", twins[1:])
    assert row(alone, "1")["resolved_url"] == "https://b.org/2"


def test_retrieved_marker_definitions_are_replaced_or_created():
    draft = (
        "JetStream persists messages [^E3]. NATS is open source [^E1].\n\n"
        "[^E3]: [Wrong title](https://docs.nats.io/jetstream)\n"
    )
    result = reconcile(draft, SOURCES)
    assert defs(result.text) == {
        "E1": "[^E1]: [About NATS](https://nats.io/about). nats.io.",
        "E3": "[^E3]: [JetStream](https://docs.nats.io/jetstream). docs.nats.io.",
    }
    assert row(result, "E3")["retitled"] is True and row(result, "E1")["retitled"] is False


def test_sections_are_grouped_and_reconciling_again_changes_nothing():
    draft = (
        "NATS is open source [^E1]. Weather shifted [5][2]. Funding came [^s].\n\n"
        "## Sources\n\n[^s]: [Series A](https://synadia.com/blog/series-a)\n"
    )
    first = reconcile(draft, SOURCES)
    assert first.text == (
        "NATS is open source. [^E1] Weather shifted. [^1] [^2] Funding came. [^E2]\n\n"
        "## Sources (web search)\n\n"
        "[^1]: 2024, May 15. [Story 5](https://news5.test-site.org/story-5). news5.test-site.org. "
        "Published: 2024-05-15 · Updated: 2024-05-25\n"
        "[^2]: 2024, Feb 12. [Story 2](https://news2.test-site.org/story-2). news2.test-site.org. "
        "Published: 2024-02-12 · Updated: 2024-02-22\n\n"
        "## Sources (retrieved)\n\n"
        "[^E1]: [About NATS](https://nats.io/about). nats.io.\n"
        "[^E2]: 2022, Mar 01. [Synadia raises $25M Series A](https://www.synadia.com/blog/series-a). synadia.com. "
        "Published: 2022-03-01\n"
    )
    second = reconcile(first.text, SOURCES)
    assert second.text == first.text
    assert second.report.verified == 4 and second.report.retitled == 0


def test_a_sources_heading_with_prose_under_it_stays():
    draft = "Claim [^E1].\n\n## Sources\n\nWe used interviews too.\n\n[^E1]: x\n"
    assert "## Sources\n\nWe used interviews too." in reconcile(draft, SOURCES).text


def test_report_has_the_design_section_6_shape():
    draft = "A [^E1]. B [^E9]. C [^deck]. D [^z]. E [3].\n\n[^z]: https://example.com\n"
    report = reconcile(draft, SOURCES).report.to_json()
    # the documented `reconcile --json` keys, in order (scripts read them); "links_removed" is an extra key after them
    assert list(report) == [
        "verified",
        "retitled",
        "substituted",
        "dropped",
        "out_of_range",
        "protected",
        "citations",
        "warnings",
        "links_removed",
        "uncited",
        "support",
    ]
    assert type(report["links_removed"]) is int
    assert list(report["citations"][0]) == [
        "key",
        "status",
        "retitled",
        "cited_url",
        "resolved_url",
        "score",
        "claim",
        "support",
        "evidence",
        "weak",
        "reason",
        "about",
    ]
    # "A" and "E" say nothing a source could support: unchecked, not weak
    assert report["support"] == {"supported": 0, "partial": 0, "unsupported": 0, "unchecked": 2, "weak": 0}
    assert all(type(report[k]) is int for k in list(report)[:6])
    assert (report["verified"], report["out_of_range"], report["protected"], report["dropped"]) == (2, 1, 1, 1)
    for c in report["citations"]:  # the documented keys first, in order, then what support adds
        assert list(c)[:7] == ["key", "status", "retitled", "cited_url", "resolved_url", "score", "claim"]
        assert list(c)[7:] == ["support", "evidence", "weak", "reason", "about"]
    assert [c["key"] for c in report["citations"]] == ["E1", "E9", "deck", "z", "3"]
    assert all(isinstance(w, str) for w in report["warnings"])
    json.dumps(report)


def test_core_source_objects_and_recorded_perplexity_results_are_accepted():
    objs = [
        Source(
            provider="exa",
            url="https://nats.io/about",
            title="About NATS",
            marker="E1",
            published_date="2023-11-16T01:36:32.547Z",
        )
    ]
    recorded = json.loads((API_FIXTURES / "sonar-chat-completion.json").read_text())
    content = recorded["choices"][0]["message"]["content"]
    result = reconcile(content + "\n\nNATS is simple [^E1].\n", objs, search_results=recorded["search_results"])
    report = result.report.to_json()
    assert report["dropped"] == report["out_of_range"] == 0 and report["verified"] == 6
    assert "[^E1]: 2023, Nov 16. [About NATS](https://nats.io/about). nats.io. Published: 2023-11-16" in result.text
    assert not re.search(r"(?<!\^)\[\d+\](?!:)", result.body)  # no bare [N] left
    assert reconcile(result.text, objs, search_results=recorded["search_results"]).text == result.text


def test_prose_is_untouched_and_line_endings_normalised():
    draft = (
        "Synadia raised $25M[^s]. Margins are high [^m].\r\n\r\n"
        "[^s]: https://synadia.com/blog/series-a\r\n[^m]: https://example.com/m\r\n"
    )
    result = reconcile(draft, SOURCES)
    assert result.text.splitlines()[0] == "Synadia raised $25M. [^E2] Margins are high."
    assert "\r" not in result.text


def test_a_marker_alone_on_a_line_does_not_split_the_paragraph():
    draft = "First line of the claim\n[^gone]\nsecond line.\n"
    result = reconcile(draft, SOURCES)
    assert result.text == "First line of the claim\nsecond line.\n"


def test_empty_and_citation_free_drafts():
    assert reconcile("", SOURCES).text == "\n"
    assert reconcile("Just prose.\n", SOURCES).text == "Just prose.\n"
    assert reconcile("Just prose.\n", None).report.to_json()["citations"] == []


def test_markers_inside_inline_notes_and_protected_definitions_are_reconciled_too():
    draft = (
        "Claim one ^[see [^gone] and [^E1]]. Deck claim [^deck].\n\n"
        "[^deck]: Board deck, slide 4, citing [^E9] and [^E1]\n"
    )
    result = reconcile(draft, SOURCES)
    assert result.body == (
        "Claim one ^[see and [^E1]]. Deck claim. [^deck]\n\n[^deck]: Board deck, slide 4, citing and [^E1]\n"
    )
    assert {c["key"]: c["status"] for c in result.report.to_json()["citations"]} == {
        "gone": "dropped",
        "E1": "verified",
        "deck": "protected",
        "E9": "out_of_range",
    }


def test_definitions_inside_containers_are_removed_cleanly():
    draft = "> Quoted claim [^E1].\n>\n> [^E1]: old title\n\n- item [^x]\n\n  [^x]: https://example.com\n\nEnd.\n"
    result = reconcile(draft, SOURCES)
    assert result.body == "> Quoted claim. [^E1]\n>\n\n- item\n\nEnd.\n"


# -- found while property-testing the link rules (each broke "no orphan" or idempotence) -------


def test_two_marker_only_lines_in_a_row_both_go():
    # the two removals overlapped (each took the line break between them) and one was skipped,
    # leaving "> [^a] [^1]" — two orphans
    result = reconcile("> [^a][^1]\n> [^a][^1]\n", SOURCES)
    assert "[^" not in result.text and result.report.dropped == 2


def test_a_marker_left_at_a_line_start_before_a_colon_does_not_become_a_definition():
    # mid-line a colon stays after the marker (not the end of a sentence); at a line start "[^1]:" would be
    # a definition
    assert reconcile("Weather [3] [^gone]: storms grew.\n", SOURCES).body == "Weather [^1]: storms grew.\n"
    result = reconcile("[3] [^gone]: storms grew.\n", SOURCES)
    assert result.body == "[^1] : storms grew.\n" and "[^1]: 2024" in result.text
    assert reconcile(result.text, SOURCES).text == result.text and tidy(result.text) == result.text


def test_a_number_written_like_a_definition_is_not_a_citation():
    draft = "[2]: see the appendix for the method.\n"
    result = reconcile(draft, SOURCES)
    assert result.text == draft and result.report.to_json()["citations"] == []


def test_a_draft_cut_off_inside_a_code_fence_does_not_swallow_the_sources():
    result = reconcile("Weather [3].\n\n```python\nprint('cut off", SOURCES)
    assert result.text.startswith("Weather. [^1]\n\n```python\nprint('cut off\n```\n\n## Sources (web search)\n")
    assert reconcile(result.text, SOURCES).text == result.text


# -- support, weak citations and uncited claims ---------------------------------------------------


def test_a_verified_citation_that_does_not_support_its_claim_keeps_its_url_and_is_weak():
    result = reconcile("JetStream is the persistence layer built into the NATS server. [^E4]\n", SOURCES)
    r = row(result, "E4")
    assert r["status"] == "verified" and r["resolved_url"] == "https://nats.io/community"
    assert r["support"] == "unsupported" and r["weak"] is True
    assert "[^E4]: [Community](https://nats.io/community)" in result.text  # retrieved: it stays
    assert any(w.startswith("weak citation [^E4]") for w in result.report.to_json()["warnings"])
    right = row(reconcile("JetStream is the persistence layer built into the NATS server. [^E3]\n", SOURCES), "E3")
    assert right["support"] == "supported" and right["weak"] is False
    assert right["evidence"] == "JetStream is the persistence layer built into the NATS server."


def test_uncited_claims_are_figures_quotations_and_table_rows_without_a_marker():
    draft = (
        'The CEO called it "the future of edge messaging". NATS is fast. [^E1]\n\n'
        "Revenue doubled in 2023.\n\n"
        "| Year | Revenue |\n|---|---|\n| 2022 | $4M |\n| 2023 | $8M [^E2] |\n\n"
        "# Founded in 2017\n"
    )
    uncited = [(u.claim, u.reason) for u in reconcile(draft, SOURCES).report.uncited]
    assert uncited == [
        ('The CEO called it "the future of edge messaging".', "a quotation with no citation"),
        ("Revenue doubled in 2023.", "states 2023 with no citation"),
        ("2022 | $4M", "states 2022 with no citation"),
    ]  # a cited table row and a heading are not listed


@pytest.mark.parametrize(
    "definition, retitled",
    [
        ("`https://nats.io/about`", False),  # a code span holding nothing but the URL
        ("[About NATS](https://nats.io/about)", False),  # the usual one-link definition
        ("[Old name](https://nats.io/about)", True),  # the writer's title is not the page's
        ('https://nats.io/about "About NATS"', False),  # a bare URL with a quoted title that agrees
        ('<https://nats.io/about> "Old name"', True),  # an autolink with a quoted title that does not
        ("[About NATS](https://nats.io/about) 2019-01-01", True),  # a date the source never gave
        ("[About NATS](https://nats.io/about), 2019", False),  # a bare year is not a date
    ],
)
def test_a_definition_is_read_for_its_url_title_and_date_in_every_form(definition, retitled):
    draft = f"NATS is an open source messaging system for cloud native applications [^1].\n\n[^1]: {definition}\n"
    got = row(reconcile(draft, SOURCES), "1")
    assert (got["status"], got["cited_url"], got["retitled"]) == ("verified", "https://nats.io/about", retitled)


@pytest.mark.parametrize(
    "amount, retrieved, invented",
    [
        ("$25M", ("verified", "supported", False), ("substituted", "supported")),
        ("$30M", ("verified", "unsupported", True), ("dropped", None)),  # the source says $25M
    ],
)
def test_one_claim_cited_as_retrieved_and_under_an_invented_url_is_judged_the_same_way(amount, retrieved, invented):
    claim = f"Synadia raised {amount} in a Series A round led by Forbion"
    draft = f"{claim} [^E2]. {claim} [^9].\n\n[^9]: [Funding](https://invented.example.net/x)\n"
    result = reconcile(draft, SOURCES)
    kept, fabricated = row(result, "E2"), row(result, "9")
    assert (kept["status"], kept["support"], kept["weak"]) == retrieved
    assert (fabricated["status"], fabricated["support"]) == invented
    if fabricated["status"] == "substituted":  # to the page that states it, with the same verdict and evidence
        assert fabricated["resolved_url"] == kept["resolved_url"]
        assert (fabricated["score"], fabricated["evidence"]) == (kept["score"], kept["evidence"])


def test_a_figure_inside_a_url_is_no_uncited_claim():
    """A year or number in a bare URL or an autolink is part of an address, not a claim the
    analyst must source; a figure in the prose around it still is."""
    dated = [
        {"url": f"https://nats.io/blog/{n}/2023-review", "title": "Review", "summary": "A review."}
        for n in (2019, 2024)
    ]
    draft = (
        "More at https://nats.io/blog/2024/2023-review today.\n\n"
        "See <https://nats.io/blog/2019/2023-review> for details.\n\n"
        "Read https://nats.io/blog/2024/2023-review: usage grew 45%.\n"
    )
    result = reconcile(draft, SOURCES + dated)
    assert "<https://nats.io/blog/2019/2023-review>" in result.text  # retrieved: the links stay
    uncited = [(u.claim, u.reason) for u in result.report.uncited]
    assert uncited == [("Read https://nats.io/blog/2024/2023-review: usage grew 45%.", "states 45% with no citation")]


TABLE_SOURCES = [
    {
        "marker": "E1",
        "url": "https://cresta.com/about",
        "title": "About Cresta",
        "snippet": "Cresta was founded in 2017 by Zayd Enam and Tim Shi. Employees: 400.",
    },
    {
        "marker": "E2",
        "url": "https://observe.ai/about",
        "title": "About Observe.AI",
        "snippet": "Observe.AI was founded in 2017 by Swapnil Jain. It has 250 employees.",
    },
]


def test_a_table_cell_is_about_its_rows_company_and_a_bare_number_is_a_count_of_its_column():
    """A table cell's claim includes its row's first cell: the row's company must be in the cited
    source (a page about Cresta does not support Observe.AI's founding year), and a cell holding
    only a number is a figure of its column ("400" under "Employees" is 400 employees)."""
    draft = (
        "| Company | Founded | Employees |\n|---|---|---|\n"
        "| Cresta | 2017 [^1] | 400 [^2] |\n"
        "| Observe.AI | 2017 [^3] | 400 [^4] |\n\n"
        "[^1]: https://invented.example.net/1\n[^2]: https://invented.example.net/2\n"
        "[^3]: https://invented.example.net/3\n[^4]: https://invented.example.net/4\n"
    )
    result = reconcile(draft, TABLE_SOURCES)
    got = {k: (row(result, k)["status"], row(result, k)["resolved_url"]) for k in "1234"}
    assert got == {
        "1": ("substituted", "https://cresta.com/about"),
        "2": ("substituted", "https://cresta.com/about"),
        "3": ("substituted", "https://observe.ai/about"),  # the only source naming the row's company
        "4": ("dropped", None),  # Observe.AI has 250 employees: the Cresta page is about another company
    }
    assert row(result, "2")["claim"] == "Cresta; Employees; 400"
    wrong = reconcile("| Company | Founded |\n|---|---|\n| Observe.AI | 2017 [^E1] |\n", TABLE_SOURCES)
    verdict = row(wrong, "E1")
    assert verdict["status"] == "verified" and verdict["support"] != "supported"
    assert "'Observe.AI' not in the source" in verdict["reason"]


def test_versions_labels_and_names_with_numbers_are_no_uncited_figures():
    """A count is a whole number of something: "Python 3.11 and", "Figure 3 for", "COVID-19 like",
    "24/7 support" and a phone number are no figures to source; "Over 300 customers" still is."""
    draft = (
        "Kestra 1.0 brings declarative flows.\n\n"
        "It supports Python 3.11 and Java 21.\n\n"
        "The team offers 24/7 support.\n\n"
        "It was hit by COVID-19 like everyone.\n\n"
        "See Figure 3 for details.\n\n"
        "Its ISO 27001 certification helps.\n\n"
        "Call +1 415 555 0100 today.\n\n"
        "Over 300 customers use it.\n\n"
        "It has 40 employees.\n"
    )
    uncited = [(u.claim, u.reason) for u in reconcile(draft, SOURCES).report.uncited]
    assert uncited == [
        ("Over 300 customers use it.", "states 300 customers with no citation"),
        ("It has 40 employees.", "states 40 employees with no citation"),
    ]


def test_a_headquarters_fact_split_into_city_and_country_supports_where_the_company_is():
    """Exa gives headquarters as {city, postal_code, country}: read together, as a page writes an
    address, it supports 'headquartered in Pleasanton' (it was 'the source does not say …')."""
    sources = [
        {
            "marker": "E1",
            "url": "https://www.synadia.com/",
            "title": "Synadia | The company behind NATS",
            "summary": "Synadia builds NATS.",
            "facts": {"headquarters": {"city": "Pleasanton", "postal_code": "94588", "country": "US"}},
        }
    ]
    plain = reconcile("NATS is headquartered in Pleasanton. [^E1]\n", sources, subject=["NATS", "Synadia"])
    assert row(plain, "E1")["support"] == "supported"


def test_an_amount_the_source_gives_as_something_else_is_a_contradiction_not_support():
    """'raised $1.6 billion' where the article says it raised $125 million at a $1.6 billion
    valuation: every figure is in the source, in another role — dropped, never substituted, and
    weak when cited as retrieved; the same amounts in their own roles still are supported."""
    sources = [
        {
            "marker": "E1",
            "url": "https://techcrunch.com/cresta-d",
            "title": "Cresta raises $125M Series D",
            "snippet": "Cresta raised $125 million in a Series D round, valuing the company at $1.6 billion.",
        },
        {"marker": "E2", "url": "https://cresta.com/about", "title": "About Cresta", "snippet": "Cresta sells AI."},
    ]
    draft = (
        "Cresta raised $1.6 billion in a Series D [^1]. Cresta's valuation is $125 million [^2]. "
        "Cresta, valued at $1.6 billion, raised $125 million [^3].\n\n"
        "[^1]: https://x.test/1\n[^2]: https://x.test/2\n[^3]: https://x.test/3\n"
    )
    result = reconcile(draft, sources, subject=["Cresta"])
    assert [row(result, k)["status"] for k in "123"] == ["dropped", "dropped", "substituted"]
    kept = row(reconcile("Cresta raised $1.6 billion in a Series D. [^E1]\n", sources, subject=["Cresta"]), "E1")
    assert kept["weak"] is True
    assert kept["reason"] == "the source gives $1.6 billion as the valuation, not as the amount raised"
