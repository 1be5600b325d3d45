"""The sandbox's Exa /search half and its corpus, exercised over a real loopback socket."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.sandbox.corpus import SANDBOX_LABEL, load_corpus
from sourcedesk.sandbox.server import SandboxServer
from tests.conftest import API_FIXTURES as TESTDATA

KEY = "exa-test-key"
CRESTA_QUERY = "Cresta AI contact center funding customers"
CRESTA_IMPOSTORS = {"alcresta.com", "codecresta.com", "ridgecresta.com", "cresta.com.au", "grupocresta.com.gt"}


def bare(url: str) -> str:
    host = host_of(url) or ""
    return host[4:] if host.startswith("www.") else host


@pytest.fixture(scope="module")
def server():
    # Rate limiting has its own test in test_sandbox_server.py; here it would only add flakiness.
    with SandboxServer(exa_key=KEY, exa_rps=None) as sb:
        yield sb


@pytest.fixture(scope="module")
def exa(server):
    with httpx.Client(base_url=server.url, headers={"x-api-key": KEY}, timeout=10) as client:
        yield client


@pytest.fixture(scope="module")
def http():
    """A client without default headers (creating one costs ~0.15 s: share it)."""
    with httpx.Client(timeout=10) as client:
        yield client


def search(client: httpx.Client, **body) -> dict:
    r = client.post("/search", json=body)
    assert r.status_code == 200, r.text
    return r.json()


# ----------------------------------------------------------------------------- domain filters


def test_include_domains_is_a_substring_match_that_returns_the_cresta_impostors(exa):
    data = search(exa, query=CRESTA_QUERY, numResults=40, includeDomains=["cresta.com"])
    hosts = {bare(r["url"]) for r in data["results"]}
    assert {"cresta.com", "docs.cresta.com"} <= hosts
    assert hosts >= CRESTA_IMPOSTORS
    assert all("cresta.com" in h for h in hosts)


def test_unpinned_cresta_query_ranks_the_real_cresta_first_but_surfaces_impostors(exa):
    results = search(exa, query=CRESTA_QUERY, numResults=20)["results"]
    assert bare(results[0]["url"]) == "cresta.com"
    assert {bare(r["url"]) for r in results} & CRESTA_IMPOSTORS


def test_exclude_domains_is_a_substring_match_too(exa):
    results = search(exa, query=CRESTA_QUERY, numResults=40, excludeDomains=["cresta.com"])["results"]
    assert results, "other contact-center pages remain"
    assert not any("cresta.com" in bare(r["url"]) for r in results)


def test_unpinned_nats_query_mixes_the_messaging_system_and_air_traffic_control(exa):
    hosts = {bare(r["url"]) for r in search(exa, query="NATS messaging funding", numResults=10)["results"]}
    assert "nats.aero" in hosts
    assert hosts & {"nats.io", "synadia.com", "docs.nats.io"}


def test_kestra_query_surfaces_the_medical_and_financial_namesakes(exa):
    hosts = {bare(r["url"]) for r in search(exa, query="Kestra company funding", numResults=20)["results"]}
    assert "kestra.io" in hosts
    assert {"kestramedical.com", "kestrafinancial.com"} <= hosts


@pytest.mark.parametrize(
    "extra",
    [
        {"category": "company", "excludeDomains": ["github.com"]},
        {"category": "company", "startPublishedDate": "2024-01-01T00:00:00.000Z"},
        {"category": "company", "endPublishedDate": "2025-01-01"},
        {"category": "people", "excludeDomains": ["linkedin.com"]},
        {"category": "people", "startPublishedDate": "2024-01-01"},
    ],
)
def test_exclusions_or_dates_with_company_or_people_category_are_refused(exa, extra):
    r = exa.post("/search", json={"query": "Synadia", **extra})
    assert r.status_code == 400
    body = r.json()
    assert set(body) == {"requestId", "error", "tag"}
    assert body["tag"] == "INVALID_REQUEST"


def test_exclusions_with_other_categories_are_accepted(exa):
    data = search(exa, query="contact center AI funding", category="news", excludeDomains=["cresta.com"])
    assert data["results"]


def test_include_and_exclude_in_one_call_is_refused_sandbox_rule(exa):
    r = exa.post("/search", json={"query": "NATS", "includeDomains": ["nats.io"], "excludeDomains": ["github.com"]})
    assert r.status_code == 400
    assert r.json()["tag"] == "INVALID_REQUEST"


def test_domain_lists_are_capped_at_1200(exa):
    many = [f"site{i}.example" for i in range(1200)]
    assert exa.post("/search", json={"query": "NATS", "excludeDomains": many}).status_code == 200
    r = exa.post("/search", json={"query": "NATS", "excludeDomains": [*many, "one-too-many.example"]})
    assert r.status_code == 400
    assert "1200" in r.json()["error"]


def test_company_category_keeps_only_company_pages(exa):
    results = search(exa, query="NATS messaging funding", category="company", numResults=30)["results"]
    urls = {r["url"] for r in results}
    assert "https://www.synadia.com/" in urls
    assert not any(host_of(u) in {"techcrunch.com", "docs.nats.io", "www.reddit.com"} for u in urls)


def test_published_date_window_filters_and_drops_undated_pages(exa):
    results = search(
        exa,
        query="funding series round",
        numResults=50,
        startPublishedDate="2025-01-01T00:00:00.000Z",
        endPublishedDate="2025-06-30",
    )["results"]
    assert results
    for r in results:
        assert "2025-01-01" <= r["publishedDate"][:10] <= "2025-06-30"


# ----------------------------------------------------------------------------- request validation


@pytest.mark.parametrize("num", [0, 101, -3, "5", True, 2.5])
def test_num_results_outside_1_to_100_is_a_400(exa, num):
    r = exa.post("/search", json={"query": "NATS", "numResults": num})
    assert r.status_code == 400
    assert "numResults" in r.json()["error"]


def test_num_results_bounds_are_honoured(exa):
    assert len(search(exa, query="NATS messaging", numResults=1)["results"]) == 1
    assert len(search(exa, query="company funding customers platform")["results"]) == 10  # default
    assert len(search(exa, query="company funding customers platform", numResults=100)["results"]) > 10


@pytest.mark.parametrize(
    "body",
    [{}, {"query": ""}, {"query": "   "}, {"query": 42}, {"numResults": 5}, ["query", "NATS"]],
)
def test_missing_or_empty_query_is_a_400(exa, body):
    r = exa.post("/search", json=body)
    assert r.status_code == 400
    assert r.json()["tag"] == "INVALID_REQUEST_BODY"


def test_invalid_json_body_is_a_400_in_exa_error_shape(exa):
    r = exa.post("/search", content=b'{"query": "NATS"', headers={"content-type": "application/json"})
    assert r.status_code == 400
    body = r.json()
    assert set(body) == {"requestId", "error", "tag"}


def test_bad_dates_and_types_are_400(exa):
    assert exa.post("/search", json={"query": "x", "startPublishedDate": "last week"}).status_code == 400
    assert exa.post("/search", json={"query": "x", "type": "telepathic"}).status_code == 400
    assert exa.post("/search", json={"query": "x", "category": 7}).status_code == 400
    assert exa.post("/search", json={"query": "x", "contents": {"text": {"maxCharacters": 0}}}).status_code == 400
    assert exa.post("/search", json={"query": "x", "contents": {"summary": {"schema": "json"}}}).status_code == 400


# ----------------------------------------------------------------------------- auth


def test_bearer_and_x_api_key_both_authenticate(server, http):
    body = {"query": "NATS", "numResults": 1}
    assert http.post(f"{server.url}/search", json=body, headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    assert http.post(f"{server.url}/search", json=body, headers={"x-api-key": KEY}).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [{}, {"x-api-key": "wrong"}, {"Authorization": "Bearer wrong"}, {"Authorization": KEY}, {"x-api-key": ""}],
)
def test_missing_or_wrong_key_is_a_401_in_exa_error_shape(server, http, headers):
    r = http.post(f"{server.url}/search", json={"query": "NATS"}, headers=headers)
    assert r.status_code == 401
    body = r.json()
    assert set(body) == {"requestId", "error", "tag"}
    assert KEY not in r.text


def test_without_a_configured_key_any_non_empty_key_is_accepted(http):
    with SandboxServer(exa_rps=None) as sb:
        ok = http.post(f"{sb.url}/search", json={"query": "NATS"}, headers={"x-api-key": "anything"})
        missing = http.post(f"{sb.url}/search", json={"query": "NATS"})
    assert ok.status_code == 200
    assert missing.status_code == 401


# ----------------------------------------------------------------------------- response shape


def test_response_carries_request_id_search_time_and_cost(exa):
    data = search(exa, query="NATS messaging", numResults=5)
    assert re.fullmatch(r"[0-9a-f]{32}", data["requestId"])
    assert isinstance(data["searchTime"], float) and data["searchTime"] > 0
    assert data["costDollars"]["total"] == pytest.approx(0.007)
    assert "resolvedSearchType" not in data  # removed from responses on 2026-05-01
    assert "warnings" not in data  # nothing to warn about in a current request


def test_cost_adds_per_page_content_and_extra_results(exa):
    five = search(exa, query="NATS messaging", numResults=5, contents={"text": True, "summary": True})
    assert len(five["results"]) == 5
    assert five["costDollars"]["total"] == pytest.approx(0.007 + 2 * 5 * 0.001)
    many = search(exa, query="company funding customers platform", numResults=25)
    n = len(many["results"])
    assert n > 10
    assert many["costDollars"]["total"] == pytest.approx(0.007 + (n - 10) * 0.001)


def test_cost_shape_varies_but_total_is_always_there(exa):
    shapes = set()
    for i in range(12):
        cost = search(exa, query=f"messaging platform {i}", numResults=3, contents={"text": True})["costDollars"]
        assert "total" in cost
        shapes.add(tuple(sorted(cost)))
    assert len(shapes) >= 2


def test_no_contents_requested_means_no_text_summary_or_highlights(exa):
    for r in search(exa, query="Synadia NATS", numResults=10)["results"]:
        assert {"id", "url", "title"} <= set(r)
        assert not {"text", "summary", "highlights", "highlightScores"} & set(r)


def test_text_is_truncated_to_max_characters_and_labelled(exa):
    results = search(exa, query="JetStream streams consumers", numResults=3, contents={"text": {"maxCharacters": 120}})[
        "results"
    ]
    for r in results:
        assert len(r["text"]) == 120
        assert r["text"].startswith(SANDBOX_LABEL)
    full = search(exa, query="JetStream streams consumers", numResults=1, contents={"text": True})["results"][0]
    assert len(full["text"]) > 8000  # the long JetStream chapter, untruncated


def test_plain_summary_is_prose_not_json(exa):
    result = search(exa, query="Synadia about investors", numResults=1, contents={"summary": True})["results"][0]
    page = next(p for p in load_corpus() if p.url == result["url"])
    assert result["summary"] == page.summary


SCHEMA = {
    "type": "object",
    "properties": {
        "founded_year": {"type": "string"},
        "funding": {"type": "string"},
        "notable_customers": {"type": "array", "items": {"type": "string"}},
        "ceo_name": {"type": "string"},
    },
}


def test_schema_summary_is_a_json_string_with_null_strings_or_omissions_for_missing_facts(exa):
    body = {"query": CRESTA_QUERY, "numResults": 30, "contents": {"summary": {"query": "facts", "schema": SCHEMA}}}
    results = search(exa, **body)["results"]
    parsed = []
    for r in results:
        assert isinstance(r["summary"], str)
        parsed.append(json.loads(r["summary"]))
    # No page has a CEO fact: some pages say the word "null", others leave the field out.
    assert any(p.get("ceo_name") == "null" for p in parsed)
    assert any("ceo_name" not in p for p in parsed)
    home = json.loads(next(r for r in results if r["url"] == "https://cresta.com/")["summary"])
    assert home["founded_year"] == "2017"
    assert "Intuit" in home["notable_customers"]
    # Deterministic: the same request gives the same summaries.
    again = search(exa, **body)["results"]
    assert [r["summary"] for r in again] == [r["summary"] for r in results]


def test_schema_summary_reads_facts_under_other_spellings(exa):
    schema = {"type": "object", "properties": {"foundedYear": {"type": "string"}, "customers": {"type": "array"}}}
    result = search(
        exa,
        query="Synadia company",
        numResults=10,
        includeDomains=["synadia.com"],
        contents={"summary": {"schema": schema}},
    )["results"]
    home = json.loads(next(r for r in result if r["url"] == "https://www.synadia.com/")["summary"])
    assert home["foundedYear"] == "2017"
    assert "NVIDIA" in home["customers"]


def test_company_results_carry_an_entities_array_with_explicit_nulls(exa):
    results = search(exa, query=CRESTA_QUERY, category="company", numResults=20, includeDomains=["cresta.com"])[
        "results"
    ]
    by_url = {r["url"]: r for r in results}
    entities = by_url["https://cresta.com/"]["entities"]
    assert isinstance(entities, list) and len(entities) == 1
    entity = entities[0]
    assert entity["type"] == "company" and entity["version"] == 1 and entity["id"].startswith("https://")
    props = entity["properties"]
    assert set(props) == {"name", "description", "foundedYear", "workforce", "headquarters", "financials", "webTraffic"}
    assert props["name"] == "Cresta" and props["foundedYear"] == 2017
    assert props["financials"]["revenueAnnual"] is None  # explicit null, key present
    assert props["financials"]["fundingLatestRound"]["name"] == "Series D"
    assert set(props["headquarters"]) == {"address", "city", "postalCode", "country"}
    dev_shop = by_url["https://codecresta.com/"]["entities"][0]["properties"]
    assert dev_shop["financials"] is None and dev_shop["webTraffic"] is None


def test_entities_appear_only_for_company_category(exa):
    results = search(exa, query=CRESTA_QUERY, numResults=10)["results"]
    assert not any("entities" in r for r in results)


def test_highlights_fit_max_characters_and_carry_no_scores(exa):
    results = search(
        exa, query="JetStream key-value store", numResults=3, contents={"highlights": {"maxCharacters": 300}}
    )["results"]
    for r in results:
        assert len(r["highlights"]) == 1 and "highlightScores" not in r  # scores left responses in 2026
        assert all(isinstance(h, str) and h and len(h) <= 300 and SANDBOX_LABEL not in h for h in r["highlights"])
    assert any("key-value" in h.lower() for h in results[0]["highlights"])


def test_retired_parameters_are_ignored_with_exa_warnings(exa):
    data = search(
        exa,
        query="JetStream key-value store",
        numResults=2,
        useAutoprompt=True,
        startCrawlDate="2024-01-01",
        contents={"highlights": {"numSentences": 1, "highlightsPerUrl": 3}, "livecrawl": "true"},
    )
    codes = [w["code"] for w in data["warnings"]]
    messages = " ".join(w["message"] for w in data["warnings"])
    assert codes.count("deprecated_parameter") == 5
    for name in ("useAutoprompt", "startCrawlDate", "numSentences", "highlightsPerUrl", "livecrawl"):
        assert name in messages
    # numSentences became a character budget (about 1,333 a sentence), one highlight per page
    assert all(len(r["highlights"]) == 1 and len(r["highlights"][0]) <= 1333 for r in data["results"])


def test_a_stale_category_is_accepted_but_steers_nothing(exa):
    stale = search(exa, query="NATS messaging", numResults=5, category="research paper")
    plain = search(exa, query="NATS messaging", numResults=5)
    assert [r["url"] for r in stale["results"]] == [r["url"] for r in plain["results"]]
    [warning] = stale["warnings"]
    assert warning["code"] == "unknown_category" and "publication" in warning["message"]


def test_some_titles_come_back_empty_deterministically(exa):
    corpus_titles = {p.url: p.title for p in load_corpus()}
    first = search(exa, query="company funding customers platform messaging", numResults=100)["results"]
    blank = [r for r in first if r["title"] == ""]
    assert blank, "some pages should have an empty title, as the live API does"
    assert len(blank) < len(first) / 2
    assert all(corpus_titles[r["url"]] for r in blank)  # the page has a title; the API dropped it
    second = search(exa, query="company funding customers platform messaging", numResults=100)["results"]
    assert [r["title"] for r in second] == [r["title"] for r in first]


def test_optional_fields_are_omitted_not_null(exa):
    corpus = {p.url: p for p in load_corpus()}
    results = search(exa, query="company funding customers platform messaging", numResults=100)["results"]
    undated = [r for r in results if not corpus[r["url"]].published]
    assert undated and all("publishedDate" not in r for r in undated)
    authored = [r for r in results if corpus[r["url"]].author]
    assert any("author" not in r for r in authored), "author is often omitted even when known"
    assert all(r.get("author") is not None for r in results if "author" in r)


def test_scores_are_sometimes_omitted_and_no_resolved_search_type(exa):
    seen: dict[bool, dict[str, Any]] = {}
    for i in range(15):
        data = search(exa, query=f"nats messaging {i}", numResults=3)
        assert "resolvedSearchType" not in data
        seen.setdefault(all("score" in r for r in data["results"]), data)
    assert set(seen) == {True, False}
    assert all("score" not in r for r in seen[False]["results"])
    assert all(0 < r["score"] < 1 for r in seen[True]["results"])


def test_results_are_deterministic_for_the_same_request(exa):
    a = search(exa, query="workflow orchestration competitors", numResults=10)["results"]
    b = search(exa, query="workflow orchestration competitors", numResults=10)["results"]
    assert [r["url"] for r in a] == [r["url"] for r in b]


def test_error_body_shape_matches_exas_402_shape(http):
    real = json.loads((TESTDATA / "exa-error-402.json").read_text())
    with SandboxServer(faults=["exa:402"], exa_rps=None) as sb:
        r = http.post(f"{sb.url}/search", json={"query": "NATS"}, headers={"x-api-key": "k"})
    assert r.status_code == 402
    assert set(r.json()) == set(real)
    assert r.json()["tag"] == real["tag"] == "NO_MORE_CREDITS"


# ----------------------------------------------------------------------------- corpus

NAMESAKE_HOSTS = {
    "nats.io",
    "docs.nats.io",
    "synadia.com",
    "nats.aero",
    "cresta.com",
    "docs.cresta.com",
    *CRESTA_IMPOSTORS,
    "kestra.io",
    "kestramedical.com",
    "kestrafinancial.com",
}
AGGREGATOR_HOSTS = {"github.com", "en.wikipedia.org", "linkedin.com", "reddit.com", "medium.com"}
COMPETITOR_HOSTS = {
    "confluent.io",
    "rabbitmq.com",
    "redpanda.com",
    "solace.com",
    "streamnative.io",
    "astronomer.io",
    "prefect.io",
    "dagster.io",
    "temporal.io",
    "observe.ai",
    "asapp.com",
    "uniphore.com",
}


def test_corpus_has_at_least_60_labelled_pages_with_unique_urls():
    pages = load_corpus()
    assert len(pages) >= 60
    assert all(p.text.startswith(SANDBOX_LABEL) for p in pages)
    keys = [normalise_url(p.url) for p in pages]
    assert len(set(keys)) == len(keys)


def test_corpus_covers_namesakes_competitors_and_aggregators():
    hosts = {bare(p.url) for p in load_corpus()}
    assert hosts >= NAMESAKE_HOSTS
    assert hosts >= COMPETITOR_HOSTS
    assert hosts >= AGGREGATOR_HOSTS


def test_corpus_page_sizes_exercise_the_budget():
    sizes = [len(p.text) - len(SANDBOX_LABEL) for p in load_corpus()]
    long_pages = [n for n in sizes if n > 3000]
    assert len(long_pages) >= 3 and all(8000 <= n <= 20000 for n in long_pages)
    assert all(n >= 600 for n in sizes)


def test_corpus_pages_are_consistent():
    for page in load_corpus():
        assert page.title and page.summary, page.url
        if page.entity is not None:
            assert page.entity.get("name"), page.url
        if bare(page.url) in CRESTA_IMPOSTORS:
            assert re.search(r"contact|customer|funding", page.text, re.I), page.url
    company_facts = [p for p in load_corpus() if p.facts]
    assert any("founded_year" not in p.facts for p in company_facts), "some pages must lack some facts"
    assert sum(p.entity is not None for p in load_corpus()) >= 15


def test_corpus_loader_names_the_bad_file(tmp_path):
    (tmp_path / "bad.yaml").write_text("- url: https://x.example/\n  title: X\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.yaml.*x\.example"):
        load_corpus(str(tmp_path))
