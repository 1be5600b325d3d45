"""The sandbox writer's judge mode (``sandbox/writer_judge.py``) on both writer endpoints, and
``judge:`` faults that fail the model judge's requests while the section's own write goes through."""

from __future__ import annotations

import json

import httpx
import pytest

from sourcedesk.core.citations.model_judge import item_for, judge_prompt, read_verdicts
from sourcedesk.sandbox.faults import parse_spec
from sourcedesk.sandbox.server import SandboxServer

KEY = "sandbox-judge-key"
SECTION_PROMPT = "## Research subject\n\nSubject: NATS\n\n## Section to write\n\nSection: Company overview\n"
SOURCE = [("text", "Synadia raised $25 million in a Series B led by Forgepoint Capital in 2024.")]
ITEMS = [
    item_for("c1", "Synadia raised $25 million in a Series B.", "Synadia funding", SOURCE),
    item_for("c2", "Synadia raised money from Denver investors and Lisbon angels.", "Synadia funding", SOURCE),
    item_for("c3", "The company ships a quantum toaster.", "Synadia funding", SOURCE),
]


@pytest.fixture(scope="module")
def server():
    with SandboxServer(port=0, writer_key=KEY, seed=0, fault_hold_s=5.0) as sb:
        yield sb


@pytest.fixture
def http(server):
    httpx.post(f"{server.url}/_sandbox/reset")
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=10) as client:
        yield client
    httpx.post(f"{server.url}/_sandbox/reset")


def _agent(system: str, user: str) -> dict:
    return {"model": "perplexity/sonar", "instructions": system, "input": user}


def _chat(system: str, user: str) -> dict:
    return {
        "model": "sonar",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "disable_search": True,
    }


def _content(path: str, data: dict) -> str:
    if path == "/chat/completions":
        return data["choices"][0]["message"]["content"]
    return next(part["text"] for out in data["output"] if out["type"] == "message" for part in out["content"])


@pytest.mark.parametrize("path, body", [("/v1/agent", _agent), ("/chat/completions", _chat)])
def test_each_endpoint_answers_the_judge_prompt_with_the_json_it_asks_for(http, path, body):
    prompt = judge_prompt(ITEMS)
    reply = http.post(path, json=body(prompt.system, prompt.user))
    assert reply.status_code == 200, reply.text
    got = read_verdicts(_content(path, reply.json()), ["c1", "c2", "c3"])
    # the sandbox's rule: every number and half the words → supported; a quarter → partial; else unsupported
    assert {k: v.verdict for k, v in got.items()} == {"c1": "supported", "c2": "partial", "c3": "unsupported"}
    assert "of the claim's" in got["c1"].reason


@pytest.mark.parametrize("path, body", [("/v1/agent", _agent), ("/chat/completions", _chat)])
def test_a_judge_fault_fails_the_judge_request_and_not_the_sections_write(http, path, body):
    http.post("/_sandbox/faults", json={"faults": ["judge:500*1"]})
    prompt = judge_prompt(ITEMS)
    assert http.post(path, json=body("Cite with [N].", SECTION_PROMPT)).status_code == 200
    assert http.post(path, json=body(prompt.system, prompt.user)).status_code == 500
    assert http.post(path, json=body(prompt.system, prompt.user)).status_code == 200  # *1: used up


def test_a_writer_fault_still_reaches_the_judge_request(http):
    http.post("/_sandbox/faults", json={"faults": ["writer:500"]})
    prompt = judge_prompt(ITEMS)
    assert http.post("/v1/agent", json=_agent(prompt.system, prompt.user)).status_code == 500


def test_a_judge_spec_is_parsed_and_an_unknown_service_is_named():
    rule = parse_spec("judge:timeout*2")
    assert (rule.service, rule.kind, rule.times) == ("judge", "timeout", 2)
    assert rule.applies("judge") and not rule.applies("writer") and not rule.applies("exa")
    with pytest.raises(ValueError, match=r"unknown service 'jduge'.*judge"):
        parse_spec("jduge:500")
    assert not parse_spec("writer:500").applies("judge")  # the server asks the writer's rules itself


def test_a_judge_prompt_with_unreadable_items_gets_an_empty_verdict_list(http):
    prompt = judge_prompt([])
    reply = http.post("/v1/agent", json=_agent(prompt.system, "ITEMS (JSON):\n[{not json"))
    assert reply.status_code == 200
    assert json.loads(_content("/v1/agent", reply.json())) == {"verdicts": []}
