"""memo.yaml edited, while the workbench is open, into a file that no longer loads."""

from __future__ import annotations

import asyncio
import os

import pytest
from textual.widgets import DataTable

from sourcedesk.sandbox.server import SandboxServer
from tests.test_tui_support import SIZE, control, exa_requests, make_app, run_and_wait, settle


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0, fault_hold_s=2.0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox


def test_a_run_refuses_a_memo_yaml_that_no_longer_loads_instead_of_running_the_old_one(sb, tmp_path):
    """`sourcedesk run` stops on such a file; the workbench ran the last version that loaded,
    silently ignoring the analyst's edit."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            runs = len(app.store.runs("overview", with_payloads=False))
            good = app.loaded.path.read_text(encoding="utf-8")
            app.loaded.path.write_text(good + "\n  broken: [\n", encoding="utf-8")
            stat = app.loaded.path.stat()
            os.utime(app.loaded.path, (stat.st_atime, stat.st_mtime + 5))  # a later edit, whatever the clock's grain
            for key in ("r", "R", "a"):
                await pilot.press(key)
                await settle(pilot)
                assert not app.jobs, key
                said = [m for _s, m in app.notices[-2:]]
                assert any("memo.yaml" in m and "line" in m for m in said), said
                assert said[-1].startswith("Nothing was run: memo.yaml does not load"), said
            assert len(app.store.runs("overview", with_payloads=False)) == runs
            # fixed, it runs again, with the file as it now is
            app.loaded.path.write_text(good.replace("pin: entity", "pin: none", 1), encoding="utf-8")
            os.utime(app.loaded.path, (stat.st_atime, stat.st_mtime + 10))
            searches = exa_requests(sb.url)
            await run_and_wait(pilot, "r", "overview")
            assert len(app.store.runs("overview", with_payloads=False)) == runs + 1
            assert exa_requests(sb.url) > searches  # the edited pin asked for a new search
            table = app.screen.query_one("#sections", DataTable)
            assert table.row_count == len(app.loaded.memo.sections)

    asyncio.run(scenario())
