"""The Agent API writer (Perplexity's ``/v1/agent``): the strict body, ``status`` inside
HTTP 200, the ground truth from ``search_results`` items, annotations read at parse time,
``[N]`` numbered as the API numbers it, and typed SSE streams with one terminal.

Answers come from the project's own fixtures (tests/fixtures/api/agent-*) served by respx,
and from the sandbox on a loopback socket.
"""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest
import respx

from sourcedesk.core.citations import reconcile
from sourcedesk.core.writing.agent import AgentWriter, read_response
from sourcedesk.core.writing.prompt import Prompt
from sourcedesk.core.writing.registry import WriteRequest, WriterError
from sourcedesk.core.writing.results import read_results
from sourcedesk.sandbox.server import SandboxServer
from tests.conftest import API_FIXTURES

BASE = "https://api.writer.test"
URL = BASE + "/v1/agent"
KEY = "pplx-agent-key-8c1d0e2f"
PROMPT = Prompt(system="SYSTEM RULES", user="USER REQUEST about NATS", markers=["E1"])
COMPLETED = json.loads((API_FIXTURES / "agent-response-completed.json").read_text(encoding="utf-8"))
FAILED = json.loads((API_FIXTURES / "agent-response-failed.json").read_text(encoding="utf-8"))
INCOMPLETE = json.loads((API_FIXTURES / "agent-response-incomplete.json").read_text(encoding="utf-8"))
UNKNOWN_FIELD = (API_FIXTURES / "agent-error-400-unknown-field.json").read_text(encoding="utf-8")
STREAM = (API_FIXTURES / "agent-stream-completed.sse").read_text(encoding="utf-8")


def _writer(**kw) -> AgentWriter:
    async def no_sleep(_s: float) -> None:
        return None

    kw.setdefault("requests_per_minute", None)
    return AgentWriter(kw.pop("base_url", BASE), kw.pop("api_key", KEY), sleep=no_sleep, rng=random.Random(3), **kw)


def _serve(responses, *, writer=None, on_text=None, **request):
    writer = writer or _writer()
    request.setdefault("prompt", PROMPT)
    if "domain_filter" in request:
        request["domain_filter"] = tuple(request["domain_filter"])

    async def go():
        with respx.mock(assert_all_called=False) as mock:
            route = mock.post(URL).mock(side_effect=list(responses))
            try:
                result = await writer.write(WriteRequest(**request), on_text=on_text)
            except WriterError as exc:
                result = exc
            return result, route

    return asyncio.run(go())


def _stream(text: str, **kw):
    response = httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})
    return _serve([response], writer=_writer(stream=True), **kw)


def _sse(*events: dict) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


# ---------------------------------------------------------------- the request body


def _keys(body: dict) -> dict:
    """The body's key set, with the nested ones spelled out."""
    shape: dict = {"top": set(body)}
    for i, tool in enumerate(body.get("tools", [])):
        shape[f"tools[{i}]"] = set(tool)
        if "filters" in tool:
            shape[f"tools[{i}].filters"] = set(tool["filters"])
    return shape


@pytest.mark.parametrize(
    "request_kw, keys, checks",
    [
        (  # entity pin: model + forced web_search with an allow list
            {"domain_filter": ["nats.io", "synadia.com"]},
            {
                "top": {"model", "input", "instructions", "tools", "tool_choice"},
                "tools[0]": {"type", "filters"},
                "tools[0].filters": {"search_domain_filter"},
            },
            {"model": "perplexity/sonar", "filter": ["nats.io", "synadia.com"]},
        ),
        (  # wide: the same shape with a deny list
            {"domain_filter": ["-nats.aero", "-github.com"]},
            {
                "top": {"model", "input", "instructions", "tools", "tool_choice"},
                "tools[0]": {"type", "filters"},
                "tools[0].filters": {"search_domain_filter"},
            },
            {"model": "perplexity/sonar", "filter": ["-nats.aero", "-github.com"]},
        ),
        (  # strict: a model, no tools, never a preset — even when one is asked for
            {"web_search": False, "domain_filter": ["nats.io"], "preset": "low"},
            {"top": {"model", "input", "instructions"}},
            {"model": "perplexity/sonar"},
        ),
        (  # preset: no model; the web_search tool overrides only the preset's own search tool
            {"preset": "pro-search", "domain_filter": ["nats.io"], "temperature": 0.2},
            {
                "top": {"preset", "input", "instructions", "tools", "tool_choice", "temperature"},
                "tools[0]": {"type", "filters"},
                "tools[0].filters": {"search_domain_filter"},
            },
            {"preset": "low", "filter": ["nats.io"]},
        ),
    ],
    ids=["entity-pin", "wide", "strict", "preset"],
)
def test_the_request_body_holds_exactly_the_fields_the_api_knows(request_kw, keys, checks):
    result, route = _serve([httpx.Response(200, json=COMPLETED)], **request_kw)
    assert not isinstance(result, WriterError), result
    request = route.calls.last.request
    assert str(request.url) == URL and request.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(request.content)
    assert _keys(body) == keys
    assert body["input"] == PROMPT.user and body["instructions"] == PROMPT.system
    if "model" in checks:
        assert body["model"] == checks["model"]
    if "preset" in checks:
        assert body["preset"] == checks["preset"]  # an old preset name is sent under its current one
    if "filter" in checks:
        assert body["tools"] == [{"type": "web_search", "filters": {"search_domain_filter": checks["filter"]}}]
        assert body["tool_choice"] == {"type": "web_search"}


def test_no_filter_means_a_bare_web_search_tool_and_streaming_adds_only_stream():
    writer = _writer(stream=True)
    body = writer.request_body(WriteRequest(prompt=PROMPT))
    assert body == {
        "model": "perplexity/sonar",
        "input": PROMPT.user,
        "instructions": PROMPT.system,
        "tools": [{"type": "web_search"}],
        "tool_choice": {"type": "web_search"},
        "stream": True,
    }
    with pytest.raises(ValueError, match="refuses fields"):
        writer.request_body(WriteRequest(prompt=PROMPT, extra={"search_mode": "web"}))
    with pytest.raises(ValueError, match="unknown Agent API preset"):
        writer.request_body(WriteRequest(prompt=PROMPT, preset="turbo"))


def test_a_missing_key_fails_before_any_request():
    result, route = _serve([httpx.Response(200, json=COMPLETED)], writer=_writer(api_key="  "))
    assert isinstance(result, WriterError) and result.kind == "auth" and route.call_count == 0
    assert "PERPLEXITY_API_KEY" in result.message


# ---------------------------------------------------------------- reading a completed answer


def test_completed_answer_ground_truth_cost_and_numbering():
    result, _ = _serve([httpx.Response(200, json=COMPLETED)])
    assert result.model == "perplexity/sonar" and result.cost_dollars == pytest.approx(0.011936)
    assert result.usage["total_tokens"] == 1936 and result.truncated is None
    # every search_results item, flattened in order, numbered by the API's ids
    assert result.web.numbering == "id"
    assert [(r["n"], r["url"]) for r in result.search_results] == [
        (1, "https://nats.io/about/"),
        (2, "https://www.synadia.com/blog/series-b"),
        (3, "https://docs.nats.io/nats-concepts/jetstream"),
        (4, "https://www.cncf.io/projects/nats/"),
        (5, "https://synadia.com/about"),
    ]
    assert result.raw == COMPLETED


def test_annotations_are_read_in_code_points_before_the_text_changes():
    result, _ = _serve([httpx.Response(200, json=COMPLETED)])
    # A span with no marker gets one for its search result, right where the span ends
    # (the text before it has ’ and €: reading the offsets as bytes would land 4 characters early).
    assert "the company raised a $25M Series B [2] in 2025." in result.content
    # A span that already ends in a marker is left alone.
    assert result.content.count("[3]") == 1
    # A span bound to a URL the search never listed gets a footnote, reconciled like any other.
    assert "NATS joined the CNCF [^a1] in 2018." in result.content
    assert result.content.rstrip().endswith("[^a1]: [NATS history](https://landscape.cncf.io/nats-history)")
    actions = [(a["action"], a.get("marker")) for a in result.annotations]
    assert actions == [("marker_added", "[2]"), ("already_cited", None), ("footnote_added", "[^a1]")]
    text = COMPLETED["output"][2]["content"][0]["text"]
    first = result.annotations[0]
    assert text[first["start"] : first["end"]] == "the company raised a $25M Series B"


def test_annotation_markers_reconcile_and_no_unretrieved_url_survives():
    result, _ = _serve([httpx.Response(200, json=COMPLETED)])
    outcome = reconcile(result.content, [], search_results=result.web.indexed())
    report = outcome.report.to_json()
    by_key = {c["key"]: c for c in report["citations"]}
    assert by_key["2"]["status"] == "verified"
    assert by_key["2"]["resolved_url"] == "https://www.synadia.com/blog/series-b"
    assert by_key["a1"]["status"] in ("substituted", "dropped")
    assert "landscape.cncf.io" not in outcome.text


def test_unusable_annotations_are_ignored_with_a_warning():
    data = json.loads(json.dumps(COMPLETED))
    part = data["output"][2]["content"][0]
    part["annotations"] = [
        {"type": "url_citation", "url": "https://nats.io/about/", "start_index": 5, "end_index": 10_000},
        {"type": "url_citation", "url": "javascript:alert(1)", "start_index": 0, "end_index": 4},
        {"type": "url_citation", "url": "https://nats.io/about/", "start_index": True, "end_index": 4},
        {"type": "file_citation", "file_id": "f1"},
    ]
    result = read_response(data)
    assert result.content == part["text"]  # nothing inserted
    assert any("ignored 3 url_citation annotations" in w for w in result.warnings)


def test_an_answer_with_empty_annotations_is_read_as_it_is():
    result = read_response(INCOMPLETE)
    assert result.annotations == [] and result.content == INCOMPLETE["output"][1]["content"][0]["text"]


# ---------------------------------------------------------------- status decides


def test_failed_in_200_is_a_failed_section_with_the_apis_message():
    result, route = _serve([httpx.Response(200, json=FAILED)])
    assert isinstance(result, WriterError) and result.kind == "failed" and result.status == 200
    assert result.message == "the writer's run failed: upstream model error: the model provider timed out"
    assert route.call_count == 1  # an answer, not an accident: not retried


def test_cancelled_in_200_is_cancelled():
    data = {**FAILED, "status": "cancelled", "error": {"message": "cancelled by the platform", "code": 499}}
    result, _ = _serve([httpx.Response(200, json=data)])
    assert (
        isinstance(result, WriterError) and result.kind == "cancelled" and "cancelled by the platform" in result.message
    )


def test_incomplete_is_an_answer_with_a_warning_naming_the_truncation():
    result, _ = _serve([httpx.Response(200, json=INCOMPLETE)])
    assert not isinstance(result, WriterError), result
    assert result.truncated == "max_output_tokens" and result.content.endswith("was founded")
    assert any("incomplete (max_output_tokens)" in w for w in result.warnings)


@pytest.mark.parametrize(
    "data, fragment",
    [
        ({**COMPLETED, "status": "in_progress"}, "not a finished response (status 'in_progress')"),
        ({k: v for k, v in COMPLETED.items() if k != "status"}, "no status"),
        ({**COMPLETED, "output": "nope"}, "no output list"),
        ({**COMPLETED, "output": [COMPLETED["output"][0]]}, "empty answer"),
        ({**INCOMPLETE, "output": []}, "cut off before any text (max_output_tokens)"),
    ],
)
def test_unusable_answers_are_malformed(data, fragment):
    result, _ = _serve([httpx.Response(200, json=data)])
    assert isinstance(result, WriterError) and result.kind == "malformed" and fragment in result.message


def test_a_400_names_the_unknown_field_and_is_not_retried():
    result, route = _serve([httpx.Response(400, text=UNKNOWN_FIELD, headers={"content-type": "application/json"})])
    assert isinstance(result, WriterError) and result.kind == "bad_request" and route.call_count == 1
    assert 'unknown field "search_mode"' in result.message and "HTTP 400" in result.message


def test_a_nested_unknown_field_is_named_by_its_path():
    body = {
        "error": {
            "message": 'json: unknown field "domains"',
            "type": "invalid_request",
            "code": 400,
            "param": "tools[0].filters.domains",
        }
    }
    result, _ = _serve([httpx.Response(400, json=body)])
    assert "(field: tools[0].filters.domains)" in result.message


# ---------------------------------------------------------------- search results: numbering and junk


def test_malformed_results_are_skipped_and_keep_the_others_numbers():
    data = json.loads(json.dumps(COMPLETED))
    data["output"][0]["results"] = [
        data["output"][0]["results"][0],
        {"id": 2, "title": "x"},
        "str",
        {"id": 3, "url": None, "title": "no url"},
    ]
    result = read_response(data)
    assert [(r["n"], r["url"]) for r in result.search_results] == [
        (1, "https://nats.io/about/"),
        (4, "https://www.cncf.io/projects/nats/"),
        (5, "https://synadia.com/about"),
    ]
    [warning] = [w for w in result.warnings if "malformed" in w]
    assert "skipped 3 malformed search results" in warning and "#2 (no url)" in warning and "#3 (no url)" in warning
    indexed = result.web.indexed()
    assert len(indexed) == 5 and indexed[3]["url"] == "https://www.cncf.io/projects/nats/"


def test_results_are_numbered_by_id_when_the_api_gives_ids_else_by_position():
    by_id = read_results([{"id": 2, "url": "https://b.example/"}, {"id": 1, "url": "https://a.example/"}])
    assert by_id.numbering == "id" and by_id.number_for("https://a.example/") == 1
    repeated = read_results([{"id": 1, "url": "https://a.example/"}, {"id": 1, "url": "https://b.example/"}])
    assert repeated.numbering == "position" and repeated.number_for("https://b.example/") == 2
    assert any("id 1 is given to https://a.example/ and to https://b.example/" in w for w in repeated.warnings)
    plain = read_results([{"url": "https://a.example/"}, {"url": "https://b.example/"}])
    assert plain.numbering == "position" and not plain.warnings


# ---------------------------------------------------------------- streaming


def test_the_recorded_stream_folds_into_the_same_answer():
    seen: list[str] = []
    result, route = _stream(STREAM, on_text=seen.append)
    assert not isinstance(result, WriterError), result
    assert (
        result.content
        == "NATS is a connective technology for distributed systems [1]. Synadia raised a $25M Series B [2]."
    )
    assert [r["n"] for r in result.search_results] == [1, 2] and result.cost_dollars == pytest.approx(0.00594)
    assert seen[0] == "NATS is a connective technology " and seen[-1] == result.content
    assert result.raw["stream"]["terminal"] == "response.completed"
    body = json.loads(route.calls.last.request.content)
    assert body["stream"] is True and route.calls.last.request.headers["accept"] == "text/event-stream"


def test_a_stream_stops_at_its_one_terminal():
    text = STREAM + "data: {not json at all\n\n" + _sse({"type": "response.failed", "error": {"message": "late"}})
    result, _ = _stream(text)
    assert not isinstance(result, WriterError), result  # nothing after the terminal is read


@pytest.mark.parametrize(
    "terminal, kind, fragment",
    [
        ({"type": "response.failed", "error": {"message": "model overloaded"}}, "failed", "model overloaded"),
        (
            {"type": "response.cancelled", "response": {"status": "cancelled", "error": {"message": "stopped"}}},
            "cancelled",
            "stopped",
        ),
        ({"type": "error", "error": {"message": "connection reset upstream"}}, "failed", "connection reset upstream"),
    ],
)
def test_failure_terminals_are_failures(terminal, kind, fragment):
    delta = {"type": "response.output_text.delta", "delta": "Half an ans"}
    result, _ = _stream(_sse({"type": "response.created"}, delta, terminal))
    assert isinstance(result, WriterError) and result.kind == kind and fragment in result.message


def test_an_incomplete_terminal_is_an_answer_with_a_warning():
    snapshot = {**INCOMPLETE}
    result, _ = _stream(
        _sse(
            {"type": "response.output_text.delta", "delta": "x"}, {"type": "response.incomplete", "response": snapshot}
        )
    )
    assert not isinstance(result, WriterError), result
    assert result.truncated == "max_output_tokens" and any("incomplete" in w for w in result.warnings)


def test_a_terminal_without_its_snapshot_is_rebuilt_from_the_events():
    item = COMPLETED["output"][0]
    result, _ = _stream(
        _sse(
            {"type": "response.output_item.done", "item": item},
            {"type": "response.output_text.delta", "delta": "NATS is fast [1]."},
            {"type": "response.completed"},
        )
    )
    assert result.content == "NATS is fast [1]." and [r["n"] for r in result.search_results] == [1, 2, 3]


def test_a_stream_without_a_terminal_is_not_taken_for_an_answer():
    result, _ = _stream(_sse({"type": "response.output_text.delta", "delta": "Half an answer"}))
    assert isinstance(result, WriterError) and result.kind == "network"
    assert "ended without a final event after 14 characters" in result.message


def test_unknown_events_and_keep_alives_are_ignored_and_garbage_is_malformed():
    ok = ": a comment\n\n\n\n" + _sse({"type": "response.brand_new", "x": 1}) + STREAM
    result, _ = _stream(ok)
    assert not isinstance(result, WriterError) and result.content.startswith("NATS is")
    bad, _ = _stream("data: {oops\n\n")
    assert isinstance(bad, WriterError) and bad.kind == "malformed"


def test_a_named_event_the_api_never_sends_is_ignored_even_when_its_data_is_not_json():
    """A gateway's ``event: ping`` / ``data: keep-alive`` between the API's events is an unknown event."""
    pings = "event: ping\ndata: keep-alive\n\n" + "event: heartbeat\ndata: {\n\n"
    result, _ = _stream(pings + STREAM)
    assert not isinstance(result, WriterError) and result.content.startswith("NATS is")
    bad, _ = _stream("event: response.output_text.delta\ndata: {oops\n\n" + STREAM)
    assert isinstance(bad, WriterError) and bad.kind == "malformed"  # the API's own event, broken


# ---------------------------------------------------------------- against the sandbox


def _sandbox_prompt() -> Prompt:
    return Prompt(
        system="Write carefully.",
        user="## Research subject\n\nSubject: NATS\nAlso known as: Synadia\n\n## Section to write\n\nSection: Company overview\n",
    )


def _against(server: SandboxServer, **kw):
    writer = AgentWriter(server.url, "sandbox-key", requests_per_minute=None, stream=kw.pop("stream", False))
    try:
        return asyncio.run(writer.write(WriteRequest(prompt=_sandbox_prompt(), **kw)))
    except WriterError as exc:
        return exc


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0) as server:
        yield server


def test_sandbox_plain_and_streamed_answers_agree(sandbox):
    plain = _against(sandbox, domain_filter=("nats.io", "synadia.com"))
    streamed = _against(sandbox, domain_filter=("nats.io", "synadia.com"), stream=True)
    assert not isinstance(plain, WriterError), plain
    assert streamed.content == plain.content and streamed.search_results == plain.search_results
    assert plain.cost_dollars > 0 and plain.web.numbering == "id"
    assert all(r["url"].split("/")[2].endswith(("nats.io", "synadia.com")) for r in plain.search_results)


def test_sandbox_strict_request_searches_nothing(sandbox):
    strict = _against(sandbox, web_search=False)
    assert not isinstance(strict, WriterError), strict
    assert strict.search_results == [] and not [i for i in strict.raw["output"] if i["type"] == "search_results"]


@pytest.mark.parametrize("fault, kind", [("failed", "failed"), ("cancelled", "cancelled")])
def test_sandbox_200_wrapped_failures(sandbox, fault, kind):
    for stream in (False, True):
        httpx.post(f"{sandbox.url}/_sandbox/faults", json=[f"writer:{fault}*1"])
        result = _against(sandbox, stream=stream)
        assert isinstance(result, WriterError) and result.kind == kind and result.status == 200, (stream, result)


def test_sandbox_incomplete_and_stream_error(sandbox):
    httpx.post(f"{sandbox.url}/_sandbox/faults", json=["writer:incomplete*1"])
    cut = _against(sandbox)
    assert not isinstance(cut, WriterError) and cut.truncated == "max_output_tokens"
    httpx.post(f"{sandbox.url}/_sandbox/faults", json=["writer:stream-error*1"])
    broken = _against(sandbox, stream=True)
    assert isinstance(broken, WriterError) and "stream interrupted" in broken.message


def test_an_error_envelope_in_200_is_a_failure_and_a_snapshot_without_its_message_keeps_the_streamed_text():
    result, _ = _serve([httpx.Response(200, json={"error": {"message": "gateway hiccup", "code": 502}})])
    assert isinstance(result, WriterError) and result.kind == "failed" and "gateway hiccup" in result.message
    snapshot = {"status": "completed", "output": [COMPLETED["output"][0]], "usage": COMPLETED["usage"]}
    streamed, _ = _stream(
        _sse(
            {"type": "response.output_text.delta", "delta": "JetStream persists [3]."},
            {"type": "response.completed", "response": snapshot},
        )
    )
    assert streamed.content == "JetStream persists [3]." and len(streamed.search_results) == 3
