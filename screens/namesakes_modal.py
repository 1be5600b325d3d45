"""The memo's namesakes: declared in memo.yaml, or learned — and the analyst removes learned ones.

Learned namesakes come from look-alike sites the entity pin removed and from rejected
domains (``sourcedesk.core.sources.namesakes``); one the analyst removes here is not learned again.
Declared ones are edited in memo.yaml (``subject.namesakes``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from sourcedesk.core.memo.spec import Namesake
from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.tui.widgets.cells import plain
from sourcedesk.tui.widgets.row_table import RowTable

COLUMNS = (("name", "Namesake", 30), ("what", "What it is", 30), ("origin", "From", 30))
DIALOG_WIDTH = 100  # #namesakes-dialog's width in the stylesheet (at most 95% of the terminal)
DIALOG_FRAME = 2 * 2 + 2  # its padding and border


def column_widths(terminal_width: int) -> list[int]:
    """The three columns' widths so that all three fit the dialog whole (at 120 columns "From"
    was cut to "(remov"): a quarter for the name, a third for what it is, the rest for where from."""
    dialog = min(DIALOG_WIDTH, terminal_width * 95 // 100) - DIALOG_FRAME
    room = max(30, dialog - 2 * len(COLUMNS) - 1)  # each cell's padding, and a scrollbar
    name, what = room * 26 // 100, room * 32 // 100
    return [name, what, room - name - what]


class NamesakesScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("d", "remove", "Remove learned"),
        Binding("delete", "remove", "Remove learned", show=False),
    ]

    def __init__(
        self,
        subject: str,
        declared: list[Namesake],
        learned: Callable[[], list[LearnedNamesake]],
        remove: Callable[[str], bool],
    ) -> None:
        super().__init__()
        self.subject = subject
        self.declared = declared
        self._learned = learned
        self._remove_learned = remove  # not ``remove``: that is how Textual takes a screen away
        self.rows: dict[str, tuple[str, bool]] = {}  # row key -> (name, learned)

    def compose(self) -> ComposeResult:
        with Vertical(id="namesakes-dialog"):
            yield Static(Text(f"Namesakes — not {self.subject}", style="bold"), markup=False)
            yield Static(
                Text(
                    "Sources that name one of these (and not the subject) are flagged as namesakes, never "
                    "substituted for a citation, and the writer is told to avoid them. Declared ones live in "
                    "memo.yaml (subject.namesakes); learned ones come from look-alike sites the entity pin "
                    "removed and from rejected domains — d removes one (it is not learned again).",
                    style="dim",
                ),
                markup=False,
            )
            yield RowTable(id="namesakes", cursor_type="row", zebra_stripes=True)
            yield Static(id="namesakes-note", markup=False)
        yield Footer()  # this dialog's keys; without it the screen below shows its own, which do not work here

    def on_mount(self) -> None:
        table = self.query_one("#namesakes", DataTable)
        for (key, label, _width), width in zip(COLUMNS, column_widths(self.app.size.width), strict=True):
            table.add_column(label, key=key, width=width)
        self._fill()
        table.focus()

    def _fill(self) -> None:
        table = self.query_one("#namesakes", DataTable)
        keep = table.cursor_row
        table.clear()
        self.rows = {}
        for i, n in enumerate(self.declared):
            key = f"declared:{i}"
            self.rows[key] = (n.name, False)
            table.add_row(plain(n.name), plain(n.note), Text("memo.yaml", style="dim"), key=key)
        for i, learned in enumerate(self._learned()):
            key = f"learned:{i}"
            self.rows[key] = (learned.name, True)
            origin = Text("learned", style="bold")
            origin.append(" · ")
            origin.append(learned.where)
            table.add_row(plain(learned.name), plain(learned.title, style="dim"), origin, key=key)
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))
        note = Text()
        if not self.rows:
            note.append("None yet: add subject.namesakes to memo.yaml, or reject a namesake's domain.", style="dim")
        self.query_one("#namesakes-note", Static).update(note)

    def _highlighted(self) -> tuple[str, bool] | None:
        table = self.query_one("#namesakes", DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.rows.get(key or "")

    def action_remove(self) -> None:
        row = self._highlighted()
        note = self.query_one("#namesakes-note", Static)
        if row is None:
            return
        name, learned = row
        if not learned:
            note.update(Text(f"'{name}' is declared in memo.yaml: edit the file to remove it.", style="bold"))
            return
        if self._remove_learned(name):
            self._fill()
            note.update(Text(f"Removed the learned namesake '{name}'; it is not learned again.", style="bold"))

    def action_close(self) -> None:
        self.dismiss(None)
