"""The memo screen: every section's state at a glance.

One row per section: number, title, status (never run / fresh / stale / running /
degraded / failed), pin mode, kept sources, a verified/substituted/dropped bar,
truncation and warning badges (and ✗N: problems the last check of the current note
found — dead, soft-404 or placeholder URLs, figures not found in their source; ?N:
claims left without a citation; ⚑N: citations of the current note whose source is about
a namesake, judged now), cost. The citations bar also says how many verified
citations are weak (retrieved, but not supporting their claim).
Under the table, the highlighted section's "why" (what makes it stale, why it failed).
Enter opens the section.

The rows are read in a thread worker (``_load``) and applied on the event loop; the namesake
flags follow in a second pass. A message about one section refreshes that section's row only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from sourcedesk.core.pipeline.section_state import SectionView
from sourcedesk.core.sources.about import About
from sourcedesk.core.text.safety import clean_text
from sourcedesk.screens.workbench import APP_FOOTER_ACTIONS, WorkbenchScreen
from sourcedesk.tui import loading
from sourcedesk.tui.loading import MemoRow
from sourcedesk.tui.messages import (
    CheckFinished,
    MemoReloaded,
    SectionRunFinished,
    SectionRunProgress,
    SectionRunStarted,
    StoreChanged,
    ThemeChanged,
)
from sourcedesk.tui.widgets.cells import (
    BAR_WIDTH,
    citations_bar,
    cost_cell,
    flags_cell,
    pin_cell,
    readable_warning,
    status_cell,
)
from sourcedesk.tui.widgets.key_bar import KeyBar
from sourcedesk.tui.widgets.legend import legend_text
from sourcedesk.tui.widgets.row_table import RowTable

# (key, label, width): fixed widths where cells change while a section runs, so the
# layout never jumps and a spinner or a cost is never cut off.
COLUMNS = (
    ("num", "#", 2),
    ("section", "Section", None),
    ("status", "Status", 16),
    ("pin", "Pin", 6),
    ("sources", "Sources", 7),
    ("citations", "Verified / substituted / dropped", 32),
    ("flags", "Flags", 13),
    ("cost", "Cost", 7),
)
# A narrow terminal: the same columns, the section's title alone (cut to what is left), the
# counts without the bar, shorter headers — so flags and costs stay on screen at 100 columns.
COMPACT_COLUMNS = (
    ("num", "#", 2),
    ("section", "Section", None),
    ("status", "Status", 13),  # "⠋ reconciling"
    ("pin", "Pin", 6),
    ("sources", "Src", 3),
    ("citations", "Citations", 20),  # "12✓ 3≈ 4✗ 1# 2 weak"
    ("flags", "Flags", 14),  # "✂1 ⚠6 ✗1 ?4 ⚑3"
    ("cost", "Cost", 7),
)
# 80 columns: the essential columns first — what state each section is in, what its citations
# came to, its flags and cost — and the pin mode and source count after them (scroll right).
TIGHT_COLUMNS = (
    ("num", "#", 2),
    ("section", "Section", None),
    ("status", "Status", 13),
    ("citations", "Citations", 20),
    ("flags", "Flags", 14),
    ("cost", "Cost", 7),
    ("pin", "Pin", 6),
    ("sources", "Src", 3),
)
CELL_PADDING = 2  # a DataTable's padding around each cell (one column either side)
MIN_SECTION_WIDTH = 10


class RowsLoaded(Message):
    """Rows read by the loader: every section's (``only`` None) or one section's."""

    def __init__(self, rows: list[MemoRow], only: str | None, flagged: bool) -> None:
        super().__init__()
        self.rows = rows
        self.only = only
        self.flagged = flagged  # the namesake flags are in


class MemoScreen(WorkbenchScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_section", "Open", show=True, priority=False, tooltip="Open the section.", id="open"),
        Binding("r", "run", "Run", tooltip="Run the section (reuses its frozen sources).", id="run-section"),
        Binding(
            "R",
            "refresh_run",
            "Refresh+run",
            key_display="R",
            tooltip="Search again, then run the section.",
            id="refresh-section",
        ),
        Binding("a", "run_all", "Run all", tooltip="Run every section.", id="run-all"),
        Binding("c", "cancel", "Cancel", tooltip="Cancel the highlighted section's run.", id="cancel-section"),
        Binding("e", "export", "Export", tooltip="Assemble the notes into memo.md.", id="export"),
        Binding(
            "N", "namesakes", "Namesakes", key_display="N", tooltip="Declared and learned namesakes.", id="namesakes"
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, MemoRow] = {}
        self._compact = False  # the columns in place are the compact ones
        self._layout: tuple[tuple[str, str, int | None], ...] = COLUMNS  # the columns in place, in order

    @property
    def views(self) -> dict[str, SectionView]:
        return {sid: row.view for sid, row in self.rows.items()}

    @property
    def namesake_cites(self) -> dict[str, list[tuple[str, About]]]:
        return {sid: row.namesakes or [] for sid, row in self.rows.items()}

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="§")
        yield Static(id="memo-head", markup=False)
        yield RowTable(id="sections", cursor_type="row", zebra_stripes=True)
        yield Static(id="memo-why", markup=False)
        yield KeyBar(self.NARROW_FOOTER_HIDES | APP_FOOTER_ACTIONS)

    def on_mount(self) -> None:
        self.table.tooltip = legend_text("citations", "flags")
        self._add_columns()
        self.query_one("#memo-head", Static).update(self._head())
        self.table.focus()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        if self._compact != self._too_narrow():
            self._add_columns()
        self.reload()

    def on_resize(self, event: events.Resize) -> None:
        if self.is_mounted and (self._compact != self._too_narrow() or self._layout != self._columns()):
            self._add_columns()
            self._show_rows(list(self.rows.values()))

    def _longest_title(self) -> int:
        """The widest "title  id" of the memo's sections."""
        sections = self.sd_app.loaded.memo.sections
        return max((cell_len(s.title) + 2 + cell_len(s.id) for s in sections), default=0)

    def _too_narrow(self) -> bool:
        """Whether the wide columns, with the longest "title  id", overflow the terminal."""
        wide = sum(w or 0 for _k, _l, w in COLUMNS) + CELL_PADDING * len(COLUMNS) + 2 + self._longest_title()
        return self.app.size.width < wide

    def _columns(self) -> tuple[tuple[str, str, int | None], ...]:
        """The columns in place: wide, compact, or (when even the compact ones overflow) tight."""
        if not self._compact:
            return COLUMNS
        compact = sum(w or 0 for _k, _l, w in COMPACT_COLUMNS) + CELL_PADDING * len(COMPACT_COLUMNS) + 2
        return COMPACT_COLUMNS if self.app.size.width >= compact + MIN_SECTION_WIDTH else TIGHT_COLUMNS

    def _add_columns(self) -> None:
        """The wide, compact or tight columns, as the terminal's width allows."""
        table = self.table
        table.clear(columns=True)
        self._compact = self._too_narrow()
        columns = self._columns()
        self._layout = columns
        fixed = sum(w or 0 for _k, _l, w in columns) + CELL_PADDING * len(columns) + 2  # + a scrollbar
        for key, label, width in columns:
            if width is None:  # the section's title: as wide as the longest (the rows arrive later)
                room = self.app.size.width - fixed
                width = max(MIN_SECTION_WIDTH, room if self._compact else min(room, self._longest_title()))
            table.add_column(label, key=key, width=width)

    # ------------------------------------------------------------------ loading

    def reload(self, only: str | None = None) -> None:
        """Read the rows again (every section's, or ``only``'s) off the event loop."""
        self._load(only)

    @work(thread=True, group="memo-load", name="load the memo's rows", exit_on_error=False)
    def _load(self, only: str | None) -> None:
        app = self.sd_app
        rows = loading.memo_rows(app, only)
        for notice in app.take_store_notices():
            app.call_from_thread(app.say, notice, "warning")
        self.post_message(RowsLoaded(rows, only, flagged=False))
        self.post_message(RowsLoaded(loading.memo_flags(app, rows), only, flagged=True))

    @on(RowsLoaded)
    def _rows_loaded(self, message: RowsLoaded) -> None:
        rows = message.rows
        if not message.flagged:  # keep each flag until it is judged again
            rows = [replace(r, namesakes=self.rows[r.view.id].namesakes) if r.view.id in self.rows else r for r in rows]
        if message.only is None and not message.flagged:
            self._show_rows(rows)
            return
        for row in rows:  # one section's row, or the flags of every row: only those cells change
            if row.view.id in self.rows:
                self.rows[row.view.id] = row
                self._update_row(row.view.id)

    # ------------------------------------------------------------------ data → table

    @property
    def table(self) -> DataTable:
        return self.query_one("#sections", DataTable)

    def _head(self) -> Text:
        memo = self.sd_app.loaded.memo
        out = Text()
        out.append(memo.subject.name, style="bold")
        if memo.subject.url:
            out.append(f"  {memo.subject.url}", style="dim")
        out.append(f"   {len(memo.sections)} sections · memo.yaml in {self.sd_app.loaded.dir.name}/", style="dim")
        return out

    def _row(self, row: MemoRow) -> list[Text]:
        """The row's cells, in the order of the columns in place."""
        cells = dict(zip((key for key, _l, _w in COLUMNS), self._cells(row), strict=True))
        return [cells[key] for key, _label, _width in self._layout]

    def _cells(self, row: MemoRow) -> list[Text]:
        view = row.view
        palette = self.sd_app.palette
        job = self.sd_app.jobs.get(view.id)
        status = status_cell("running", palette, job.stage_text) if job else status_cell(view.status, palette)
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(clean_text(view.section.title))
        if not self._compact:
            title.append(f"  {view.id}", style="dim")
        sources = Text("—", style="dim") if view.source_count is None else Text(str(view.source_count), justify="right")
        omitted = len(view.source_set.omitted) if view.source_set is not None else 0
        counts = view.counts if view.note_path is not None and not view.note_error else None
        return [
            Text(f"{view.index + 1:02d}", style="dim"),
            title,
            status,
            pin_cell(view.pin_modes),
            sources,
            citations_bar(counts, palette, width=0 if self._compact else BAR_WIDTH),
            flags_cell(
                omitted,
                len(view.warnings),
                palette,
                row.check_problems,
                uncited=counts.get("uncited", 0) if counts else 0,
                namesakes=max(len(row.namesakes or []), len(view.cited_namesakes)),
            ),
            cost_cell(view.cost),
        ]

    def _show_rows(self, rows: list[MemoRow]) -> None:
        """Every row, keeping the cursor on its section."""
        table = self.table
        keep = self.current_section()
        self.rows = {r.view.id: r for r in rows}
        self.query_one("#memo-head", Static).update(self._head())
        table.clear()
        for row in rows:
            table.add_row(*self._row(row), key=row.view.id)
        if keep in self.rows:
            table.move_cursor(row=table.get_row_index(keep), animate=False)
        self._show_why()

    def _update_row(self, section_id: str) -> None:
        if section_id not in self.rows or section_id not in self.table.rows:
            return
        cells = self._row(self.rows[section_id])
        for (key, _label, _width), cell in zip(self._layout, cells, strict=True):
            self.table.update_cell(section_id, key, cell)
        if section_id == self.current_section():
            self._show_why()

    # ------------------------------------------------------------------ what the workers say

    @on(SectionRunStarted)
    @on(SectionRunProgress)
    def _run_moved(self, message: SectionRunStarted | SectionRunProgress) -> None:
        self._update_row(message.section_id)  # only the status changes while a section runs

    @on(SectionRunFinished)
    def _run_finished(self, message: SectionRunFinished) -> None:
        self._update_row(message.section_id)
        self.reload(message.section_id)  # read the disk again once it stops

    @on(CheckFinished)
    def _check_finished(self, message: CheckFinished) -> None:
        row = self.rows.get(message.section_id)
        if row is not None and message.check is not None:
            row.check_problems = message.check.problems
            self._update_row(message.section_id)

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        sections = message.changed.sections
        if sections is not None and len(sections) == 1:
            self.reload(next(iter(sections)))
        else:
            self.reload()

    @on(MemoReloaded)
    def _memo_reloaded(self) -> None:
        if self._compact != self._too_narrow():
            self._add_columns()
        self.reload()

    @on(ThemeChanged)
    def _theme_changed(self) -> None:
        self._show_rows(list(self.rows.values()))

    def _show_why(self) -> None:
        sid = self.current_section()
        row = self.rows.get(sid) if sid else None
        self.query_one("#memo-why", Static).update(self._why(row) if row is not None else Text())

    def _why(self, row: MemoRow) -> Text:
        view = row.view
        palette = self.sd_app.palette
        out = Text()
        job = self.sd_app.jobs.get(view.id)
        if job is not None:
            out.append(f"{view.id}: running — {job.stage_text}. c cancels.", style="bold")
        elif view.why:
            out.append(f"{view.id}: ", style="bold")
            out.append(clean_text(view.why))
        elif view.status == "never run":
            out.append(f"{view.id}: never run. r runs it, a runs every section, enter opens it.", style="dim")
        else:
            out.append(f"{view.id}: {view.status}.", style="dim")
        if view.truncated and view.source_set is not None:
            out.append(f"\n✂ {len(view.source_set.omitted)} source(s) omitted by the context budget.", style="dim")
        if row.check_problems:
            out.append(
                f"\n✗ the last check found {row.check_problems} problem(s) (a dead, soft-404 or placeholder URL, "
                "or a quote or figure not in its source): enter, then 7.",
                style=palette.error,
            )
        cited = row.namesakes or []
        if cited:
            out.append(f"\n⚑ the note cites {len(cited)} source(s) about a namesake: ", style=f"bold {palette.error}")
            first_key, first = cited[0]
            out.append(f"[^{first_key}] ")
            out.append(first.reason)
            if len(cited) > 1:
                out.append(f" (and {len(cited) - 1} more)")
            out.append(" — enter, then n rejects the name, r re-runs.", style="dim")
        weak = view.counts.get("weak", 0) if view.note_path is not None else 0
        uncited = view.counts.get("uncited", 0) if view.note_path is not None else 0
        parts = [
            *([f"{weak} weak citation(s) (retrieved, but not supporting their claim)"] if weak else []),
            *([f"{uncited} uncited claim(s)"] if uncited else []),
        ]
        if parts:
            out.append(f"\n{' and '.join(parts)}: enter, then 2 (Report).", style=palette.warning)
        for warning in view.warnings[:2]:
            out.append(f"\n⚠ {readable_warning(clean_text(warning))}", style="dim")
        return out

    def current_section(self) -> str | None:
        table = self.table
        if table.row_count == 0 or not 0 <= table.cursor_row < table.row_count:
            return None
        return table.ordered_rows[table.cursor_row].key.value

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self) -> None:
        self._show_why()

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            self._open(event.row_key.value)

    def _open(self, section_id: str) -> None:
        row = self.rows.get(section_id)
        self.sd_app.open_section(section_id, row.view if row is not None else None)

    # ------------------------------------------------------------------ actions

    def action_open_section(self) -> None:
        sid = self.current_section()
        if sid:
            self._open(sid)

    def action_run(self) -> None:
        sid = self.current_section()
        if sid:
            self.sd_app.start_run(sid)

    def action_refresh_run(self) -> None:
        sid = self.current_section()
        if sid:
            self.sd_app.start_run(sid, refresh=True)

    def action_run_all(self) -> None:
        self.sd_app.run_all()

    def action_cancel(self) -> None:
        sid = self.current_section()
        if sid:
            self.sd_app.cancel_run(sid)

    def action_export(self) -> None:
        self.sd_app.action_export()

    def action_namesakes(self) -> None:
        self.sd_app.action_namesakes()
