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


# Columns that take the width a terminal has to spare, and give it back first when it is short:
# titles, claims, evidence, URLs, reasons (never a key, a status or a number).
STRETCH = frozenset({"title", "claim", "evidence", "cited", "resolved", "what", "detail", "why", "set"})
MIN_STRETCHED = 12
MAX_GROWTH = 3  # a stretched column grows to at most three times its own width
DETAIL_PANE = {"tight": 0, "narrow": 32, "wide": 44}  # #detail-pane's width (themes/sourcedesk.tcss)


def table_room(terminal_width: int) -> int:
    """The section screen's room for a tab's table: the terminal less the detail pane beside it
    (none below ``TIGHT_WIDTH`` columns, where the pane sits under the tables) and a scrollbar."""
    from sourcedesk.screens.workbench import NARROW_WIDTH, TIGHT_WIDTH

    if terminal_width < TIGHT_WIDTH:
        pane = DETAIL_PANE["tight"]
    elif terminal_width < NARROW_WIDTH:
        pane = DETAIL_PANE["narrow"]
    else:
        pane = DETAIL_PANE["wide"]
    return terminal_width - pane - 2


def fitted_widths(columns: Sequence[tuple[str, str, int | None]], room: int) -> list[int | None]:
    """Each column's width for ``room`` cells. The first stretchable column (``STRETCH``: a title,
    a claim) shrinks — down to ``MIN_STRETCHED`` — until it and the columns before it fit whole
    (80 columns cut a report's claim away); the columns after it may still run off the edge, a
    scroll away. When every column fits, the stretchable ones share the spare width (a wide
    terminal gives it to titles, claims and URLs, never to the numbers)."""
    widths = [w for _k, _l, w in columns]
    stretch = [i for i, (k, _l, w) in enumerate(columns) if k in STRETCH and w]
    if not stretch:
        return widths
    first = stretch[0]
    lead = sum(w or 0 for w in widths[: first + 1]) + 2 * (first + 1)
    if lead > room:
        widths[first] = max(MIN_STRETCHED, (widths[first] or 0) - (lead - room))
    spare = room - sum(w or 0 for w in widths) - 2 * len(columns)
    while spare > 0:
        grown = False
        for i in stretch:
            if spare > 0 and (widths[i] or 0) < MAX_GROWTH * (columns[i][2] or 0):
                widths[i] = (widths[i] or 0) + 1
                spare -= 1
                grown = True
        if not grown:
            break
    return widths


def add_columns(table: DataTable, columns: Sequence[tuple[str, str, int | None]]) -> None:
    """The tab's columns, fitted to the terminal's width (``refit_columns`` follows a resize)."""
    widths = fitted_widths(columns, table_room(table.app.size.width))
    for (key, label, _width), width in zip(columns, widths, strict=True):
        table.add_column(label, key=key, width=width)
    table._sd_widths = [w for _k, _l, w in columns]  # type: ignore[attr-defined]  # as designed, for refits


def refit_columns(table: DataTable, terminal_width: int) -> None:
    """The table's stretchable columns fitted again after the terminal was resized, rows kept.

    Textual has no public call to change a column's width; the widths are the columns' own
    attribute, and the table measures and draws again once its caches are cleared."""
    columns = [(str(c.key.value), str(c.label), c.width) for c in table.ordered_columns]
    originals = getattr(table, "_sd_widths", None) or [w for _k, _l, w in columns]
    table._sd_widths = originals  # type: ignore[attr-defined]  # the widths as designed, before any fit
    designed = [(k, lab, w) for (k, lab, _w), w in zip(columns, originals, strict=True)]
    widths = fitted_widths(designed, table_room(terminal_width))
    if widths == [c.width for c in table.ordered_columns]:
        return
    for column, width in zip(table.ordered_columns, widths, strict=True):
        if width is not None:
            column.width = width
    table._clear_caches()
    table._require_update_dimensions = True
    table.refresh(layout=True)


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
