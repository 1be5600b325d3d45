"""The Consistency view: the memo's conflicting claims, and a jump to either of them.

Self-contained so the memo screen can adopt it as it is: build the memo's ledger
(``sourcedesk.core.verify.ledger.memo_ledger(loaded, memo_sections(loaded, store))``), give it to
``ConsistencyView.from_ledger`` (or ``show_ledger`` after a run), mount it, and handle
``ConsistencyView.JumpToClaim`` — it names the section and the claim's sentence the analyst asked
to see. The summary line says only what was compared: how many statements (figures, years,
rounds, roles) the ledger read, and how many conflicts it found among them. One row per conflict:
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
from sourcedesk.core.verify.ledger import Conflict, Ledger, Statement

COLUMNS = ("quantity", "first claim", "second claim", "verdict")


def _side(s: Statement) -> Text:
    return Text(clean_text(f"{s.value} ({s.section}, {s.source})"))


def summary(conflicts: int, statements: int | None) -> str:
    """The view's first line: no stronger than the comparison made (``statements`` None: not given)."""
    if conflicts:
        return f"{conflicts} conflict(s): the same quantity stated differently in two sections"
    if statements is None:
        return "No conflicts found."
    if statements == 0:
        return "Nothing compared yet: no section's note states a figure, year, round or role the ledger reads."
    return f"No conflicts among the {statements} statement(s) the ledger read (figures, years, rounds, roles)."


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

    def __init__(
        self, conflicts: Sequence[Conflict] = (), *, statements: int | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.conflicts = list(conflicts)
        self.statements = statements

    @classmethod
    def from_ledger(cls, ledger: Ledger, *, id: str | None = None) -> ConsistencyView:
        return cls(ledger.conflicts, statements=len(ledger.statements), id=id)

    def compose(self) -> ComposeResult:
        yield Static(Text(summary(len(self.conflicts), self.statements)), id="consistency-summary")
        table: DataTable[Text] = DataTable(cursor_type="row", zebra_stripes=True)
        yield table

    def on_mount(self) -> None:
        self.show(self.conflicts, statements=self.statements)

    def show_ledger(self, ledger: Ledger) -> None:
        """Replace the rows with a ledger read again (after a run)."""
        self.show(ledger.conflicts, statements=len(ledger.statements))

    def show(self, conflicts: Sequence[Conflict], *, statements: int | None = None) -> None:
        """Replace the rows; ``statements`` is how many statements the ledger compared."""
        self.conflicts, self.statements = list(conflicts), statements
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns(*COLUMNS)
        for c in self.conflicts:
            table.add_row(Text(clean_text(c.a.quantity)), _side(c.a), _side(c.b), Text(clean_text(c.verdict())))
        self.query_one("#consistency-summary", Static).update(Text(summary(len(self.conflicts), statements)))

    def action_jump(self, side: int) -> None:
        table = self.query_one(DataTable)
        if not self.conflicts or table.cursor_row is None or not 0 <= table.cursor_row < len(self.conflicts):
            return
        conflict = self.conflicts[table.cursor_row]
        chosen = conflict.a if side == 0 else conflict.b
        self.post_message(self.JumpToClaim(chosen.section, chosen.claim))
