"""The key reference (``?``), generated from the bindings of the screen it was opened on.

Every row is a binding that carries an id (the id a ``keymap`` in config.yaml remaps), its key
as remapped, and its tooltip — so the help cannot drift from the keys that really work. The
symbols the tables use are explained below the keys.
"""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from sourcedesk.tui.widgets.legend import EVERY_SYMBOL

LEGEND = tuple((symbol, meaning) for symbol, meaning in EVERY_SYMBOL)


def key_rows(screen: Screen[object]) -> list[tuple[str, str, str]]:
    """``(key, what it does, binding id)`` for every binding with an id active on ``screen``."""
    app = screen.app
    rows: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        if not binding.id or binding.id in seen:
            continue
        seen.add(binding.id)
        rows.append((app.get_key_display(binding), binding.tooltip or binding.description, binding.id))
    rows.append((app.get_key_display(Binding(app.COMMAND_PALETTE_BINDING, "")), "the command palette", ""))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close", id="help-close"),
        Binding("question_mark", "dismiss", "Close", key_display="?", id="help-close-2", show=False),
        Binding("q", "dismiss", "Close", id="help-close-3", show=False),
    ]

    def __init__(self, below: Screen[object]) -> None:
        super().__init__()
        self.rows = key_rows(below)
        self.where = getattr(below, "HELP_TITLE", type(below).__name__.removesuffix("Screen").lower())

    def compose(self) -> ComposeResult:
        keys = Table.grid(padding=(0, 2))
        keys.add_column(style="bold", no_wrap=True)
        keys.add_column()
        keys.add_column(style="dim", no_wrap=True)
        for key, what, binding_id in self.rows:
            keys.add_row(Text(key), Text(what), Text(binding_id))
        legend = Table.grid(padding=(0, 2))
        legend.add_column(style="bold", no_wrap=True)
        legend.add_column()
        for symbol, what in LEGEND:
            legend.add_row(Text(symbol), Text(what))
        with VerticalScroll(id="help-dialog"):
            yield Static(Text(f"sourcedesk — keys of the {self.where} screen", style="bold"))
            yield Static(Text("key · what it does · id (remap it under keymap: in config.yaml)", style="dim"))
            yield Static(keys)
            yield Static(Text("\nSymbols", style="bold"))
            yield Static(legend)
            yield Static(
                Text("\nUntrusted text (titles, snippets, URLs, notes) is always shown literally.", style="dim")
            )
