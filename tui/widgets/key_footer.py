"""The footer of a workbench screen: Textual's, generated from the bindings, that can leave out
the less used keys when the terminal is too narrow for all of them (they still work, and the
help lists them)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widgets import Footer


class KeyFooter(Footer):
    """A ``Footer`` without the keys of the actions in ``hidden``."""

    hidden: reactive[frozenset[str]] = reactive(frozenset(), recompose=True)

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if getattr(widget, "action", None) in self.hidden:  # a key of the footer
                continue
            yield widget
