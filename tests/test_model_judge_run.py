"""The optional model judge as a run stage, against the sandbox on both writer endpoints.

``support.judge: model`` asks the section's writer about the citations the offline check calls
``partial`` or ``unchecked``. What it answers sits beside the offline verdict (``judge`` on the
citation), its cost is shown (``cost.judge``: outcome, note, the run's line), and neither an
answer nor a failure (HTTP error, timeout, a body that is not JSON, an answer that is not the
JSON asked for) changes the note's text or any offline verdict.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from sourcedesk.core.citations.model_judge import ASKED, JUDGE_TAG
from sourcedesk.core.config.settings import Settings
from sourcedesk.core.notes.note import parse_note
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.commands.run import _line
from sourcedesk.tui.headless import run_memo_folder
from sourcedesk.tui.outcome_words import outcome_notice

MEMO = """
title: Acme Bank — model judge
subject: {name: Acme Bank, aliases: [Acme]}
writer: {api: API, model: MODEL, web-search: false, target-words: 150}
JUDGE
sections:
  - id: customers
    title: Customers
    include-sources: [{provider: files, glob: "notes/*.md"}]
"""
MODELS = {"perplexity": "perplexity/sonar", "perplexity-sonar": "sonar", "openai": "sonar"}
NOTES = {  # read in name order: [^V1] … [^V4]
    "a-branches.md": "# Call notes: branches\n\nAcme Bank runs NATS in production across 40 branches in Portugal.\n",
    "b-choice.md": "# Call notes: the choice\n\nThe bank chose NATS JetStream over Kafka for its edge messaging.\n",
    "c-edge.md": "# Call notes: the edge\n\nAcme Bank's edge messaging carries branch telemetry.\n",
    "d-rollout.md": "# Call notes: the rollout\n\nThe rollout reached 40 branches by March.\n",
}
# The section's answer, scripted so the offline verdicts do not hang on the sandbox's prose: one
# claim its source states, two it states part of (partial: the judge is asked about those), one
# it contradicts (60 against 40: unsupported, never asked).
ANSWER = (
    "Acme Bank runs NATS in production across 40 branches in Portugal [^V1]. "
    "The bank chose NATS JetStream over Kafka and plans to open a Tokyo data centre next spring [^V2]. "
    "Acme Bank's edge messaging carries branch telemetry and card payments for every Lisbon merchant [^V3]. "
    "The rollout reached 60 branches by March [^V4].\n"
)


def _agent_answer(text: str, cost: float) -> dict:
    return {
        "id": "resp_scripted",
        "object": "response",
        "status": "completed",
        "model": "perplexity/sonar",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
        "usage": {"input_tokens": 100, "output_tokens": 50, "total_tokens": 150, "cost": {"total_cost": cost}},
    }


def _chat_answer(text: str, cost: float) -> dict:
    return {
        "id": "chat_scripted",
        "object": "chat.completion",
        "model": "sonar",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150, "cost": {"total_cost": cost}},
    }


def _path(api: str) -> str:
    return "/v1/agent" if api == "perplexity" else "/chat/completions"


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0, fault_hold_s=5.0) as server:
        yield server


@pytest.fixture
def env(sandbox, monkeypatch):
    httpx.post(f"{sandbox.url}/_sandbox/reset")
    monkeypatch.setenv("SOURCEDESK_EXA_URL", sandbox.url)
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", sandbox.url)
    monkeypatch.setenv("EXA_API_KEY", "exa-key-0123456789")
    monkeypatch.setenv("PERPLEXITY_API_KEY", "pplx-key-0123456789")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-key-0123456789")
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "0")
    yield sandbox
    httpx.post(f"{sandbox.url}/_sandbox/reset")


def _run(
    env, tmp_path: Path, name: str, api: str, *, judge: str | None, faults: tuple[str, ...] = (), judge_answer=None
) -> tuple[Any, dict, str]:
    """(outcome, note front matter, note body) of one run of the memo's one section: its own
    write answered by ``ANSWER``, a judge request by the sandbox (or by ``judge_answer``)."""
    if faults:
        httpx.post(f"{env.url}/_sandbox/faults", json={"faults": list(faults)})
    memo_dir = tmp_path / name
    (memo_dir / "notes").mkdir(parents=True)
    for name_, text_ in NOTES.items():
        (memo_dir / "notes" / name_).write_text(text_, encoding="utf-8")
    support = f"support: {{judge: {judge}}}" if judge else ""
    text = MEMO.replace("API", api).replace("MODEL", MODELS[api]).replace("JUDGE", support)
    (memo_dir / "memo.yaml").write_text(text, encoding="utf-8")
    shape = _agent_answer if api == "perplexity" else _chat_answer
    with respx.mock(assert_all_called=False) as mock:
        judged = mock.post(f"{env.url}{_path(api)}", content__contains=JUDGE_TAG)
        if judge_answer is None:
            judged.pass_through()
        else:
            judged.respond(200, json=shape(judge_answer, 0.0002))
        mock.post(f"{env.url}{_path(api)}").respond(200, json=shape(ANSWER, 0.001))
        mock.route().pass_through()
        settings = Settings(writer_timeout_s=0.5, max_concurrent_sections=1)
        [outcome] = asyncio.run(run_memo_folder(memo_dir, None, settings=settings))
    assert outcome.status == "ok", outcome.message
    front, body = parse_note(outcome.note_path.read_text(encoding="utf-8"))
    return outcome, front, body


@pytest.fixture
def run(env, tmp_path):
    return lambda name, api, **kw: _run(env, tmp_path, name, api, **kw)


def _offline(report: dict) -> list[dict]:
    """The offline side of every citation (the judge's key taken off)."""
    return [{k: v for k, v in c.items() if k != "judge"} for c in report["citations"]]


def _writer_requests(env) -> int:
    return httpx.get(f"{env.url}/_sandbox/stats").json()["writer"]["requests"]


def test_the_judge_is_off_by_default_no_request_no_cost_line(run, env):
    outcome, front, _ = run("off", "perplexity", judge=None)
    assert _writer_requests(env) == 0  # the section's own write is scripted; the sandbox saw no judge request
    assert "judge" not in outcome.cost and "judge" not in outcome.report
    assert set(front["cost"]) == {"retrieval", "writer", "total"}
    assert not any("judge" in c for c in outcome.report["citations"])


@pytest.mark.parametrize("api", ["perplexity", "perplexity-sonar", "openai"])
def test_the_judge_asks_each_endpoint_about_unsettled_claims_and_stores_its_word_beside(run, env, api):
    off, _, off_body = run("off", api, judge=None)
    on, front, on_body = run("on", api, judge="model")
    supports = [c.get("support") for c in off.report["citations"]]
    assert supports.count("partial") == 2 and "unsupported" in supports and "supported" in supports, supports
    assert _writer_requests(env) == 1  # one judge request for the section
    judged = [c for c in on.report["citations"] if "judge" in c]
    assert len(judged) == 2 == on.report["judge"]["judged"] == on.report["judge"]["asked"]
    for citation in judged:
        assert citation["support"] in ASKED  # never asked about a settled claim
        assert citation["judge"]["verdict"] in ("supported", "partial", "unsupported")
        assert "of the claim's" in citation["judge"]["reason"]  # the sandbox judge's reason
    # beside, never instead: every offline verdict, flag and the note's text are as without the judge
    assert _offline(on.report) == _offline(off.report)
    assert on_body == off_body
    assert on.cost["judge"] > 0 and front["cost"]["judge"] == on.cost["judge"]
    assert front["cost"]["total"] == pytest.approx(on.cost["retrieval"] + on.cost["writer"] + on.cost["judge"])
    assert f"model judge ${on.cost['judge']:.4f}, 2 judged" in _line(on, on.note_path.parent.parent)
    assert f"(model judge ${on.cost['judge']:.3f}, 2 judged)" in outcome_notice(on)[0]  # the workbench's notice
    assert "model judge" not in outcome_notice(off)[0]
    # the run's record in the memo's store keeps the judge's word beside each offline verdict, and its cost
    store = MemoStore(on.note_path.parent.parent)
    try:
        [record] = store.runs("customers", limit=1)
    finally:
        store.close()
    kept = {c.key: (c.support, c.judge) for c in record.report.citations}
    assert kept == {c["key"]: (c["support"], c.get("judge")) for c in on.report["citations"]}
    assert record.cost["judge"] == on.cost["judge"]


@pytest.mark.parametrize(
    "api, fault, why",
    [
        ("perplexity", "judge:500", "HTTP 500"),
        ("perplexity", "judge:timeout", "did not answer within"),
        ("perplexity", "judge:malformed", "truncated JSON body"),
        ("perplexity-sonar", "judge:timeout", "did not answer within"),
        ("perplexity-sonar", "judge:502-html", "502"),
        ("openai", "judge:malformed", "truncated JSON body"),
    ],
)
def test_a_failing_judge_leaves_every_offline_verdict_and_the_note_as_they_were(run, env, api, fault, why):
    off, _, off_body = run("off", api, judge=None)
    on, front, on_body = run("on", api, judge="model", faults=(fault,))
    failed = [w for w in on.warnings if w.startswith("the model judge failed")]
    assert len(failed) == 1 and why in failed[0] and failed[0].endswith("the offline verdicts stand"), on.warnings
    assert not any("judge" in c for c in on.report["citations"])
    assert on.report["judge"]["judged"] == 0 and on.report["judge"]["asked"] == 2
    assert _offline(on.report) == _offline(off.report)
    assert on_body == off_body
    assert front["cost"]["judge"] == 0.0


@pytest.mark.parametrize("api", ["perplexity", "openai"])
def test_an_answer_that_is_not_the_json_asked_for_gives_no_verdict_and_a_warning(run, env, api):
    """A 200 whose text is prose with a verdict-looking line, a row for an item never asked
    about and a verdict that is not one of the three: nothing of it is kept."""
    garbled = (
        'All claims are supported. {"verdicts": [{"id": "c99", "verdict": "supported"}, '
        '{"id": "c1", "verdict": "supported!!"}, {"id": "c2", "verdict": "Supported"}]}'
    )
    off, _, off_body = run("off", api, judge=None)
    on, front, on_body = run("on", api, judge="model", judge_answer=garbled)
    assert any(w.startswith("the model judge gave no usable verdict for 2 of 2 claims") for w in on.warnings), (
        on.warnings
    )
    assert not any("judge" in c for c in on.report["citations"])
    assert _offline(on.report) == _offline(off.report) and on_body == off_body
    assert on.report["judge"]["requests"] == 1 and front["cost"]["judge"] == on.cost["judge"] == 0.0002


def test_at_most_the_configured_number_of_claims_is_sent_and_the_rest_is_said(run, env, monkeypatch):
    monkeypatch.setenv("SOURCEDESK_SUPPORT_JUDGE", "model")  # the setting, when the memo says nothing
    monkeypatch.setenv("SOURCEDESK_SUPPORT_JUDGE_MAX_CLAIMS", "1")
    on, _, _ = run("on", "openai", judge=None)
    assert on.report["judge"]["asked"] == 1 and on.report["judge"]["judged"] == 1
    assert sum(1 for c in on.report["citations"] if "judge" in c) == 1
    assert any("asked about 1 of 2 unsettled claims" in w for w in on.warnings), on.warnings


def test_the_memo_says_off_even_when_the_setting_says_model(run, env, monkeypatch):
    monkeypatch.setenv("SOURCEDESK_SUPPORT_JUDGE", "model")
    _, front, _ = run("off", "perplexity", judge="off")
    assert _writer_requests(env) == 0 and "judge" not in front["cost"]
