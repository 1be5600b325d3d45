"""A writer answer shaped to make the reconciler slow finishes in seconds, not minutes.

A looping or hostile writer can answer with one token repeated tens of thousands of times
(well under the 1 M character cap). Each shape here once cost time quadratic in its count —
30,000 repetitions took from 20 s to over 3 minutes — and nothing put a deadline on
reconcile, so `run` hung with the section's writer cost already spent."""

from __future__ import annotations

import time

import pytest

from sourcedesk.core.citations import reconcile
from sourcedesk.core.domain.models import Source

URL = "https://a.example.org/x"
SOURCES = [Source(provider="exa", url=URL, title="A page", summary="NATS raised money.")]
REPEAT = 30_000
# A hang guard, not a speed figure: linear, each shape takes 0.5 to 5 s of CPU on a quiet machine,
# and 60 s is over 10x that, so a loaded machine cannot fail it; it still catches the quadratic
# versions that took minutes. How fast each shape is, against the 15 s it was held to (the
# quadratic ones took 17 s to over 3 minutes): `make bench` (sourcedesk.sandbox.bench_speed).
BOUND_S = 60.0


@pytest.mark.parametrize(
    "shape",
    [
        "[1]",  # a numeric marker cluster: every marker's clause walked the whole cluster
        "[^E1]: ",  # markers that each cite the whole sentence: its text rebuilt per marker
        "[^",  # an unclosed footnote reference: the parser looked for "]" to the end each time
        "http://a.example.org/x ",  # bare URLs: each checked against every one found before
        "[^E1]",
    ],
)
def test_a_repeated_token_answer_reconciles_in_seconds(shape):
    draft = "NATS raised money " + shape * REPEAT + ".\n"
    t0 = time.perf_counter()
    result = reconcile(draft, SOURCES, search_results=[{"url": URL, "title": "A"}])
    took = time.perf_counter() - t0
    assert took < BOUND_S, f"{shape!r} x {REPEAT}: {took:.1f} s"
    assert "NATS raised money" in result.text


@pytest.mark.parametrize(
    "run",
    [
        "7" * 40_000,  # a long digit run: every figure alternative read it to its end from each digit
        "٧" * 40_000,  # the same in Arabic-Indic digits, which are read as digits too
        "1,000" * 8_000,
    ],
)
def test_a_long_numeral_run_in_the_answer_or_the_source_reconciles_in_seconds(run):
    """A writer answer or an Exa page carrying a numeral run took 17 s at 10,000 digits and
    about 4 minutes at 40,000; the amounts on either side of it are still read."""
    draft = f"NATS raised USD 41.2M in 2021, then {run} [1].\n"
    source = Source(provider="exa", url=URL, title="A page", summary=f"NATS raised USD 41.2M in 2021. {run}")
    t0 = time.perf_counter()
    result = reconcile(draft, [source], search_results=[{"url": URL, "title": "A"}])
    took = time.perf_counter() - t0
    assert took < BOUND_S, f"{len(run)} numerals: {took:.1f} s"
    (citation,) = result.report.citations
    assert citation.status == "verified"
    assert citation.support == "supported"


def test_an_amount_after_a_long_numeral_run_is_still_checked():
    """Skipping an unreadable run must not blind the checker to the amounts around it."""
    draft = "NATS raised USD 41.2M in 2021 [1].\n"
    source = Source(provider="exa", url=URL, title="A page", summary="7" * 20_000 + " NATS raised USD 90M in 2021.")
    result = reconcile(draft, [source], search_results=[{"url": URL, "title": "A"}])
    (citation,) = result.report.citations
    assert citation.support != "supported"


@pytest.mark.parametrize(
    ("draft", "summary"),
    [
        # amounts the source does not state: the claim was normalised again for each of them
        ("NATS raised money " + "USD 1.2M " * 80_000 + "[1].\n", "NATS raised money."),
        ("NATS raised " + "about 12% " * 80_000 + "[1].\n", "NATS raised money."),
        # an amount a page states as something else, thousands of times: the page normalised per mention
        ("NATS raised USD 1.2M [1].\n", "NATS valued at USD 1.2M " * 60_000),
    ],
    ids=["unstated-amounts", "approximations", "page-roles"],
)
def test_thousands_of_amounts_are_checked_in_seconds(draft, summary):
    """Before: 40 s to over a minute (quadratic in the number of amounts); the verdicts are unchanged."""
    source = Source(provider="exa", url=URL, title="A page", summary=summary)
    t0 = time.perf_counter()
    result = reconcile(draft, [source], search_results=[{"url": URL, "title": "A"}])
    took = time.perf_counter() - t0
    assert took < BOUND_S, f"{took:.1f} s"
    (citation,) = result.report.citations
    assert citation.support in ("partial", "unsupported")  # never supported: the amounts are not stated as claimed


def test_grounding_many_statistics_against_a_large_page_takes_seconds_not_minutes():
    """check-urls grounds every statistic of a note against the stored page text: 2,000
    statistics against a 560 KB page took 27 s (the page was normalised and regex-scanned once
    per statistic), past check-urls' own deadlines."""
    from sourcedesk.core.verify.grounding import ground

    page = "Synadia builds NATS, a messaging system used by many firms in 2024. " * 8000
    t0 = time.perf_counter()
    verdicts = [ground("statistic", f"{i}%", [page]) for i in range(2000)]
    took = time.perf_counter() - t0
    assert took < BOUND_S, f"{took:.1f} s"
    assert set(verdicts) == {"not_found"}
    assert ground("statistic", "2024", [page]) == "supported"
    assert ground("quote", "a messaging system used by many firms", [page]) == "supported"
    assert ground("quote", "A messaging system used by many firms", [page]) == "supported"  # first letter free
    assert ground("quote", "a Messaging system", [page]) == "not_found"
