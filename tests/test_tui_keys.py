"""Keys the analyst can remap, help and footer drawn from the bindings, memo.yaml watched on disk."""

from __future__ import annotations

import asyncio

import pytest
from textual.binding import Binding
from textual.widgets import DataTable

from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.screens.help_screen import HelpScreen
from sourcedesk.screens.memo_screen import MemoScreen
from sourcedesk.screens.section_screen import SectionScreen
from sourcedesk.tui.messages import MemoReloaded
from tests.test_tui_support import SIZE, cells, control, make_app, press, screen_text, settle


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox


def test_a_keymap_in_the_settings_remaps_a_key_by_its_binding_id(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url, keymap={"help": "f1", "run-section": "ctrl+r"})
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            footer = screen_text(app).splitlines()[-1]
            assert "^r Run" in footer and "f1 Help" in footer and "? Help" not in footer, footer
            await press(pilot, "question_mark")  # the old key does nothing now
            assert isinstance(app.screen, MemoScreen)
            await press(pilot, "f1")
            assert isinstance(app.screen, HelpScreen)
            shown = screen_text(app)
            assert "f1" in shown and "help" in shown  # the help lists the key as remapped, with its id
            await press(pilot, "escape")
            await press(pilot, "ctrl+r")
            assert app.last_outcomes["overview"].status in ("ok", "degraded")

    asyncio.run(scenario())


def test_the_help_lists_every_key_of_the_screen_it_was_opened_on_with_its_id(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await press(pilot, "enter")
            assert isinstance(app.screen, SectionScreen)
            section_keys = {b.id for b in SectionScreen.BINDINGS if isinstance(b, Binding) and b.id}
            await press(pilot, "question_mark")
            assert isinstance(app.screen, HelpScreen)
            listed = {binding_id for _key, _what, binding_id in app.screen.rows}
            assert section_keys <= listed  # every binding of the screen, none kept by hand
            assert {"help", "quit", "theme"} <= listed  # and the app's own
            text = screen_text(app)
            assert "Verify" in text or "Check every cited URL" in text
            assert "⚑N" in text  # the symbols are explained too

    asyncio.run(scenario())


def test_an_outside_edit_of_memo_yaml_is_picked_up_by_the_watcher(sb, tmp_path):
    """An editor beside the workbench renames a section: the memo screen shows the new title
    without a key pressed (the watchfiles worker posts MemoReloaded)."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        reloaded = asyncio.Event()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            memo_screen = app.screen
            original = memo_screen.post_message

            def spy(message):
                if isinstance(message, MemoReloaded):
                    reloaded.set()
                return original(message)

            memo_screen.post_message = spy  # type: ignore[method-assign]  # a spy on what the screen is told
            text = app.loaded.path.read_text(encoding="utf-8")
            app.loaded.path.write_text(text.replace("title: Company overview", "title: Who they are"), encoding="utf-8")
            await asyncio.wait_for(reloaded.wait(), 60)  # the watcher's message (the bound is a guard, not a clock)
            await settle(pilot)
            table = app.screen.query_one("#sections", DataTable)
            assert cells(table, "overview")[1].startswith("Who they are")
            assert app.loaded.memo.section("overview").title == "Who they are"

    asyncio.run(scenario())
