"""Reconcile at scale: 200 citations of every kind against 100 sources, each one classified.

How fast (it was held to 2 s): `make bench` (sourcedesk.sandbox.bench_speed), which builds
the same section."""

from __future__ import annotations

from sourcedesk.core.citations import reconcile
from sourcedesk.sandbox.bench_speed import throughput_section


def test_two_hundred_citations_against_a_hundred_sources():
    draft, sources = throughput_section()
    result = reconcile(draft, sources)
    report = result.report.to_json()
    assert len(report["citations"]) == 200
    assert report["verified"] and report["substituted"] and report["out_of_range"] and report["dropped"]
    assert reconcile(draft, sources).text == result.text  # the parser cache changes nothing
