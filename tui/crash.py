"""Where a crash of the workbench goes: the log file, never the terminal.

Textual ends the app on an exception nothing handled and prints a traceback — with the
values of local variables — on the terminal. The workbench hands Textual this log's
console as its ``error_console`` (a public attribute): the traceback is written, with
secrets redacted, to the log file, and ``SourcedeskApp.run`` prints one line naming it.
"""

from __future__ import annotations

import io
import logging

from rich.console import Console

from sourcedesk.store.redact import redact_text
from sourcedesk.tui.logs import logged_at, setup_logging

log = logging.getLogger("sourcedesk.tui")


class _Sink(io.StringIO):
    """What Textual prints after a crash; logged once the print is done."""

    def __init__(self, owner: CrashLog) -> None:
        super().__init__()
        self.owner = owner

    def flush(self) -> None:
        text = self.getvalue()
        if text.strip():
            self.owner.record(text)
            self.seek(0)
            self.truncate()


class CrashLog:
    """The console a crash is printed to, and what was printed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def console(self) -> Console:
        return Console(
            file=_Sink(self), width=120, color_system=None, markup=False, highlight=False, force_terminal=False
        )

    def record(self, text: str) -> None:
        text = redact_text(text)
        self.texts.append(text)
        setup_logging()
        log.error("the workbench crashed:\n%s", text)

    @property
    def written(self) -> bool:
        return bool(self.texts)

    def summary(self) -> str:
        """One line: the error (the traceback's last line) and where the details are."""
        lines = [ln.strip() for ln in "".join(self.texts).splitlines() if ln.strip()]
        last = next((ln for ln in reversed(lines) if ":" in ln and not ln.startswith(("│", "╰", "╭"))), "")
        where = logged_at()
        details = f"; the details, with the traceback, are in {where}" if where else ""
        return f"unexpected error{': ' + last if last else ''}{details}"
