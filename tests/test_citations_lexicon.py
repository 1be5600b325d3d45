"""The finance and company lexicon: each term of art is one term however it is spelled, and the
file that says so is curated (no spelling means two things) and ships with the package."""

from __future__ import annotations

from importlib.resources import files

import pytest
import yaml

from sourcedesk.core.citations.lexicon import DOWN, UP, build, lexicon
from sourcedesk.core.citations.tokens import terms


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("ARR", "annual recurring revenue"),
        ("MRR", "monthly recurring revenue"),
        ("GMV", "gross merchandise volume"),
        ("YoY", "year over year"),
        ("YoY", "year-over-year"),
        ("IPO", "initial public offering"),
        ("M&A", "mergers and acquisitions"),
        ("CFO", "chief financial officer"),
        ("headcount", "employees"),
        ("headcount", "workforce"),
        ("layoffs", "job cuts"),
        ("CAGR", "compound annual growth rate"),
    ],
)
def test_an_abbreviation_and_its_expansion_are_one_term(short, long):
    assert terms(short) == terms(long) and len(terms(short)) == 1


def test_an_exchange_is_one_term_and_also_states_its_city():
    """ "NYSE" and "New York Stock Exchange" are one term, and both say New York: a claim that a
    company is listed in London meets a source's "London Stock Exchange" (whose words are the term)."""
    assert terms("NYSE") == terms("New York Stock Exchange") == ["nyse", "new", "york"]
    assert terms("LSE") == terms("London Stock Exchange") == ["lse", "london"]
    assert "london" in terms("listed on the LSE") and "lse" not in terms("listed in London")


def test_a_claim_with_arr_meets_a_source_that_spells_it_out():
    from sourcedesk.core.citations.support import SUPPORTED, supports_text

    v = supports_text(
        "Halden's ARR reached $48 million in 2024.",
        "Halden said annual recurring revenue reached $48 million in 2024.",
    )
    assert v.support == SUPPORTED


def test_every_spelling_belongs_to_one_concept_only():
    data = yaml.safe_load(files("sourcedesk.core.citations").joinpath("lexicon.yaml").read_text(encoding="utf-8"))
    seen: dict[str, str] = {}
    for entry in data["terms"]:
        for form in entry["forms"]:
            key = " ".join(form.casefold().replace("-", " ").split())
            assert seen.setdefault(key, entry["term"]) == entry["term"], (
                f"{form!r} is both {seen[key]} and {entry['term']}"
            )
    ups, downs = set(data["directions"]["up"]), set(data["directions"]["down"])
    assert not ups & downs


def test_direction_words():
    assert lexicon().direction("Rose") == UP and lexicon().direction("declined") == DOWN
    assert lexicon().direction("said") is None


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"terms": [{"term": "ARR"}]}, "forms"),
        ({"terms": [], "words": [["alone"]]}, "two words"),
        ("not a mapping", "mapping"),
    ],
)
def test_a_malformed_lexicon_is_refused_with_what_is_wrong(data, named):
    with pytest.raises(ValueError, match=named):
        build(data)


def test_the_lexicon_ships_inside_the_package():

    assert files("sourcedesk.core.citations").joinpath("lexicon.yaml").is_file()
