"""The Exa client: request shape, tolerant parsing, errors an analyst can act on, retries."""

from __future__ import annotations

import asyncio
import json
import logging
import random

import httpx
import pytest
import respx

from sourcedesk.core.net.policy import RetryPolicy
from sourcedesk.core.sources.providers.exa.client import ExaClient
from sourcedesk.core.sources.providers.exa.errors import ExaError
from sourcedesk.core.sources.providers.exa.request import build_search_body
from sourcedesk.core.sources.providers.exa.response import ExaSearchResult, parse_cost, parse_search_response
from tests.conftest import API_FIXTURES
from tests.virtual_time import run_virtual

BASE = "http://exa.test"
URL = f"{BASE}/search"
KEY = "exa-test-key-4f9c2d1e8b7a"
API = API_FIXTURES


def _load(name: str):
    return json.loads((API / name).read_text(encoding="utf-8"))


def _ok(results=None, **extra):
    body = {"requestId": "r1", "results": results if results is not None else [{"url": "https://nats.io/"}]}
    body.update(extra)
    return httpx.Response(200, json=body)


_RETRY3 = RetryPolicy(max_retries=3)


def _search(responses, *, body=None, retry=_RETRY3, key=KEY, timeout=30, rng_seed=7):
    """Serve ``responses`` in order to one ``search``; returns (result or ExaError, sleeps, route, client)."""
    sleeps: list[float] = []

    async def fake_sleep(s: float) -> None:
        sleeps.append(s)

    async def go():
        with respx.mock(assert_all_called=False) as mock:
            route = mock.post(URL).mock(side_effect=list(responses))
            client = ExaClient(BASE, key, retry=retry, sleep=fake_sleep, rng=random.Random(rng_seed), timeout=timeout)
            out: ExaSearchResult | ExaError
            try:
                out = await client.search(body or build_search_body("nats messaging"))
            except ExaError as err:
                out = err
            finally:
                await client.aclose()
            return out, route, client

    out, route, client = asyncio.run(go())
    return out, sleeps, route, client


# ----------------------------------------------------------------------------- request body


def test_body_is_camel_case_with_contents():
    body = build_search_body(
        "cresta overview",
        num_results=6,
        category="news",
        type="auto",
        include_domains=["cresta.com"],
        summary={"query": "Founded when?", "schema": {"type": "object", "properties": {"x": {"type": "string"}}}},
        text={"maxCharacters": 2000},
        highlights=True,
        start_published_date="2024-01-01",
    )
    assert body == {
        "query": "cresta overview",
        "numResults": 6,
        "category": "news",
        "type": "auto",
        "includeDomains": ["cresta.com"],
        "startPublishedDate": "2024-01-01",
        "contents": {
            "summary": {
                "query": "Founded when?",
                "schema": {"type": "object", "properties": {"x": {"type": "string"}}},
            },
            "text": {"maxCharacters": 2000},
            "highlights": {},
        },
    }


def test_body_omits_what_was_not_asked_for():
    assert build_search_body("q") == {"query": "q", "numResults": 10}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_results": 0},
        {"num_results": 101},
        {"exclude_domains": [f"d{i}.com" for i in range(1201)]},
        {"include_domains": [f"d{i}.com" for i in range(1201)]},
    ],
)
def test_body_refuses_what_exa_would_refuse(kwargs):
    with pytest.raises(ValueError):
        build_search_body("q", **kwargs)


def test_body_allows_the_documented_maximums():
    body = build_search_body("q", num_results=100, exclude_domains=[f"d{i}.com" for i in range(1200)])
    assert body["numResults"] == 100 and len(body["excludeDomains"]) == 1200


# ----------------------------------------------------------------------------- parsing


def test_recorded_live_response_parses_with_blank_titles_and_ms_search_time():
    result = parse_search_response(_load("exa-search-sparse.json"))
    assert [r.title for r in result.results][:2] == ["", ""]
    assert result.results[2].url == "https://github.com/harborrelay/relay"
    assert all(r.score is None and r.published_date is None for r in result.results)
    assert result.search_time_ms == 845.9
    assert result.cost_total == pytest.approx(0.005)
    assert result.request_id == "0c5f2e7a91d84b3fa6e21d7c9b04e5aa"


def test_company_entities_response_keeps_entity_arrays():
    result = parse_search_response(_load("exa-search-company-entities.json"))
    exa = result.results[0]
    assert exa.entities[0]["properties"]["financials"]["fundingTotal"] == 18000000
    assert exa.highlights == ["Harbor Relay moves messages between devices that are rarely online."]
    assert (
        result.results[1].title == "Nameless Ltd" and result.results[1].entities[0]["properties"]["foundedYear"] is None
    )


def test_openapi_example_response_parses_every_documented_field():
    r = parse_search_response(_load("exa-search-full.json")).results[0]
    assert r.url == "https://harborrelay.dev/blog/intermittent-links.pdf"
    assert r.published_date == "2024-03-05T09:12:44.120Z"
    assert r.author.startswith("Ines Okafor")
    assert isinstance(r.summary, str) and r.summary.startswith("This post explains")
    assert r.text.startswith("Abstract")


def test_results_without_a_url_are_skipped_not_fatal():
    result = parse_search_response(
        {
            "results": [
                {"title": "no url"},
                "junk",
                {"url": "https://a.com/x", "title": None, "score": "high", "highlights": [1, "ok"], "summary": 5},
            ]
        }
    )
    assert [r.url for r in result.results] == ["https://a.com/x"]
    assert result.skipped == 2
    only = result.results[0]
    assert only.title == "" and only.score is None and only.highlights == ["ok"] and only.summary is None


@pytest.mark.parametrize(
    "cost, total",
    [
        ({"total": 0.012, "search": {"neural": 0.007}}, 0.012),
        (0.009, 0.009),
        ({"search": {"neural": 0.007}, "contents": {"text": 0.002}}, 0.009),
        ({"total": 0.05, "breakDown": [{"search": 0.04}]}, 0.05),
        (None, 0.0),
        ("0.5", 0.0),
    ],
)
def test_cost_is_read_from_every_shape(cost, total):
    assert parse_cost(cost) == pytest.approx(total)


# ----------------------------------------------------------------------------- success, logging, auth


def test_search_sends_bearer_key_logs_cost_and_counts_requests(caplog):
    caplog.set_level(logging.INFO, logger="sourcedesk.exa")
    out, _sleeps, route, client = _search([_ok(costDollars={"total": 0.0123}, searchTime=812.5)])
    assert out.results[0].url == "https://nats.io/"
    sent = route.calls.last.request
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(sent.content) == {"query": "nats messaging", "numResults": 10}
    assert out.cost_total == pytest.approx(0.0123) and out.search_time_ms == 812.5 and out.requests == 1
    assert client.requests_sent == 1 == route.call_count
    assert "$0.0123" in caplog.text
    assert KEY not in caplog.text and KEY not in repr(client)


def test_missing_key_fails_before_any_request():
    out, _, route, client = _search([_ok()], key=None)
    assert isinstance(out, ExaError) and out.kind == "auth" and "EXA_API_KEY" in str(out)
    assert route.call_count == 0 and client.requests_sent == 0


# ----------------------------------------------------------------------------- errors that are answers


@pytest.mark.parametrize(
    "status, kind, words",
    [
        (400, "bad_request", "numResults must be 1-100"),
        (401, "auth", "EXA_API_KEY"),
        (402, "payment", "You have no credits left"),
        (403, "forbidden", "403"),
        (404, "not_found", "SOURCEDESK_EXA_URL"),
        (422, "bad_request", "numResults must be 1-100"),
    ],
)
def test_client_errors_are_not_retried_and_say_what_happened(status, kind, words):
    body = (
        _load("exa-error-402.json")
        if status == 402
        else {"requestId": "r", "error": "numResults must be 1-100", "tag": "X"}
    )
    out, sleeps, route, _client = _search([httpx.Response(status, json=body), _ok()])
    assert isinstance(out, ExaError)
    assert out.kind == kind and out.status == status
    assert words in out.message
    assert route.call_count == 1 and sleeps == [] and out.requests == 1
    assert KEY not in out.message and "authorization" not in out.message.lower()


def test_error_text_that_echoes_the_key_is_redacted():
    out, *_ = _search([httpx.Response(400, json={"error": f"bad key prefix {KEY}"})])
    assert KEY not in out.message and "[redacted]" in out.message


def test_a_demo_key_shorter_than_a_real_one_leaves_ordinary_words_alone():
    """EXA_API_KEY=sandbox (the offline demo): a title saying "sandbox" is not an echoed key."""
    results = [{"url": "https://nats.io/sandbox", "title": "NATS sandbox playground"}]
    out, *_ = _search([_ok(results)], key="sandbox")
    assert [(r.url, r.title) for r in out.results] == [("https://nats.io/sandbox", "NATS sandbox playground")]
    assert out.keys_redacted == 0


# ----------------------------------------------------------------------------- transient errors


def test_429_honours_retry_after_then_succeeds():
    out, sleeps, route, client = _search([httpx.Response(429, headers={"Retry-After": "2"}, json={}), _ok()])
    assert out.results and sleeps == [2.0]
    assert route.call_count == 2 == client.requests_sent == out.requests


def test_429_after_retries_is_rate_limited():
    out, sleeps, route, _ = _search([httpx.Response(429, json={})] * 4)
    assert isinstance(out, ExaError) and out.kind == "rate_limited" and out.status == 429
    assert route.call_count == 4 and len(sleeps) == 3 and out.requests == 4
    assert "4 attempts" in out.message


def test_backoff_is_exponential_with_bounded_jitter():
    policy = RetryPolicy(max_retries=4, base_delay_s=0.5, max_delay_s=8.0)
    for seed in range(6):
        out, sleeps, *_ = _search([httpx.Response(500, json={})] * 5, retry=policy, rng_seed=seed)
        assert out.kind == "server"
        assert len(sleeps) == 4
        for attempt, delay in enumerate(sleeps):
            cap = min(0.5 * 2**attempt, 8.0)
            assert cap / 2 <= delay <= cap


def test_502_html_page_becomes_a_server_error_without_html():
    html = "<html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>"
    out, *_ = _search([httpx.Response(502, text=html, headers={"content-type": "text/html"})] * 4)
    assert out.kind == "server" and out.status == 502 and "<" not in out.message


def test_connection_errors_are_retried_then_reported_as_network():
    out, sleeps, route, _ = _search([httpx.ConnectError("refused")] * 4)
    assert out.kind == "network" and route.call_count == 4 and len(sleeps) == 3
    assert "exa.test" in out.message


def test_timeouts_are_retried_then_reported():
    out, _sleeps, route, _ = _search([httpx.ReadTimeout("slow")] * 2 + [_ok()])
    assert out.results and route.call_count == 3
    out, *_ = _search([httpx.ReadTimeout("slow")] * 4, timeout=7)
    assert out.kind == "timeout" and "7 s" in out.message


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, text='{"results": [{"url": "https://nats.io"'),
        httpx.Response(200, text="<html>maintenance</html>", headers={"content-type": "text/html"}),
        httpx.Response(200, json={"data": []}),
        httpx.Response(200, json=["not", "an", "object"]),
        httpx.Response(200, json={"results": {"url": "x"}}),
    ],
)
def test_malformed_bodies_are_malformed_not_crashes(response):
    out, _sleeps, route, _ = _search([response])
    assert isinstance(out, ExaError) and out.kind == "malformed" and route.call_count == 1


def test_unusable_base_url_is_a_network_error():
    async def go():
        client = ExaClient("ftp://nowhere", KEY, retry=RetryPolicy(max_retries=0))
        try:
            await client.search(build_search_body("q"))
        finally:
            await client.aclose()

    with pytest.raises(ExaError) as info:
        asyncio.run(go())
    assert info.value.kind == "network"


# ----------------------------------------------------------------------------- rate limit


def test_concurrent_searches_stay_within_ten_per_second():
    stamps: list[float] = []

    def answer(request):
        stamps.append(asyncio.get_running_loop().time())
        return _ok()

    async def go():
        with respx.mock() as mock:
            mock.post(URL).mock(side_effect=answer)
            clients = [ExaClient(BASE, KEY) for _ in range(3)]  # three sections, one shared limiter
            await asyncio.gather(*(clients[i % 3].search(build_search_body(f"q{i}")) for i in range(14)))
            for c in clients:
                await c.aclose()
            return sum(c.requests_sent for c in clients)

    # The loop's clock is virtual: it moves only while every search waits for a token, so the
    # stamps measure the limiter's pacing alone, never the machine's load or a garbage collection.
    sent = run_virtual(go())
    assert sent == 14 == len(stamps)
    stamps = sorted(t - stamps[0] for t in stamps)
    # Eight go at once (two of Exa's ten tokens held back for arrival jitter), then one
    # per 100 ms: over any span, at most 8 + 10 × span requests.
    for i, start in enumerate(stamps):
        for j in range(i, len(stamps)):
            assert j - i + 1 <= 8 + 10 * (stamps[j] - start) + 1e-6
    # a burst, not pacing: paced, the eighth would come 0.7 s after the first
    assert stamps[7] < 0.001
    assert 0.6 <= stamps[-1] < 0.601  # sleeps never end early, and nothing stalls


# ---------------------------------------------------------------- Exa as of late 2026


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_retired_fields_are_never_sent_and_num_sentences_becomes_max_characters():
    body = build_search_body(
        "nats",
        highlights={"numSentences": 2, "highlightsPerUrl": 3, "query": "funding", "livecrawl": "true"},
        text={"maxCharacters": 500, "livecrawl": "always"},
    )
    retired = {"useAutoprompt", "numSentences", "highlightsPerUrl", "livecrawl", "startCrawlDate", "endCrawlDate"}
    assert not _keys(body) & retired
    assert body["contents"]["highlights"] == {"query": "funding", "maxCharacters": 2 * 1333}
    own = build_search_body("nats", highlights={"numSentences": 2, "maxCharacters": 400})
    assert own["contents"]["highlights"] == {"maxCharacters": 400}  # an explicit budget wins


@pytest.mark.parametrize(
    "written, sent",
    [
        ({"max-characters": 500, "query": "funding"}, {"maxCharacters": 500, "query": "funding"}),
        ({"max_characters": 500}, {"maxCharacters": 500}),
        ({"num-sentences": 2, "highlights-per-url": 3}, {"maxCharacters": 2 * 1333}),
        ({"num_sentences": 1, "max-characters": 300}, {"maxCharacters": 300}),
    ],
)
def test_highlight_options_written_as_memo_yaml_spells_keys_go_out_in_exas_spelling(written, sent):
    """memo.yaml's keys are kebab-case everywhere; Exa 400s ``max-characters`` as an unknown option."""
    body = build_search_body("nats", highlights=written)
    assert body["contents"]["highlights"] == sent


@pytest.mark.parametrize(
    "category, sent",
    [
        ("company", "company"),
        ("publication", "publication"),
        ("Financial Report", "financial report"),
        ("personal_site", "personal site"),
        ("research paper", None),  # stale: Exa would ignore it, so it is not sent
        ("github", None),
        ("pdf", None),
        ("tweet", None),
    ],
)
def test_only_current_categories_are_sent(category, sent):
    assert build_search_body("nats", category=category).get("category") == sent


def test_responses_without_removed_fields_parse_and_exa_warnings_are_kept():
    data = {
        "requestId": "r",
        "results": [{"url": "https://nats.io/", "title": "NATS", "highlights": ["Fast messaging."]}],
        "warnings": [
            {"code": "deprecated_parameter", "message": "numSentences is deprecated; use maxCharacters"},
            "category 'github' was ignored",
            {"message": "  "},
            42,
        ],
    }
    parsed = parse_search_response(data)
    assert parsed.results[0].highlights == ["Fast messaging."]
    assert parsed.warnings == [
        "deprecated_parameter: numSentences is deprecated; use maxCharacters",
        "category 'github' was ignored",
    ]
    assert parse_search_response({"results": []}).warnings == []


@pytest.mark.parametrize(
    "cost, counted, warned",
    [
        ({"total": 0.005}, 0.005, False),
        ({"search": {"neural": 0.004}, "contents": {"text": 0.001}}, 0.005, False),
        ({"total": float("nan")}, 0.0, True),
        ({"total": -3}, 0.0, True),
        (float("inf"), 0.0, True),
        (10**400, 0.0, True),
        ({"search": {"neural": -1}, "contents": {"text": 0.001}}, 0.001, True),
        ("0.5", 0.0, False),
    ],
)
def test_a_cost_exa_reports_counts_only_as_a_finite_non_negative_amount(cost, counted, warned):
    parsed = parse_search_response({"results": [{"url": "https://nats.io/"}], "costDollars": cost})
    assert parsed.cost_total == pytest.approx(counted)
    assert (parsed.cost_problem is not None) is warned
    if warned:
        assert "not a dollar amount" in parsed.cost_problem and "counted as $0" in parsed.cost_problem
