"""The sandbox's Agent API (``/v1/agent`` and ``/v1/responses``) at the wire level:
strict 400s naming the field, the response object, annotations, SSE framing, faults."""

from __future__ import annotations

import json

import httpx
import pytest

from sourcedesk.sandbox.server import SandboxServer

KEY = "sandbox-agent-key"
PROMPT = (
    "## Research subject\n\nSubject: NATS\nAlso known as: Synadia\nWebsite: https://nats.io\n\n"
    "## Section to write\n\nSection: {title}\n\nGuiding questions:\n- What does NATS do?\n"
)


@pytest.fixture(scope="module")
def server():
    with SandboxServer(port=0, writer_key=KEY, seed=0) as sb:
        yield sb


@pytest.fixture
def http(server):
    httpx.post(f"{server.url}/_sandbox/reset")
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=10) as client:
        yield client
    httpx.post(f"{server.url}/_sandbox/reset")


def _body(title: str = "Company overview", **extra) -> dict:
    body = {
        "model": "perplexity/sonar",
        "input": PROMPT.format(title=title),
        "instructions": "Cite with [N].",
        "tools": [{"type": "web_search"}],
        "tool_choice": {"type": "web_search"},
    }
    body.update(extra)
    return body


def _events(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.split("\n") if line.startswith("data: ")]


@pytest.mark.parametrize(
    "extra, param",
    [
        ({"search_mode": "web"}, "search_mode"),
        ({"disable_search": True}, "disable_search"),
        ({"web_search_options": {"search_context_size": "low"}}, "web_search_options"),
        (
            {"tools": [{"type": "web_search", "filters": {"search_domain_filter": ["nats.io"], "top_k": 3}}]},
            "tools[0].filters.top_k",
        ),
        ({"tools": [{"type": "web_search", "return_images": False}]}, "tools[0].return_images"),
        ({"tool_choice": {"type": "web_search", "strict": True}}, "tool_choice.strict"),
    ],
)
def test_any_unknown_field_is_a_400_naming_it(http, extra, param):
    r = http.post("/v1/agent", json=_body(**extra))
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_request" and error["code"] == 400 and error["param"] == param
    assert "unknown field" in error["message"]


@pytest.mark.parametrize(
    "change, param",
    [
        ({"model": "sonar-pro"}, "model"),  # no such slug on the Agent API
        ({"model": None}, "model"),
        ({"preset": "turbo"}, "preset"),
        (
            {"tools": [{"type": "web_search", "filters": {"search_domain_filter": [f"d{i}.com" for i in range(21)]}}]},
            "tools[0].filters.search_domain_filter",
        ),
        (
            {"tools": [{"type": "web_search", "filters": {"search_domain_filter": ["nats.io", "-github.com"]}}]},
            "tools[0].filters.search_domain_filter",
        ),
        (
            {"tools": [{"type": "web_search", "filters": {"search_domain_filter": ["https://nats.io"]}}]},
            "tools[0].filters.search_domain_filter",
        ),
    ],
)
def test_bad_values_are_400s_naming_the_field(http, change, param):
    body = {k: v for k, v in {**_body(), **change}.items() if v is not None}
    r = http.post("/v1/agent", json=body)
    assert r.status_code == 400 and r.json()["error"]["param"] == param


def test_a_wrong_key_is_a_401_in_the_error_envelope(server):
    r = httpx.post(f"{server.url}/v1/agent", json=_body(), headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.json()["error"]["type"] == "forbidden"


def test_the_response_object_and_its_ground_truth(http):
    data = http.post("/v1/agent", json=_body()).json()
    assert data["object"] == "response" and data["id"].startswith("resp_") and data["status"] == "completed"
    assert "citations" not in data and "search_results" not in data and "choices" not in data
    items = [i for i in data["output"] if i["type"] == "search_results"]
    ids = [r["id"] for i in items for r in i["results"]]
    assert ids == list(range(1, len(ids) + 1)) and len(ids) >= 5  # numbered across the items
    [message] = [i for i in data["output"] if i["type"] == "message"]
    assert message["content"][0]["type"] == "output_text" and message["content"][0]["text"]
    cost = data["usage"]["cost"]
    assert set(cost) == {"input_cost", "output_cost", "tool_calls_cost", "total_cost", "currency"}
    assert (
        cost["total_cost"] > 0
        and data["usage"]["total_tokens"] == data["usage"]["input_tokens"] + data["usage"]["output_tokens"]
    )
    same = http.post("/v1/responses", json=_body()).json()  # the same API under its Responses name
    assert same["output"][-1]["content"][0]["text"] == message["content"][0]["text"]


def test_a_bare_model_does_not_search_and_a_preset_does(http):
    bare = http.post("/v1/agent", json={"model": "perplexity/sonar", "input": PROMPT.format(title="Overview")}).json()
    assert not [i for i in bare["output"] if i["type"] == "search_results"]
    preset = http.post("/v1/agent", json={"preset": "pro-search", "input": PROMPT.format(title="Overview")}).json()
    assert [i for i in preset["output"] if i["type"] == "search_results"]


def test_annotations_on_some_answers_empty_on_others_some_without_a_marker(http):
    annotated, empty, unmarked = 0, 0, 0
    for n in range(16):
        data = http.post("/v1/agent", json=_body(title=f"Overview part {n}")).json()
        part = data["output"][-1]["content"][0]
        results = [r for i in data["output"] if i["type"] == "search_results" for r in i["results"]]
        if not part["annotations"]:
            empty += 1
            continue
        annotated += 1
        for ann in part["annotations"]:
            assert ann["type"] == "url_citation" and 0 <= ann["start_index"] <= ann["end_index"] <= len(part["text"])
            assert ann["url"] in {r["url"] for r in results}
            after = part["text"][ann["end_index"] :].lstrip(" ")
            unmarked += not after.startswith("[")
    assert annotated and empty and unmarked


def test_the_stream_is_typed_events_with_keep_alives_and_one_terminal(http):
    with http.stream("POST", "/v1/agent", json=_body(stream=True)) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        text = r.read().decode()
    assert "[DONE]" not in text and "\n\n\n" in text  # blank keep-alive lines between events
    events = _events(text)
    seq = [e["sequence_number"] for e in events]
    assert seq == sorted(seq) and len(set(seq)) == len(seq)
    terminals = [
        e
        for e in events
        if e["type"] in ("response.completed", "response.failed", "response.incomplete", "response.cancelled", "error")
    ]
    assert [e["type"] for e in terminals] == ["response.completed"] and events[-1] is terminals[0]
    assert any(e["type"] == "response.sandbox.unknown" for e in events)
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    final = terminals[0]["response"]
    assert deltas == final["output"][-1]["content"][0]["text"] and final["usage"]["cost"]["total_cost"] > 0


def test_field_mode_faults_come_through_the_agent_endpoint_too(http):
    classes = set()
    for n in range(6):
        data = http.post("/v1/agent", json=_body(title=f"Market map {n}")).json()
        classes |= {c["class"] for c in data["sandbox_truth"]["citations"]}
    assert {"invented", "wrong_metadata"} <= classes


def test_status_faults_are_answers_inside_http_200(http, server):
    httpx.post(f"{server.url}/_sandbox/faults", json=["writer:failed*1", "writer:incomplete*1"])
    failed = http.post("/v1/agent", json=_body())
    assert failed.status_code == 200 and failed.json()["status"] == "failed" and failed.json()["output"] == []
    assert failed.json()["error"]["message"]
    httpx.post(f"{server.url}/_sandbox/faults", json=["writer:incomplete*1"])
    cut = http.post("/v1/agent", json=_body()).json()
    assert cut["status"] == "incomplete" and cut["incomplete_details"] == {"reason": "max_output_tokens"}
    short = http.post("/v1/agent", json=_body(max_output_tokens=20)).json()
    assert short["status"] == "incomplete"


def test_the_legacy_chat_completions_endpoint_is_still_served(http):
    r = http.post(
        "/chat/completions",
        json={"model": "sonar-pro", "messages": [{"role": "user", "content": PROMPT.format(title="X")}]},
    )
    assert r.status_code == 200 and r.json()["object"] == "chat.completion"
