"""The section screen: what was retrieved, what the writer cited, what the note says.

The screen composes the tabs in ``TABS`` (each a widget of its own under
``sourcedesk.tui.widgets``: its rows, its refresh and its detail renderer), a head line, and a
detail pane that follows the highlighted row of the active tab. It reads the section in a
thread worker (``_load``: rows first, then the ``about`` verdicts), applies the result on the
event loop, and reads again only when a message says the section changed.

Curation happens here (``sourcedesk.screens.section_actions``): reject a domain (x) or a name
(n), un-reject either (u), drop one source from the set (d; u restores it), keep a web result
(k), toggle the pin mode (p), see the memo's namesakes (N); then re-run against the frozen set
(r) or refresh retrieval (R).
"""

from __future__ import annotations

import re
from typing import ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from sourcedesk.core.pipeline.section_state import SectionView
from sourcedesk.core.text.safety import clean_text
from sourcedesk.screens.section_actions import SectionCuration
from sourcedesk.screens.workbench import APP_FOOTER_ACTIONS, TIGHT_WIDTH, WorkbenchScreen
from sourcedesk.tui import loading
from sourcedesk.tui.loading import SectionData, Verdicts
from sourcedesk.tui.messages import (
    CheckFinished,
    CheckProgress,
    CheckStarted,
    MemoReloaded,
    SectionRunFinished,
    SectionRunProgress,
    SectionRunStarted,
    StoreChanged,
    ThemeChanged,
)
from sourcedesk.tui.widgets.cells import status_cell
from sourcedesk.tui.widgets.checks_tab import ChecksTab
from sourcedesk.tui.widgets.history_tab import HistoryTab
from sourcedesk.tui.widgets.key_bar import KeyBar
from sourcedesk.tui.widgets.legend import legend_text
from sourcedesk.tui.widgets.note_tab import NoteTab
from sourcedesk.tui.widgets.report_tab import REPORT_COLUMNS, ReportTab
from sourcedesk.tui.widgets.section_tab import NO_ROW, SectionTab, refit_columns
from sourcedesk.tui.widgets.sources_tab import SourcesTab
from sourcedesk.tui.widgets.warnings_tab import WarningsTab
from sourcedesk.tui.widgets.web_tab import WebTab

# The tabs, in order: each gets the next number key. A new tab is a widget file and a line here.
TABS: tuple[type[SectionTab], ...] = (SourcesTab, ReportTab, WarningsTab, NoteTab, WebTab, HistoryTab, ChecksTab)

# The symbols each table's cells use, explained in its tooltip (and all of them in the help).
TABLE_LEGENDS: dict[str, tuple[str, ...]] = {
    "#sources": ("about",),
    "#report": ("about",),
    "#web": ("about",),
    "#history": ("citations",),
}

__all__ = ["REPORT_COLUMNS", "TABS", "SectionScreen"]


class SectionLoaded(Message):
    """The section as read by the loader (rows, run, history, check state)."""

    def __init__(self, data: SectionData) -> None:
        super().__init__()
        self.data = data


class VerdictsLoaded(Message):
    """The ``about`` verdicts of the section's rows, judged after the rows were shown."""

    def __init__(self, data: SectionData, verdicts: Verdicts) -> None:
        super().__init__()
        self.data = data
        self.verdicts = verdicts


class SectionGone(Message):
    """The section left memo.yaml."""


class RunRead(Message):
    """The whole record of a past run (the History tab's detail)."""

    def __init__(self, record: object) -> None:
        super().__init__()
        self.record = record


_PART_GAP = re.compile(r" {3}(?=\S)")


def _tab_keys() -> list[BindingType]:
    return [
        Binding(
            str(i + 1),
            f"tab('{tab.TAB_ID}')",
            tab.TITLE,
            show=False,
            tooltip=f"Show the {tab.TITLE} tab.",
            id=f"tab-{i + 1}",
        )
        for i, tab in enumerate(TABS)
    ]


def _unbroken_parts(head: Text, width: int) -> Text:
    """The head line broken only between its parts (set apart by three spaces), never inside
    one: at 120 columns "✗1 check problem(s)" broke as "✗1 check" / "problem(s)"."""
    cuts = [m.start() for m in _PART_GAP.finditer(head.plain)]
    pieces = head.divide(cuts)  # each piece but the first starts with its gap
    lines: list[Text] = []
    for piece in pieces:
        if lines and lines[-1].cell_len + piece.cell_len <= width:
            lines[-1].append_text(piece)
            continue
        if lines:
            piece = piece[len(piece.plain) - len(piece.plain.lstrip(" ")) :]
        lines.append(piece)
    return Text("\n").join(lines)


class SectionScreen(WorkbenchScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="Back to the memo.", id="back"),
        Binding("r", "run", "Run", tooltip="Re-run against the frozen source set.", id="run-section"),
        Binding(
            "R", "refresh_run", "Refresh", key_display="R", tooltip="Search again, then run.", id="refresh-section"
        ),
        Binding("c", "cancel", "Cancel", tooltip="Cancel this section's run (or its check).", id="cancel-section"),
        Binding("p", "toggle_pin", "Pin", tooltip="Toggle the pin mode (entity ↔ none) in memo.yaml.", id="pin"),
        Binding("x", "reject", "Reject", tooltip="Reject the highlighted source's domain.", id="reject-domain"),
        Binding("n", "reject_name", "Reject name", tooltip="Reject a namesake's name.", id="reject-name"),
        Binding("d", "drop", "Drop", tooltip="Drop the highlighted source from this frozen set.", id="drop"),
        Binding("u", "unreject", "Un-reject", tooltip="Un-reject or restore the highlighted source.", id="unreject"),
        Binding("k", "keep", "Keep", tooltip="Keep the highlighted web result as a W source.", id="keep"),
        Binding(
            "f", "cycle_filter", "Filter", tooltip="Filter the report: status, support, weak, uncited.", id="filter"
        ),
        Binding("v", "verify", "Verify", tooltip="Check every cited URL and ground quotes and figures.", id="verify"),
        Binding(
            "N", "namesakes", "Namesakes", key_display="N", show=False, tooltip="The memo's namesakes.", id="namesakes"
        ),
        *_tab_keys(),
    ]
    NARROW_FOOTER_HIDES = frozenset({"toggle_pin", "drop", "unreject", "keep", "toggle_theme"})

    def __init__(self, section_id: str, view: SectionView | None = None) -> None:
        super().__init__()
        self.section_id = section_id
        self.data: SectionData | None = None
        self._first_view = view  # the memo screen's view: the rows show before anything is read
        self.curation = SectionCuration(self)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="§")
        yield Static(id="section-head", markup=False)
        yield Static(id="section-why", markup=False)
        with Horizontal(id="section-body"):
            with TabbedContent(id="section-tabs", initial=TABS[0].TAB_ID):
                for tab in TABS:
                    yield tab()  # type: ignore[misc]  # every tab is a TabPane with a no-argument constructor
            with VerticalScroll(id="detail-pane"):
                yield Static(id="detail", markup=False)
        yield KeyBar(self.NARROW_FOOTER_HIDES | APP_FOOTER_ACTIONS)

    def on_mount(self) -> None:
        for table_id, groups in TABLE_LEGENDS.items():
            self.query_one(table_id).tooltip = legend_text(*groups)
        self._fit(self.app.size.width)
        self.query_one(SourcesTab).table.focus()
        if self._first_view is not None:
            self._apply(SectionData(view=self._first_view))

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self._fit(self.app.size.width)
        self.reload()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        """Below ``TIGHT_WIDTH`` columns the detail pane sits under the tables (``-tight``); the
        tables' titles, claims and URLs take the width there is, and the head line wraps anew."""
        self.set_class(width < TIGHT_WIDTH, "-tight")
        for table in self.query("#section-tabs DataTable").results(DataTable):
            if getattr(table, "_sd_widths", None) is not None:
                refit_columns(table, width)
        self._fill_head()

    @property
    def view(self) -> SectionView | None:
        return self.data.view if self.data is not None else None

    @property
    def tabs(self) -> list[SectionTab]:
        return [self.query_one(f"#{tab.TAB_ID}", TabPane) for tab in TABS]  # type: ignore[misc]

    def tab(self, kind: type[SectionTab]) -> SectionTab:
        return self.query_one(f"#{kind.TAB_ID}", TabPane)  # type: ignore[return-value]

    @property
    def sources(self) -> SourcesTab:
        return self.query_one(SourcesTab)

    @property
    def web(self) -> WebTab:
        return self.query_one(WebTab)

    @property
    def web_results(self) -> list[dict[str, object]]:
        return self.data.web_results if self.data is not None else []

    def active_tab(self) -> SectionTab:
        active = self.query_one("#section-tabs", TabbedContent).active
        return self.query_one(f"#{active}", TabPane)  # type: ignore[return-value]

    # ------------------------------------------------------------------ loading

    def reload(self) -> None:
        """Read the section again, off the event loop."""
        self._load()

    @work(thread=True, exclusive=True, group="section-load", name="load section", exit_on_error=False)
    def _load(self) -> None:
        app = self.sd_app
        try:
            data = loading.section_data(app, self.section_id)
        except KeyError:
            self.post_message(SectionGone())
            return
        for notice in app.take_store_notices():
            app.call_from_thread(app.say, notice, "warning")
        self.post_message(SectionLoaded(data))
        self.post_message(VerdictsLoaded(data, loading.judge_section(app, data)))

    @on(SectionLoaded)
    def _loaded(self, message: SectionLoaded) -> None:
        self._apply(message.data)

    @on(VerdictsLoaded)
    def _judged(self, message: VerdictsLoaded) -> None:
        if message.data is not self.data:
            return  # a newer read is on screen; its own verdicts follow
        palette = self.sd_app.palette
        for tab in (self.sources, self.query_one(ReportTab), self.web):
            tab.show_verdicts(message.verdicts, palette)
        self._show_detail()

    @on(SectionGone)
    def _gone(self) -> None:
        self.sd_app.say(f"Section {self.section_id} is no longer in memo.yaml.", "warning")
        if self.is_current:
            self.dismiss()

    def _apply(self, data: SectionData) -> None:
        """Every tab from ``data`` (on the event loop: no reading)."""
        self.data = data
        self.sub_title = data.view.section.title
        palette = self.sd_app.palette
        for tab in self.tabs:
            tab.show(data, palette)
        self._fill_head()
        self._show_detail()

    # ------------------------------------------------------------------ what the workers say

    @on(SectionRunStarted)
    @on(SectionRunProgress)
    def _run_moved(self, message: SectionRunStarted | SectionRunProgress) -> None:
        if message.section_id == self.section_id:
            self._fill_head()

    @on(SectionRunFinished)
    def _run_finished(self, message: SectionRunFinished) -> None:
        if message.section_id == self.section_id:
            self.reload()

    @on(CheckStarted)
    @on(CheckProgress)
    @on(CheckFinished)
    def _check_moved(self, message: CheckStarted | CheckProgress | CheckFinished) -> None:
        if message.section_id != self.section_id or self.data is None:
            return
        running = self.sd_app.check_jobs.get(self.section_id)
        checks = self.query_one(ChecksTab)
        if isinstance(message, CheckProgress):
            checks.show_summary(self.sd_app.palette, running)  # progress without rebuilding the rows
        else:
            checks.show_check(self.sd_app.palette, running)
            if self.active_tab() is checks:
                self._show_detail()
        if isinstance(message, CheckFinished) and message.check is not None:
            self.data.check_problems = message.check.problems
        self._fill_head()

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        if message.changed.touches(self.section_id):
            self.reload()

    @on(MemoReloaded)
    def _memo_reloaded(self) -> None:
        self.reload()

    @on(ThemeChanged)
    def _theme_changed(self) -> None:
        if self.data is not None:
            self._apply(self.data)

    # ------------------------------------------------------------------ head line and detail

    def _fill_head(self) -> None:
        view, app = self.view, self.sd_app
        if view is None:
            return
        palette = app.palette
        job = app.jobs.get(self.section_id)
        out = Text()
        out.append(view.section.title, style="bold")
        out.append(f"  {view.id}   ", style="dim")
        out.append_text(status_cell("running", palette, job.stage_text) if job else status_cell(view.status, palette))
        modes = sorted(set(view.pin_modes))
        out.append(f"   pin: {'/'.join(modes) if modes else '—'}")
        ss = view.source_set
        if ss is not None:
            out.append(f"   set {ss.id} · {len(ss.sources)} kept")
            if ss.omitted:
                out.append(f", {len(ss.omitted)} omitted by budget", style=palette.warning)
            if ss.namesakes:
                out.append(f", {len(ss.namesakes)} namesakes removed")
            if ss.excluded:
                out.append(f", {len(ss.excluded)} excluded")
        if view.cost is not None:
            out.append(f"   ${view.cost:.3f}")
        checking = app.check_jobs.get(self.section_id)
        problems = self.data.check_problems if self.data is not None else None
        if checking is not None:
            out.append("   ")
            out.append_text(status_cell("running", palette, checking.text))
        elif problems:
            out.append(f"   ✗{problems} check problem(s)", style=f"bold {palette.error}")
        head = self.query_one("#section-head", Static)
        room = (head.size.width or self.app.size.width) - 2  # its padding
        head.update(_unbroken_parts(out, max(20, room)))
        why = Text()
        if job is not None:
            why.append(f"Running: {job.stage_text}… c cancels; the current note stays until the run succeeds.")
        elif view.why:
            why.append(clean_text(view.why))
        self.query_one("#section-why", Static).update(why)

    def _show_detail(self) -> None:
        tab = self.active_tab()
        if isinstance(tab, HistoryTab) and tab.needs_full():
            self._read_run(tab.needs_full() or "")
        text = tab.detail(self.sd_app.palette)
        tables = self.query(f"#{tab.TAB_ID} DataTable").results(DataTable)
        if text is NO_ROW and not any(t.row_count for t in tables):
            text = Text()  # a tab with no rows (the note, the warnings, an empty table): nothing to highlight
        if text is not None:
            self.query_one("#detail", Static).update(text)

    @work(thread=True, exclusive=True, group="read-run", name="read a run", exit_on_error=False)
    def _read_run(self, run_id: str) -> None:
        record = loading.full_run(self.sd_app, run_id)
        if record is not None:
            self.post_message(RunRead(record))

    @on(RunRead)
    def _run_read(self, message: RunRead) -> None:
        history = self.query_one(HistoryTab)
        history.add_full(message.record)  # type: ignore[arg-type]  # a RunRecord
        if self.active_tab() is history:
            self._show_detail()

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self) -> None:
        self._show_detail()

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id:
            self._focus_pane(event.pane.id)
        self._show_detail()

    # ------------------------------------------------------------------ actions

    def action_back(self) -> None:
        self.dismiss()

    def action_tab(self, tab: str) -> None:
        self.query_one("#section-tabs", TabbedContent).active = tab
        self._focus_pane(tab)
        self._show_detail()

    def _focus_pane(self, tab_id: str) -> None:
        """Move focus into the shown pane: focus left in a hidden pane pulls the tabs back to it."""
        pane = self.query_one(f"#{tab_id}", TabPane)
        focused = self.focused
        if focused is None or pane not in focused.ancestors_with_self:
            target = next((t.FOCUS for t in TABS if tab_id == t.TAB_ID), None)
            if target:
                self.query_one(target).focus()

    def action_run(self) -> None:
        self.sd_app.start_run(self.section_id)

    def action_refresh_run(self) -> None:
        self.sd_app.start_run(self.section_id, refresh=True)

    def action_cancel(self) -> None:
        app = self.sd_app
        if self.section_id not in app.jobs and self.section_id in app.check_jobs:
            app.cancel_check(self.section_id, why="cancelled")
            return
        app.cancel_run(self.section_id)

    def action_verify(self) -> None:
        if self.sd_app.start_check(self.section_id):
            self.action_tab(ChecksTab.TAB_ID)

    def action_cycle_filter(self) -> None:
        self.query_one("#section-tabs", TabbedContent).active = ReportTab.TAB_ID
        self.query_one(ReportTab).cycle_filter()

    def action_toggle_pin(self) -> None:
        self.curation.toggle_pin()

    def action_reject(self) -> None:
        self.curation.reject_domain()

    def action_reject_name(self) -> None:
        self.curation.reject_name()

    def action_unreject(self) -> None:
        self.curation.unreject()

    def action_drop(self) -> None:
        self.curation.drop()

    def action_keep(self) -> None:
        self.curation.keep()

    def action_namesakes(self) -> None:
        self.sd_app.action_namesakes()
