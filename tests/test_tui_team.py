"""The workbench on a memo a colleague works on too (TinyDB and the team's PostgreSQL store).

What the analyst sees: a colleague's reject arrives as a toast naming who rejected what, and
the rows are refreshed; a run of a section the colleague is running is refused, naming them.
"""

from __future__ import annotations

import asyncio
import os

from sourcedesk.screens.memo_screen import MemoScreen
from sourcedesk.store.backend import open_global_store, open_memo_store
from sourcedesk.store.holders import whoami
from sourcedesk.tui.app import SourcedeskApp
from sourcedesk.tui.demo import demo_settings, prepare_demo
from tests.test_tui_support import SIZE, settle


def _app(tmp_path, url: str) -> SourcedeskApp:
    memo = prepare_demo(root=tmp_path / "demo")
    store = open_memo_store(memo, url=url)
    everywhere = open_global_store(url=url, path=tmp_path / "demo" / "global.json")
    return SourcedeskApp(memo, settings=demo_settings("http://127.0.0.1:9"), store=store, global_store=everywhere)


def test_a_colleagues_reject_is_a_toast_naming_them_and_refreshes_the_rows(tmp_path, store_url):
    app = _app(tmp_path, store_url)
    colleague = open_memo_store(app.loaded.dir, url=store_url)
    colleague.origin = "colleague"  # another analyst's process
    refreshed: list[frozenset[str] | None] = []

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, MemoScreen)
            arrived = asyncio.Event()
            original = app.store_changed

            def recorded(sections: frozenset[str] | None = None) -> None:
                refreshed.append(sections)
                original(sections)
                arrived.set()

            app.store_changed = recorded  # type: ignore[method-assign]
            colleague.add_reject("nats.aero")
            await asyncio.wait_for(arrived.wait(), timeout=60)  # a hang guard: NOTIFY/the log poll is < 1 s
            assert ("information", f"{whoami()} rejected nats.aero") in app.notices
            assert refreshed == [None]  # every section's rows were read again

    try:
        asyncio.run(scenario())
    finally:
        colleague.close()
        app.store.close()
        app.global_store.close()


def test_running_a_section_a_colleague_holds_names_them_and_runs_nothing(tmp_path, store_url):
    app = _app(tmp_path, store_url)
    colleague = open_memo_store(app.loaded.dir, url=store_url)
    section = app.loaded.memo.sections[0].id
    colleague.hold_section(section, purpose="running it")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, MemoScreen)
            assert app.start_run(section)
            await settle(pilot)  # the refused run's worker has ended
            assert not app.jobs
            [(severity, message)] = [n for n in app.notices if "was not run" in n[1]]
            assert severity == "warning"
            assert message.startswith(f"{section} was not run: section {section} of memo ")
            assert f"is held by {whoami()} (pid {os.getpid()}) since " in message and message.endswith("running it")
            assert app.store.runs(section) == []

    try:
        asyncio.run(scenario())
    finally:
        colleague.close()
        app.store.close()
        app.global_store.close()
