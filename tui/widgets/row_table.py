"""The workbench's tables: a ``DataTable`` whose Home and End go to the first and last row.

Textual's ``DataTable`` gives Home and End to the horizontal scroll (the first and last
column) and the rows to ctrl+Home / ctrl+End. Every table of the workbench moves a row cursor
through a list, where Home and End are expected to reach the list's ends; ctrl+Home and
ctrl+End still do too.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class RowTable(DataTable[Any]):
    """A row-cursor table (``cursor_type="row"`` by default) with Home/End on the rows."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first_row", "First row", show=False),
        Binding("end", "last_row", "Last row", show=False),
    ]

    def __init__(self, *, cursor_type: Any = "row", **kwargs: Any) -> None:
        super().__init__(cursor_type=cursor_type, **kwargs)

    def action_first_row(self) -> None:
        if self.cursor_type == "row" and self.row_count:
            self.move_cursor(row=0)
        else:
            self.action_scroll_home()

    def action_last_row(self) -> None:
        if self.cursor_type == "row" and self.row_count:
            self.move_cursor(row=self.row_count - 1)
        else:
            self.action_scroll_end()
