"""A writer answer shaped to make the reconciler slow finishes in seconds, not minutes.

A looping or hostile writer can answer with one token repeated tens of thousands of times
(well under the 1 M character cap). Each shape here once cost time quadratic in its count —
30,000 repetitions took from 20 s to over 3 minutes — and nothing put a deadline on
reconcile, so `run` hung with the section's writer cost already spent."""

from __future__ import annotations

import time

import pytest

from core.citations import reconcile
from core.models import Source

URL = "https://a.example.org/x"
SOURCES = [Source(provider="exa", url=URL, title="A page", summary="NATS raised money.")]
REPEAT = 30_000
BOUND_S = 15.0  # linear: about 1 s each on a quiet 2-core machine; quadratic: 20 s to 200 s


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
