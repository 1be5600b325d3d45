"""The workbench app, typed, for the screens that live in it, and what every full screen shares.

Screens reach the memo, the store and the runs through ``sd_app`` — the concrete
``SourcedeskApp`` — never through a bare ``self.app.<attr>``, so every use is checked by mypy
and a screen pushed onto some other app fails with a clear message instead of an
``AttributeError`` deep in a handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from textual import events
from textual.app import App
from textual.screen import Screen

from sourcedesk.tui.widgets.key_footer import KeyFooter

if TYPE_CHECKING:  # pragma: no cover - typing only (the app module imports the screens)
    from sourcedesk.tui.app import SourcedeskApp


def workbench_app(app: App[object]) -> SourcedeskApp:
    """``app`` as the workbench (``TypeError`` when it is another Textual app)."""
    from sourcedesk.tui.app import SourcedeskApp  # loaded by now: it is the app that is running

    if not isinstance(app, SourcedeskApp):
        raise TypeError(f"this screen belongs to the sourcedesk workbench, not to {type(app).__name__}")
    return app


# Terminal width (columns) below which the screens lay out compactly: at 100 columns the wide
# layout pushed the memo's flags and costs, a tab and half the footer's keys off screen.
NARROW_WIDTH = 130
# How Textual's footer spaces a key and its description (padding and gutter), and the room its
# command-palette hint takes on the right.
FOOTER_GAP_WIDE = 3
FOOTER_GAP_COMPACT = 2
FOOTER_PALETTE_WIDTH = 14
# The app's own keys a screen may leave out of a narrow footer.
APP_FOOTER_ACTIONS = frozenset({"toggle_theme"})


class WorkbenchScreen(Screen[object]):
    """A full screen of the workbench. Its result type is ``object``, the type of
    ``App.screen``, so ``isinstance(app.screen, MemoScreen)`` narrows as it should."""

    # Textual adds the class named here to the screen as the terminal's width crosses it.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_WIDTH, "-wide")]  # noqa: RUF012 - typed by Textual's Screen

    @property
    def sd_app(self) -> SourcedeskApp:
        return workbench_app(self.app)

    @property
    def narrow(self) -> bool:
        return self.app.size.width < NARROW_WIDTH

    # Actions whose keys a narrow terminal's footer leaves out (they still work, and the help
    # lists them), so that the rest — "? Help" above all — stay on screen.
    NARROW_FOOTER_HIDES: ClassVar[frozenset[str]] = frozenset()

    def on_resize(self, event: events.Resize) -> None:
        if self.app.screen is self:  # a screen below refits when it is shown again
            self._fit_footer()

    def on_screen_resume(self) -> None:
        self._fit_footer()

    def _fit_footer(self) -> None:
        """The footer as wide as the terminal allows: spaced out, then compact, then compact
        without the keys in ``NARROW_FOOTER_HIDES`` — never cut short at "? Help"."""
        width = self.app.size.width
        none: frozenset[str] = frozenset()
        if self._footer_width(none, compact=False) <= width:
            compact, hidden = False, none
        elif self._footer_width(none, compact=True) <= width:
            compact, hidden = True, none
        else:
            compact, hidden = True, self.NARROW_FOOTER_HIDES | APP_FOOTER_ACTIONS
        for footer in self.query(KeyFooter):
            footer.compact = compact
            footer.hidden = hidden

    def _footer_width(self, hidden: frozenset[str], *, compact: bool) -> int:
        """Columns the footer takes with the keys it would show: each key and its description,
        spaced as Textual's footer spaces them, and the command palette's hint."""
        seen: set[str] = set()
        total = FOOTER_PALETTE_WIDTH
        for active in self.active_bindings.values():
            binding = active.binding
            if not binding.show or binding.action in hidden or binding.action in seen:
                continue
            seen.add(binding.action)
            text = cell_len(self.app.get_key_display(binding)) + cell_len(binding.description)
            total += text + (FOOTER_GAP_COMPACT if compact else FOOTER_GAP_WIDE)
        return total


__all__ = ["NARROW_WIDTH", "WorkbenchScreen", "workbench_app"]
