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
from tests.test_tui_support import SIZE, wait_for


def _app(tmp_path, url: str) -> SourcedeskApp:
    memo = prepare_demo(root=tmp_path / "demo")
    store = open_memo_store(memo, url=url)
    everywhere = open_global_store(url=url, path=tmp_path / "demo" / "global.json")
    return SourcedeskApp(memo, settings=demo_settings("http://127.0.0.1:9"), store=store, global_store=everywhere)


def test_a_colleagues_reject_is_a_toast_naming_them_and_refreshes_the_rows(tmp_path, store_url):
    app = _app(tmp_path, store_url)
    colleague = open_memo_store(app.loaded.dir, url=store_url)
    colleague.origin = "colleague"  # another analyst's process
    refreshed: list[str | None] = []

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, MemoScreen), what="the memo screen")
            original = app.section_changed

            def recorded(section_id: str | None = None) -> None:
                refreshed.append(section_id)
                original(section_id)

            app.section_changed = recorded  # type: ignore[method-assign]
            colleague.add_reject("nats.aero")
            expected = f"{whoami()} rejected nats.aero"
            await wait_for(pilot, lambda: any(m == expected for _s, m in app.notices), what="the colleague's reject")
            assert None in refreshed  # every section's rows were read again

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
            await wait_for(pilot, lambda: isinstance(app.screen, MemoScreen), what="the memo screen")
            assert app.start_run(section)
            await wait_for(pilot, lambda: not app.jobs, what="the refused run to end")
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
