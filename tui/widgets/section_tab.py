"""What every tab of the section screen is: a ``TabPane`` that fills itself from the section's
data and describes its highlighted row for the detail pane.

The screen (``sourcedesk.screens.section_screen``) only composes the tabs listed in its ``TABS``
and asks the active one for its detail; each tab owns its widgets, its refresh, its rows (a
typed object per row key) and its detail renderer. Adding a tab is one widget file here and
one line in ``TABS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol

from rich.text import Text
from textual.widgets import DataTable

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.loading import SectionData, Verdicts
    from sourcedesk.tui.widgets.cells import Palette


class SectionTab(Protocol):
    """A tab of the section screen (a ``TabPane`` subclass)."""

    TITLE: ClassVar[str]  # the tab's label
    TAB_ID: ClassVar[str]  # its pane id, "tab-sources"
    FOCUS: ClassVar[str]  # the selector of what takes focus when it is shown

    def show(self, data: SectionData, palette: Palette) -> None:
        """Fill the tab from the section's data (on the event loop: no reading here)."""

    def detail(self, palette: Palette) -> Text | None:
        """The detail pane's text for the highlighted row (None: nothing to describe)."""


class JudgedTab(SectionTab, Protocol):
    """A tab whose rows show ``about`` verdicts, which arrive after the rows."""

    def show_verdicts(self, verdicts: Verdicts, palette: Palette) -> None: ...


def add_columns(table: DataTable, columns: Sequence[tuple[str, str, int | None]]) -> None:
    for key, label, width in columns:
        table.add_column(label, key=key, width=width)


def refill(table: DataTable, rows: Iterable[tuple[str, Sequence[Text]]]) -> None:
    """Replace the table's rows, keeping the cursor where it was (clamped)."""
    keep = table.cursor_row
    table.clear()
    for key, cells in rows:
        table.add_row(*cells, key=key)
    if table.row_count:
        table.move_cursor(row=min(keep, table.row_count - 1), animate=False)


def highlighted_key(table: DataTable) -> str | None:
    """The row key under the cursor (None: an empty table)."""
    if table.row_count == 0:
        return None
    row = table.cursor_row
    if not 0 <= row < table.row_count:
        return None
    return table.ordered_rows[row].key.value


NO_ROW = Text("Highlight a row to see its details.", style="dim")
