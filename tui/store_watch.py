"""A colleague's change, shown in this workbench: one worker, one message.

The store announces what others change (``watch_changes``: NOTIFY on the team store, the
change log of a TinyDB store). One thread worker listens and posts a ``ColleagueChanged``
for each; the app shows it — a toast naming who did what ("alice@laptop rejected nats.aero")
and a refresh of the rows it touches (every section for a rejection, the one section for a
new set or run), through the same ``StoreChanged``/``SectionRunFinished`` messages the
workbench's own writes send.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

from textual.message import Message

from sourcedesk.core.domain.errors import UserError
from sourcedesk.store.api import SectionHoldAPI
from sourcedesk.store.changes import StoreChange

if TYPE_CHECKING:
    from sourcedesk.tui.app import SourcedeskApp

log = logging.getLogger("sourcedesk.tui")


class ColleagueChanged(Message):
    """Another window or analyst changed the memo's store (or the global lists)."""

    def __init__(self, change: StoreChange) -> None:
        super().__init__()
        self.change = change


def start_store_watch(app: SourcedeskApp) -> tuple[SectionHoldAPI | None, threading.Event]:
    """Mark the memo as open in this window (``sourcedesk demo`` will not reset it under us; a
    ``window-<pid>`` hold, released on exit) and start the listening worker. Setting the
    returned event stops it (within ``poll_s``)."""
    window: SectionHoldAPI | None = None
    try:
        window = app.store.hold_section(f"window-{os.getpid()}", purpose="open in the workbench")
    except UserError as exc:
        log.info("cannot mark the memo as open: %s", exc)
    stop = threading.Event()

    def watch() -> None:
        try:
            for change in app.store.watch_changes(stop, global_store=app.global_store):
                app.post_message(ColleagueChanged(change))
        except Exception:
            log.warning("the store's change feed stopped", exc_info=True)

    app.run_worker(watch, thread=True, name="store changes", group="watch-store", exit_on_error=False)
    return window, stop


def show_store_change(app: SourcedeskApp, change: StoreChange) -> None:
    """The toast (for rejections and namesakes) and the refresh of what the change touches."""
    if change.about_rejections or change.kind == "namesake":
        app.say(change.describe())
        app.store_changed()
    else:
        app.store_changed(frozenset({change.section}) if change.section else None)


__all__ = ["ColleagueChanged", "show_store_change", "start_store_watch"]
