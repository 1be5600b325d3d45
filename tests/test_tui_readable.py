"""What the workbench shows must read right as plain text: a status word cut short, or a
choice told apart by colour alone, says something other than what was checked."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from rich.cells import cell_len
from textual.widgets import DataTable, Input, RadioButton

from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.screens.memo_screen import MemoScreen
from sourcedesk.screens.reject_modal import RejectScreen
from sourcedesk.screens.reject_name_modal import RejectNameScreen
from sourcedesk.screens.section_screen import REPORT_COLUMNS, SectionScreen
from sourcedesk.tui.widgets import check_rows
from tests.test_tui_support import SIZE, column, control, exa_requests, make_app, run_and_wait, screen_text, settle


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0, fault_hold_s=2.0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox


def _choices(app) -> dict[str, str]:
    """Each scope choice of the open dialog as the terminal's text shows it."""
    out = {}
    for button in app.screen.query(RadioButton):
        out[str(button.id)] = str(button.render())
    return out


def _showing(app, screen: type) -> Callable[[], bool]:
    return lambda: isinstance(app.screen, screen)


def test_the_scope_choice_of_both_reject_dialogs_reads_without_colour(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            dialogs: tuple[tuple[str, type], ...] = (("x", RejectScreen), ("n", RejectNameScreen))
            for key, dialog in dialogs:
                await pilot.press(key)
                await settle(pilot)
                assert _showing(app, dialog)()

                shown = _choices(app)
                assert shown["scope-memo"].startswith("▐●▌") and "This memo only" in shown["scope-memo"], shown
                assert shown["scope-global"].startswith("▐○▌"), shown
                if isinstance(app.screen.focused, Input):  # typing the phrase: tab out of it first
                    await pilot.press("tab")
                await pilot.press("g")  # the dialog's key for "all memos"
                await settle(pilot)
                assert _choices(app)["scope-global"].startswith("▐●▌")
                shown = _choices(app)
                assert shown["scope-memo"].startswith("▐○▌") and shown["scope-global"].startswith("▐●▌"), shown
                text = screen_text(app)  # what a capture of the terminal holds
                assert "▐○▌ This memo only (m)" in text and "▐●▌ All memos — global (g)" in text
                await pilot.press("escape")
                await settle(pilot)
                assert isinstance(app.screen, SectionScreen)
            assert app.store.rejects() == []

    asyncio.run(scenario())


def test_a_retitled_citation_reads_verified_retitled_in_full_in_the_report(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            citations = app.last_outcomes["overview"].report["citations"]
            assert any(c.get("retitled") and c["status"] == "verified" for c in citations)  # the demo has one
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            await pilot.press("2")
            await settle(pilot)
            report = app.screen.query_one("#report", DataTable)
            assert "verified (retitled)" in column(report, "status")
            assert "verified (retitled)" in screen_text(app)  # whole on screen, not "verified (retitled"

    asyncio.run(scenario())


def test_status_words_and_markers_fit_their_columns():
    widths = {key: width for key, _label, width in REPORT_COLUMNS}
    for label in ("verified (retitled)", "substituted", "out of range", "uncited claim"):
        assert cell_len(label) <= widths["status"], label
    checks = {key: width for key, _label, width in check_rows.COLUMNS}
    # a cut "[^E12]" reads "[^E1…", another marker
    assert cell_len("[^E12]") <= checks["key"]
    for status in check_rows.EXPLAIN:
        assert cell_len(check_rows.label(status)) <= checks["status"], status


def test_every_source_state_fits_the_state_column():
    """'omitted by budget (12,345 chars)' was cut to 'omitted by budget (1' — a wrong number —
    and 'name rejected (global)' to 'name rejected (globa'."""
    from sourcedesk.core.domain.models import RemovedSource, Source
    from sourcedesk.core.sources.curation import DROPPED_RULE
    from sourcedesk.themes import DARK
    from sourcedesk.tui.widgets.cells import Palette
    from sourcedesk.tui.widgets.source_rows import COLUMNS, SourceRow, _state_text

    width = {key: w for key, _label, w in COLUMNS}["state"]
    palette = Palette(DARK)
    source = Source(marker="E1", url="https://a.example/x", title="A", host="a.example", provider="exa")
    rows = [
        SourceRow("kept:0", "kept", source=source),
        SourceRow("omitted:0", "omitted", source=source, size=123_456),
    ]
    rules = ["global-name:Kestra Medical", "memo-name:Kestra", "global:a.example", "memo:a.example", DROPPED_RULE, ""]
    for reason in ("namesake", "excluded", "rejected", "aggregator", "duplicate"):
        for rule in rules:
            removed = RemovedSource(url=source.url, host=source.host, reason=reason, rule=rule)
            rows.append(SourceRow("excluded:0", "excluded", removed=removed))
    for row in rows:
        shown = _state_text(row, palette).plain
        assert cell_len(shown) <= width, shown


def test_the_pin_toggle_says_what_the_next_run_really_does(sb, tmp_path):
    """Toggled, the pin asks for a new search; toggled back, a run reuses the set already
    retrieved with it — the toast and the section's head line say which, and the run agrees."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            first = app.store.latest_source_set("overview")
            assert first is not None
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            screen = app.screen
            assert isinstance(screen, SectionScreen)
            await pilot.press("p")  # entity -> none
            await settle(pilot)
            said = app.notices[-1][1]
            assert "pin: none written to memo.yaml" in said and "a run retrieves again" in said, said
            assert screen.view is not None and screen.view.status == "stale"
            searches = exa_requests(sb.url)
            await run_and_wait(pilot, "r", "overview")
            assert exa_requests(sb.url) > searches  # it did search again
            second = app.store.latest_source_set("overview")
            assert second is not None and second.id != first.id
            await pilot.press("p")  # none -> entity: the first set was retrieved for exactly this
            await settle(pilot)
            said = app.notices[-1][1]
            assert f"a run (r) reuses {first.id}" in said and "retrieves again" not in said, said
            assert screen.view is not None and f"reuses {first.id}" in screen.view.why
            searches = exa_requests(sb.url)
            await run_and_wait(pilot, "r", "overview")
            assert exa_requests(sb.url) == searches  # no search: the stored set was reused
            assert app.last_outcomes["overview"].source_set_id == first.id

    asyncio.run(scenario())


NARROW = (100, 30)


def test_at_100_by_30_flags_costs_every_tab_and_the_help_key_stay_on_screen(sb, tmp_path):
    """The wide layout pushed the memo's flags and costs, the Checks tab, half the footer's
    keys (? Help among them) and the reject dialog's buttons off a 100×30 terminal."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=NARROW) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "a", "news")  # every section: the demo's weak citations are in several
            await settle(pilot)
            text = screen_text(app)
            memo_screen = app.screen
            assert isinstance(memo_screen, MemoScreen)
            flagged = [v for v in memo_screen.views.values() if v.counts.get("weak", 0)]
            assert flagged, "the demo memo has weak citations to show"
            for shown in flagged:
                weak = shown.counts["weak"]
                assert f"{shown.counts['verified']}✓" in text and f"{weak} weak" in text
            view = memo_screen.views["overview"]
            assert view.cost is not None and f"${view.cost:.3f}" in text  # the cost column, on screen
            assert "⚠" in text  # the flags column
            assert "? Help" in text and "q Quit" in text
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            await settle(pilot)
            text = screen_text(app)
            assert "Checks" in text and "History" in text  # every tab's label
            assert "? Help" in text and "q Quit" in text and "v Verify" in text
            # keys left out of the narrow footer still work
            before = app.loaded.path.read_text(encoding="utf-8")
            await pilot.press("p")
            await settle(pilot)
            assert app.loaded.path.read_text(encoding="utf-8") != before
            for key in ("x", "n"):
                await pilot.press(key)
                await settle(pilot)
                assert not isinstance(app.screen, SectionScreen)
                await settle(pilot)
                dialog = app.screen.query_one("#reject-dialog").region
                for button in ("#reject-ok", "#reject-cancel"):
                    region = app.screen.query_one(button).region
                    assert region.height > 0 and dialog.contains_region(region), (key, button, region, dialog)
                await pilot.press("escape")
                await settle(pilot)
                assert isinstance(app.screen, SectionScreen)
            # in between (the spaced-out footer needs about 165 columns), the keys still fit
            for width in (120, 140, 150):
                await pilot.resize_terminal(width, 40)
                await settle(pilot)
                footer = screen_text(app).splitlines()[-1]
                assert "? Help" in footer and "q Quit" in footer, (width, footer)
            # wide again: the full layout and footer come back
            await pilot.resize_terminal(170, 45)
            await settle(pilot)
            assert "p Pin" in screen_text(app)
            await pilot.press("escape")  # and the memo screen's own footer lost nothing
            await settle(pilot)
            assert "t Theme" in screen_text(app).splitlines()[-1]

    asyncio.run(scenario())


def test_keeping_a_web_result_leaves_it_highlighted_with_its_new_marker(sb, tmp_path):
    """The cursor jumped back to the first result, so the detail pane described another one."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await run_and_wait(pilot, "r", "overview")
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            await pilot.press("5")
            await settle(pilot)
            web = app.screen.query_one("#web", DataTable)
            outside = [i for i, m in enumerate(column(web, "inset")) if not m]
            assert outside and outside[-1] > 0  # a result the set does not hold, not the first row
            web.move_cursor(row=outside[-1])
            await settle(pilot)
            title = column(web, "title")[outside[-1]]
            await pilot.press("k")
            await settle(pilot)
            assert column(web, "inset")[outside[-1]].startswith("W")
            assert web.cursor_row == outside[-1]
            assert title.rstrip("…") in str(app.screen.query_one("#detail").render())

    asyncio.run(scenario())


def test_the_memo_screen_names_only_the_counts_there_are(sb, tmp_path):
    """'0 weak citation(s) … and 1 uncited claim(s)' names a problem the section does not have:
    the line lists what there is, with its count."""

    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            seen: list[tuple[int, int, str]] = []
            for row, section in enumerate([s.id for s in app.loaded.memo.sections]):
                app.screen.query_one("#sections", DataTable).move_cursor(row=row)
                await run_and_wait(pilot, "r", section)
                assert isinstance(app.screen, MemoScreen)
                await settle(pilot)
                counts = app.screen.views[section].counts  # what the note's frontmatter counts
                weak, uncited = int(counts.get("weak", 0)), int(counts.get("uncited", 0))
                why = str(app.screen.query_one("#memo-why").render())
                seen.append((weak, uncited, why))
                assert ("0 weak" not in why) and ("0 uncited" not in why), why
                assert (f"{weak} weak citation(s)" in why) == (weak > 0), why
                assert (f"{uncited} uncited claim(s)" in why) == (uncited > 0), why
            assert any(w == 0 and u > 0 for w, u, _ in seen), seen  # the case that read '0 weak … and 1 uncited'

    asyncio.run(scenario())
