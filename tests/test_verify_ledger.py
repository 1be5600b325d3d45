"""The memo ledger: the same quantity stated two ways across sections is a conflict, named with
both claims, sections and sources; the same fact in other words is not."""

from __future__ import annotations

from sourcedesk.core.verify.ledger import NoteClaims, build
from sourcedesk.sandbox import bench_ledger


def note(section: str, text: str, url: str, summary: str) -> NoteClaims:
    return NoteClaims(section, text, [{"marker": "E1", "url": url, "title": "t", "summary": summary}])


def test_two_sources_that_disagree_are_named_as_such():
    ledger = build(
        [
            note("overview", "Ostrava has raised $41M to date.[^E1]", "https://techcrunch.example.com/a",
                 "Ostrava has raised $41 million to date."),
            note("funding", "In total Ostrava has raised $25M.[^E1]", "https://crunchbase.example.com/b",
                 "Ostrava has raised a total of $25 million."),
        ],
        ["Ostrava"],
    )  # fmt: skip
    (conflict,) = ledger.conflicts
    assert conflict.describe() == (
        "funding (total): $41M (overview, techcrunch.example.com) vs $25M (funding, crunchbase.example.com)"
    )
    assert conflict.verdict() == "sources disagree: techcrunch.example.com $41M, crunchbase.example.com $25M"


def test_a_claim_its_own_source_does_not_back_is_named():
    ledger = build(
        [
            note("overview", "Sorrel was founded in 2014.[^E1]", "https://a.example.com/x", "Sorrel was founded in 2014."),
            note("history", "Sorrel, founded in 2011, mapped airports.[^E1]", "https://b.example.com/y",
                 "Sorrel, founded in 2014, mapped airports."),
        ],
        ["Sorrel"],
    )  # fmt: skip
    (conflict,) = ledger.conflicts
    assert not conflict.disagree
    assert conflict.verdict() == "history says 2011, which its source (b.example.com) does not state"


def test_the_same_fact_in_other_words_is_no_conflict():
    ledger = build(
        [
            note("overview", "Mirelle was valued at $1.2 billion.[^E1]", "https://a.example.com/x", "valued at $1.2 billion"),
            note("funding", "The round gave Mirelle a valuation of $1.2bn.[^E1]", "https://b.example.com/y", "a valuation of $1.2bn"),
        ],
        ["Mirelle"],
    )  # fmt: skip
    assert ledger.conflicts == [] and len(ledger.statements) == 2


def test_the_hand_made_memos_meet_the_targets():
    figures, lines = bench_ledger.run(bench_ledger.load())
    assert figures["memos"] >= 20 and figures["planted"] * 2 >= figures["memos"] - 4
    assert figures["conflicts_found"] >= 0.95, lines
    assert figures["false_conflicts"] <= 0.05, lines
