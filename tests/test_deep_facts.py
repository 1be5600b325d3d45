"""Facts nested hundreds of levels deep (JSON parsers accept about 500) are read to a sane depth,
never to a RecursionError: a sources file or a stored source carrying them crashed the about
verdict, the reconciler and the facts cleaner."""

from __future__ import annotations

import orjson
import pytest

from sourcedesk.core.citations import reconcile
from sourcedesk.core.sources.about import AboutJudge, SourceText
from sourcedesk.core.sources.facts import clean_facts

URL = "https://a.example.org/x"


def _deep(depth: int) -> object:
    return orjson.loads('{"k":[' * depth + '"x"' + "]}" * depth)


@pytest.fixture
def facts() -> dict[str, object]:
    return {"founded_year": "2016", "deep": _deep(500)}


def test_the_facts_cleaner_keeps_the_shallow_facts_and_drops_the_abyss(facts):
    assert clean_facts(facts) == {"founded_year": "2016"}


def test_the_reconciler_reads_a_source_with_deep_facts(facts):
    source = {"url": URL, "title": "A", "summary": "NATS was founded in 2016.", "facts": facts}
    result = reconcile("NATS was founded in 2016 [1].\n", [source], search_results=[{"url": URL}])
    (citation,) = result.report.citations
    assert citation.status == "verified" and citation.support == "supported"


def test_the_about_verdict_reads_a_source_with_deep_facts(facts):
    about = AboutJudge("NATS", url="https://nats.io").judge(
        SourceText.of({"url": URL, "title": "NATS", "facts": facts})
    )
    assert about.verdict  # a verdict, not a RecursionError
