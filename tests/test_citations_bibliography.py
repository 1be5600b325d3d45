"""A writer's own Sources list is removed; the note's house Sources sections replace it (review rule 2)."""

from __future__ import annotations

import pytest

from sourcedesk.core.citations import reconcile, tidy
from sourcedesk.core.citations.bibliography import find_bibliographies, numbering
from sourcedesk.core.citations.parse import parse

RETRIEVED = [
    {
        "marker": "E1",
        "url": "https://nats.io/about",
        "title": "About NATS",
        "summary": "NATS is an open source messaging system for cloud native applications.",
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
CLAIM = "Synadia raised a $25M Series A led by Forbion [1]. NATS is open source [2].\n\n"


def run(draft: str, search_results=WEB):
    result = reconcile(draft, RETRIEVED, search_results=search_results)
    assert tidy(result.text) == result.text
    assert reconcile(result.text, RETRIEVED, search_results=search_results).text == result.text
    return result


@pytest.mark.parametrize(
    "sources_list",
    [
        "**Sources:**\n[1] https://www.techcrunch.com/2022/03/01/synadia-raises\n[2] https://fabricated.io/nats-overview\n",
        "## Sources\n\n1. https://www.techcrunch.com/2022/03/01/synadia-raises\n2. https://fabricated.io/nats-overview\n",
        "References:\n\n- [Synadia raises $25M](https://www.techcrunch.com/2022/03/01/synadia-raises) — TechCrunch, 2022\n"
        "- [NATS overview](https://fabricated.io/nats-overview)\n",
        "### Citations\n\n[1] TechCrunch: https://www.techcrunch.com/2022/03/01/synadia-raises (2022-03-01)\n"
        "[2] <https://fabricated.io/nats-overview>\n",
        "__Bibliography__\n* https://www.techcrunch.com/2022/03/01/synadia-raises\n* https://fabricated.io/nats-overview\n",
        "[1] https://www.techcrunch.com/2022/03/01/synadia-raises\n[2] https://fabricated.io/nats-overview\n",
        "Sources: https://www.techcrunch.com/2022/03/01/synadia-raises, https://fabricated.io/nats-overview\n",
    ],
)
def test_a_writer_sources_list_is_removed_entirely(sources_list):
    result = run(CLAIM + sources_list)
    assert result.body == "Synadia raised a $25M Series A led by Forbion. [^1] NATS is open source. [^2]\n"
    assert "fabricated" not in result.text
    assert result.text.count("techcrunch.com/2022") == 1  # only in the house definition
    (warning,) = [w for w in result.report.warnings if w.code == "writer_sources_list_removed"]
    assert "never retrieved: https://fabricated.io/nats-overview" in warning.message
    assert result.report.links_removed == 1
    verdicts = {c["key"]: c["status"] for c in result.report.to_json()["citations"]}
    assert verdicts == {"1": "verified", "2": "verified"}  # [N] still index the search results


def test_before_the_fix_line_start_numbers_were_read_as_citations():
    # "[2] https://fabricated.io/…" used to become "[^2] https://fabricated.io/…"
    result = run(
        "Claim [1].\n\n**Sources:**\n[1] https://www.techcrunch.com/2022/03/01/synadia-raises\n"
        "[2] https://fabricated.io/nats-overview\n"
    )
    assert "[^2]" not in result.text and "Sources:" not in result.text
    assert [c["key"] for c in result.report.to_json()["citations"]] == ["1"]


def test_without_search_results_the_list_gives_each_number_its_url():
    draft = (
        "NATS is an open source messaging system for cloud native applications [1]. "
        "Margins exceed eighty percent [2]. Nobody listed this one [3].\n\n"
        "## References\n\n1. https://nats.io/about\n2. https://made-up.com/margins\n"
    )
    result = run(draft, search_results=[])
    assert result.text == (
        "NATS is an open source messaging system for cloud native applications. [^E1] "
        "Margins exceed eighty percent. Nobody listed this one.\n\n"
        "## Sources (retrieved)\n\n[^E1]: [About NATS](https://nats.io/about). nats.io.\n"
    )
    rows = {c["key"]: c for c in result.report.to_json()["citations"]}
    assert (rows["1"]["status"], rows["1"]["cited_url"]) == ("verified", "https://nats.io/about")
    assert (rows["2"]["status"], rows["2"]["cited_url"]) == ("dropped", "https://made-up.com/margins")
    assert rows["3"]["status"] == "out_of_range"


def test_with_search_results_a_list_that_numbers_differently_is_named():
    draft = "Claim [1].\n\n**Sources:**\n[1] https://nats.io/download\n"
    result = run(draft)
    assert result.report.to_json()["citations"][0]["resolved_url"] == WEB[0]["url"]
    assert any(w.code == "writer_numbering_ignored" and "[1]" in w.message for w in result.report.warnings)


def test_a_sources_heading_keeps_what_else_is_under_it():
    draft = "Claim [^E1].\n\n## References\n\n1. https://fabricated.io/a\n\nWe also interviewed two customers.\n"
    result = run(draft)
    assert result.body == "Claim. [^E1]\n\n## References\n\nWe also interviewed two customers.\n"


def test_a_sources_label_over_the_writer_definitions_goes_with_them():
    draft = "NATS is open source [^1].\n\n**Sources:**\n\n[^1]: [About](https://nats.io/about)\n"
    assert run(draft).body == "NATS is open source. [^E1]\n"


@pytest.mark.parametrize(
    "draft",
    [
        "**Key facts:**\n- Founded 2011\n- HQ in Los Angeles\n",
        "## Sources\n\n- We interviewed three customers.\n- And read the S-1.\n",
        "Sources:\n\nNATS grew fast according to https://nats.io/about and many analysts who follow "
        "the messaging market closely and who have written about it for years and years and years.\n",
        "- [About NATS](https://nats.io/about)\n- [Download](https://nats.io/download)\n",
    ],
)
def test_ordinary_lists_and_prose_are_not_sources_lists(draft):
    assert find_bibliographies(parse(draft)) == []


def test_what_a_bibliography_is_made_of():
    doc = parse(
        "Text.\n\n**Sources:**\n[3] Title — https://a.org/x (2024)\n(4) <https://b.org/y>\n5. [T](file:notes/a.md)\n"
    )
    (bib,) = find_bibliographies(doc)
    assert bib.lines == {2, 3, 4, 5}
    assert [(e.number, e.urls) for e in bib.entries] == [
        ("3", ("https://a.org/x",)),
        ("4", ("https://b.org/y",)),
        ("5", ("file:notes/a.md",)),
    ]
    assert numbering([bib]) == {"3": "https://a.org/x", "4": "https://b.org/y", "5": "file:notes/a.md"}


def test_code_is_never_a_sources_list():
    draft = "Example:\n\n```\n**Sources:**\n[1] https://fake.io/a\n[2] https://fake.io/b\n```\n"
    assert find_bibliographies(parse(draft)) == []
    assert run(draft).text == draft
