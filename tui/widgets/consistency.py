"""The Consistency view: the memo's conflicting claims, and a jump to either of them.

Self-contained so the memo screen (being rewritten) can adopt it as it is: give it the ledger's
conflicts (``sourcedesk.core.verify.ledger``), mount it, and handle ``ConsistencyView.JumpToClaim``
— it names the section and the claim's sentence the analyst asked to see. One row per conflict:
the quantity, each side's value with its section and source, and whether the sources disagree.
``a`` jumps to the first claim of the highlighted row, ``b`` to the second. Every cell is a
``rich.text.Text`` (claims and hosts come from notes and the web: never read as markup).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from sourcedesk.core.text.safety import clean_text
from sourcedesk.core.verify.ledger import Conflict, Statement

COLUMNS = ("quantity", "first claim", "second claim", "verdict")


def _side(s: Statement) -> Text:
    return Text(clean_text(f"{s.value} ({s.section}, {s.source})"))


class ConsistencyView(Widget):
    """A table of conflicts; ``a`` / ``b`` ask to see the first or second claim of a row."""

    DEFAULT_CSS = """
    ConsistencyView { height: auto; }
    ConsistencyView DataTable { height: auto; max-height: 20; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "jump(0)", "First claim"),
        Binding("b", "jump(1)", "Second claim"),
    ]

    class JumpToClaim(Message):
        """The analyst asked to see one claim of a conflict: its section and its sentence."""

        def __init__(self, section: str, claim: str) -> None:
            super().__init__()
            self.section = section
            self.claim = claim

    def __init__(self, conflicts: Sequence[Conflict] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.conflicts = list(conflicts)

    def compose(self) -> ComposeResult:
        count = len(self.conflicts)
        summary = "No claims contradict each other." if not count else f"{count} conflict(s) across sections"
        yield Static(Text(summary), id="consistency-summary")
        table: DataTable[Text] = DataTable(cursor_type="row", zebra_stripes=True)
        yield table

    def on_mount(self) -> None:
        self.show(self.conflicts)

    def show(self, conflicts: Sequence[Conflict]) -> None:
        """Replace the rows (after a run, the ledger is read again)."""
        self.conflicts = list(conflicts)
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns(*COLUMNS)
        for c in self.conflicts:
            table.add_row(Text(clean_text(c.a.quantity)), _side(c.a), _side(c.b), Text(clean_text(c.verdict())))
        count = len(self.conflicts)
        summary = "No claims contradict each other." if not count else f"{count} conflict(s) across sections"
        self.query_one("#consistency-summary", Static).update(Text(summary))

    def action_jump(self, side: int) -> None:
        table = self.query_one(DataTable)
        if not self.conflicts or table.cursor_row is None or not 0 <= table.cursor_row < len(self.conflicts):
            return
        conflict = self.conflicts[table.cursor_row]
        chosen = conflict.a if side == 0 else conflict.b
        self.post_message(self.JumpToClaim(chosen.section, chosen.claim))
