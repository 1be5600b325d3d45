"""The key reference (``?``): every binding of both screens, in one place."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = {
    "Everywhere": [
        ("ctrl+p", "command palette: run, refresh, export, open section …"),
        ("t", "toggle the light / dark theme (remembered)"),
        ("?", "this help"),
        ("q", "quit (running sections are cancelled; their notes stay as they were)"),
    ],
    "Memo screen": [
        ("↑ ↓, enter", "highlight a section, open it"),
        ("r", "run the section: reuses its frozen source set unless memo.yaml changed or it expired"),
        ("R", "refresh retrieval (new search), then run"),
        ("a", "run every section"),
        ("c", "cancel the highlighted section's run"),
        ("e", "export memo.md"),
        ("N", "the memo's namesakes: declared in memo.yaml or learned (d removes a learned one)"),
        ("⚑N flag", "the section's note cites N sources about a namesake"),
    ],
    "Section screen": [
        ("1 … 7", "tabs: sources, report, warnings, note, web results, history, checks"),
        ("r / R / c", "run / refresh and run / cancel this section (or its check)"),
        ("v", "verify: fetch every cited URL, ground quotes and figures (tab 7)"),
        ("p", "toggle the pin mode (entity ↔ none) in memo.yaml"),
        ("x", "reject the highlighted source's domain (memo or global)"),
        ("n", "reject a name: offers the namesake phrase the About column found (memo or global)"),
        ("d", "drop the highlighted source from this frozen set only"),
        ("u", "un-reject a rejected source's domain or name, or restore a dropped source"),
        ("N", "the memo's namesakes (d removes a learned one)"),
        ("k", "keep a web result in the frozen set (as a W source)"),
        ("f", "filter the report: by status, support, weak or uncited"),
        ("escape", "back to the memo"),
    ],
}


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close", key_display="?"),
        Binding("q", "dismiss", "Close"),
    ]

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for title, rows in KEYS.items():
            table.add_row(Text(title, style="bold underline"), "")
            for key, what in rows:
                table.add_row(Text(key), Text(what))
            table.add_row("", "")
        with VerticalScroll(id="help-dialog"):
            yield Static(Text("sourcedesk — keys", style="bold"))
            yield Static(table)
            yield Static(Text("Untrusted text (titles, snippets, URLs, notes) is always shown literally.", style="dim"))
