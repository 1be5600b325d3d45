"""The optional model judge as a run stage, against the sandbox on both writer endpoints.

``support.judge: model`` asks the section's writer about the citations the offline check calls
``partial`` or ``unchecked``. What it answers sits beside the offline verdict (``judge`` on the
citation), its cost is shown (``cost.judge``: outcome, note, the run's line), and neither an
answer nor a failure (HTTP error, timeout, a body that is not JSON, an answer that is not the
JSON asked for) changes the note's text or any offline verdict.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from sourcedesk.core.citations.model_judge import ASKED, JUDGE_TAG
from sourcedesk.core.config.settings import Settings
from sourcedesk.core.notes.note import parse_note
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.tui.commands.run import _line
from sourcedesk.tui.headless import run_memo_folder

MEMO = """
title: NATS — model judge
subject: {name: NATS, url: "https://nats.io", domains: [synadia.com], aliases: [Synadia]}
writer: {api: API, model: MODEL, web-search: false, target-words: 150}
JUDGE
sections:
  - id: overview
    title: TITLE
    include-sources: [{provider: exa, query: "QUERY", pin: none, num-results: 5}]
"""
OVERVIEW = "NATS overview messaging"
MODELS = {"perplexity": "perplexity/sonar", "perplexity-sonar": "sonar", "openai": "sonar"}


@pytest.fixture(scope="module")
def sandbox():
    # seed 1: the overview's strict answer carries a citation the offline check calls partial
    with SandboxServer(port=0, seed=1, fault_hold_s=5.0) as server:
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
    tmp_path: Path,
    name: str,
    api: str,
    *,
    judge: str | None,
    faults: tuple[str, ...] = (),
    query: str = OVERVIEW,
    title: str = "Overview",
) -> tuple[Any, dict, str]:
    """(outcome, note front matter, note body) of one run of the memo's one section."""
    if faults:
        httpx.post(f"{_run.url}/_sandbox/faults", json={"faults": list(faults)})  # type: ignore[attr-defined]
    memo_dir = tmp_path / name
    memo_dir.mkdir()
    support = f"support: {{judge: {judge}}}" if judge else ""
    text = (
        MEMO.replace("API", api)
        .replace("MODEL", MODELS[api])
        .replace("JUDGE", support)
        .replace("QUERY", query)
        .replace("TITLE", title)
    )
    (memo_dir / "memo.yaml").write_text(text, encoding="utf-8")
    settings = Settings(writer_timeout_s=0.5, max_concurrent_sections=1)
    [outcome] = asyncio.run(run_memo_folder(memo_dir, None, settings=settings))
    assert outcome.status == "ok", outcome.message
    front, body = parse_note(outcome.note_path.read_text(encoding="utf-8"))
    return outcome, front, body


@pytest.fixture
def run(env, tmp_path):
    _run.url = env.url  # type: ignore[attr-defined]
    return lambda name, api, **kw: _run(tmp_path, name, api, **kw)


def _offline(report: dict) -> list[dict]:
    """The offline side of every citation (the judge's key taken off)."""
    return [{k: v for k, v in c.items() if k != "judge"} for c in report["citations"]]


def _writer_requests(env) -> int:
    return httpx.get(f"{env.url}/_sandbox/stats").json()["writer"]["requests"]


def test_the_judge_is_off_by_default_no_request_no_cost_line(run, env):
    outcome, front, _ = run("off", "perplexity", judge=None)
    assert _writer_requests(env) == 1
    assert "judge" not in outcome.cost and "judge" not in outcome.report
    assert set(front["cost"]) == {"retrieval", "writer", "total"}
    assert not any("judge" in c for c in outcome.report["citations"])


@pytest.mark.parametrize("api", ["perplexity", "perplexity-sonar", "openai"])
def test_the_judge_asks_each_endpoint_about_unsettled_claims_and_stores_its_word_beside(run, env, api):
    off, _, off_body = run("off", api, judge=None)
    httpx.post(f"{env.url}/_sandbox/reset")
    on, front, on_body = run("on", api, judge="model")
    asked = [c for c in off.report["citations"] if c.get("support") in ASKED and c.get("status") != "dropped"]
    assert asked, "the sandbox's seed no longer writes a partial citation: pick another seed"
    assert _writer_requests(env) == 2  # the section's write and one judge request
    judged = [c for c in on.report["citations"] if "judge" in c]
    assert len(judged) == len(asked) == on.report["judge"]["judged"]
    for citation in judged:
        assert citation["support"] in ASKED  # never asked about a settled claim
        assert citation["judge"]["verdict"] in ("supported", "partial", "unsupported")
        assert citation["judge"]["reason"]
    # beside, never instead: every offline verdict, flag and the note's text are as without the judge
    assert _offline(on.report) == _offline(off.report)
    assert on_body == off_body
    assert on.cost["judge"] > 0 and front["cost"]["judge"] == on.cost["judge"]
    assert front["cost"]["total"] == pytest.approx(on.cost["retrieval"] + on.cost["writer"] + on.cost["judge"])
    assert f"model judge ${on.cost['judge']:.4f}, {len(judged)} judged" in _line(on, on.note_path.parent.parent)


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
    assert len(failed) == 1 and why in failed[0] and failed[0].endswith("the offline verdicts stand")
    assert not any("judge" in c for c in on.report["citations"])
    assert on.report["judge"]["judged"] == 0
    assert _offline(on.report) == _offline(off.report)
    assert on_body == off_body
    assert front["cost"]["judge"] == 0.0


def test_an_answer_that_is_not_the_json_asked_for_gives_no_verdict_and_a_warning(run, env):
    """A 200 whose text is prose with a verdict-looking line, a row for an item never asked
    about and a verdict that is not one of the three: nothing of it is kept."""
    garbled = (
        'All claims are supported. {"verdicts": [{"id": "c99", "verdict": "supported"}, '
        '{"id": "c1", "verdict": "supported!!"}]}'
    )
    answer = {
        "id": "resp_judge",
        "object": "response",
        "status": "completed",
        "model": "perplexity/sonar",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": garbled}]}],
        "usage": {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20, "cost": {"total_cost": 0.0002}},
    }
    off, _, off_body = run("off", "perplexity", judge=None)
    with respx.mock(assert_all_called=True) as mock:
        mock.post(f"{env.url}/v1/agent", content__contains=JUDGE_TAG).respond(200, json=answer)
        mock.route().pass_through()
        on, front, on_body = run("on", "perplexity", judge="model")
    assert any(w.startswith("the model judge gave no usable verdict for") for w in on.warnings), on.warnings
    assert not any("judge" in c for c in on.report["citations"])
    assert _offline(on.report) == _offline(off.report) and on_body == off_body
    assert on.report["judge"]["requests"] == 1 and front["cost"]["judge"] == on.cost["judge"]


def test_at_most_the_configured_number_of_claims_is_sent_and_the_rest_is_said(env, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCEDESK_SUPPORT_JUDGE", "model")  # the setting, when the memo says nothing
    monkeypatch.setenv("SOURCEDESK_SUPPORT_JUDGE_MAX_CLAIMS", "1")
    with SandboxServer(port=0, seed=6) as seed6:  # seed 6: a funding answer with several partial citations
        monkeypatch.setenv("SOURCEDESK_EXA_URL", seed6.url)
        monkeypatch.setenv("SOURCEDESK_WRITER_URL", seed6.url)
        _run.url = seed6.url  # type: ignore[attr-defined]
        on, _, _ = _run(tmp_path, "on", "openai", judge=None, query="Synadia funding round", title="Funding")
    asked = [c for c in on.report["citations"] if c.get("support") in ASKED and c.get("status") != "dropped"]
    assert len(asked) > 1, "the sandbox's seed no longer writes two partial citations: pick another seed"
    assert on.report["judge"]["asked"] == 1
    assert any(f"asked about 1 of {len(asked)} unsettled claims" in w for w in on.warnings), on.warnings
    body = json.dumps(on.report["judge"])
    assert "sk-key" not in body
