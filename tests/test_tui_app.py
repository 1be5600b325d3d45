"""The workbench as an analyst drives it: keys in, screens and files out.

Each test opens a fresh copy of the bundled demo memo against the real sandbox
over loopback (real httpx clients), through Textual's Pilot.
"""

from __future__ import annotations

import asyncio

import pytest
import yaml
from textual.widgets import DataTable

from sourcedesk.core.config.settings import config_dir
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.screens.memo_screen import MemoScreen
from sourcedesk.screens.reject_modal import RejectScreen
from sourcedesk.screens.section_screen import SectionScreen
from sourcedesk.themes import DARK, LIGHT
from tests.conftest import exa_entry
from tests.test_tui_support import (
    SIZE,
    cells,
    column,
    control,
    exa_requests,
    make_app,
    run_and_wait,
    screen_text,
    select_row,
    settle,
    stage_reached,
)

SECTIONS = ["overview", "product", "competitors", "funding", "news"]


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0, fault_hold_s=2.0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox
    control(sandbox.url, "/_sandbox/reset")


def test_the_demo_memo_lists_every_section_as_never_run(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, MemoScreen)
            table = app.screen.query_one("#sections", DataTable)
            assert [r.key.value for r in table.ordered_rows] == SECTIONS
            assert column(table, "status") == ["never run"] * 5
            assert "Company overview" in cells(table, "overview")[1]
            assert app.notices == []  # the demo has its keys: no warnings at start

    asyncio.run(scenario())


def test_running_a_section_shows_its_status_and_counts(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            table = app.screen.query_one("#sections", DataTable)
            await run_and_wait(pilot, "r", "overview")
            row = cells(table, "overview")
            assert row[2] in ("fresh", "degraded"), row
            assert row[4] == "6"  # kept sources
            outcome = app.last_outcomes["overview"]
            assert f"{outcome.report['verified']}✓" in row[5]
            assert row[7].startswith("$")
            assert (app.loaded.dir / "sections" / "01-overview.md").is_file()
            assert any(m.startswith("overview: ok") for _s, m in app.notices), app.notices
            # the other sections are untouched
            assert cells(table, "product")[2] == "never run"

    asyncio.run(scenario())


def test_the_section_screen_lists_the_kept_sources(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            table = app.screen.query_one("#sources", DataTable)
            latest = app.store.latest_source_set("overview")
            rows = [cells(table, r.key.value) for r in table.ordered_rows]
            kept = [r for r in rows if r[6] == "included"]
            assert [(r[0], r[1]) for r in kept] == [(s.marker, s.title or s.host) for s in latest.sources]
            assert all(r[5] == "✓ pinned" for r in kept)
            # the report tab has one row per citation
            await pilot.press("2")
            report = app.screen.query_one("#report", DataTable)
            citations = app.last_outcomes["overview"].report["citations"]
            uncited = app.last_outcomes["overview"].report["uncited"]
            assert report.row_count == len(citations) + len(uncited)  # and one per uncited claim
            assert uncited and column(report, "status")[-1] == "uncited claim"
            assert {c.get("support") for c in citations} <= {"supported", "partial", "unsupported", "unchecked", None}
            await pilot.press("f")  # filter: verified only
            verified = [c for c in citations if c["status"] == "verified"]
            assert 0 < report.row_count == len(verified) < len(citations)
            assert all(v.startswith("verified") for v in column(report, "status"))
            await pilot.press("f")  # next filter: substituted
            assert report.row_count == sum(c["status"] == "substituted" for c in citations)
            # rejecting the subject's own domain is flagged; escape cancels and changes nothing
            await pilot.press("1")
            await select_row(pilot, table, lambda r: r[2] == "www.synadia.com")
            await pilot.press("x")
            await settle(pilot)
            assert isinstance(app.screen, RejectScreen)
            preview = str(app.screen.query_one("#reject-preview").render())
            assert "synadia.com is the subject's own domain" in preview
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            assert app.store.rejects() == [] and app.store.latest_source_set("overview").version == latest.version
            await pilot.press("escape")
            assert isinstance(app.screen, MemoScreen)

    asyncio.run(scenario())


def test_rejecting_a_namesake_domain_takes_it_out_of_the_frozen_set(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            table = app.screen.query_one("#sections", DataTable)
            table.move_cursor(row=SECTIONS.index("news"))
            await run_and_wait(pilot, "r", "news")
            before = app.store.latest_source_set("news")
            # held out of the writer's part since issue 17, but in the frozen set
            aero = [h.source for h in before.held_out if h.source.host.endswith("nats.aero")]
            assert aero, "the demo's wide news search should pick up the air-traffic namesake"
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            sources = app.screen.query_one("#sources", DataTable)
            await select_row(pilot, sources, lambda r: r[2] == "www.nats.aero" and r[6].startswith("held out"))
            await pilot.press("x")
            await settle(pilot)
            assert isinstance(app.screen, RejectScreen)
            assert "Takes 3 source(s)" in str(app.screen.query_one("#reject-preview").render())
            await pilot.click("#reject-ok")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            rows = [cells(sources, r.key.value) for r in sources.ordered_rows]
            included = [r for r in rows if r[6] == "included"]
            assert included and all("nats.aero" not in r[2] for r in included)
            assert [r[0] for r in included] == [f"E{i}" for i in range(1, len(included) + 1)]  # re-packed
            assert sum(1 for r in rows if r[6] == "rejected (memo)") == len(aero)
            assert "nats.aero" in app.store.rejects()
            assert app.global_store.rejects() == []
            # re-running uses the curated set: no new search
            searches = exa_requests(sb.url)
            await run_and_wait(pilot, "r", "news")
            assert exa_requests(sb.url) == searches
            assert app.last_outcomes["news"].source_set_reused
            note = (app.loaded.dir / "sections" / "05-news.md").read_text(encoding="utf-8")
            assert "nats.aero" not in note.split("## Sources (retrieved)")[-1]

    asyncio.run(scenario())


def test_a_writer_failure_is_a_notification_and_the_old_note_stays(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            note = app.loaded.dir / "sections" / "01-overview.md"
            before = note.read_bytes()
            control(sb.url, "/_sandbox/faults", ["writer:401"])
            app.notices.clear()
            await run_and_wait(pilot, "r", "overview")
            assert app.is_running
            errors = [m for s, m in app.notices if s == "error"]
            assert errors and "writer failed" in errors[0] and "previous note is unchanged" in errors[0]
            assert note.read_bytes() == before
            table = app.screen.query_one("#sections", DataTable)
            assert cells(table, "overview")[2] == "failed"
            assert "Traceback" not in screen_text(app)

    asyncio.run(scenario())


def test_a_running_section_can_be_cancelled(sb, tmp_path):
    async def scenario():
        control(sb.url, "/_sandbox/latency", {"writer": 3000})
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            table = app.screen.query_one("#sections", DataTable)
            writing = stage_reached(app, "overview", "writing")
            await pilot.press("r")
            await asyncio.wait_for(writing.wait(), 60)  # the writer stage's progress message (a guard, not a clock)
            await pilot.pause()
            assert app.jobs["overview"].stage == "writing"
            assert "writing" in cells(table, "overview")[2]
            await pilot.press("c")
            await settle(pilot)
            assert not app.jobs
            assert any("cancelled while writing" in m for _s, m in app.notices), app.notices
            assert not (app.loaded.dir / "sections" / "01-overview.md").exists()
            assert cells(table, "overview")[2] == "never run"  # stopped on purpose: not a failure

    asyncio.run(scenario())


def test_the_theme_toggles_and_is_remembered(sb, tmp_path):
    async def scenario(expect_first: str):
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            assert app.theme == expect_first
            await pilot.press("t")
            assert app.theme != expect_first
            return app.theme

    assert asyncio.run(scenario(DARK.name)) == LIGHT.name
    saved = yaml.safe_load((config_dir() / "ui.yaml").read_text(encoding="utf-8"))
    assert saved == {"theme": LIGHT.name}
    assert asyncio.run(scenario(LIGHT.name)) == DARK.name


def test_the_pin_toggle_edits_memo_yaml_and_marks_the_section_stale(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            table = app.screen.query_one("#sections", DataTable)
            table.move_cursor(row=SECTIONS.index("competitors"))
            await run_and_wait(pilot, "r", "competitors")
            original = app.loaded.path.read_text(encoding="utf-8")
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            await pilot.press("p")
            await settle(pilot)
            edited = app.loaded.path.read_text(encoding="utf-8")
            diff = [(a, b) for a, b in zip(original.splitlines(), edited.splitlines(), strict=False) if a != b]
            assert diff == [("        pin: none", "        pin: entity")]
            assert exa_entry(load_memo(app.loaded.dir).memo.section("competitors").include_sources[0]).pin == "entity"
            assert isinstance(app.screen, SectionScreen) and app.screen.view is not None
            assert app.screen.view.status == "stale"
            await pilot.press("escape")
            assert cells(table, "competitors")[2] == "stale"
            assert cells(table, "competitors")[3] == "entity"

    asyncio.run(scenario())


def test_the_command_palette_runs_an_export(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*"export memo")
            await settle(pilot)  # the palette's search is a worker of its own
            await pilot.press("enter")
            await settle(pilot)
            assert (app.loaded.dir / "memo.md").is_file()
            assert any(m.startswith("Wrote memo.md — 1 section(s)") for _s, m in app.notices), app.notices

    asyncio.run(scenario())


def test_a_retrieval_outage_degrades_the_section_with_a_visible_warning(sb, tmp_path):
    async def scenario():
        control(sb.url, "/_sandbox/faults", ["exa:500"])
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            table = app.screen.query_one("#sections", DataTable)
            await run_and_wait(pilot, "r", "overview")
            assert cells(table, "overview")[2] == "degraded"
            assert any(s == "warning" and "overview: degraded" in m for s, m in app.notices), app.notices
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            await pilot.press("3")
            warnings = str(app.screen.query_one("#warnings").render())
            assert "degraded" in warnings and "writer-only" in warnings

    asyncio.run(scenario())


def test_missing_keys_are_announced_at_start(tmp_path):
    from sourcedesk.store.global_store import GlobalStore
    from sourcedesk.tui.app import SourcedeskApp
    from sourcedesk.tui.demo import DemoSettings, prepare_demo

    async def scenario():
        memo = prepare_demo(root=tmp_path / "demo")
        app = SourcedeskApp(memo, settings=DemoSettings(), global_store=GlobalStore(tmp_path / "g.json"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            warnings = [m for s, m in app.notices if s == "warning"]
            assert any("No EXA_API_KEY" in m for m in warnings) and any("No PERPLEXITY_API_KEY" in m for m in warnings)

    asyncio.run(scenario())


def test_a_retired_writer_model_setting_is_announced_at_start_as_run_says_it(tmp_path):
    from sourcedesk.store.global_store import GlobalStore
    from sourcedesk.tui.app import SourcedeskApp
    from sourcedesk.tui.demo import DemoSettings, prepare_demo

    memo = prepare_demo(root=tmp_path / "demo")
    text = (memo / "memo.yaml").read_text(encoding="utf-8")
    (memo / "memo.yaml").write_text(text.replace("  model: perplexity/sonar  #", "  #"), encoding="utf-8")

    async def scenario(writer_model):
        settings = DemoSettings(writer_model=writer_model)
        app = SourcedeskApp(memo, settings=settings, global_store=GlobalStore(tmp_path / "g.json"))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            return [m for s, m in app.notices if s == "warning"]

    warnings = asyncio.run(scenario("sonar-pro"))
    retired = [m for m in warnings if "the writer_model setting (sonar-pro) is a retired Sonar model" in m]
    assert len(retired) == 1 and "preset: low" in retired[0], warnings
    assert not any("retired" in m for m in asyncio.run(scenario("perplexity/sonar")))


def test_the_history_tab_lists_every_run_newest_first(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            first = app.last_outcomes["overview"]
            control(sb.url, "/_sandbox/faults", ["writer:401"])
            await run_and_wait(pilot, "r", "overview")
            failed = app.last_outcomes["overview"]
            assert failed.status == "failed"
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            await pilot.press("6")
            history = app.screen.query_one("#history", DataTable)
            assert [r.key.value for r in history.ordered_rows] == [f"run:{failed.run_id}", f"run:{first.run_id}"]
            newest, oldest = (cells(history, f"run:{failed.run_id}"), cells(history, f"run:{first.run_id}"))
            # columns: when, status, citations, cost, note, took, source set (essential first: issue 19)
            assert newest[1] == "failed" and newest[4] == "unchanged"
            assert oldest[1] == "ok" and oldest[4] == "current"
            assert oldest[6].startswith(first.source_set_id)
            assert oldest[2].startswith(f"{first.report['verified']}✓")
            # the detail pane explains the highlighted run: the failure says why
            detail = str(app.screen.query_one("#detail").render())
            assert failed.run_id in detail and "rejected the API key" in detail
            await pilot.press("down")
            detail = str(app.screen.query_one("#detail").render())
            assert "the current note" in detail and first.source_set_id in detail
            assert f"{first.report['verified']} verified" in detail

    asyncio.run(scenario())


def test_a_bug_in_a_key_is_one_line_naming_the_log_file_and_the_workbench_carries_on(tmp_path):
    """The one error handler: a key whose action raises is logged with its traceback and shown
    as one line naming the log file; the workbench keeps running (it used to end the session)."""
    import logging

    from sourcedesk.store.global_store import GlobalStore
    from sourcedesk.tui.app import SourcedeskApp
    from sourcedesk.tui.demo import DemoSettings, prepare_demo
    from sourcedesk.tui.logs import log_file, setup_logging

    setup_logging()

    class Broken(SourcedeskApp):
        def action_help(self) -> None:
            raise RuntimeError("a bug in a key binding")

    memo = prepare_demo(root=tmp_path / "demo")
    app = Broken(memo, settings=DemoSettings(), global_store=GlobalStore(tmp_path / "g.json"))

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("question_mark")
            await settle(pilot)
            assert app.is_running and isinstance(app.screen, MemoScreen)
            errors = [m for s, m in app.notices if s == "error"]
            assert len(errors) == 1, app.notices
            assert "unexpected error: RuntimeError: a bug in a key binding" in errors[0]
            assert str(log_file()) in errors[0] and "Traceback" not in errors[0]
            assert "Traceback" not in screen_text(app)
            await pilot.press("q")

    asyncio.run(scenario())
    assert app.return_code in (0, None)
    for handler in logging.getLogger("sourcedesk").handlers:
        handler.flush()
    written = log_file().read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in written and "a bug in a key binding" in written


CRASHING = """
import sys
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.tui.app import SourcedeskApp
from sourcedesk.tui.demo import DemoSettings
from sourcedesk.screens.memo_screen import MemoScreen


def broken(self):
    raise RuntimeError("a bug outside any key")


MemoScreen.on_mount = broken
app = SourcedeskApp(sys.argv[1], settings=DemoSettings(), global_store=GlobalStore(sys.argv[2]))
app.run(headless=True)
sys.exit(app.return_code or 0)
"""


def test_a_crash_of_the_workbench_is_one_line_naming_the_log_file_not_a_traceback(tmp_path):
    """What escapes every handler ends the app: its traceback (with local variables) goes to the
    log file through the app's error console, and the terminal gets one line naming that file."""
    import os
    import subprocess
    import sys

    from sourcedesk.tui.demo import prepare_demo

    memo = prepare_demo(root=tmp_path / "demo")
    logs = tmp_path / "logs"
    env = {**os.environ, "SOURCEDESK_LOG_DIR": str(logs)}
    done = subprocess.run(
        [sys.executable, "-c", CRASHING, str(memo), str(tmp_path / "g.json")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    shown = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(shown) == 1 and "Traceback" not in done.stderr and "│" not in done.stderr, done.stderr
    assert shown[0].startswith("sourcedesk: unexpected error: RuntimeError: a bug outside any key")
    assert str(logs / "sourcedesk.log") in shown[0]
    written = (logs / "sourcedesk.log").read_text(encoding="utf-8")
    assert "a bug outside any key" in written and "Traceback" in written
