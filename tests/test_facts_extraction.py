"""The extraction step: typed facts with verbatim spans from a source's stored text."""

from __future__ import annotations

from sourcedesk.core.citations.tokens import normalise_text
from sourcedesk.core.sources.extraction import Fact, extract, headcounts, source_fields

SOURCE = {
    "title": "Lumora raises $125M Series D led by Tiger Global",
    "summary": (
        "Lumora has raised $125 million in a Series D round led by Tiger Global Management. The round values "
        "the company at $1.6 billion. Lumora was founded in 2017 and employs about 350 people. Priya Raman, "
        "its chief executive, said the company launched Coach Live in June 2022."
    ),
    "facts": {"headquarters": "San Francisco"},
}


def facts() -> list[Fact]:
    return extract(source_fields(SOURCE))


def test_every_span_is_the_sources_own_words_where_it_says_it_is():
    fields = dict(source_fields(SOURCE))
    for f in facts():
        text = normalise_text(fields[f.field])
        assert text[f.start : f.start + len(f.span)] == f.span, f


def test_figures_carry_what_they_measure():
    found = {(f.kind, f.measure, f.value) for f in facts()}
    assert ("money", "valuation", "USD 1600000000") in found
    assert ("money", "raised", "USD 125000000") in found
    assert ("year", "founded", "2017") in found
    assert ("date", "launched", "2022-06") in found


def test_a_round_has_its_stage_amount_and_lead():
    rounds = [f for f in facts() if f.kind == "round"]
    assert any(
        r.value == "Series D" and r.amount == "USD 125000000" and "Tiger Global Management" in r.leads for r in rounds
    )


def test_people_products_and_organisations():
    found = facts()
    assert any(f.kind == "person" and f.value == "Priya Raman" and f.measure == "CEO" for f in found)
    assert any(f.kind == "product" and f.value == "Coach Live" for f in found)
    assert any(f.kind == "organisation" and f.value == "Tiger Global Management" for f in found)


def test_a_headcount_given_as_a_bare_number():
    assert [f.value for f in headcounts("With a headcount of 520 and three offices")] == [520.0]
    assert [f.value for f in headcounts("It employs about 350 people.")] == [350.0]
    assert headcounts("a staff of 350 spread over three offices")[0].value == 350.0
    assert len(headcounts("a staff of 350 spread over three offices")) == 1


def test_facts_survive_a_round_trip_through_json():
    for f in facts():
        assert Fact.from_json(f.to_json()) == f


def test_nothing_to_read_is_no_facts():
    assert extract([("summary", ""), ("text", "   ")]) == []
