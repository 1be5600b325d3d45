"""The Checks tab: the last check of the note — grounding after every run (offline), URL
liveness too after ``v`` — a summary, one row per URL and per grounded quote or figure, and
what each verdict means in the detail pane."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static, TabPane

from sourcedesk.core.verify.check import GroundingRow, UrlRow
from sourcedesk.tui.widgets import check_rows
from sourcedesk.tui.widgets.cells import Palette
from sourcedesk.tui.widgets.row_table import RowTable
from sourcedesk.tui.widgets.section_tab import NO_ROW, add_columns, highlighted_key, refill

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.checks import CheckJob, SectionCheck
    from sourcedesk.tui.loading import SectionData


class ChecksTab(TabPane):
    TITLE: ClassVar[str] = "Checks"
    TAB_ID: ClassVar[str] = "tab-checks"
    FOCUS: ClassVar[str] = "#checks"

    def __init__(self) -> None:
        super().__init__(self.TITLE, id=self.TAB_ID)
        self.rows: dict[str, UrlRow | GroundingRow] = {}
        self.check: SectionCheck | None = None
        self.data: SectionData | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="checks-summary", markup=False)
        yield RowTable(id="checks", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        add_columns(self.table, check_rows.COLUMNS)

    @property
    def table(self) -> DataTable:
        return self.query_one("#checks", DataTable)

    def show(self, data: SectionData, palette: Palette) -> None:
        self.data = data
        self.show_check(palette)

    def show_check(self, palette: Palette, running: CheckJob | None = None) -> None:
        """The summary and the rows of the last check (``running``: a check in progress)."""
        from sourcedesk.screens.workbench import workbench_app

        data = self.data
        if data is None:
            return
        app = workbench_app(self.app)
        self.check = app.last_check(data.view.id)
        self.show_summary(palette, running)
        check = self.check
        self.rows = {}
        if check is None or data.view.note_path is None:
            refill(self.table, [])
            return
        self.rows.update({f"url:{i}": r for i, r in enumerate(check.report.urls)})
        self.rows.update({f"ground:{i}": r for i, r in enumerate(check.report.grounding)})
        refill(self.table, check_rows.rows(check.report, palette))

    def show_summary(self, palette: Palette, running: CheckJob | None) -> None:
        self.query_one("#checks-summary", Static).update(self._summary(palette, running))

    def _summary(self, palette: Palette, checking: CheckJob | None) -> Text:
        """What the tab says above its rows: a check running, the last one, or why there is none."""
        data, check = self.data, self.check
        head = Text()
        if data is None:
            return head
        note_path = data.view.note_path
        if checking is not None:
            head.append(f"{checking.text}…", style=f"bold {palette.accent}")
            head.append("  (the rows below are from the previous check)\n" if check else "\n", style=palette.dim)
        if note_path is None:
            head.append(
                "No note yet — r writes it; then v checks its URLs, and its quotes and figures "
                "against the stored sources.",
                style=palette.dim,
            )
        elif check is None:
            saved = data.saved_check if checking is None else None
            if saved and data.check_problems is not None:
                problems = saved.problems
                head.append(f"Checked {saved.at[:16].replace('T', ' ')} UTC: ", style=palette.dim)
                head.append(f"{problems} problem(s)", style=f"bold {palette.error}" if problems else palette.success)
                head.append(" — v checks again to list them.", style=palette.dim)
            elif checking is None:
                head.append(
                    "Not checked yet: v checks every cited URL (network) and grounds each quote and "
                    "figure in the stored text of its source.",
                    style=palette.dim,
                )
        else:
            kind = "URLs and grounding" if check.liveness else "grounding only (offline, after the run)"
            head.append(f"{check.note_name} · {kind} · {check.at.astimezone():%H:%M:%S}", style=palette.dim)
            if check.note_sha256 != data.note_sha:
                head.append("  — the note changed since: v checks it again", style=palette.warning)
            head.append("\n")
            head.append_text(check_rows.summary(check.report, palette))
            if check.report.warnings:
                head.append("\n")
                head.append_text(check_rows.warnings_block(check.report.warnings, palette))
                head.rstrip()
        return head

    def detail(self, palette: Palette) -> Text | None:
        key = highlighted_key(self.table)
        row = self.rows.get(key) if key else None
        check = self.check
        if isinstance(row, UrlRow):
            return check_rows.url_detail(row, palette)
        if isinstance(row, GroundingRow) and check is not None:
            return check_rows.grounding_detail(row, check.url_by_key.get(row.key), palette)
        return NO_ROW
