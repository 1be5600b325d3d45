"""The footer of a workbench screen: one line of keys, generated from the active bindings.

It replaces Textual's ``Footer``, which builds a widget per key and builds them all again on
every change of focus — the larger part of a tab switch's cost. This one draws a single line
of text: every shown binding's key (as remapped by the keymap) and description, spaced out
when there is room, closer together when there is less, and without the screen's less used
keys (``hides``; they still work, and the help lists them) when even that does not fit — so
"? Help" and "q Quit" always stay in view (at 80 columns the screen's last keys go too). A click on a key runs its action.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import Static

GAP_WIDE = 3
GAP_COMPACT = 2
PALETTE_HINT = "^p palette"
ESSENTIAL = frozenset({"help", "quit", "back"})  # keys the footer never leaves out


class KeyBar(Static):
    """The keys of the screen it is on (``hides``: actions a narrow terminal leaves out)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"keybar--key", "keybar--description"}
    DEFAULT_CSS: ClassVar[str] = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-foreground;
    }
    KeyBar > .keybar--key {
        color: $footer-key-foreground;
        text-style: bold;
    }
    KeyBar > .keybar--description {
        color: $footer-description-foreground;
    }
    """

    def __init__(self, hides: frozenset[str] = frozenset()) -> None:
        super().__init__(markup=False)
        self.hides = hides
        self._spans: list[tuple[int, int, Binding]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, lambda _screen: self.draw())
        self.draw()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def on_resize(self, event: events.Resize) -> None:
        self.draw()

    def shown(self) -> list[Binding]:
        """The bindings the footer shows, one per action, in the screen's then the app's order."""
        seen: set[str] = set()
        out: list[Binding] = []
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if binding.show and binding.action not in seen:
                seen.add(binding.action)
                out.append(binding)
        return out

    def _width(self, bindings: list[Binding], gap: int) -> int:
        keys = sum(cell_len(self.app.get_key_display(b)) + 1 + cell_len(b.description) + gap for b in bindings)
        return keys + 1 + cell_len(PALETTE_HINT)

    def layout_for(self, width: int) -> tuple[list[Binding], int]:
        """The bindings and the gap between them that fit ``width`` columns."""
        every = self.shown()
        if self._width(every, GAP_WIDE) <= width:
            return every, GAP_WIDE
        if self._width(every, GAP_COMPACT) <= width:
            return every, GAP_COMPACT
        kept = [b for b in every if b.action not in self.hides]
        # Still too wide (80 columns): the screen's last keys go too, one at a time, never the
        # ones a newcomer needs to find the rest (help, quit, back).
        while self._width(kept, GAP_COMPACT) - cell_len(PALETTE_HINT) - 1 > width:
            droppable = [b for b in kept if b.action not in ESSENTIAL]
            if not droppable:
                break
            kept.remove(droppable[-1])
        return kept, GAP_COMPACT

    def draw(self) -> None:
        if not self.is_mounted:
            return
        width = self.size.width or self.app.size.width
        bindings, gap = self.layout_for(width)
        key_style = self.get_component_rich_style("keybar--key")
        description_style = self.get_component_rich_style("keybar--description")
        line = Text(no_wrap=True, overflow="crop")
        self._spans = []
        for binding in bindings:
            start = len(line)
            line.append(" " + self.app.get_key_display(binding), style=key_style)
            line.append(" " + binding.description + " " * (gap - 1), style=description_style)
            self._spans.append((start, len(line), binding))
        room = width - line.cell_len - cell_len(PALETTE_HINT) - 1
        if room > 0:
            line.append(" " * room)
            line.append(PALETTE_HINT + " ", style=description_style)
        self.update(line)

    def on_click(self, event: events.Click) -> None:
        for start, end, binding in self._spans:
            if start <= event.x < end:
                self.run_worker(self.app.run_action(binding.action, self.screen), exit_on_error=False)
                return
