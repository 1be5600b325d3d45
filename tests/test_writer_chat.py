"""The chat-completions writers (Sonar legacy, OpenAI-compatible): request shape, retries,
error messages, response and stream parsing. The transport (retries, errors, SSE framing)
is shared with the Agent API backend, so these cases cover it too.

HTTP is served by respx (exact sequences) and, at the end, by the real sandbox
server on a loopback socket.
"""

from __future__ import annotations

import asyncio
import json
import random
from datetime import date

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from sourcedesk.core.net.policy import shared_limiter
from sourcedesk.core.writing.chat import read_completion
from sourcedesk.core.writing.domain_filter import domain_filter_for
from sourcedesk.core.writing.openai_compat import OpenAICompatibleWriter
from sourcedesk.core.writing.prompt import Prompt
from sourcedesk.core.writing.registry import WriteRequest, WriterError
from sourcedesk.core.writing.sonar import SonarWriter
from tests.conftest import API_FIXTURES as TESTDATA

BASE = "https://writer.test"
URL = BASE + "/chat/completions"
KEY = "pplx-secret-key-0123456789"
PROMPT = Prompt(system="SYSTEM RULES", user="USER REQUEST about NATS", markers=["E1"])
RECORDED = json.loads((TESTDATA / "sonar-chat-completion.json").read_text())
INVALID_MODEL = (TESTDATA / "sonar-error-400-invalid-model.json").read_text()
HTML_401 = "<html>\n<head><title>401 Authorization Required</title></head>\n<body>openresty</body>\n</html>\n"
HTML_502 = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>"


def _ok(content: str = "NATS is a messaging system. [^E1]", **extra) -> httpx.Response:
    return httpx.Response(200, json={"model": "sonar-pro", "choices": [{"message": {"content": content}}], **extra})


def parse_completion(data, *, model: str = ""):
    return read_completion(data, model=model)


def _client(**kw):
    """A client with recorded (instant) sleeps and no rate limiter unless asked for."""
    sleeps: list[float] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)

    kw.setdefault("requests_per_minute", None)
    cls = OpenAICompatibleWriter if kw.pop("api", "perplexity-sonar") == "openai" else SonarWriter
    client = cls(kw.pop("base_url", BASE), kw.pop("api_key", KEY), sleep=sleep, rng=random.Random(7), **kw)
    return client, sleeps


def _request(**kw) -> WriteRequest:
    if "domain_filter" in kw:
        kw["domain_filter"] = tuple(kw["domain_filter"] or ())
    return WriteRequest(prompt=kw.pop("prompt", PROMPT), **kw)


def _serve(responses, *, client=None, url=URL, **complete_kw):
    """Run one ``complete`` against ``responses``; returns (result or WriterError, route, sleeps).

    ``client`` is a ``_client()`` pair or a bare WriterClient (whose sleeps the caller holds)."""
    client = client or _client()
    client, sleeps = client if isinstance(client, tuple) else (client, [])

    async def go():
        with respx.mock(assert_all_called=False) as mock:
            route = mock.post(url).mock(side_effect=list(responses))
            on_text = complete_kw.pop("on_text", None)
            try:
                result = await client.write(_request(**complete_kw), on_text=on_text)
            except WriterError as exc:
                result = exc
            return result, route

    result, route = asyncio.run(go())
    return result, route, sleeps


def _body(route, i: int = -1) -> dict:
    return json.loads(route.calls[i].request.content)


# ---------------------------------------------------------------- the request


def test_perplexity_request_carries_bearer_messages_and_domain_filter():
    result, route, _ = _serve([_ok()], domain_filter=["nats.io", "synadia.com"], temperature=0.2)
    assert result.content == "NATS is a messaging system. [^E1]"
    request = route.calls.last.request
    assert str(request.url) == URL and request.method == "POST"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = _body(route)
    assert body["model"] == "sonar-pro"
    assert body["messages"] == [
        {"role": "system", "content": "SYSTEM RULES"},
        {"role": "user", "content": "USER REQUEST about NATS"},
    ]
    assert body["search_domain_filter"] == ["nats.io", "synadia.com"]
    assert body["temperature"] == 0.2
    assert "disable_search" not in body and "stream" not in body


def test_no_domain_filter_key_when_the_filter_is_empty():
    _, route, _ = _serve([_ok()], domain_filter=[])
    assert "search_domain_filter" not in _body(route) and "temperature" not in _body(route)


def test_strict_mode_sends_disable_search_and_no_filter():
    _, route, _ = _serve([_ok()], web_search=False, domain_filter=["nats.io"])
    body = _body(route)
    assert body["disable_search"] is True and "search_domain_filter" not in body


def test_openai_api_sends_neither_search_switch_nor_filter():
    client = _client(base_url="https://llm.test/v1/", api_key=None, api="openai", model="gpt-4o-mini")
    result, route, _ = _serve(
        [_ok()], client=client, url="https://llm.test/v1/chat/completions", web_search=False, domain_filter=["x.com"]
    )
    assert result.content.startswith("NATS")
    body = _body(route)
    assert body["model"] == "gpt-4o-mini"
    assert "disable_search" not in body and "search_domain_filter" not in body
    assert "authorization" not in route.calls.last.request.headers  # local servers need no key


def test_extra_fields_are_merged_into_the_body():
    _, route, _ = _serve([_ok()], extra={"web_search_options": {"search_context_size": "high"}})
    assert _body(route)["web_search_options"] == {"search_context_size": "high"}


def test_perplexity_without_a_key_fails_before_any_request():
    result, route, _ = _serve([_ok()], client=_client(api_key=None))
    assert isinstance(result, WriterError) and result.kind == "auth" and route.call_count == 0
    assert "PERPLEXITY_API_KEY" in result.message


def test_the_key_never_shows_in_repr():
    client, _ = _client()
    assert KEY not in repr(client) and KEY not in str(vars(client))


# ---------------------------------------------------------------- reading the response


def test_recorded_response_is_read_completely():
    result, _, _ = _serve([httpx.Response(200, json=RECORDED)])
    assert result.content == RECORDED["choices"][0]["message"]["content"]
    assert result.citations == RECORDED["citations"]
    assert [r["url"] for r in result.search_results] == RECORDED["citations"]
    first = result.search_results[0]
    assert first["title"].startswith("NATS - Connective technology")
    assert (first["date"], first["last_updated"]) == ("2024-05-02", "2025-08-30")
    assert first["snippet"].startswith("NATS is a connective technology") and first["source"] is None
    assert result.usage["total_tokens"] == 117 and result.cost_dollars == pytest.approx(0.0051)
    assert result.model == "sonar" and result.raw == RECORDED and result.requests == 1


def test_citations_alone_become_minimal_search_results_in_order():
    result, _, _ = _serve([_ok(citations=["https://nats.io/", "https://synadia.com/about"])])
    assert result.search_results == [
        {
            "n": 1,
            "url": "https://nats.io/",
            "title": "",
            "date": None,
            "last_updated": None,
            "snippet": None,
            "source": None,
        },
        {
            "n": 2,
            "url": "https://synadia.com/about",
            "title": "",
            "date": None,
            "last_updated": None,
            "snippet": None,
            "source": None,
        },
    ]


def test_search_results_are_read_tolerantly_and_keep_their_positions():
    data = {
        "choices": [{"message": {"content": "text [2]"}}],
        "search_results": [{"url": "https://a.example/"}, "junk", {"title": 5, "url": "https://b.example/"}],
        "usage": {"cost": 0.25},
    }
    result = parse_completion(data, model="sonar-pro")
    # the junk item is skipped, and b keeps its number 3: [3] still means b
    assert [(r["n"], r["url"]) for r in result.search_results] == [(1, "https://a.example/"), (3, "https://b.example/")]
    assert result.search_results[0]["title"] is None and result.search_results[1]["title"] == "5"
    assert [i["url"] for i in result.web.indexed()][1].startswith("https://skipped-result.invalid/")
    assert any("skipped 1 malformed search result: #2 (not an object (str))" in w for w in result.warnings)
    assert result.cost_dollars == 0.25 and result.model == "sonar-pro"
    odd = parse_completion({"choices": [{"message": {"content": "x"}}], "search_results": "nope", "citations": 3})
    assert odd.search_results == [] and odd.citations == [] and odd.cost_dollars == 0.0 and odd.usage == {}


def test_reasoning_blocks_are_kept_out_of_the_content():
    data = {
        "choices": [
            {
                "message": {"content": "<think>\nPlan: cite E1.\n</think>\n\nNATS is fast. [^E1]"},
                "finish_reason": "length",
            }
        ]
    }
    result = parse_completion(data)
    assert result.content == "NATS is fast. [^E1]" and result.reasoning == "Plan: cite E1."
    assert result.finish_reason == "length" and result.raw == data
    with pytest.raises(WriterError, match="only reasoning"):
        parse_completion({"choices": [{"message": {"content": "<think>cut off mid-thou"}}]})


# ---------------------------------------------------------------- retries


def test_429_is_retried_honouring_retry_after():
    result, route, sleeps = _serve([httpx.Response(429, headers={"Retry-After": "3"}, json={}), _ok()])
    assert result.content.startswith("NATS") and result.requests == 2
    assert route.call_count == 2 and sleeps == [3.0]


def test_429_without_retry_after_backs_off_exponentially_with_jitter():
    result, route, sleeps = _serve([httpx.Response(429)] * 4)
    assert isinstance(result, WriterError) and result.kind == "rate_limited" and result.status == 429
    assert route.call_count == 4 and result.requests == 4
    assert len(sleeps) == 3
    for attempt, s in enumerate(sleeps):
        full = 0.5 * 2**attempt
        assert full / 2 <= s <= full
    assert "HTTP 429" in result.message and "4 attempts" in result.message


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 504])
def test_transient_statuses_are_retried(status):
    result, route, sleeps = _serve([httpx.Response(status), httpx.Response(status), _ok()])
    assert result.content.startswith("NATS") and route.call_count == 3 and len(sleeps) == 2


@pytest.mark.parametrize(
    "status, kind",
    [
        (400, "bad_request"),
        (401, "auth"),
        (402, "payment"),
        (403, "forbidden"),
        (404, "not_found"),
        (422, "bad_request"),
    ],
)
def test_client_errors_are_answers_not_retried(status, kind):
    result, route, sleeps = _serve([httpx.Response(status, json={"error": {"message": "nope"}}), _ok()])
    assert isinstance(result, WriterError) and result.kind == kind and result.status == status
    assert route.call_count == 1 and sleeps == [] and result.requests == 1


def test_connection_errors_are_retried_then_succeed():
    result, _route, sleeps = _serve([httpx.ConnectError("refused"), _ok()])
    assert result.content.startswith("NATS") and result.requests == 2 and len(sleeps) == 1


def test_timeouts_after_retries_are_a_timeout_error():
    result, route, sleeps = _serve([httpx.ReadTimeout("slow")] * 4, client=_client(timeout=7))
    assert isinstance(result, WriterError) and result.kind == "timeout" and result.status is None
    assert route.call_count == 4 and len(sleeps) == 3
    assert result.message == "the writer did not answer within 7 s (writer_timeout_s) (after 4 attempts)"


def test_network_errors_after_retries_are_a_network_error():
    result, route, _ = _serve([httpx.ConnectError("refused")] * 4)
    assert isinstance(result, WriterError) and result.kind == "network" and route.call_count == 4
    assert "could not reach the writer at https://writer.test/chat/completions" in result.message


def test_requests_share_one_rate_limiter_per_writer_url():
    url = "https://limited.test/chat/completions"
    one, _ = _client(base_url="https://limited.test", requests_per_minute=50)
    two, _ = _client(base_url="https://limited.test", requests_per_minute=50)

    async def go():
        with respx.mock() as mock:
            mock.post(url).mock(side_effect=[_ok(), _ok(), httpx.Response(503), _ok()])
            await asyncio.gather(one.write(_request()), two.write(_request()), one.write(_request()))
            return shared_limiter(url, 50, 60.0, burst=49).acquired

    assert asyncio.run(go()) == 4  # every attempt, retries included, counted in the one shared window


# ---------------------------------------------------------------- error messages


def test_html_401_says_the_key_was_rejected():
    result, _, _ = _serve([httpx.Response(401, text=HTML_401, headers={"content-type": "text/html"})])
    assert result.kind == "auth" and result.message == "the writer rejected the API key (HTTP 401)"


def test_invalid_model_400_surfaces_the_apis_message():
    result, _, _ = _serve([httpx.Response(400, text=INVALID_MODEL, headers={"content-type": "application/json"})])
    assert result.kind == "bad_request" and result.status == 400
    assert "Invalid model 'sonar-pro '" in result.message and "HTTP 400" in result.message


def test_html_gateway_pages_are_summarised_not_dumped():
    result, route, _ = _serve([httpx.Response(502, text=HTML_502)] * 4)
    assert result.kind == "server" and result.status == 502 and route.call_count == 4
    assert result.message.startswith("HTTP 502 from writer gateway (HTML page)")
    assert "<" not in result.message and "cloudflare" not in result.message


def test_messages_never_contain_the_key_headers_or_prompt():
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}. Header was Bearer {KEY}"}}
    result, _, _ = _serve([httpx.Response(401, json=echo)])
    assert result.kind == "auth"
    for secret in (KEY, "Bearer " + KEY[:6], PROMPT.user, PROMPT.system):
        assert secret not in str(result) and secret not in repr(result)


@pytest.mark.parametrize(
    "response, fragment",
    [
        (httpx.Response(200, text="this is not json"), "not JSON"),
        (httpx.Response(200, text=HTML_502, headers={"content-type": "text/html"}), "HTML page"),
        (httpx.Response(200, json=[1, 2]), "not an object"),
        (httpx.Response(200, json={"id": "x", "choices": []}), "no choices[0].message.content"),
        (httpx.Response(200, json={"choices": [{"message": {"content": None}}]}), "no choices[0].message.content"),
        (httpx.Response(200, json={"choices": [{"message": {"content": "  "}}]}), "empty answer"),
    ],
)
def test_unusable_200_answers_are_malformed(response, fragment):
    result, route, _ = _serve([response])
    assert isinstance(result, WriterError) and result.kind == "malformed" and fragment in result.message
    assert route.call_count == 1


# ---------------------------------------------------------------- streaming


def _sse(chunks, done=True) -> str:
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return text + ("data: [DONE]\n\n" if done else "")


def _stream(text: str, **kw):
    return _serve(
        [httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})],
        client=_client(stream=True),
        **kw,
    )


def test_recorded_full_mode_stream_without_done_gives_the_final_text():
    recording = (TESTDATA / "sonar-stream-full-mode.sse").read_text()
    assert "[DONE]" not in recording
    result, route, _ = _stream(recording)
    assert result.content == "Rivers carry about 37,000 cubic kilometres of water to the sea each year."
    assert result.usage == {"prompt_tokens": 11, "completion_tokens": 13, "total_tokens": 24}
    assert result.model == "sonar"
    assert result.raw["choices"][0]["finish_reason"] == "stop"
    assert _body(route)["stream"] is True
    assert route.calls.last.request.headers["accept"] == "text/event-stream"


def test_concise_mode_chunks_give_the_done_message_and_its_cost():
    chunks = json.loads((TESTDATA / "sonar-stream-concise-chunks.json").read_text())
    result, _, _ = _stream(_sse(chunks))
    assert result.content == "## Harbour tides\n\nHigh water today is at..."
    assert result.cost_dollars == pytest.approx(0.008) and result.usage["completion_tokens"] == 112
    assert result.search_results == []


def test_delta_stream_with_search_results_only_on_the_final_chunk():
    head = {"id": "x", "model": "sonar-pro", "object": "chat.completion.chunk"}
    results = [{"url": "https://nats.io/", "title": "NATS", "date": "2024-01-02"}]
    chunks = [
        {**head, "choices": [{"delta": {"content": "NATS was "}}]},
        {**head, "choices": [{"delta": {"content": "created in 2010. [1]"}}]},
        {
            **head,
            "choices": [{"delta": {"content": ""}, "finish_reason": "stop"}],
            "search_results": results,
            "citations": ["https://nats.io/"],
            "usage": {"total_tokens": 9, "cost": {"total_cost": 0.007}},
        },
    ]
    seen: list[str] = []
    # No [DONE], and the final event is cut off before its blank line: it still counts.
    result, _, _ = _stream(_sse(chunks, done=False).rstrip("\n"), on_text=seen.append)
    assert result.content == "NATS was created in 2010. [1]"
    assert result.search_results[0]["url"] == "https://nats.io/" and result.search_results[0]["date"] == "2024-01-02"
    assert result.citations == ["https://nats.io/"] and result.cost_dollars == pytest.approx(0.007)
    assert seen[:2] == ["NATS was ", "NATS was created in 2010. [1]"]


def test_openai_style_stream_with_usage_only_chunk_and_done():
    chunks = [
        {"object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [{"delta": {"role": "assistant"}}]},
        {"object": "chat.completion.chunk", "choices": [{"delta": {"content": "Hello"}}]},
        {"object": "chat.completion.chunk", "choices": [{"delta": {"content": " there."}, "finish_reason": "stop"}]},
        {"object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 12}},
    ]
    text = ": keep-alive comment\n" + _sse(chunks).replace("data: ", "data:", 1)
    client, _ = _client(stream=True, api="openai", model="gpt-4o-mini")
    result, route, _ = _serve([httpx.Response(200, text=text)], client=client)
    assert result.content == "Hello there." and result.usage == {"total_tokens": 12}
    assert _body(route)["stream_options"] == {"include_usage": True}


def test_a_stream_request_answered_with_plain_json_is_read_as_json():
    client, _ = _client(stream=True)
    result, _, _ = _serve([httpx.Response(200, json=RECORDED)], client=client)
    assert result.content == RECORDED["choices"][0]["message"]["content"] and len(result.search_results) == 5


def test_stream_errors_are_classified():
    error_event = _sse([{"error": {"message": "overloaded", "type": "server_error"}}])
    result, _, _ = _stream(error_event)
    assert result.kind == "server" and "overloaded" in result.message
    empty, _, _ = _stream(": nothing but a comment\n\n")
    assert empty.kind == "malformed" and "without any completion chunk" in empty.message
    garbage, _, _ = _stream("data: {not json\n\n")
    assert garbage.kind == "malformed"


class _BrokenStream(httpx.AsyncByteStream):
    async def __aiter__(self):
        yield b'data: {"choices": [{"delta": {"content": "Half an ans"}}]}\n\n'
        raise httpx.ReadError("connection reset by peer")


def test_a_stream_that_breaks_off_is_a_network_error_not_a_short_answer():
    client, sleeps = _client(stream=True)
    result, route, _ = _serve([httpx.Response(200, stream=_BrokenStream())], client=client)
    assert isinstance(result, WriterError) and result.kind == "network"
    assert result.message == "the writer's stream broke off after 11 characters: ReadError"
    assert route.call_count == 1 and sleeps == []


def test_stream_requests_are_retried_and_report_html_401():
    client, sleeps = _client(stream=True)
    ok = httpx.Response(200, text=_sse([{"choices": [{"delta": {"content": "Fine."}}]}]))
    result, route, _ = _serve([httpx.Response(503), ok], client=client)
    assert result.content == "Fine." and route.call_count == 2 and len(sleeps) == 1
    client, _ = _client(stream=True)
    denied, _, _ = _serve([httpx.Response(401, text=HTML_401)], client=client)
    assert denied.kind == "auth" and denied.message == "the writer rejected the API key (HTTP 401)"


# ---------------------------------------------------------------- search_domain_filter


def test_entity_pin_becomes_an_allow_list_of_bare_domains():
    pins = ["https://www.NATS.io/docs", "nats.io", "synadia.com", " ", "localhost"]
    assert domain_filter_for(pins, ["github.com"]) == ["nats.io", "synadia.com"]


def test_without_a_pin_rejections_become_a_deny_list_most_relevant_first():
    rejects = [f"site{i}.example" for i in range(30)]
    out = domain_filter_for([], ["-kestra.com", "Kestra.com", *rejects], cap=20)
    assert out[0] == "-kestra.com" and len(out) == 20
    assert out[-1] == "-site18.example"  # the tail (least relevant) is what gets dropped


def test_nothing_to_filter_gives_an_empty_filter():
    assert domain_filter_for([], []) == [] and domain_filter_for(["", "  "], ["nonsense"]) == []


@settings(max_examples=60, deadline=None)
@given(
    pins=st.lists(st.from_regex(r"-?[a-z]{1,8}\.(com|io|co\.uk)", fullmatch=True), max_size=30),
    rejects=st.lists(st.from_regex(r"-?[a-z]{1,8}\.(com|org)", fullmatch=True), max_size=40),
    cap=st.integers(min_value=1, max_value=25),
)
def test_domain_filter_is_never_mixed_and_never_over_the_cap(pins, rejects, cap):
    out = domain_filter_for(pins, rejects, cap=cap)
    assert len(out) <= cap and len(set(out)) == len(out)
    assert all(d.startswith("-") for d in out) or not any(d.startswith("-") for d in out)
    if pins:
        assert out and not out[0].startswith("-")


# ---------------------------------------------------------------- against the sandbox server

import sourcedesk.sandbox.server as sandbox_server  # noqa: E402 - the sandbox half of this file

SANDBOX_KEY = "sandbox-writer-key"


def _sandbox_prompt() -> Prompt:
    from sourcedesk.core.domain.models import Source, SourceSet
    from sourcedesk.core.memo.spec import Memo
    from sourcedesk.core.writing.prompt import build_prompt

    memo = Memo.model_validate(
        {
            "title": "Synadia",
            "subject": {"name": "NATS", "url": "https://nats.io", "aliases": ["Synadia"]},
            "firm": {"name": "Example Ventures", "context": "Early-stage infra fund"},
            "sections": [{"id": "overview", "title": "Company overview", "questions": ["What does it do?"]}],
        }
    )
    sources = SourceSet(
        section="overview",
        fingerprint="fp",
        sources=[
            Source(
                provider="exa",
                url="https://nats.io/about/",
                title="About NATS",
                marker="E1",
                summary="NATS is a connective technology for distributed systems, created in 2010.",
            ),
        ],
    )
    return build_prompt(memo, memo.sections[0], sources, today=date(2026, 6, 8))


def _against_sandbox(*, faults=(), client_kw=None, server_kw=None, **complete_kw):
    prompt = _sandbox_prompt()
    with sandbox_server.SandboxServer(port=0, writer_key=SANDBOX_KEY, faults=list(faults), **(server_kw or {})) as s:
        kw = {"api_key": SANDBOX_KEY, **(client_kw or {})}
        client, sleeps = _client(base_url=kw.pop("base_url", s.url), **kw)

        async def go():
            try:
                return await client.write(_request(prompt=prompt, **complete_kw))
            except WriterError as exc:
                return exc

        return asyncio.run(go()), sleeps


def test_sandbox_answer_is_read_with_search_results_and_cost():
    result, _ = _against_sandbox(domain_filter=domain_filter_for(["nats.io"], []))
    assert not isinstance(result, WriterError), result
    assert result.content.strip() and result.requests == 1 and result.cost_dollars > 0
    assert all(
        set(r) == {"n", "url", "title", "date", "last_updated", "snippet", "source"} for r in result.search_results
    )
    assert result.raw["choices"][0]["message"]["content"] == result.content


def test_sandbox_stream_with_and_without_done_matches_the_plain_answer():
    plain, _ = _against_sandbox()
    streamed, _ = _against_sandbox(client_kw={"stream": True})
    no_done, _ = _against_sandbox(client_kw={"stream": True}, extra={"sandbox_no_done": True})
    for result in (streamed, no_done):
        assert not isinstance(result, WriterError), result
        assert result.content == plain.content
        assert result.search_results == plain.search_results and result.usage == plain.usage


def test_sandbox_strict_mode_returns_no_search_results():
    result, _ = _against_sandbox(web_search=False)
    assert not isinstance(result, WriterError), result
    assert result.search_results == [] and result.citations == []


def test_sandbox_rejects_a_wrong_key_with_its_html_page():
    result, _ = _against_sandbox(client_kw={"api_key": "wrong-key"})
    assert result.kind == "auth" and result.message == "the writer rejected the API key (HTTP 401)"


def test_sandbox_invalid_model_and_bad_domain_filters_are_bad_requests():
    bad_model, _ = _against_sandbox(client_kw={"model": "sonar-pro "})
    assert bad_model.kind == "bad_request" and "Invalid model 'sonar-pro '" in bad_model.message
    too_many, _ = _against_sandbox(domain_filter=[f"d{i}.com" for i in range(21)])
    assert too_many.kind == "bad_request" and "at most 20" in too_many.message
    mixed, _ = _against_sandbox(domain_filter=["nats.io", "-github.com"])
    assert mixed.kind == "bad_request" and "mix" in mixed.message
    capped, _ = _against_sandbox(domain_filter=domain_filter_for([], [f"d{i}.com" for i in range(40)]))
    assert not isinstance(capped, WriterError), capped


def test_sandbox_faults_are_retried_or_reported():
    recovered, sleeps = _against_sandbox(faults=["writer:429*2"])
    assert not isinstance(recovered, WriterError) and recovered.requests == 3 and len(sleeps) == 2
    gateway, _ = _against_sandbox(faults=["writer:502-html"])
    assert gateway.kind == "server" and gateway.message.startswith("HTTP 502 from writer gateway (HTML page)")
    assert gateway.requests == 4
    broken, _ = _against_sandbox(faults=["writer:malformed"])
    assert broken.kind == "malformed"


def test_sandbox_timeout_fault_is_a_timeout_error():
    result, _ = _against_sandbox(faults=["writer:timeout"], client_kw={"timeout": 0.2}, server_kw={"fault_hold_s": 0.5})
    assert result.kind == "timeout" and result.requests == 4


def test_sandbox_reasoning_model_answer_has_no_think_block():
    result, _ = _against_sandbox(client_kw={"model": "sonar-reasoning-pro"})
    assert not isinstance(result, WriterError), result
    assert "<think>" not in result.content and result.reasoning
    assert result.raw["choices"][0]["message"]["content"].lstrip().startswith("<think>")


def test_sandbox_openai_api_at_a_v1_base_url():
    with sandbox_server.SandboxServer(port=0, writer_key=SANDBOX_KEY) as s:
        client, _ = _client(base_url=s.url + "/v1", api_key=SANDBOX_KEY, api="openai", model="sonar")
        result = asyncio.run(client.write(_request(prompt=_sandbox_prompt(), web_search=False)))
    assert result.content.strip() and result.model == "sonar"


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_key_is_a_missing_key_not_a_request(blank):
    from pydantic import SecretStr

    for key in (blank, SecretStr(blank)):
        result, route, _ = _serve([_ok()], client=_client(api_key=key))
        assert isinstance(result, WriterError) and result.kind == "auth" and route.call_count == 0
        assert "set PERPLEXITY_API_KEY" in result.message
