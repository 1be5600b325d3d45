"""The right company in the workbench: the About column, "reject this name", the memo screen's
namesake flag, and the namesakes list with learned ones the analyst can remove."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable, Input

from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.screens.memo_screen import MemoScreen
from sourcedesk.screens.namesakes_modal import NamesakesScreen
from sourcedesk.screens.reject_name_modal import RejectNameScreen
from sourcedesk.screens.section_screen import SectionScreen
from tests.test_tui_support import SIZE, cells, control, make_app, run_and_wait, screen_text, select_row, settle

GUARDIAN = "www.theguardian.com"


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox


def test_held_out_reject_the_name_keep_one_in_and_the_note_is_flagged(sb, tmp_path):
    """Issue 17: the namesake's pages never reach the writer — greyed 'held out' rows; n offers a
    name whose preview lists what it removes; u puts it back where it was; k keeps one in, and
    a note that then cites it carries ⚑ on the memo screen."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            memo_table = app.screen.query_one("#sections", DataTable)
            memo_table.move_cursor(row=4)  # news: a wide search with the air-traffic namesake in the press
            await run_and_wait(pilot, "r", "news")
            assert isinstance(app.screen, MemoScreen)
            assert app.screen.namesake_cites["news"] == [] and "⚑" not in cells(memo_table, "news")[6]
            note = (app.loaded.dir / "sections" / "05-news.md").read_text(encoding="utf-8")
            assert GUARDIAN not in note

            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            sources = app.screen.query_one("#sources", DataTable)
            await select_row(pilot, sources, lambda r: r[2] == GUARDIAN)
            row = cells(sources, sources.coordinate_to_cell_key(sources.cursor_coordinate).row_key.value)
            assert row[0] == "—" and row[3] == "✗ namesake" and row[6] == "held out: about NATS Holdings"
            assert "held out of the writer's set" in str(app.screen.query_one("#detail").render())

            await pilot.press("n")
            await settle(pilot)
            assert isinstance(app.screen, RejectNameScreen)
            offered = app.screen.query_one("#reject-name", Input).value
            preview = str(app.screen.query_one("#reject-preview").render())
            assert offered and "source(s) out of the frozen sets" in preview and "kept source" not in preview
            await pilot.click("#reject-ok")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            assert app.store.reject_names() == [offered]
            rows = [cells(sources, r.key.value) for r in sources.ordered_rows]
            assert [r[6] for r in rows if r[2] == GUARDIAN] == ["name rejected (memo)"]
            included = [r for r in rows if r[6] == "included"]
            assert [r[0] for r in included] == [f"E{i}" for i in range(1, len(included) + 1)]

            # u on the name-rejected row puts it back where it was: held out
            await select_row(pilot, sources, lambda r: r[2] == GUARDIAN)
            await pilot.press("u")
            await settle(pilot)
            assert app.store.reject_names() == []
            latest = app.store.latest_source_set("news")
            assert any(h.source.host == GUARDIAN for h in latest.held_out)

            # k keeps it in the writer's set; a note that cites it is flagged
            await select_row(pilot, sources, lambda r: r[2] == GUARDIAN)
            await pilot.press("k")
            await settle(pilot)
            kept = app.store.latest_source_set("news")
            marker = next(s.marker for s in kept.sources if s.host == GUARDIAN)
            assert marker and not any(h.source.host == GUARDIAN for h in kept.held_out)
            await run_and_wait(pilot, "r", "news")
            await pilot.press("escape")
            await settle(pilot)
            assert not isinstance(app.screen, SectionScreen)
            now = app.screen.namesake_cites["news"]  # judged on the re-run note
            flags = cells(app.screen.query_one("#sections", DataTable), "news")[6]
            assert (f"⚑{len(now)}" in flags) if now else ("⚑" not in flags)

    asyncio.run(scenario())


def test_the_subjects_own_name_cannot_be_rejected_from_the_dialog(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            app.screen.query_one("#sections", DataTable).move_cursor(row=4)
            await run_and_wait(pilot, "r", "news")
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            await pilot.press("n")
            await settle(pilot)
            assert isinstance(app.screen, RejectNameScreen)
            field = app.screen.query_one("#reject-name", Input)
            field.value = "nats"
            await settle(pilot)
            assert "the subject's own name" in str(app.screen.query_one("#reject-preview").render())
            await pilot.click("#reject-ok")
            await settle(pilot)
            assert isinstance(app.screen, RejectNameScreen) and app.store.reject_names() == []

    asyncio.run(scenario())


def test_the_namesakes_list_marks_learned_ones_and_removes_them(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        app.store.add_learned_namesakes(
            [LearnedNamesake(name="GNATS", origin="pin", host="www.gnats.io", title="GNATS.io — issue tracking")]
        )
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await pilot.press("N")
            await settle(pilot)
            assert (
                type(app.screen).__name__ == NamesakesScreen.__name__
            )  # (isinstance would narrow to nothing: ModalScreen[None])
            table = app.screen.query_one("#namesakes", DataTable)
            rows = {r.key.value: cells(table, r.key.value) for r in table.ordered_rows}
            assert rows["declared:0"][0] == "NATS Holdings" and rows["declared:0"][2] == "memo.yaml"
            assert rows["learned:0"][0] == "GNATS" and rows["learned:0"][2].startswith("learned · www.gnats.io")
            await pilot.press("d")  # the declared one: not here
            assert "edit the file" in str(app.screen.query_one("#namesakes-note").render())
            table.move_cursor(row=1)
            await pilot.press("d")
            await settle(pilot)
            assert app.store.learned_namesakes() == [] and table.row_count == 1
            await pilot.press("escape")

    asyncio.run(scenario())


@pytest.mark.parametrize("opened_from", ["memo", "section"])
def test_the_namesakes_list_footer_shows_its_own_keys_not_the_screen_below(sb, tmp_path, opened_from):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            if opened_from == "section":
                await pilot.press("enter")
                await settle(pilot)
                assert isinstance(app.screen, SectionScreen)
            below = screen_text(app)
            assert "Refresh" in below  # precondition: the screen below shows its own keys
            await pilot.press("N")
            await settle(pilot)
            assert isinstance(app.screen, NamesakesScreen)
            await settle(pilot)
            shown = screen_text(app)
            assert "esc Close" in shown and "d Remove learned" in shown
            assert "R Refresh" not in shown and "r Run" not in shown and "d Drop" not in shown
            await pilot.press("escape")
            await settle(pilot)
            assert "Refresh" in screen_text(app)  # and back again

    asyncio.run(scenario())


def test_typing_in_the_dialog_edits_the_offered_phrase_and_enter_rejects_it(sb, tmp_path):
    """The dialog offers the namesake phrase and says "edit the phrase to widen or narrow it":
    keys typed at once must edit it (not go to the button or the scope), and Enter rejects it."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            app.screen.query_one("#sections", DataTable).move_cursor(row=4)
            await run_and_wait(pilot, "r", "news")
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            sources = app.screen.query_one("#sources", DataTable)
            await select_row(pilot, sources, lambda r: r[2] == GUARDIAN)  # a held-out namesake row
            await pilot.press("n")
            await settle(pilot)
            assert isinstance(app.screen, RejectNameScreen)
            field = app.screen.query_one("#reject-name", Input)
            offered = field.value
            assert offered
            await pilot.press(*["backspace"] * len(offered), *"air traffic", "g")  # "g" is a letter here
            assert field.value == "air trafficg"
            await pilot.press("backspace")
            preview = str(app.screen.query_one("#reject-preview").render())
            assert "Takes " in preview and "source(s) out of the frozen sets" in preview
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            assert app.store.reject_names() == ["air traffic"]  # this memo: typing "g" did not make it global

    asyncio.run(scenario())
