"""The workbench app, typed, for the screens that live in it, and what every full screen shares.

Screens reach the memo, the store and the runs through ``sd_app`` — the concrete
``SourcedeskApp`` — never through a bare ``self.app.<attr>``, so every use is checked by mypy
and a screen pushed onto some other app fails with a clear message instead of an
``AttributeError`` deep in a handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.screen import Screen

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
# Terminal width below which the section screen's detail pane moves under the tables (80×24):
# beside them, it left the tables too little room for a claim or a verdict's reason.
TIGHT_WIDTH = 100
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

    # Actions whose keys a narrow terminal's footer (``KeyBar``) leaves out (they still work, and
    # the help lists them), so that the rest — "? Help" above all — stay on screen.
    NARROW_FOOTER_HIDES: ClassVar[frozenset[str]] = frozenset()

    def on_screen_resume(self) -> None:
        """(A hook for the screens: each reads what it shows when it is shown.)"""


__all__ = ["APP_FOOTER_ACTIONS", "NARROW_WIDTH", "TIGHT_WIDTH", "WorkbenchScreen", "workbench_app"]
