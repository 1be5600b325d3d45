"""The bugs a first day in the workbench found (issue 19), each driven as the analyst met it."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable, Static

from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.screens.section_screen import SectionScreen
from tests.test_tui_support import SIZE, control, make_app, run_and_wait, settle


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox


def _head(app) -> str:
    return str(app.screen.query_one("#section-head", Static).render())


def test_pin_run_pin_run_ends_fresh_on_the_set_the_spec_selects(sb, tmp_path):
    """p r p r: the second r reuses the set retrieved for the first pin mode, and the
    section says fresh and shows that set (it used to compare with the newest version)."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.open_section("news")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            await run_and_wait(pilot, "r", "news")
            first = app.store.latest_source_set("news")
            for toggle in range(2):
                await pilot.press("p")
                await settle(pilot)
                if toggle == 1:  # back to the first pin mode: the set retrieved for it is the one shown
                    assert app.screen.view.status == "stale" and f"reuses {first.id}" in app.screen.view.why
                    assert app.screen.view.source_set.id == first.id
                await run_and_wait(pilot, "r", "news")
            assert app.screen.view is not None
            assert app.screen.view.status == "fresh", (app.screen.view.status, app.screen.view.why)
            assert "stale" not in _head(app) and "fresh" in _head(app)
            # the run reused the first set, and the screen shows that set, not the newest version
            assert app.last_outcomes["news"].source_set_reused
            assert app.screen.view.source_set is not None and app.screen.view.source_set.id == first.id
            assert f"set {first.id}" in _head(app)
            table = app.screen.query_one("#sources", DataTable)
            assert table.row_count >= len(first.sources)
            # and a further r keeps it fresh
            await run_and_wait(pilot, "r", "news")
            assert app.screen.view.status == "fresh"
            # the Report tab lists every citation its counts line counts
            await pilot.press("2")
            await settle(pilot)
            report = app.screen.data.run_record.the_report
            assert report is not None and report.citations
            rows = app.screen.query_one("#report", DataTable).row_count
            assert rows == len(report.citations) + len(report.uncited)

    asyncio.run(scenario())
