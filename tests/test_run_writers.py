"""The run pipeline on each writer API: what is sent per section mode, what a 200-wrapped
failure or a truncation does to the note, malformed web results, the capped domain
filter, and old Sonar model names in a memo.

Exa is the sandbox on a loopback socket; the writer is the sandbox too, or respx where a
test needs to see the exact body or serve an exact answer.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import httpx
import pytest
import respx

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.notes.note import parse_note
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.headless import run_memo_folder
from tests.conftest import API_FIXTURES

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "run" / "nats-memo"
COMPLETED = json.loads((API_FIXTURES / "agent-response-completed.json").read_text(encoding="utf-8"))

MODES_MEMO = """
title: NATS — writer modes
subject: {name: NATS, url: "https://nats.io", domains: [synadia.com], aliases: [Synadia]}
writer: {api: perplexity, model: perplexity/sonar, web-search: true, target-words: 150}
sections:
  - id: pinned
    title: Company overview
    include-sources: [{provider: exa, query: "{{subject}} overview", pin: entity, num-results: 3}]
  - id: wide
    title: Competitive landscape
    include-sources: [{provider: exa, query: "alternatives to {{subject}} messaging", pin: none, num-results: 3}]
  - id: strict
    title: Funding
    web-search: false
    include-sources: [{provider: exa, query: "Synadia funding round", pin: none, num-results: 3}]
  - id: preset
    title: Recent news
    writer: {preset: low}
    include-sources: [{provider: exa, query: "{{subject}} news", pin: none, num-results: 3}]
"""


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
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "1")
    monkeypatch.setenv("SOURCEDESK_RETRY_MAX_WAIT_S", "1")
    yield sandbox
    httpx.post(f"{sandbox.url}/_sandbox/reset")


def _memo(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "memo"
    d.mkdir()
    (d / "memo.yaml").write_text(text, encoding="utf-8")
    return d


def _run(memo_dir: Path, sections=None, **kw):
    return asyncio.run(run_memo_folder(memo_dir, sections, settings=kw.pop("settings", None) or Settings(), **kw))


def _bodies(env, memo_dir: Path, answer: dict, sections=None) -> tuple[list, dict]:
    """Run with the writer answered by ``answer``; (outcomes, section id → request body)."""
    with respx.mock(assert_all_called=False) as mock:
        mock.route(path="/search").pass_through()
        route = mock.post(f"{env.url}/v1/agent").respond(200, json=answer)
        outcomes = _run(memo_dir, sections, settings=Settings(max_concurrent_sections=1))
    bodies = [json.loads(call.request.content) for call in route.calls]
    return outcomes, dict(zip([o.section for o in outcomes], bodies, strict=True))


# ---------------------------------------------------------------- what is sent, per section mode


def test_each_section_mode_sends_exactly_its_fields(env, tmp_path):
    memo_dir = _memo(tmp_path, MODES_MEMO)
    outcomes, bodies = _bodies(env, memo_dir, COMPLETED)
    assert [o.status for o in outcomes] == ["ok"] * 4, [o.message for o in outcomes]
    web = {"input", "instructions", "tools", "tool_choice"}
    assert set(bodies["pinned"]) == {"model", *web}
    assert bodies["pinned"]["tools"] == [
        {"type": "web_search", "filters": {"search_domain_filter": ["nats.io", "synadia.com"]}}
    ]
    assert set(bodies["wide"]) == {"model", *web}
    assert bodies["wide"]["tools"][0]["filters"]["search_domain_filter"] == [
        "-github.com",
        "-wikipedia.org",
        "-linkedin.com",
        "-reddit.com",
        "-medium.com",
    ]
    assert (
        set(bodies["strict"]) == {"model", "input", "instructions"} and bodies["strict"]["model"] == "perplexity/sonar"
    )
    assert set(bodies["preset"]) == {"preset", *web} and bodies["preset"]["preset"] == "low"
    for body in bodies.values():
        assert body["instructions"].startswith("You are a careful research analyst")


def test_old_sonar_model_names_load_with_a_notice_and_run_on_their_mapping(env, tmp_path):
    text = MODES_MEMO.replace("api: perplexity, model: perplexity/sonar", "model: sonar-pro")
    memo_dir = _memo(tmp_path, text.replace("    writer: {preset: low}\n", ""))
    [notice] = load_memo(memo_dir).notices
    assert "sonar-pro is a retired Sonar model" in notice and "preset: low" in notice
    assert "memo.yaml:4: writer.model: sonar-pro is a retired" in notice  # file:line, like every load notice
    assert "perplexity/sonar on strict sections" in notice
    assert load_memo(memo_dir, writer_api="perplexity-sonar").notices == []  # the legacy API still knows it
    _, bodies = _bodies(env, memo_dir, COMPLETED)
    assert bodies["pinned"]["preset"] == "low" and "model" not in bodies["pinned"]
    assert bodies["strict"]["model"] == "perplexity/sonar" and "preset" not in bodies["strict"]


def test_a_retired_model_in_the_writer_model_setting_runs_with_a_notice_naming_the_mapping(
    env, tmp_path, capsys, monkeypatch
):
    """Not only a memo: an old config's writer_model: sonar-pro is mapped too, and says so."""
    from sourcedesk.tui.cli import main

    text = MODES_MEMO.replace("api: perplexity, model: perplexity/sonar, ", "").replace(
        "    writer: {preset: low}\n", ""
    )
    memo_dir = _memo(tmp_path, text)
    monkeypatch.setenv("SOURCEDESK_WRITER_MODEL", "sonar-pro")
    assert main(["run", str(memo_dir), "--section", "pinned"]) == 0
    err = capsys.readouterr().err
    assert "the writer_model setting (sonar-pro) is a retired Sonar model" in err and "preset: low" in err
    monkeypatch.setenv("SOURCEDESK_WRITER_MODEL", "perplexity/sonar")
    assert main(["run", str(memo_dir), "--section", "pinned"]) == 0
    assert "retired" not in capsys.readouterr().err


def test_the_demo_memo_loads_clean_with_the_new_names():
    loaded = load_memo(Path(__file__).resolve().parents[1] / "tui" / "demo" / "nats-profile")
    assert loaded.notices == [] and loaded.memo.writer.api == "perplexity"
    assert loaded.memo.writer.model == "perplexity/sonar"


def test_the_demo_memo_runs_on_the_agent_api_with_no_link_outside_the_ground_truth(env, tmp_path):
    from sourcedesk.sandbox.note_urls import check_memo, note_urls

    demo = Path(shutil.copytree(Path(__file__).resolve().parents[1] / "tui" / "demo" / "nats-profile", tmp_path / "d"))
    outcomes = _run(demo)
    assert [o.status for o in outcomes] == ["ok"] * 5, [o.message for o in outcomes]
    checks = check_memo(demo)
    assert [(c.writer_api, c.outside) for c in checks] == [("perplexity", [])] * 5
    assert all(c.links for c in checks)
    # a URL quoted in a warning ends where a reader's renderer ends it, not at the comma after it
    assert note_urls("- '[^E1] cites https://x.io/a/, a source about a namesake'") == {"https://x.io/a/"}


# ---------------------------------------------------------------- status decides


@pytest.fixture
def fixture_memo(tmp_path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "nats-memo"))


@pytest.mark.parametrize(
    "fault, words", [("failed", "run failed: upstream model error"), ("cancelled", "run cancelled")]
)
def test_a_run_that_fails_inside_http_200_fails_the_section_and_keeps_the_note(env, fixture_memo, fault, words):
    [first] = _run(fixture_memo, ["overview"])
    assert first.status == "ok", first.message
    before = first.note_path.read_bytes()
    httpx.post(f"{env.url}/_sandbox/faults", json=[f"writer:{fault}*1"])
    [again] = _run(fixture_memo, ["overview"])
    assert again.status == "failed" and again.error_kind == fault and again.note_path is None
    assert words in again.message and "previous note is unchanged" in again.message
    assert first.note_path.read_bytes() == before
    with MemoStore(fixture_memo) as store:
        assert store.get_run(again.run_id).error.kind == fault


def test_a_truncated_answer_is_written_with_a_warning_naming_the_truncation(env, fixture_memo):
    httpx.post(f"{env.url}/_sandbox/faults", json=["writer:incomplete*1"])
    [outcome] = _run(fixture_memo, ["overview"])
    assert outcome.status == "ok", outcome.message
    [warning] = [w for w in outcome.warnings if "incomplete" in w]
    assert "max_output_tokens" in warning and "cut it off" in warning
    front, _ = parse_note(outcome.note_path.read_text(encoding="utf-8"))
    assert warning in front["warnings"]


def test_a_streamed_run_is_the_same_note_as_a_plain_one(env, fixture_memo, tmp_path):
    other = Path(shutil.copytree(FIXTURE, tmp_path / "streamed"))
    [plain] = _run(fixture_memo, ["overview"])
    [streamed] = _run(other, ["overview"], settings=Settings(writer_stream=True))
    assert streamed.status == "ok", streamed.message
    body = lambda o: parse_note(o.note_path.read_text(encoding="utf-8"))[1]  # noqa: E731 - a two-line helper
    assert body(streamed) == body(plain)


# ---------------------------------------------------------------- malformed web results, on every backend


def _agent_answer_with_junk() -> dict:
    data = json.loads(json.dumps(COMPLETED))
    data["output"][0]["results"][1] = {"id": 2, "title": "x"}  # the Series B post, malformed
    data["output"][0]["results"].insert(2, "str")  # no id, no number
    data["output"][1]["results"][0] = {"id": 4, "url": None}
    text = "NATS is a connective technology [1]. Synadia raised a $25M Series B [2]. It joined the CNCF [4]. Founded by its creators [5]."
    data["output"][2]["content"][0] = {"type": "output_text", "text": text, "annotations": []}
    return data


def _sonar_answer_with_junk() -> dict:
    results = [
        {"url": "https://nats.io/about/", "title": "About NATS", "snippet": "NATS is a connective technology."},
        {"title": "x"},
        "str",
        {"url": None},
        {"url": "https://synadia.com/about", "title": "About Synadia", "snippet": "Synadia's founders created NATS."},
    ]
    text = "NATS is a connective technology [1]. Synadia raised a $25M Series B [2]. Founded by its creators [5]."
    return {"model": "sonar-pro", "choices": [{"message": {"content": text}}], "search_results": results}


@pytest.mark.parametrize("api", ["perplexity", "perplexity-sonar"])
def test_malformed_web_results_are_skipped_without_shifting_the_others(env, tmp_path, api, monkeypatch):
    memo_dir = _memo(tmp_path, MODES_MEMO.replace("api: perplexity, model: perplexity/sonar", f"api: {api}"))
    path, answer = (
        ("/v1/agent", _agent_answer_with_junk())
        if api == "perplexity"
        else ("/chat/completions", _sonar_answer_with_junk())
    )
    with respx.mock(assert_all_called=False) as mock:
        mock.route(path="/search").pass_through()
        mock.post(f"{env.url}{path}").respond(200, json=answer)
        [outcome] = _run(memo_dir, ["wide"])
    assert outcome.status == "ok", outcome.message
    assert any("skipped 3 malformed search results" in w for w in outcome.warnings)
    by_key = {c["key"]: c for c in outcome.report["citations"]}
    assert by_key["1"]["status"] == "verified" and by_key["1"]["resolved_url"] == "https://nats.io/about/"
    assert by_key["5"]["status"] == "verified" and by_key["5"]["resolved_url"] == "https://synadia.com/about"
    assert by_key["2"]["status"] == "dropped" and by_key["2"]["cited_url"] is None
    assert any("[2] cited the writer's search result 2, which was malformed" in w for w in outcome.report["warnings"])
    assert not any("skipped-result.invalid" in w for w in outcome.warnings + outcome.report["warnings"])
    note = outcome.note_path.read_text(encoding="utf-8")
    assert "skipped-result.invalid" not in note and "Series B." in note  # the claim stays, its citation goes


def test_a_citation_of_an_id_no_result_carries_says_so_never_rejected_domain(env, tmp_path):
    """Results numbered by id (1 and 5) with malformed, id-less results between them: [3]
    points at nothing usable. The warning says that, not 'on a rejected domain', and the
    placeholder address reaches no warning, report or note."""
    memo_dir = _memo(tmp_path, MODES_MEMO)
    results = [
        {
            "id": 1,
            "url": "https://nats.io/about/",
            "title": "About NATS",
            "snippet": "NATS is a connective technology.",
        },
        {"title": "x"},
        "str",
        {"url": None},
        {
            "id": 5,
            "url": "https://synadia.com/about",
            "title": "About Synadia",
            "snippet": "Synadia's founders created NATS.",
        },
    ]
    text = "NATS is a connective technology [1]. It has many users [3]. Founded by its creators [5]."
    answer = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [
            {"type": "search_results", "queries": ["nats"], "results": results},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        ],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2, "cost": {"total_cost": 0.01}},
    }
    with respx.mock(assert_all_called=False) as mock:
        mock.route(path="/search").pass_through()
        mock.post(f"{env.url}/v1/agent").respond(200, json=answer)
        [outcome] = _run(memo_dir, ["wide"])
    assert outcome.status == "ok", outcome.message
    by_key = {c["key"]: c for c in outcome.report["citations"]}
    assert by_key["1"]["resolved_url"] == "https://nats.io/about/"
    assert by_key["5"]["resolved_url"] == "https://synadia.com/about"
    assert by_key["3"]["status"] == "dropped" and by_key["3"]["cited_url"] is None
    warnings = outcome.warnings + outcome.report["warnings"]
    assert any(w.startswith("[3] cited no usable search result") and "3 malformed result(s)" in w for w in warnings)
    assert not any("rejected domain" in w or "skipped-result.invalid" in w for w in warnings)
    note = outcome.note_path.read_text(encoding="utf-8")
    assert "skipped-result.invalid" not in note and "rejected domain" not in note and "many users." in note


# ---------------------------------------------------------------- the capped domain filter


def test_rejections_past_the_cap_are_enforced_on_the_writers_results(env, fixture_memo):
    rejects = [f"old{i:02d}.example.com" for i in range(24)] + ["synadia.com"]
    with MemoStore(fixture_memo) as store:
        for domain in rejects:  # synadia.com is the oldest rejection: it falls past the cap
            store.add_reject(domain)
        table = store._table("rejects")
        for n, doc in enumerate(sorted(table.all(), key=lambda d: d["domain"] != "synadia.com")):
            table.update({"added_at": f"2026-01-{1 + n % 28:02d}T00:{n:02d}:00+00:00"}, doc_ids=[doc.doc_id])
    [outcome] = _run(fixture_memo, ["competitors"], settings=Settings(writer_domain_filter_cap=20))
    with MemoStore(fixture_memo) as store:
        run = store.get_run(outcome.run_id)
    assert len(run.domain_filter) == 20 and all(d.startswith("-") for d in run.domain_filter)
    assert "-synadia.com" not in run.domain_filter  # newest first: the oldest fell off
    assert run.domain_filter[0] == "-old23.example.com"
    hosts = {r["url"].split("/")[2] for r in run.web_results}
    assert any(h.endswith("synadia.com") for h in hosts)  # the writer's search did return it
    assert any("synadia.com" in w and "not accepted as sources" in w for w in outcome.warnings)
    assert all("synadia.com" not in (c["resolved_url"] or "") for c in outcome.report["citations"])


def test_rejections_of_the_same_second_reach_the_filter_newest_first(env, fixture_memo):
    """Several domains rejected at once (or within one second): the last given is the newest,
    whatever their alphabetical order, so a capped filter keeps the analyst's latest ones."""
    with MemoStore(fixture_memo) as store:
        store.add_rejects(["zeta-one.example.com", "alpha-two.example.com", "mid-three.example.com"])
        store.add_reject("beta-four.example.com")
        store.add_reject("aaa-five.example.com")
    [outcome] = _run(fixture_memo, ["competitors"])
    with MemoStore(fixture_memo) as store:
        run = store.get_run(outcome.run_id)
    assert run.domain_filter[:5] == [
        "-aaa-five.example.com",
        "-beta-four.example.com",
        "-mid-three.example.com",
        "-alpha-two.example.com",
        "-zeta-one.example.com",
    ]


# ---------------------------------------------------------------- the legacy and compatible paths stay


def test_the_legacy_sonar_path_still_writes_notes(env, tmp_path):
    memo_dir = _memo(
        tmp_path,
        MODES_MEMO.replace("api: perplexity, model: perplexity/sonar", "api: perplexity-sonar, model: sonar-pro"),
    )
    # sonar-pro is a current name on the legacy API; the one section's preset is not
    [notice] = load_memo(memo_dir).notices
    assert notice.endswith(
        "section preset: Perplexity Sonar (chat completions, legacy) has no presets, so the preset is ignored"
    )
    outcomes = _run(memo_dir, ["pinned", "strict"])
    assert [o.status for o in outcomes] == ["ok", "ok"], [o.message for o in outcomes]
    with MemoStore(memo_dir) as store:
        runs = [store.get_run(o.run_id) for o in outcomes]
    assert all(r.writer_api == "perplexity-sonar" and r.raw_response["object"] == "chat.completion" for r in runs)
    assert runs[0].web_results and runs[1].web_results == []  # strict: disable_search
    front, _ = parse_note(outcomes[0].note_path.read_text(encoding="utf-8"))
    assert front["model"] == "sonar-pro"


def test_a_new_memo_from_init_uses_the_new_names(tmp_path):
    from sourcedesk.core.memo.outline import standard_memo_yaml

    memo_dir = _memo(tmp_path, standard_memo_yaml("NATS", "https://nats.io"))
    loaded = load_memo(memo_dir)
    assert loaded.notices == [] and loaded.memo.writer.api == "perplexity"
    assert loaded.memo.writer.model == "perplexity/sonar"


def test_a_fourth_backend_is_one_class_and_one_registration(env, tmp_path, monkeypatch):
    """A backend registered from outside the package is selectable and runs sections."""
    import sourcedesk.core.writing.registry
    from sourcedesk.core.writing.chat import ChatCompletionsWriter

    class EchoWriter(ChatCompletionsWriter):
        api = "echo"
        label = "Echo gateway"
        key_name = "ECHO_GATEWAY_KEY"
        searches_web = False
        needs_key = True
        default_model = "echo-1"
        path = "/echo/chat"

        def request_body(self, request):
            return self.finish_body(self.base_body(request), request)

    monkeypatch.setattr(
        sourcedesk.core.writing.registry, "_registered", dict(sourcedesk.core.writing.registry._registered)
    )
    sourcedesk.core.writing.registry.register_writer(EchoWriter)
    monkeypatch.setenv("SOURCEDESK_WRITER_API", "echo")
    monkeypatch.setenv("ECHO_GATEWAY_KEY", "echo-secret-123")
    memo_dir = _memo(tmp_path, MODES_MEMO.replace("api: perplexity, model: perplexity/sonar, ", ""))
    answer = {"model": "echo-1", "choices": [{"message": {"content": "NATS is a messaging system. [^E1]"}}]}
    with respx.mock(assert_all_called=True) as mock:
        mock.route(path="/search").pass_through()
        route = mock.post(f"{env.url}/echo/chat").respond(200, json=answer)
        [outcome] = _run(memo_dir, ["pinned"])
    assert outcome.status == "ok", outcome.message
    request = route.calls[0].request
    assert request.headers["authorization"] == "Bearer echo-secret-123"
    assert set(json.loads(request.content)) == {"model", "messages"}  # no web search of its own: strict
    with MemoStore(memo_dir) as store:
        run = store.get_run(outcome.run_id)
    assert run.writer_api == "echo" and run.writer == "Echo gateway (echo-1)" and run.web_search is False
