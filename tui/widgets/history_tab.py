"""The History tab: every run of the section, failed and cancelled ones included, newest first;
the detail pane shows the whole record of the highlighted one (read off the event loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, TabPane

from sourcedesk.core.domain.records import RunRecord
from sourcedesk.tui.widgets import run_history
from sourcedesk.tui.widgets.cells import Palette
from sourcedesk.tui.widgets.row_table import RowTable
from sourcedesk.tui.widgets.section_tab import NO_ROW, add_columns, highlighted_key, refill

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.loading import SectionData


class HistoryTab(TabPane):
    TITLE: ClassVar[str] = "History"
    TAB_ID: ClassVar[str] = "tab-history"
    FOCUS: ClassVar[str] = "#history"

    def __init__(self) -> None:
        super().__init__(self.TITLE, id=self.TAB_ID)
        self.rows: dict[str, RunRecord] = {}
        self.full: dict[str, RunRecord] = {}  # run id -> the whole record, once read
        self.current: str | None = None

    def compose(self) -> ComposeResult:
        yield RowTable(id="history", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        add_columns(self.table, run_history.COLUMNS)

    @property
    def table(self) -> DataTable:
        return self.query_one("#history", DataTable)

    def show(self, data: SectionData, palette: Palette) -> None:
        self.current = data.view.run_id
        self.rows = {f"run:{r.id}": r for r in data.history}
        self.full = {}
        refill(self.table, ((k, run_history.row_cells(r, self.current, palette)) for k, r in self.rows.items()))

    def highlighted(self) -> RunRecord | None:
        key = highlighted_key(self.table)
        return self.rows.get(key) if key else None

    def needs_full(self) -> str | None:
        """The id of the highlighted run when only its listing has been read."""
        record = self.highlighted()
        return record.id if record is not None and record.id not in self.full else None

    def add_full(self, record: RunRecord) -> None:
        self.full[record.id] = record

    def detail(self, palette: Palette) -> Text | None:
        record = self.highlighted()
        if record is None:
            return NO_ROW
        return run_history.detail(self.full.get(record.id, record), self.current, palette)
