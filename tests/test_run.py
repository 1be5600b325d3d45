"""The run pipeline end to end against the real sandbox over loopback.

What an analyst relies on: a run turns a section into a note whose every URL
was really retrieved; a failed writer call never touches the previous note;
re-running one section leaves the others alone; a re-run reuses the frozen set
without a single Exa request.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import httpx
import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.records import StoredReport
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.notes.note import note_counts, parse_note
from sourcedesk.core.pipeline.run import run_section
from sourcedesk.sandbox.note_urls import check_memo, note_urls
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.sandbox.writer_truth import raw_citation_classes
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.headless import run_memo_folder

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "run" / "nats-memo"
EXA_KEY = "exa-dummy-key-0123456789"
WRITER_KEY = "pplx-dummy-key-0123456789"
NOTES = {
    "overview": "01-overview.md",
    "competitors": "02-competitors.md",
    "funding": "03-funding.md",
    "notes": "04-notes.md",
}

_MARKER = re.compile(r"\[\^([^\]\s]+)\](?!:)")
_DEFINITION = re.compile(r"^\[\^([^\]\s]+)\]:", re.M)


@pytest.fixture(scope="module")
def sandbox():
    # The seed picks which citations the sandbox writer fabricates; any prompt change (the
    # learned namesakes it names, say) redraws them. Seed 1 gives every class in this memo.
    with SandboxServer(port=0, seed=1, fault_hold_s=5.0) as server:
        yield server


def _control(sandbox, path: str, payload=None) -> dict:
    with httpx.Client(base_url=sandbox.url, timeout=5) as client:
        if payload is None and path.endswith("stats"):
            return client.get(path).json()
        return client.post(path, json=payload if payload is not None else {}).json()


def _faults(sandbox, *specs: str) -> None:
    _control(sandbox, "/_sandbox/faults", list(specs))


def _exa_requests(sandbox) -> int:
    return _control(sandbox, "/_sandbox/stats")["exa"]["requests"]


def _writer_requests(sandbox) -> int:
    return _control(sandbox, "/_sandbox/stats")["writer"]["requests"]


@pytest.fixture
def env(sandbox, monkeypatch):
    _control(sandbox, "/_sandbox/reset")
    monkeypatch.setenv("SOURCEDESK_EXA_URL", sandbox.url)
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", sandbox.url)
    monkeypatch.setenv("EXA_API_KEY", EXA_KEY)
    monkeypatch.setenv("PERPLEXITY_API_KEY", WRITER_KEY)
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "1")
    monkeypatch.setenv("SOURCEDESK_RETRY_MAX_WAIT_S", "1")
    monkeypatch.setenv("SOURCEDESK_WRITER_TIMEOUT_S", "1.5")
    monkeypatch.setenv("SOURCEDESK_REQUEST_TIMEOUT_S", "5")
    yield sandbox
    _control(sandbox, "/_sandbox/reset")


@pytest.fixture
def memo_dir(tmp_path) -> Path:
    target = tmp_path / "nats-memo"
    shutil.copytree(FIXTURE, target)
    return target


def _run(memo_dir: Path, sections=None, **kw):
    settings = kw.pop("settings", None) or Settings()
    return asyncio.run(run_memo_folder(memo_dir, sections, settings=settings, **kw))


def _raw_classes(memo_dir: Path, outcome) -> dict[str, int]:
    """What the sandbox writer says it did to each raw citation (from the stored raw answer)."""
    with MemoStore(memo_dir) as store:
        run = store.get_run(outcome.run_id)
    return raw_citation_classes(run.raw_response if run else None) or {}


def _snapshot(memo_dir: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted((memo_dir / "sections").glob("*.md"))}


def _ground_truth(memo_dir: Path, outcome) -> set[str]:
    with MemoStore(memo_dir) as store:
        source_set = store.get_source_set(outcome.source_set_id)
        run = store.get_run(outcome.run_id)
    urls = {normalise_url(s.url) for s in source_set.sources}
    urls |= {normalise_url(r["url"]) for r in run.writer_results() if r.get("url")}
    return urls


# ---------------------------------------------------------------- end to end


def test_a_section_runs_end_to_end_into_a_note(env, memo_dir):
    [outcome] = _run(memo_dir, ["overview"])
    assert outcome.status == "ok", outcome.message
    assert outcome.note_path == memo_dir / "sections" / "01-overview.md"
    front, body = parse_note(outcome.note_path.read_text(encoding="utf-8"))
    assert front["section"] == "overview" and front["run_id"] == outcome.run_id
    assert front["source_set"]["id"] == outcome.source_set_id and front["source_set"]["version"] == 1
    assert front["model"] == "perplexity/sonar" and front["web_search"] is True
    report = outcome.report
    assert front["counts"] == note_counts(report)
    assert front["counts"]["weak"] == report["support"]["weak"] and front["counts"]["uncited"] == len(report["uncited"])
    assert report["verified"] + report["substituted"] >= 1
    assert front["cost"]["total"] == pytest.approx(outcome.cost["total"]) and outcome.cost["writer"] > 0
    assert body.startswith("# Company overview\n\n")
    assert "## Sources (retrieved)" in body
    # every marker has a definition, every definition is used
    prose = _DEFINITION.split(body)[0]
    assert set(_MARKER.findall(body)) == set(_DEFINITION.findall(body))
    assert _MARKER.findall(prose)
    assert outcome.timings["total_s"] >= outcome.timings["writer_s"] > 0


def test_every_url_in_every_note_was_retrieved(env, memo_dir):
    outcomes = _run(memo_dir)
    assert [o.section for o in outcomes] == list(NOTES)
    assert all(o.status == "ok" for o in outcomes), [o.message for o in outcomes]
    raw = {"invented": 0, "wrong_metadata": 0, "out_of_range": 0}
    for outcome in outcomes:
        text = outcome.note_path.read_text(encoding="utf-8")
        urls = note_urls(text)
        truth = _ground_truth(memo_dir, outcome)
        strays = {u for u in urls if normalise_url(u) not in truth}
        assert not strays, f"{outcome.section}: URLs that no retrieval returned: {strays}"
        assert "example.com" not in text
        for key in raw:
            raw[key] += _raw_classes(memo_dir, outcome).get(key, 0)
        if outcome.section != "notes":
            assert urls, f"{outcome.section}: the note cites nothing"
    # the sandbox writer really did fabricate: the clean notes are the pipeline's doing
    assert raw["invented"] > 0 and raw["wrong_metadata"] > 0
    # the measurement script agrees, section by section
    checks = check_memo(memo_dir)
    assert [(c.section, c.outside, c.writer_api) for c in checks] == [(s, [], "perplexity") for s in NOTES]
    assert all(c.links > 0 for c in checks if c.section != "notes")


def test_strict_section_cites_only_the_frozen_set(env, memo_dir):
    [outcome] = _run(memo_dir, ["funding"])
    assert outcome.status == "ok", outcome.message
    text = outcome.note_path.read_text(encoding="utf-8")
    front, body = parse_note(text)
    assert front["web_search"] is False
    assert "## Sources (web search)" not in body
    keys = set(_MARKER.findall(body))
    assert keys and all(re.fullmatch(r"E\d+", k) for k in keys)
    with MemoStore(memo_dir) as store:
        run = store.get_run(outcome.run_id)
        frozen = {normalise_url(s.url) for s in store.get_source_set(outcome.source_set_id).sources}
    assert run.web_results == [] and run.writer_api == "perplexity"
    # strict on the Agent API: a model, no tools, so no search_results output item at all
    assert not [i for i in run.raw_response["output"] if i.get("type") == "search_results"]
    assert {normalise_url(u) for u in note_urls(text)} <= frozen


def test_strict_section_keeps_no_url_the_writer_typed_from_memory(env, memo_dir):
    """With its search disabled the writer still types URLs from memory in some answers;
    none of them may reach the note. The guiding question varies until one answer does."""
    memo_yaml = memo_dir / "memo.yaml"
    original = memo_yaml.read_text(encoding="utf-8")
    for attempt in range(12):
        memo_yaml.write_text(original.replace("and from whom?", f"and from whom? ({attempt})"), encoding="utf-8")
        [outcome] = _run(memo_dir, ["funding"], refresh=attempt == 0)
        if _raw_classes(memo_dir, outcome).get("invented"):
            break
    else:
        pytest.fail("the sandbox writer never typed a URL from memory in strict mode")
    assert outcome.status == "ok", outcome.message
    text = outcome.note_path.read_text(encoding="utf-8")
    with MemoStore(memo_dir) as store:
        run = store.get_run(outcome.run_id)
        frozen = {normalise_url(s.url) for s in store.get_source_set(outcome.source_set_id).sources}
    invented = [c["url"] for c in run.raw_response["sandbox_truth"]["citations"] if c["class"] == "invented"]
    assert invented and run.web_results == []
    assert {normalise_url(u) for u in note_urls(text)} <= frozen
    assert not any(normalise_url(u) in {normalise_url(x) for x in note_urls(text)} for u in invented)
    report = outcome.report
    assert report["substituted"] + report["dropped"] >= 1
    assert "## Sources (web search)" not in text


def test_every_run_is_recorded_with_its_inputs_and_no_key(env, memo_dir):
    [outcome] = _run(memo_dir, ["overview"])
    with MemoStore(memo_dir) as store:
        run = store.get_run(outcome.run_id)
    assert run.section == "overview" and run.status == "ok"
    assert run.source_set_id == outcome.source_set_id
    assert isinstance(run.prompt, dict)
    assert "Company overview" in run.prompt["user"] and run.prompt["system"]
    assert run.raw_response["status"] == "completed" and run.writer_api == "perplexity"
    assert any(i.get("type") == "message" and i["content"][0]["text"] for i in run.raw_response["output"])
    assert run.report == StoredReport.model_validate(outcome.report)
    assert run.report.citations and run.report_counts["verified"] == outcome.report["verified"]
    assert run.outcome.status == "ok" and run.cost["total"] == outcome.cost["total"]
    assert set(run.timings) == {"retrieval_s", "writer_s", "total_s"}
    store_bytes = b"".join(p.read_bytes() for p in (memo_dir / ".sourcedesk").rglob("*") if p.is_file())
    note_bytes = outcome.note_path.read_bytes()
    for key in (EXA_KEY, WRITER_KEY):
        assert key.encode() not in store_bytes and key.encode() not in note_bytes


# ---------------------------------------------------------------- failures never touch the note


@pytest.mark.parametrize(
    "fault, reason, kind",
    [
        ("writer:500*2", "HTTP 500", "server"),  # still failing after the one retry
        ("writer:timeout*2", "did not answer within", "timeout"),
        ("writer:401*1", "HTTP 401", "auth"),
    ],
)
def test_writer_failure_leaves_the_previous_note_byte_identical(env, memo_dir, fault, reason, kind):
    first = _run(memo_dir, ["overview", "competitors"])
    assert [o.status for o in first] == ["ok", "ok"]
    before = _snapshot(memo_dir)
    _faults(env, fault)
    events: list[tuple[str, str]] = []
    # one section at a time, so the fault's budget is spent on the first section only
    outcomes = _run(
        memo_dir,
        ["overview", "competitors"],
        settings=Settings(max_concurrent_sections=1, writer_timeout_s=0.6),
        progress=lambda s, st: events.append((s, st)),
    )
    failed, other = outcomes
    assert failed.error_kind == kind
    assert [st for s, st in events if s == "overview"] == ["retrieving", "writing", "failed"]
    assert failed.status == "failed" and failed.note_path is None
    assert reason in failed.message and "previous note is unchanged" in failed.message
    assert _snapshot(memo_dir)["01-overview.md"] == before["01-overview.md"]
    assert other.status == "ok", other.message  # the other section is fine
    assert _snapshot(memo_dir)["02-competitors.md"] != before["02-competitors.md"]
    with MemoStore(memo_dir) as store:
        run = store.get_run(failed.run_id)
    assert run.status == "failed" and reason in run.message
    assert run.error.kind == failed.error_kind
    assert not list((memo_dir / "sections").glob(".*.tmp"))


def test_rerunning_one_section_leaves_every_other_note_byte_identical(env, memo_dir):
    _run(memo_dir)
    before = _snapshot(memo_dir)
    [outcome] = _run(memo_dir, ["competitors"], refresh=True)
    assert outcome.status == "ok"
    after = _snapshot(memo_dir)
    assert set(after) == set(before)
    for name in before:
        if name == "02-competitors.md":
            assert after[name][0] != before[name][0]  # a new run id at least
        else:
            assert after[name] == before[name], f"{name} was rewritten"


def test_second_run_reuses_the_frozen_set_with_zero_exa_requests(env, memo_dir):
    first = _run(memo_dir, ["overview", "competitors"])
    assert _exa_requests(env) >= 2
    _control(env, "/_sandbox/reset")
    second = _run(memo_dir, ["overview", "competitors"])
    assert _exa_requests(env) == 0
    assert _writer_requests(env) == 2
    for a, b in zip(first, second, strict=False):
        assert b.status == "ok" and b.source_set_reused
        assert b.source_set_id == a.source_set_id
        assert b.cost["retrieval"] == 0.0 and b.requests["exa"] == 0


def test_degraded_retrieval_still_writes_the_note_with_a_warning(env, memo_dir):
    _faults(env, "exa:402")
    [outcome] = _run(memo_dir, ["competitors"])
    assert outcome.status == "degraded"
    assert any(w.startswith("degraded:") for w in outcome.warnings)
    front, _ = parse_note(outcome.note_path.read_text(encoding="utf-8"))
    assert front["status"] == "degraded"
    assert any(w.startswith("degraded:") for w in front["warnings"])


# ---------------------------------------------------------------- concurrency and cancellation


def test_sections_run_concurrently_but_within_the_bound(env, memo_dir):
    _control(env, "/_sandbox/latency", {"writer": 300})
    active, peak = set(), [0]

    def progress(section: str, stage: str) -> None:
        if stage == "retrieving":
            active.add(section)
        elif stage in ("saved", "failed"):
            active.discard(section)
        peak[0] = max(peak[0], len(active))

    outcomes = _run(memo_dir, settings=Settings(max_concurrent_sections=2), progress=progress)
    assert all(o.status == "ok" for o in outcomes)
    assert peak[0] == 2


def test_stages_are_reported_in_order(env, memo_dir):
    events: list[tuple[str, str]] = []
    _run(memo_dir, ["overview"], progress=lambda s, st: events.append((s, st)))
    assert events == [
        ("overview", "retrieving"),
        ("overview", "writing"),
        ("overview", "reconciling"),
        ("overview", "saved"),
    ]


def _run_with_cancel(memo_dir: Path, how: str):
    loaded = load_memo(memo_dir)

    async def main():
        cancel = asyncio.Event()
        with MemoStore(memo_dir) as store:

            def progress(section, stage):
                if stage == "writing":
                    asyncio.get_running_loop().call_later(0.2, cancel.set if how == "event" else task.cancel)

            task = asyncio.ensure_future(
                run_section(loaded, "overview", store=store, settings=Settings(), progress=progress, cancel=cancel)
            )
            try:
                return await task
            except asyncio.CancelledError:
                return "cancelled"

    return asyncio.run(main())


@pytest.mark.parametrize("how", ["event", "task"])
def test_cancelling_a_run_leaves_no_partial_note(env, memo_dir, how):
    _run(memo_dir, ["overview"])
    before = _snapshot(memo_dir)
    _control(env, "/_sandbox/latency", {"writer": 3000})
    result = _run_with_cancel(memo_dir, how)
    if how == "event":
        assert result.status == "cancelled" and result.error_kind == "cancelled" and not result.ok
        assert "cancelled while writing" in result.message
    else:
        assert result == "cancelled"
    assert _snapshot(memo_dir) == before
    with MemoStore(memo_dir) as store:
        latest = store.runs("overview")[0]
    assert latest.status == "cancelled" and "cancelled" in latest.message


def test_a_cancelled_run_does_not_make_the_next_run_suspect_hand_edits(env, memo_dir):
    _run(memo_dir, ["overview"])
    _control(env, "/_sandbox/latency", {"writer": 3000})
    assert _run_with_cancel(memo_dir, "event").status == "cancelled"
    with MemoStore(memo_dir) as store:
        assert store.section_state("overview").last_status == "cancelled"
    _control(env, "/_sandbox/latency", {"writer": 0})
    [again] = _run(memo_dir, ["overview"])
    assert again.status == "ok"
    assert not any("edits made outside sourcedesk" in w for w in again.warnings)


def test_hand_edits_to_a_note_are_kept_in_the_run_record_before_it_is_replaced(env, memo_dir):
    [first] = _run(memo_dir, ["overview"])
    edited = first.note_path.read_text(encoding="utf-8") + "\nAnalyst remark: check the churn numbers.\n"
    first.note_path.write_text(edited, encoding="utf-8")
    [second] = _run(memo_dir, ["overview"])
    assert second.status == "ok"
    assert any("edits made outside sourcedesk" in w for w in second.warnings)
    with MemoStore(memo_dir) as store:
        assert store.get_run(second.run_id).previous_note == edited
    # an untouched note is simply replaced, without the warning
    [third] = _run(memo_dir, ["overview"])
    assert not any("edits made outside sourcedesk" in w for w in third.warnings)


def test_the_writer_search_is_pinned_or_told_what_to_avoid(env, memo_dir):
    with MemoStore(memo_dir) as store:
        store.add_reject("nats.aero")
    outcomes = _run(memo_dir, ["overview", "competitors", "funding"])
    with MemoStore(memo_dir) as store:
        runs = {o.section: store.get_run(o.run_id) for o in outcomes}
    # pin: entity → the writer's own search is restricted to the subject's domains
    assert runs["overview"].domain_filter == ["nats.io", "synadia.com"]
    # a wide section keeps its rejections (newest first), then the aggregators, out of the writer's search
    assert runs["competitors"].domain_filter == [
        "-nats.aero",
        "-github.com",
        "-wikipedia.org",
        "-linkedin.com",
        "-reddit.com",
        "-medium.com",
    ]
    # strict mode: no web search at all, so no filter
    assert runs["funding"].domain_filter == [] and runs["funding"].web_search is False


def test_writer_results_from_rejected_domains_are_called_out(env, memo_dir):
    with MemoStore(memo_dir) as store:
        store.add_reject("synadia.com")
    # a zero cap sends no filter: the writer's own search is free to return the rejected domain
    [outcome] = _run(memo_dir, ["competitors"], settings=Settings(writer_domain_filter_cap=0))
    with MemoStore(memo_dir) as store:
        run = store.get_run(outcome.run_id)
    hosts = {r["url"].split("/")[2] for r in run.writer_results()}
    assert run.domain_filter == []
    assert any(h.endswith("synadia.com") for h in hosts)  # the situation under test did arise
    assert any("rejected domains" in w and "synadia.com" in w for w in outcome.warnings)
    # … and none of them reaches the note
    note = outcome.note_path.read_text(encoding="utf-8")
    body = note.split("---", 2)[2]  # after the frontmatter, which names the rejected hosts in its warning
    assert "synadia.com" not in body
    assert all("synadia.com" not in (c["resolved_url"] or "") for c in outcome.report["citations"])


# ---------------------------------------------------------------- writer API choice


def test_an_openai_compatible_writer_writes_strictly_from_the_frozen_set(env, memo_dir, monkeypatch):
    """SOURCEDESK_WRITER_API=openai: OPENAI_API_KEY, no Perplexity-only fields, no web search —
    the retrieved set is the only citable material, and a URL the model types is not kept."""
    import json

    import respx

    monkeypatch.setenv("SOURCEDESK_WRITER_API", "openai")
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", "https://llm.test/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-key")
    monkeypatch.delenv("PERPLEXITY_API_KEY")
    answer = (
        "Synadia maintains NATS and sells Synadia Cloud. [^E1]\n\n"
        "It was founded in 2017 [per Bloomberg](https://www.bloomberg.com/news/synadia-2017), see "
        "https://www.bloomberg.com/news/synadia-bare. [^9]\n\n"
        "[^9]: [Invented](https://www.bloomberg.com/news/synadia-invented)\n"
    )
    with respx.mock(assert_all_called=True) as mock:
        mock.route(host="127.0.0.1").pass_through()  # Exa: the sandbox
        route = mock.post("https://llm.test/v1/chat/completions").respond(
            200,
            json={
                "model": "gpt-4o-mini",
                "choices": [{"message": {"role": "assistant", "content": answer}}],
                "usage": {"prompt_tokens": 900, "completion_tokens": 60},
            },
        )
        [outcome] = _run(memo_dir, ["overview"], settings=Settings())
    assert outcome.status in ("ok", "degraded"), outcome.message
    request = route.calls[0].request
    assert request.headers["authorization"] == "Bearer sk-openai-test-key"
    body = json.loads(request.content)
    assert body["model"] == load_memo(memo_dir).memo.writer.model  # the memo's model, as written
    assert "search_domain_filter" not in body and "disable_search" not in body
    text = outcome.note_path.read_text(encoding="utf-8")
    front, note = parse_note(text)
    assert front["web_search"] is False and "## Sources (web search)" not in note
    # no trace of the typed URLs in the prose, the Sources or the frontmatter: warnings name the host only
    assert "bloomberg.com/news" not in text and "synadia-2017" not in text
    assert "bloomberg.com" not in note
    assert "removed www.bloomberg.com/… (never retrieved)" in text
    assert front["counts"]["links_removed"] == 2 == outcome.report["links_removed"]
    assert "per Bloomberg" in note  # the link's words stay; only its destination goes
    with MemoStore(memo_dir) as store:
        frozen = {normalise_url(s.url) for s in store.get_source_set(outcome.source_set_id).sources}
    assert {normalise_url(u) for u in note_urls(text)} <= frozen
    assert "sk-openai-test-key" not in text


def test_a_blank_perplexity_key_fails_the_writer_clearly_and_sends_nothing(env, memo_dir, monkeypatch):
    monkeypatch.setenv("PERPLEXITY_API_KEY", "")
    before = _writer_requests(env)
    [outcome] = _run(memo_dir, ["overview"])
    assert outcome.status == "failed" and "set PERPLEXITY_API_KEY" in outcome.message
    assert _writer_requests(env) == before
    assert not (memo_dir / "sections" / NOTES["overview"]).exists()


_KILLED_RUN = """
import asyncio, os, signal, sys
from pathlib import Path
import sourcedesk.core.pipeline.run
import sourcedesk.store.memo_store
from sourcedesk.tui.headless import run_memo_folder

memo_dir, where = Path(sys.argv[1]), sys.argv[2]
original_save, original_write = sourcedesk.store.memo_store.MemoStore.save_run, sourcedesk.core.pipeline.run.write_note_atomic

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def save_run(self, *args, **kwargs):
    if where == "in-store-write":  # the db.json replacement itself is where the process dies
        import sourcedesk.core.files.atomic as atomic
        atomic.os.replace = lambda *a: die()
    return original_save(self, *args, **kwargs)

def write_note(path, text):
    if where == "before-note":
        die()
    original_write(path, text)
    if where == "after-note":
        die()

sourcedesk.store.memo_store.MemoStore.save_run = save_run
sourcedesk.core.pipeline.run.write_note_atomic = write_note
asyncio.run(run_memo_folder(memo_dir, ["overview"]))
"""


@pytest.mark.parametrize("where", ["in-store-write", "before-note", "after-note"])
def test_a_run_killed_anywhere_never_makes_its_own_note_look_edited(env, memo_dir, where):
    """The run's record and the section's state are one store write, made before the note is
    replaced: a kill at any point leaves a note sourcedesk still knows as its own."""
    import subprocess
    import sys

    [first] = _run(memo_dir, ["overview"])
    written = first.note_path.read_bytes()
    repo = Path(__file__).resolve().parents[1]
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_RUN, str(memo_dir), where], cwd=repo, capture_output=True, timeout=120
    )
    assert child.returncode == -9, child.stderr.decode()
    if where == "after-note":
        assert first.note_path.read_bytes() != written  # the new note landed before the kill
    else:
        assert first.note_path.read_bytes() == written  # the previous note, byte-identical
    with MemoStore(memo_dir) as store:
        records = store.runs("overview")
        state = store.section_state("overview")
    assert state.last_run == records[0].id  # never a record without its state, or the reverse
    [again] = _run(memo_dir, ["overview"])
    assert again.status == "ok"
    assert not any("edits made outside sourcedesk" in w for w in again.warnings), again.warnings
