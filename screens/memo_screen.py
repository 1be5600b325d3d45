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
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Header, Static

from sourcedesk.core.pipeline.section_state import SectionView
from sourcedesk.core.sources.about import About
from sourcedesk.core.text.safety import clean_text
from sourcedesk.screens.workbench import WorkbenchScreen
from sourcedesk.tui.widgets.cells import (
    BAR_WIDTH,
    citations_bar,
    cost_cell,
    flags_cell,
    pin_cell,
    status_cell,
)

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
    ("citations", "Citations", 17),  # "12✓ 3≈ 4✗ 2 weak"
    ("flags", "Flags", 14),  # "✂1 ⚠6 ✗1 ?4 ⚑3"
    ("cost", "Cost", 7),
)
CELL_PADDING = 2  # a DataTable's padding around each cell (one column either side)
MIN_SECTION_WIDTH = 12


class MemoScreen(WorkbenchScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_section", "Open", show=True, priority=False),
        Binding("r", "run", "Run"),
        Binding("R", "refresh_run", "Refresh+run", key_display="R"),
        Binding("a", "run_all", "Run all"),
        Binding("c", "cancel", "Cancel"),
        Binding("e", "export", "Export"),
        Binding("N", "namesakes", "Namesakes", key_display="N"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.views: dict[str, SectionView] = {}
        self.namesake_cites: dict[str, list[tuple[str, About]]] = {}  # section -> citations of namesake sources
        self._frame = 0
        self._compact = False  # the columns in place are the compact ones

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="§")
        yield Static(id="memo-head", markup=False)
        yield DataTable(id="sections", cursor_type="row", zebra_stripes=True)
        yield Static(id="memo-why", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#sections", DataTable)
        self._add_columns()
        # No reload here: ScreenResume follows the mount (and every return to this screen).
        self.set_interval(0.12, self._spin)
        table.focus()

    def on_screen_resume(self) -> None:
        self.sd_app.reload_if_changed()
        if self._compact != self._too_narrow():
            self._add_columns()
        self.reload()

    def on_resize(self, event: events.Resize) -> None:
        # (the footer is fitted by WorkbenchScreen's handler, which Textual calls too)
        if self.is_mounted and self._compact != self._too_narrow():
            self._add_columns()
            self.reload()

    def _too_narrow(self) -> bool:
        """Whether the wide columns, with the longest "title  id", overflow the terminal."""
        sections = self.sd_app.loaded.memo.sections
        longest = max((cell_len(s.title) + 2 + cell_len(s.id) for s in sections), default=0)
        wide = sum(w or 0 for _k, _l, w in COLUMNS) + CELL_PADDING * len(COLUMNS) + 2 + longest
        return self.app.size.width < wide

    def _add_columns(self) -> None:
        """The wide or the compact columns, as the terminal's width allows."""
        table = self.query_one("#sections", DataTable)
        table.clear(columns=True)
        self._compact = self._too_narrow()
        columns = COMPACT_COLUMNS if self._compact else COLUMNS
        fixed = sum(w or 0 for _k, _l, w in columns) + CELL_PADDING * len(columns) + 2  # + a scrollbar
        for key, label, width in columns:
            if width is None and self._compact:
                width = max(MIN_SECTION_WIDTH, self.app.size.width - fixed)
            table.add_column(label, key=key, width=width)

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

    def _row(self, view: SectionView) -> list[Text]:
        palette = self.sd_app.palette
        job = self.sd_app.jobs.get(view.id)
        status = (
            status_cell("running", palette, job.stage_text, self._frame) if job else status_cell(view.status, palette)
        )
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
                self.sd_app.check_problems(view.id, view.note_path),
                uncited=counts.get("uncited", 0) if counts else 0,
                namesakes=max(len(self.namesake_cites.get(view.id, [])), len(view.cited_namesakes)),
            ),
            cost_cell(view.cost),
        ]

    def reload(self) -> None:
        """Rebuild every row from disk and the store, keeping the cursor on its section."""
        table = self.table
        keep = self.current_section()
        views = self.sd_app.describe_all()
        self.views = {v.id: v for v in views}
        judge = self.sd_app.about_judge()
        self.namesake_cites = {v.id: self.sd_app.namesake_citations(v, judge) for v in views}
        self.query_one("#memo-head", Static).update(self._head())
        table.clear()
        for view in views:
            table.add_row(*self._row(view), key=view.id)
        if keep in self.views:
            table.move_cursor(row=table.get_row_index(keep))
        self._show_why()

    def section_changed(self, section_id: str | None) -> None:
        if not self.is_mounted:
            return
        if section_id is None or section_id not in self.views:
            self.reload()
            return
        # While a section runs only its status changes; read the disk again once it stops.
        self._update_row(section_id, fresh=section_id not in self.sd_app.jobs)

    def check_changed(self, section_id: str) -> None:
        if self.is_mounted and section_id in self.views:
            self._update_row(section_id, fresh=False)

    def _update_row(self, section_id: str, *, fresh: bool) -> None:
        if fresh:
            self.views[section_id] = self.sd_app.describe(section_id)
            self.namesake_cites[section_id] = self.sd_app.namesake_citations(self.views[section_id])
        cells = self._row(self.views[section_id])
        for (key, _label, _width), cell in zip(COLUMNS, cells, strict=False):
            self.table.update_cell(section_id, key, cell)
        if section_id == self.current_section():
            self._show_why()

    def _spin(self) -> None:
        if not self.sd_app.jobs or not self.is_current:
            return
        self._frame += 1
        palette = self.sd_app.palette
        for sid, job in list(self.sd_app.jobs.items()):
            if sid in self.views:
                self.table.update_cell(sid, "status", status_cell("running", palette, job.stage_text, self._frame))

    def _show_why(self) -> None:
        sid = self.current_section()
        view = self.views.get(sid) if sid else None
        out = Text()
        if view is not None:
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
            problems = self.sd_app.check_problems(view.id, view.note_path)
            if problems:
                out.append(
                    f"\n✗ the last check found {problems} problem(s) (a dead, soft-404 or placeholder URL, "
                    "or a quote or figure not in its source): enter, then 7.",
                    style=self.sd_app.palette.error,
                )
            cited = self.namesake_cites.get(view.id, [])
            if cited:
                out.append(
                    f"\n⚑ the note cites {len(cited)} source(s) about a namesake: ",
                    style=f"bold {self.sd_app.palette.error}",
                )
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
                out.append(f"\n{' and '.join(parts)}: enter, then 2 (Report).", style=self.sd_app.palette.warning)
            for warning in view.warnings[:2]:
                out.append(f"\n⚠ {warning}", style="dim")
        self.query_one("#memo-why", Static).update(out)

    def current_section(self) -> str | None:
        table = self.table
        if table.row_count == 0:
            return None
        try:
            return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001 - an empty or resizing table
            return None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_why()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            self.sd_app.open_section(event.row_key.value)

    # ------------------------------------------------------------------ actions

    def action_open_section(self) -> None:
        sid = self.current_section()
        if sid:
            self.sd_app.open_section(sid)

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
