"""Verification in the workbench (grounding after each run, URLs on ``v``), as an analyst sees it.

A fresh demo memo against the real sandbox over loopback (as in test_tui_app);
the liveness check never touches the real network: the app's DNS resolver and
HTTP client for checks are replaced (``check_resolve`` / ``check_client``), and
the grounding that follows every run makes no lookup at all.
"""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest
from textual.widgets import DataTable, TabbedContent

from sourcedesk.core.verify import addresses
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.screens.memo_screen import MemoScreen
from sourcedesk.screens.section_screen import SectionScreen
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.tui.app import SourcedeskApp
from sourcedesk.tui.demo import demo_settings
from tests.test_tui_support import SIZE, cells, column, control, make_app, press, run_and_wait, screen_text, settle

PUBLIC = "93.184.216.34"
PAGE = "<html><head><title>NATS</title></head><body><p>Messaging for the edge, in production.</p></body></html>"
PLANTED_TITLE = "[bold]Pricing[/bold] page"


@pytest.fixture(scope="module")
def sandbox():
    # The seed picks the demo writer's draws, which depend on the section and its sources, never on
    # the date: with seed 3 the demo overview states the uncited 140 percent these tests expect (on
    # any day; seed 12 did so only on the days whose date in the prompt drew it).
    with SandboxServer(port=0, seed=3, fault_hold_s=2.0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox
    control(sandbox.url, "/_sandbox/reset")


class Resolver:
    """DNS for the check: every name is public (or, ``down``, DNS itself fails). Records lookups;
    ``gate`` holds every lookup until it is set."""

    def __init__(self, *, down: bool = False, gate: asyncio.Event | None = None):
        self.down = down
        self.gate = gate
        self.calls: list[str] = []
        self.called = asyncio.Event()  # the check has reached its first lookup

    async def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        self.called.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.down:
            raise addresses.ResolutionFailed(f"DNS lookup of {host} failed (no resolver)")
        return [PUBLIC]


def web(requests: list[str]) -> httpx.AsyncClient:
    """Every page answers 200 with a short real page; records what was asked."""

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(str(request.url))
        return httpx.Response(200, text=PAGE, headers={"content-type": "text/html; charset=utf-8"})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def offline_web() -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"the offline check sent a request to {request.url}")

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def open_section(pilot, app, tab: str = "7") -> SectionScreen:
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, SectionScreen)
    await pilot.press(tab)
    await settle(pilot)
    return app.screen


async def verify(pilot, app, section: str = "overview") -> None:
    await pilot.press("v")
    await settle(pilot)
    assert section not in app.check_jobs
    await settle(pilot)


def summary(screen) -> str:
    return str(screen.query_one("#checks-summary").render())


def detail(screen) -> str:
    return str(screen.query_one("#detail").render())


def note_path(app, name: str = "01-overview.md"):
    return app.loaded.dir / "sections" / name


def plant(app, prose: str, definition: str) -> None:
    """Add a paragraph before the note's sources and a footnote definition at its end (a hand edit)."""
    path = note_path(app)
    text = path.read_text(encoding="utf-8")
    head, sep, tail = text.partition("\n## Sources")
    path.write_text(f"{head.rstrip()}\n\n{prose}\n{sep}{tail.rstrip()}\n\n{definition}\n", encoding="utf-8")


def rows(table: DataTable) -> dict[str, list[str]]:
    return {r.key.value: cells(table, r.key.value) for r in table.ordered_rows}


# ---------------------------------------------------------------- after a run: grounding, offline


def test_a_run_grounds_its_new_note_offline_and_the_checks_tab_shows_the_counts(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        resolver = Resolver()
        app.check_resolve, app.check_client = resolver, offline_web()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            check = app.last_check("overview")
            assert check is not None and not check.liveness and check.report.urls == []
            grounding = check.report.grounding
            assert grounding, "the demo overview cites at least one figure"
            supported = sum(g.status == "supported" for g in grounding)
            # the demo writer states an uncited figure that no retrieved source has: found, and a problem
            uncited = [g for g in grounding if g.kind == "uncited_statistic"]
            assert [(g.text, g.status) for g in uncited] == [("140 percent", "not_found")]
            # the run's notice carries the grounding counts
            assert any(
                m.startswith("overview: ok") and f"grounding: {supported} supported" in m for _s, m in app.notices
            ), app.notices
            # the memo row's problem badge counts it (every cited figure was found)
            assert "✗1" in cells(app.screen.query_one("#sections", DataTable), "overview")[6]
            screen = await open_section(pilot, app)
            text = summary(screen)
            assert "grounding only (offline, after the run)" in text
            assert "URLs not checked yet (v checks them over the network)" in text
            assert f"grounding: {len(grounding)} item(s): {supported} supported" in text
            assert "1 problem(s)" in text
            table = screen.query_one("#checks", DataTable)
            assert table.row_count == len(grounding)
            first = cells(table, "ground:0")
            assert first[0] == f"[^{grounding[0].key}]" and first[2] == "supported" and first[3] == grounding[0].text
            # the detail pane follows the highlighted row
            assert grounding[0].text in detail(screen) and "cited source: https://" in detail(screen)
            # no DNS, no request: grounding is offline
            assert resolver.calls == []
            saved = app.store.section_state("overview").last_check.to_json()
            assert saved["liveness"] is False and saved["problems"] == 1
            assert saved["counts"]["grounding"]["supported"] == supported
        await app.check_client.aclose()

    asyncio.run(scenario())


def test_a_changed_figure_reads_not_found_and_is_flagged_on_the_memo_screen(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        requests: list[str] = []
        app.check_resolve, app.check_client = Resolver(), web(requests)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            good = next(
                g
                for g in app.last_check("overview").report.grounding
                if g.kind == "statistic" and g.status == "supported"
            )
            changed = re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), good.text, count=1)
            path = note_path(app)
            text = path.read_text(encoding="utf-8")
            head, sep, body = text.partition("\n---\n")  # keep the frontmatter as it is
            path.write_text(head + sep + body.replace(good.text, changed), encoding="utf-8")
            screen = await open_section(pilot, app)
            await verify(pilot, app)
            table = screen.query_one("#checks", DataTable)
            found = [r for k, r in rows(table).items() if k.startswith("ground:") and r[3] == changed]
            assert found and found[0][0] == f"[^{good.key}]" and found[0][2] == "not found", rows(table)
            # the changed figure, and the demo's uncited figure no retrieved source states
            assert "URLs and grounding" in summary(screen) and "2 problem(s)" in summary(screen)
            urls = [r for k, r in rows(table).items() if k.startswith("url:")]
            assert urls and all(r[2] == "ok" for r in urls)
            assert requests  # the pages were fetched (by the mock client)
            assert "✗2 check problem(s)" in str(screen.query_one("#section-head").render())
            await pilot.press("escape")
            assert isinstance(app.screen, MemoScreen)
            assert "✗2" in cells(app.screen.query_one("#sections", DataTable), "overview")[6]
            assert "the last check found 2 problem(s)" in str(app.screen.query_one("#memo-why").render())
        await app.check_client.aclose()

    asyncio.run(scenario())


# ---------------------------------------------------------------- v: liveness on demand


def test_v_reads_a_planted_example_com_citation_as_placeholder_and_shows_its_title_literally(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        requests: list[str] = []
        resolver = Resolver()
        app.check_resolve, app.check_client = resolver, web(requests)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            plant(
                app,
                "Synadia publishes its prices. [^99]",
                f"[^99]: [{PLANTED_TITLE}](https://example.com/pricing). example.com.",
            )
            screen = await open_section(pilot, app, tab="1")
            await verify(pilot, app)
            assert screen.query_one("#section-tabs", TabbedContent).active == "tab-checks"  # v shows its results
            table = screen.query_one("#checks", DataTable)
            by_url = {r[3]: (k, r) for k, r in rows(table).items() if k.startswith("url:")}
            key, row = by_url["https://example.com/pricing"]
            assert row[0] == "[^99]" and row[2] == "placeholder"
            assert "example.com" not in resolver.calls  # refused before any lookup
            assert not any("example.com" in u for u in requests)
            # the placeholder, and the demo's uncited figure that no retrieved source states
            assert "1 placeholder" in summary(screen) and "2 problem(s)" in summary(screen)
            table.move_cursor(row=[r.key.value for r in table.ordered_rows].index(key))
            await settle(pilot)
            shown = detail(screen)
            assert PLANTED_TITLE in shown  # literal, not bold markup
            assert "never requested" in shown
            assert PLANTED_TITLE in screen_text(app)
            notice = [m for s, m in app.notices if m.startswith("overview: ") and "placeholder" in m]
            assert notice and "2 problem(s)" in notice[-1]
            saved = app.store.section_state("overview").last_check.to_json()
            assert saved["liveness"] is True and saved["problems"] == 2
        await app.check_client.aclose()

        # a new session on the same memo still flags the note it checked
        again = SourcedeskApp(
            app.loaded.dir, settings=demo_settings(sb.url), global_store=GlobalStore(tmp_path / "demo" / "global.json")
        )
        async with again.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "✗2" in cells(again.screen.query_one("#sections", DataTable), "overview")[6]
            screen = await open_section(pilot, again)
            assert "2 problem(s) — v checks again to list them" in summary(screen)

    asyncio.run(scenario())


def test_an_offline_check_says_so_and_calls_nothing_dead(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        app.check_resolve, app.check_client = Resolver(down=True), offline_web()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            screen = await open_section(pilot, app)
            await verify(pilot, app)
            table = screen.query_one("#checks", DataTable)
            statuses = [r[2] for k, r in rows(table).items() if k.startswith("url:")]
            assert statuses and set(statuses) == {"unreachable"}
            text = summary(screen)
            # no URL is a problem offline; the one problem is the uncited figure grounding found offline
            assert f"{len(statuses)} unreachable" in text and "1 problem(s)" in text
            assert "this machine looks offline, so liveness is unknown (not dead)" in text
            assert any(s == "warning" and "looks offline" in m for s, m in app.notices), app.notices
            assert "✗1 " in str(screen.query_one("#section-head").render())
        await app.check_client.aclose()

    asyncio.run(scenario())


def test_a_second_v_while_checking_is_ignored_and_the_head_line_shows_progress(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        gate = asyncio.Event()
        requests: list[str] = []
        resolver = Resolver(gate=gate)
        app.check_resolve, app.check_client = resolver, web(requests)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            screen = await open_section(pilot, app)
            await pilot.press("v")
            await asyncio.wait_for(resolver.called.wait(), 60)  # held at its first lookup, after saying how many URLs
            await pilot.pause()  # the screens apply the progress message
            assert app.check_jobs.get("overview") is not None and app.check_jobs["overview"].total is not None
            total = app.check_jobs["overview"].total
            assert f"checking 0/{total} URL(s)" in str(screen.query_one("#section-head").render())
            assert "checking 0/" in summary(screen)
            job = app.check_jobs["overview"]
            checking = [w for w in app.workers if w.group == "check:overview" and not w.is_finished]
            await pilot.press("v")
            await pilot.pause()
            assert app.check_jobs["overview"] is job  # not restarted
            assert [w for w in app.workers if w.group == "check:overview" and not w.is_finished] == checking
            assert any(s == "warning" and "a check is already running" in m for s, m in app.notices)
            gate.set()
            await settle(pilot)
            assert "overview" not in app.check_jobs
            assert app.last_check("overview").liveness
            assert "checking" not in str(screen.query_one("#section-head").render())
        await app.check_client.aclose()

    asyncio.run(scenario())


def test_a_section_without_a_note_says_so(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        resolver = Resolver()
        app.check_resolve, app.check_client = resolver, offline_web()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            screen = await open_section(pilot, app)
            assert "No note yet — r writes it" in summary(screen)
            await pilot.press("v")
            await settle(pilot)
            assert not app.check_jobs and app.last_check("overview") is None
            assert any(s == "warning" and "overview has no note yet" in m for s, m in app.notices), app.notices
            assert screen.query_one("#checks", DataTable).row_count == 0
            assert "Traceback" not in screen_text(app)
            assert resolver.calls == []
            assert column(app.screen.query_one("#checks", DataTable), "status") == []
        await app.check_client.aclose()

    asyncio.run(scenario())


def test_c_cancels_a_running_check_and_a_new_note_stops_one(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        gate = asyncio.Event()
        app.check_resolve, app.check_client = Resolver(gate=gate), web([])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            grounded = app.last_check("overview")
            screen = await open_section(pilot, app)
            await pilot.press("v")
            await pilot.pause()  # held at its first lookup: not settled
            assert "overview" in app.check_jobs
            await press(pilot, "c")
            assert "overview" not in app.check_jobs
            assert any("overview: URL check stopped: cancelled" in m for _s, m in app.notices), app.notices
            assert app.last_check("overview") is grounded  # the previous result stays
            assert not app.jobs  # c stopped the check, not a run
            # a run that writes a new note stops the check of the old one
            await pilot.press("v")
            await pilot.pause()
            assert "overview" in app.check_jobs
            await run_and_wait(pilot, "r", "overview")
            assert "overview" not in app.check_jobs
            assert any("URL check stopped: a new note was written" in m for _s, m in app.notices), app.notices
            latest = app.last_check("overview")
            assert latest is not grounded and not latest.liveness
            gate.set()
            await settle(pilot)  # the stopped worker has finished; nothing of it may land
            assert app.last_check("overview") is latest  # the stopped check never lands
            assert "grounding only" in summary(screen)
        await app.check_client.aclose()

    asyncio.run(scenario())
