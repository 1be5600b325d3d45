"""Section status and frozen-set curation, without a terminal (what the screens show rests on these)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.models import OmittedSource, Source, SourceSet
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.pipeline.run import run_section
from sourcedesk.core.pipeline.section_state import describe_section
from sourcedesk.core.sources.curation import domain_for, preview_reject, rebuild, reject_domain, unreject_domain
from sourcedesk.core.sources.providers import get_provider
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.demo import DEMO_KEY, demo_settings, prepare_demo
from tests.test_tui_support import control, exa_requests


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0) as server:
        yield server


# The memo folder, its settings, its open store and a global list of its own.
MemoFixture = tuple[Path, Settings, MemoStore, GlobalStore]


@pytest.fixture
def memo(tmp_path, sandbox) -> Iterator[MemoFixture]:
    control(sandbox.url, "/_sandbox/reset")
    memo_dir = prepare_demo(root=tmp_path / "demo")
    settings = demo_settings(sandbox.url, max_retries=0)
    store = MemoStore(memo_dir)
    yield memo_dir, settings, store, GlobalStore(tmp_path / "global.json")
    store.close()


def _run(memo_dir: Path, settings, store, gstore, section: str):
    loaded = load_memo(memo_dir)
    return asyncio.run(run_section(loaded, section, store=store, settings=settings, global_rejects=gstore.rejects()))


def _status(memo_dir, settings, store, gstore, section):
    return describe_section(
        load_memo(memo_dir), section, store=store, settings=settings, global_rejects=gstore.rejects()
    )


def test_status_goes_from_never_run_to_fresh_to_stale_when_memo_yaml_changes(memo: MemoFixture):
    memo_dir, _settings, _store, _gstore = memo
    assert _status(*memo, "overview").status == "never run"
    outcome = _run(*memo, "overview")
    assert outcome.status == "ok", outcome.message
    view = _status(*memo, "overview")
    assert (view.status, view.why) == ("fresh", "")
    assert view.counts["verified"] == outcome.report["verified"] and view.source_count == 6
    path = memo_dir / "memo.yaml"
    path.write_text(path.read_text().replace("num-results: 6", "num-results: 4", 1))
    view = _status(*memo, "overview")
    assert view.status == "stale" and "memo.yaml" in view.why


def test_a_failed_run_says_failed_and_why_while_the_note_stays(memo: MemoFixture, sandbox):
    _memo_dir, _settings, _store, _gstore = memo
    _run(*memo, "overview")
    control(sandbox.url, "/_sandbox/faults", ["writer:401"])
    outcome = _run(*memo, "overview")
    assert outcome.status == "failed"
    view = _status(*memo, "overview")
    assert (
        view.status == "failed" and "writer failed" in view.why and view.why.endswith("the previous note is unchanged")
    )
    assert view.note_path is not None and view.counts["verified"] > 0


def test_a_rejection_leaves_untouched_sections_fresh_and_reusable(memo: MemoFixture, sandbox):
    memo_dir, settings, store, gstore = memo
    for section in ("overview", "news"):
        _run(*memo, section)
    loaded = load_memo(memo_dir)
    hits = preview_reject(store, ["overview", "news"], "nats.aero")
    assert list(hits) == ["news"] and all(s.host == "www.nats.aero" for s in hits["news"])
    result = reject_domain(loaded, store, "www.nats.aero", scope="memo", settings=settings, global_store=gstore)
    # Issue 17: nats.aero's pages were held out of the writer's part, so they leave from there.
    outside = sum(len(v) for v in result.removed_omitted.values())
    assert result.domain == "nats.aero" and result.removed_count + outside == len(hits["news"])
    news = store.latest_source_set("news")
    assert [s.marker for s in news.sources] == [f"E{i}" for i in range(1, len(news.sources) + 1)]
    # the note was written from the same writer's part: nothing it cites was removed
    assert _status(*memo, "news").status == ("stale" if result.removed_count else "fresh")
    assert _status(*memo, "overview").status == "fresh"  # same sources, re-keyed to the new request
    searches = exa_requests(sandbox.url)
    again = _run(*memo, "overview")
    assert again.source_set_reused and exa_requests(sandbox.url) == searches
    # un-reject: the exact sources come back, markers as before
    lifted = unreject_domain(loaded, store, "nats.aero", settings=settings, global_store=gstore)
    assert lifted.restored_count == result.removed_count + outside and store.rejects() == []
    first = store.source_set_versions("news")[0]
    assert [(s.marker, s.url) for s in store.latest_source_set("news").sources] == [
        (s.marker, s.url) for s in first.sources
    ]


def _src(n: int, size: int, entry: int = 0) -> Source:
    return Source(
        provider="exa", url=f"https://s{n}.example.org/", title=f"s{n}", summary="x" * size, rank=n, entry=entry
    )


def test_repacking_after_a_removal_keeps_every_kept_source_and_fills_free_budget_in_rank_order():
    kept = [_src(0, 10), _src(1, 20), _src(3, 70)]
    omitted = [OmittedSource(source=_src(2, 75), size=75), OmittedSource(source=_src(4, 15), size=15)]
    base = SourceSet(section="s", fingerprint="f", sources=kept, omitted=omitted, budget_chars=100)
    new = rebuild(base, drop_urls={"https://s1.example.org"})
    # s2 (75) would fit first in rank order but would push out s3, which the analyst kept: it stays out
    assert [(s.title, s.marker) for s in new.sources] == [("s0", "E1"), ("s3", "E2"), ("s4", "E3")]
    assert [o.source.title for o in new.omitted] == ["s2"]
    assert [w.code for w in new.warnings] == ["truncated"]


def test_the_proposed_domain_is_the_registrable_one():
    assert domain_for("https://www.nats.aero/news/x") == "nats.aero"
    assert domain_for("https://docs.cresta.com/a") == "cresta.com"
    assert domain_for("https://foo.github.io/x") == "foo.github.io"
    assert domain_for("not a url") is None


def test_the_demo_ignores_the_real_environment_and_resets(tmp_path, monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", "real-key-must-not-be-used")
    monkeypatch.setenv("SOURCEDESK_BUDGET_CHARS", "600")
    settings = demo_settings("http://127.0.0.1:1")
    assert get_provider("exa").api_key(settings).get_secret_value() == DEMO_KEY and settings.budget_chars == 12_000
    memo_dir = prepare_demo(root=tmp_path)
    (memo_dir / "sections").mkdir()
    (memo_dir / "sections" / "01-overview.md").write_text("old")
    assert (prepare_demo(root=tmp_path, keep=True) / "sections" / "01-overview.md").exists()
    assert not (prepare_demo(root=tmp_path) / "sections").exists()


def test_a_cancelled_run_recorded_as_failed_by_an_older_version_is_read_as_cancelled(memo: MemoFixture):
    _memo_dir, _settings, store, _gstore = memo
    outcome = _run(*memo, "overview")
    assert outcome.status == "ok"
    # what an earlier sourcedesk stored for a cancelled run: status "failed", kind "cancelled"
    run_id = store.save_run(
        {
            "section": "overview",
            "status": "failed",
            "message": "cancelled while writing; the previous note is unchanged",
            "outcome": {"status": "failed", "error_kind": "cancelled"},
        }
    )
    store.update_section_state("overview", {"last_run": run_id, "last_status": "failed"})
    view = _status(*memo, "overview")
    assert view.status == "fresh" and view.note_path is not None  # the note it left alone keeps its status
    # a real failure recorded the same way still reads as failed
    run_id = store.save_run(
        {
            "section": "overview",
            "status": "failed",
            "message": "writer failed: HTTP 500",
            "outcome": {"status": "failed", "error_kind": "server"},
        }
    )
    store.update_section_state("overview", {"last_run": run_id, "last_status": "failed"})
    assert _status(*memo, "overview").status == "failed"
