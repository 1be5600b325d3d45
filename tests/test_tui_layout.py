"""The workbench at 80×24, 120×36 and wide: every key and column that matters stays on screen
(issue 19's layout), and keys the first day found broken."""

from __future__ import annotations

import asyncio

import pytest
from textual.screen import Screen
from textual.widgets import DataTable

from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.screens.memo_screen import MemoScreen
from sourcedesk.screens.section_screen import SectionScreen
from tests.test_tui_support import control, make_app, run_and_wait, screen_text, settle

SMALL = (80, 24)
MEDIUM = (120, 36)


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox


def _current(app) -> Screen[object]:
    """The screen on top (a function: mypy keeps an earlier isinstance narrowing of app.screen)."""
    return app.screen


def _footer(app) -> str:
    return screen_text(app).rstrip("\n").splitlines()[-1]


def _visible_columns(table: DataTable, width: int) -> list[str]:
    """The headers of the columns that fit in ``width`` cells, whole."""
    shown, x = [], 0
    for column in table.ordered_columns:
        x += column.get_render_width(table)
        if x <= width:
            shown.append(str(column.label))
    return shown


def test_end_and_home_move_through_the_memo_screens_rows(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            table = app.screen.query_one("#sections", DataTable)
            await pilot.press("end")
            assert table.cursor_row == table.row_count - 1
            await pilot.press("home")
            assert table.cursor_row == 0

    asyncio.run(scenario())


@pytest.mark.parametrize("size", [SMALL, MEDIUM, (170, 45)])
def test_the_footer_keeps_help_and_quit_and_no_stray_letters(sb, tmp_path, size):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            for _screen in ("memo", "section"):
                footer = _footer(app)
                assert "? Help" in footer and "q Quit" in footer, footer
                assert "^p" not in footer or footer.rstrip().endswith("^p palette"), footer
                await pilot.press("enter")
                await settle(pilot)
                assert isinstance(app.screen, SectionScreen)

    asyncio.run(scenario())


def test_the_memo_screen_keeps_its_essential_columns_at_80_columns(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, MemoScreen)
            table = app.screen.query_one("#sections", DataTable)
            shown = _visible_columns(table, SMALL[0] - 1)
            for header in ("#", "Section", "Status", "Citations", "Flags", "Cost"):
                assert header in shown, shown

    asyncio.run(scenario())


def _whole(table: DataTable, header: str, width: int) -> bool:
    return header in _visible_columns(table, width)


def test_at_80_by_24_the_detail_pane_moves_under_the_tables_and_the_report_keeps_its_claim(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            await run_and_wait(pilot, "r", "overview")
            await pilot.press("enter")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SectionScreen) and screen.has_class("-tight")
            pane = screen.query_one("#detail-pane").region
            tabs = screen.query_one("#section-tabs").region
            assert pane.y >= tabs.bottom and pane.width == SMALL[0]  # below, the full width
            await pilot.press("2")
            await settle(pilot)
            report = screen.query_one("#report", DataTable)
            assert _whole(report, "Claim", SMALL[0])
            assert "NATS" in str(screen.query_one("#detail").render())  # the highlighted citation's detail
            await pilot.resize_terminal(*MEDIUM)
            await settle(pilot)
            assert not screen.has_class("-tight")  # beside the tables again

    asyncio.run(scenario())


def test_at_120_by_36_no_column_or_header_is_cut(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=MEDIUM) as pilot:
            await settle(pilot)
            await run_and_wait(pilot, "r", "overview")
            await pilot.press("enter")
            await settle(pilot)
            screen = app.screen
            room = screen.query_one("#section-tabs").region.width
            await pilot.press("6")
            await settle(pilot)
            history = screen.query_one("#history", DataTable)
            assert _whole(history, "Cost", room)
            cost = app.last_outcomes["overview"].cost["total"]
            assert f"${cost:.3f}" in screen_text(app)
            await pilot.press("7")
            await settle(pilot)
            checks = screen.query_one("#checks", DataTable)
            check_column = next(c for c in checks.ordered_columns if str(c.label) == "Check")
            assert check_column.width >= len("uncited figure")
            head = str(screen.query_one("#section-head").render())
            for line in head.splitlines():  # a part is never broken over two lines
                assert not line.startswith(("problem(s)", "namesakes removed", "kept")), head
            await pilot.press("N")
            await settle(pilot)
            table = app.screen.query_one("#namesakes", DataTable)
            dialog = app.screen.query_one("#namesakes-dialog").region
            assert sum(c.get_render_width(table) for c in table.ordered_columns) <= dialog.width - 4

    asyncio.run(scenario())


@pytest.mark.parametrize("key", ["x", "n"])
def test_at_80_by_24_the_reject_dialogs_buttons_are_on_screen_and_tab_reaches_them(sb, tmp_path, key):
    from textual.widgets import Button

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            await run_and_wait(pilot, "r", "overview")
            await pilot.press("enter")
            await settle(pilot)
            await pilot.press(key)
            await settle(pilot)
            dialog = app.screen.query_one("#reject-dialog").region
            reached = set()
            for _ in range(8):
                await pilot.press("tab")
                await pilot.pause()
                if isinstance(app.focused, Button):
                    region = app.focused.region
                    assert region.bottom <= dialog.bottom - 1 and region.bottom <= SMALL[1], (region, dialog)
                    reached.add(app.focused.id)
            assert reached == {"reject-ok", "reject-cancel"}

    asyncio.run(scenario())


def test_a_toast_never_covers_the_memo_screens_info_panel(sb, tmp_path):
    from textual.widgets._toast import Toast

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=MEDIUM, notifications=True) as pilot:
            await settle(pilot)
            await run_and_wait(pilot, "r", "overview")  # its outcome is said in a toast
            await pilot.pause()
            await pilot.pause()
            toasts = list(app.screen.query(Toast))
            assert toasts
            why = app.screen.query_one("#memo-why").region
            for toast in toasts:
                assert not toast.region.overlaps(why), (toast.region, why)
                assert toast.region.bottom <= why.y

    asyncio.run(scenario())


def test_every_symbol_is_explained_in_the_help_and_the_tables_tooltips(sb, tmp_path):
    from sourcedesk.screens.help_screen import HelpScreen

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=(170, 45)) as pilot:
            await settle(pilot)
            await run_and_wait(pilot, "r", "overview")
            tooltip = str(app.screen.query_one("#sections", DataTable).tooltip)
            for symbol in ("N✓", "N≈", "N✗", "N#", "weak", "✂N", "⚠N", "?N", "⚑N"):
                assert symbol in tooltip
            why = str(app.screen.query_one("#memo-why").render())
            assert "namesakes_removed" not in why and "_" not in why.split("⚠")[-1].split(":")[0]
            await pilot.press("question_mark")
            await settle(pilot)
            assert isinstance(app.screen, HelpScreen)
            text = screen_text(app)
            for symbol in ("N#", "?N", "⚠N", "⚑N", "✓ subject", "✗ namesake", "? unclear", "retitled"):
                assert symbol in text, symbol
            await pilot.press("escape")
            await pilot.press("enter")
            await settle(pilot)
            section = _current(app)
            assert "✗ namesake" in str(section.query_one("#sources", DataTable).tooltip)
            await pilot.press("4")  # the Note tab has no rows: nothing asks to highlight one
            await settle(pilot)
            assert "Highlight a row" not in str(section.query_one("#detail").render())
            await pilot.press("2")
            await settle(pilot)
            counts = str(section.query_one("#report-counts").render())
            report = app.last_outcomes["overview"].report
            assert f"{report['verified']} verified" in counts and "  retitled" not in counts

    asyncio.run(scenario())
