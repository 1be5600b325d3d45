"""Properties of the support check over generated claim–source pairs (hypothesis).

* **a claim its source contradicts is never ``supported``** — another figure for the same
  quantity, the opposite direction, another year, another city, another exchange, another lead
  investor, another round — and neither is a fabricated URL substituted by such a source;
* the claim the source states, worded as the source words it, is ``supported`` (so the first
  property is not met by a check that never says ``supported``);
* a contradiction's reason quotes what the source says, not what the claim says.

Companies, people and places are invented; every pair is built from one fact and one change.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcedesk.core.citations import reconcile
from sourcedesk.core.citations.support import SUPPORTED, supports_text

COMPANIES = ["Corvane Robotics", "Hollis Pay", "Quorra Health", "Fennick Games", "Ostrava Labs", "Brisa Mobility"]
INVESTORS = ["Ridgeway Capital", "Tallis Ventures", "Morrow Partners", "Keel Growth", "Aster Fund"]
CITIES = ["Lisbon", "Dublin", "Krakow", "Austin", "Lyon", "Osaka", "Porto", "Leeds"]
EXCHANGES = ["New York Stock Exchange", "London Stock Exchange", "Nasdaq", "Euronext Paris"]
ROUNDS = ["Series A", "Series B", "Series C", "Series D"]
MEASURES = ["revenue", "annual recurring revenue", "gross merchandise volume"]
UP, DOWN = ["rose", "grew", "increased", "climbed"], ["fell", "declined", "dropped", "decreased"]
FILLER = "The company sells software to retailers and logistics firms across Europe."


@dataclass(frozen=True)
class Pair:
    source: str
    stated: str  # a claim the source states, in the source's words
    changed: str  # the same claim with one thing the source contradicts
    kind: str
    source_value: str  # what the source says about the changed thing


def _two(options: list[str]) -> st.SearchStrategy[tuple[str, str]]:
    return st.lists(st.sampled_from(options), min_size=2, max_size=2, unique=True).map(lambda xs: (xs[0], xs[1]))


@st.composite
def pairs(draw: st.DrawFn) -> Pair:
    co = draw(st.sampled_from(COMPANIES))
    kind = draw(
        st.sampled_from(
            ["amount", "direction", "year", "city", "exchange", "investor", "round", "headcount", "bare", "capacity"]
        )
    )
    year, other_year = draw(st.tuples(st.integers(2012, 2024), st.integers(1, 6)))
    if kind == "amount":
        a, b = draw(st.tuples(st.integers(2, 400), st.integers(2, 400)).filter(lambda t: t[0] != t[1]))
        fact = f"{co} raised ${{}} million in {year}."
        return Pair(f"{FILLER} {fact.format(a)}", fact.format(a), fact.format(b), kind, f"${a} million")
    if kind == "direction":
        measure = draw(st.sampled_from(MEASURES))
        up, down = draw(st.sampled_from(UP)), draw(st.sampled_from(DOWN))
        said, other = (up, down) if draw(st.booleans()) else (down, up)
        pct = draw(st.integers(3, 60))
        fact = f"{co}'s {measure} {{}} {pct}% in {year}."
        return Pair(f"{FILLER} {fact.format(said)}", fact.format(said), fact.format(other), kind, said)
    if kind == "year":
        fact = f"{co} was founded in {{}} in {draw(st.sampled_from(CITIES))}."
        return Pair(f"{FILLER} {fact.format(year)}", fact.format(year), fact.format(year - other_year), kind, str(year))
    if kind == "city":
        here, there = draw(_two(CITIES))
        fact = f"{co} is headquartered in {{}}."
        return Pair(f"{FILLER} {fact.format(here)}", fact.format(here), fact.format(there), kind, here)
    if kind == "exchange":
        here, there = draw(_two(EXCHANGES))
        fact = f"{co} is listed on the {{}}."
        return Pair(f"{FILLER} {fact.format(here)}", fact.format(here), fact.format(there), kind, here)
    if kind == "investor":
        lead, other = draw(_two(INVESTORS))
        amount = draw(st.integers(5, 300))
        fact = f"{co} raised ${amount} million in a round led by {{}}."
        return Pair(f"{FILLER} {fact.format(lead)}", fact.format(lead), fact.format(other), kind, lead)
    if kind == "round":
        said, other = draw(_two(ROUNDS))
        amount = draw(st.integers(5, 300))
        fact = f"{co} raised ${amount} million in its {{}} in {year}."
        return Pair(f"{FILLER} {fact.format(said)}", fact.format(said), fact.format(other), kind, said)
    if kind == "bare":  # a number nothing reads as a figure (no unit after it)
        a, b = draw(st.tuples(st.integers(10, 9000), st.integers(10, 9000)).filter(lambda t: t[0] != t[1]))
        fact = f"The number of {co}'s shipping customers increased to {{:,}}."
        return Pair(f"{FILLER} {fact.format(a)}", fact.format(a), fact.format(b), kind, f"{a:,}")
    if kind == "capacity":  # a decimal before a scaled unit is a quantity, not a version number
        a, b = draw(st.tuples(st.integers(2, 99), st.integers(2, 99)).filter(lambda t: t[0] != t[1]))
        fact = f"{co}'s installed capacity reached {{}} GW at the end of {year}."
        return Pair(f"{FILLER} {fact.format(a / 10)}", fact.format(a / 10), fact.format(b / 10), kind, f"{a / 10}")
    a, b = draw(st.tuples(st.integers(20, 5000), st.integers(20, 5000)).filter(lambda t: abs(t[0] - t[1]) > t[0] // 10))
    fact = f"{co} had {{:,}} employees at the end of {year}."
    return Pair(f"{FILLER} {fact.format(a)}", fact.format(a), fact.format(b), kind, f"{a:,}")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs())
def test_a_claim_its_source_contradicts_is_never_supported(pair):
    verdict = supports_text(pair.changed, pair.source)
    assert verdict.support != SUPPORTED, (pair, verdict)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs())
def test_the_claim_the_source_states_in_its_words_is_supported(pair):
    verdict = supports_text(pair.stated, pair.source)
    assert verdict.support == SUPPORTED, (pair, verdict)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs().filter(lambda p: p.kind in ("amount", "direction", "city", "exchange", "headcount")))
def test_a_contradictions_reason_quotes_what_the_source_says(pair):
    verdict = supports_text(pair.changed, pair.source)
    if verdict.contradicted:
        assert pair.source_value.split()[0].casefold() in verdict.reason.casefold(), (pair, verdict)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs())
def test_a_fabricated_url_is_never_substituted_by_a_source_that_contradicts_its_claim(pair):
    source = {"url": "https://news.example.org/story", "title": "Company news", "text": pair.source}
    draft = f"{pair.changed[:-1]} [1].\n\n[1]: https://fabricated.example.net/made-up-page\n"
    result = reconcile(draft, [], search_results=[source])
    cited = [c for c in result.report.citations if c.status == "substituted"]
    assert not cited, (pair, [(c.support, c.reason) for c in cited])


def test_a_year_in_the_source_does_not_state_a_count_close_to_it():
    """Found by the first property: 2,002 employees read as stated by "2012" (within rounding)."""
    source = f"{FILLER} Corvane Robotics had 20 employees at the end of 2012."
    for claim in ("Corvane Robotics had 2,002 employees at the end of 2012.", "Corvane Robotics had 2,012 employees."):
        verdict = supports_text(claim, source)
        assert verdict.contradicted and "20 employees" in verdict.reason, verdict
    assert supports_text("Corvane Robotics had 20 employees.", source).support == SUPPORTED
    assert (
        supports_text("Corvane Robotics had 350 employees.", "Corvane Robotics at a glance. employees: 350").support
        == SUPPORTED
    )


def test_a_sentence_opening_with_a_pronoun_is_about_the_company_of_the_sentence_before():
    """Found on heldout4 (t07): "It has 190 employees" was read as the figure of a company named "It"."""
    about = "Tessaly Freight was founded in 2018 in Rotterdam. It has 190 employees and an office in Warsaw."
    assert supports_text("Tessaly Freight employs 190 people.", about).support == SUPPORTED
    rival = "Brisa sells scooters in Spain. Molara, a Brisa rival, raised €18 million. It has 40 staff."
    verdict = supports_text("Brisa has 40 staff.", rival)
    assert (
        verdict.contradicted and verdict.reason == "the source gives 40 staff for Molara, not for the claim's company"
    )
