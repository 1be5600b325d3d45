"""Clean facts (sourcedesk.core.sources.facts): placeholders removed, key spellings collapsed, Exa shapes parsed."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourcedesk.core.sources.facts import (
    ABSENT_STRINGS,
    clean_facts,
    entity_facts,
    fact_key,
    is_absent,
    merge_facts,
    parse_summary,
)
from tests.conftest import API_FIXTURES, examples_per_pass

SENTINELS = [
    "null",
    "none",
    "n/a",
    "na",
    "nil",
    "unknown",
    "undefined",
    "not specified",
    "not found",
    "not available",
    "no data",
    "not applicable",
]


def _spellings(word: str) -> list[str]:
    return [word, word.upper(), word.title(), f"  {word}  ", f"\t{word.capitalize()}\n", f"{word}.", f"{word.upper()}!"]


def test_sentinel_list_is_the_designed_one():
    assert frozenset(SENTINELS) == ABSENT_STRINGS


@pytest.mark.parametrize("text", [s for word in SENTINELS for s in _spellings(word)])
def test_sentinels_in_any_casing_are_absent(text):
    assert is_absent(text)
    assert clean_facts({"founded_year": text}) == {}


def test_multiword_sentinels_tolerate_odd_spacing():
    assert is_absent("Not   Specified")
    assert is_absent("NOT\u00a0FOUND")


@pytest.mark.parametrize("value", [None, "", "   ", "\n\t", [], {}, (), float("nan")])
def test_empty_values_are_absent(value):
    assert is_absent(value)


@pytest.mark.parametrize(
    "value",
    [
        "Undisclosed",
        "UNDISCLOSED",
        "Bootstrapped",
        "bootstrapped.",
        0,
        0.0,
        False,
        "0",
        "No",
        "Nonexistent",
        "Unknown Corp",
        "n/a/b",
        "nan",
        "-",
        ["null"],
        {"a": None},
    ],
)
def test_real_answers_are_not_absent(value):
    assert not is_absent(value)


def test_undisclosed_and_bootstrapped_survive_cleaning():
    facts = {"funding": "Undisclosed", "Funding Stage": "Bootstrapped", "revenue": "N/A"}
    assert clean_facts(facts) == {"funding": "Undisclosed", "funding_stage": "Bootstrapped"}


def test_absent_values_are_stripped_at_every_depth():
    raw = {
        "name": " Synadia ",
        "founded": {"year": "null", "by": ["Derek Collison", "n/a", None, ""]},
        "headquarters": {"city": "Unknown", "country": "Not specified", "address": {"street": None}},
        "products": [{"name": "NATS", "license": "none"}, {"name": "N/A"}, [], {}, "  "],
        "ceo": {"name": "Derek Collison", "linkedin": "not found"},
        "employees": 0,
        "public": False,
    }
    assert clean_facts(raw) == {
        "name": "Synadia",
        "founded": {"by": ["Derek Collison"]},
        "products": [{"name": "NATS"}],
        "ceo": {"name": "Derek Collison"},
        "employees": 0,
        "public": False,
    }


def test_cleaning_does_not_modify_the_input():
    raw = {"foundedYear": "null", "hq": {"city": "N/A", "country": "US"}, "tags": ["a", None]}
    before = copy.deepcopy(raw)
    clean_facts(raw)
    assert raw == before


@pytest.mark.parametrize(
    ("key", "canonical"),
    [
        ("founded_year", "founded_year"),
        ("foundedYear", "founded_year"),
        ("FoundedYear", "founded_year"),
        ("Founded Year", "founded_year"),
        ("founded-year", "founded_year"),
        ("  Founded  year: ", "founded_year"),
        ("FOUNDED_YEAR", "founded_year"),
        ("fundingTotalUSD", "funding_total_usd"),
        ("HTTPServer", "http_server"),
        ("postalCode", "postal_code"),
        ("創業年", "創業年"),
        ("---", "---"),
    ],
)
def test_fact_key_spellings(key, canonical):
    assert fact_key(key) == canonical


def test_key_spellings_collapse_into_one_fact_first_seen_wins():
    raw = {"founded_year": "2017", "foundedYear": 2017, "Founded Year": "2017", "founded-year": "MMXVII"}
    assert clean_facts(raw) == {"founded_year": "2017"}


def test_collision_prefers_the_real_value_over_a_placeholder():
    assert clean_facts({"foundedYear": "null", "founded_year": 2017}) == {"founded_year": 2017}
    assert clean_facts({"founded_year": None, "Founded Year": "2017"}) == {"founded_year": "2017"}


def test_collision_of_two_real_different_values_keeps_the_first():
    assert clean_facts({"ceo": "Derek Collison", "CEO": "Someone Else"}) == {"ceo": "Derek Collison"}
    assert clean_facts({"hq": {"city": "LA"}, "HQ": "Los Angeles"}) == {"hq": {"city": "LA"}}


def test_collision_of_two_objects_merges_them():
    raw = {"headquarters": {"city": "LA", "country": "null"}, "Headquarters": {"city": "SF", "country": "US"}}
    assert clean_facts(raw) == {"headquarters": {"city": "LA", "country": "US"}}


def test_merge_facts_first_wins_per_canonical_key():
    merged = merge_facts(
        {"name": "Synadia", "foundedYear": 2017},
        None,
        {"founded_year": 2018, "funding_total": "N/A", "Employees": 40},
        {"fundingTotal": "$25M"},
    )
    assert merged == {"name": "Synadia", "founded_year": 2017, "employees": 40, "funding_total": "$25M"}


# --- parse_summary -------------------------------------------------------------


def test_schema_summary_arrives_as_a_json_string():
    summary = json.dumps(
        {
            "founded_year": "2017",
            "fundingTotal": "null",
            "lead_investor": "Not specified",
            "customers": ["Walmart", "N/A"],
            "stage": "Undisclosed",
        }
    )
    prose, facts = parse_summary(summary)
    assert prose == ""
    assert facts == {"founded_year": "2017", "customers": ["Walmart"], "stage": "Undisclosed"}


def test_schema_summary_prose_field_is_surfaced_once():
    prose, facts = parse_summary('{"summary": "NATS is a messaging system.", "founded_year": "2010"}')
    assert prose == "NATS is a messaging system."
    assert facts == {"founded_year": "2010"}
    prose, facts = parse_summary({"Description": "A workflow engine.", "founded": 2019})
    assert (prose, facts) == ("A workflow engine.", {"founded": 2019})
    prose, facts = parse_summary({"summary": "null", "founded": 2019})
    assert (prose, facts) == ("", {"founded": 2019})


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        (None, ("", {})),
        ("", ("", {})),
        ("N/A", ("", {})),
        ("Synadia builds NATS.", ("Synadia builds NATS.", {})),
        ("  Synadia builds NATS.\n", ("Synadia builds NATS.", {})),
        ("{not json at all", ("{not json at all", {})),
        ('{"a": 1,', ('{"a": 1,', {})),
        ("[1, 2, 3]", ("[1, 2, 3]", {})),
        ("{}", ("", {})),
        ('{"a": "null"}', ("", {})),
        ('"{\\"founded_year\\": \\"2017\\"}"', ("", {"founded_year": "2017"})),  # double-encoded
        ('```json\n{"founded_year": "2017"}\n```', ("", {"founded_year": "2017"})),
        (42, ("", {})),
        ("[" * 100_000, ("[" * 100_000, {})),
    ],
)
def test_parse_summary_never_raises(summary, expected):
    assert parse_summary(summary) == expected


def test_parse_summary_survives_pathologically_deep_json():
    deep = '{"a": ' * 50_000 + "1" + "}" * 50_000
    prose, facts = parse_summary(deep)
    assert facts == {} and prose == deep


# --- entities ------------------------------------------------------------------


def _entities_payload() -> list[dict]:
    return json.loads((API_FIXTURES / "exa-search-company-entities.json").read_text(encoding="utf-8"))["results"]


def test_company_entity_flattens_into_readable_facts():
    facts = entity_facts(_entities_payload()[0]["entities"])
    assert facts == {
        "name": "Harbor Relay",
        "description": "Edge messaging software",
        "founded_year": 2019,
        "headquarters": {"address": "8 Quay Road", "city": "Rotterdam", "postal_code": "3011", "country": "NL"},
        "employees": 34,
        "revenue_annual": 4200000,
        "funding_total": 18000000,
        "funding_latest_round": {"name": "Series A", "date": "2024-02-20", "amount": 12000000},
        "web_visits_monthly": 48211,
    }
    assert list(facts)[:3] == ["name", "description", "founded_year"]


def test_company_entity_with_explicit_nulls_keeps_only_the_name():
    assert entity_facts(_entities_payload()[1]["entities"]) == {"name": "Nameless Ltd"}


@pytest.mark.parametrize(
    "entities",
    [
        None,
        "entities",
        3,
        [],
        [None, "x", 1],
        [{"type": "company"}],
        [{"type": "company", "properties": None}],
        [{"type": "company", "properties": "Exa"}],
        {"type": "company"},
    ],
)
def test_malformed_entities_give_no_facts(entities):
    assert entity_facts(entities) == {}


def test_entity_wrappers_keep_unknown_fields_and_odd_shapes():
    facts = entity_facts(
        [
            {
                "type": "company",
                "properties": {
                    "name": "Synadia",
                    "founded_year": "null",
                    "FoundedYear": 2017,
                    "workforce": {"total": 40, "engineers": 25},
                    "financials": {"fundingTotal": "Undisclosed", "revenueAnnual": None},
                    "webTraffic": "n/a",
                    "ticker": "none",
                    "industry": "Messaging infrastructure",
                },
            }
        ]
    )
    assert facts == {
        "name": "Synadia",
        "founded_year": 2017,
        "employees": 40,
        "funding_total": "Undisclosed",
        "workforce": {"engineers": 25},
        "industry": "Messaging infrastructure",
    }


def test_several_entities_merge_first_wins_and_single_object_is_accepted():
    company = {"type": "company", "properties": {"name": "Kestra", "foundedYear": 2019}}
    person = {"type": "person", "properties": {"name": "Someone", "location": "Paris"}}
    assert entity_facts([company, person]) == {"name": "Kestra", "founded_year": 2019, "location": "Paris"}
    assert entity_facts(company) == {"name": "Kestra", "founded_year": 2019}


# --- properties ----------------------------------------------------------------

KEYS = st.one_of(
    st.sampled_from(["founded_year", "foundedYear", "Founded Year", "founded-year", "name", "HQ", "hq", "a", "A"]),
    st.text(min_size=0, max_size=8),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.sampled_from([s for word in SENTINELS for s in _spellings(word)] + ["Undisclosed", "Bootstrapped", " x "]),
    st.text(max_size=12),
)
FACTS = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=5)),
    max_leaves=25,
)


def _assert_nothing_absent(value):
    assert not is_absent(value), value
    if isinstance(value, dict):
        for key, item in value.items():
            assert key == fact_key(key)
            _assert_nothing_absent(item)
    elif isinstance(value, list):
        for item in value:
            _assert_nothing_absent(item)


@settings(max_examples=examples_per_pass(100))
@given(st.dictionaries(KEYS, FACTS, max_size=6))
def test_property_clean_facts_is_idempotent_and_leaves_nothing_absent(raw):
    once = clean_facts(raw)
    assert clean_facts(once) == once
    assert isinstance(once, dict)
    for key, value in once.items():
        assert key == fact_key(key)
        _assert_nothing_absent(value)


@settings(max_examples=examples_per_pass(100))
@given(FACTS)
def test_property_clean_facts_on_any_value(raw):
    once = clean_facts(raw)
    assert clean_facts(once) == once
    if isinstance(once, (dict, list)):
        for item in once.values() if isinstance(once, dict) else once:
            _assert_nothing_absent(item)
    else:
        assert once is None or not is_absent(once)
