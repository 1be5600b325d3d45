"""The workbench app, typed, for the screens that live in it.

Screens reach the memo, the store and the runs through ``sd_app`` — the concrete
``SourcedeskApp`` — never through a bare ``self.app.<attr>``, so every use is
checked by mypy and a screen pushed onto some other app fails with a clear message
instead of an ``AttributeError`` deep in a handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App
from textual.screen import Screen

if TYPE_CHECKING:  # pragma: no cover - typing only (the app module imports the screens)
    from tui.app import SourcedeskApp


def workbench_app(app: App[object]) -> SourcedeskApp:
    """``app`` as the workbench (``TypeError`` when it is another Textual app)."""
    from tui.app import SourcedeskApp  # loaded by now: it is the app that is running

    if not isinstance(app, SourcedeskApp):
        raise TypeError(f"this screen belongs to the sourcedesk workbench, not to {type(app).__name__}")
    return app


class WorkbenchScreen(Screen[object]):
    """A full screen of the workbench. Its result type is ``object``, the type of
    ``App.screen``, so ``isinstance(app.screen, MemoScreen)`` narrows as it should."""

    @property
    def sd_app(self) -> SourcedeskApp:
        return workbench_app(self.app)


__all__ = ["WorkbenchScreen", "workbench_app"]
