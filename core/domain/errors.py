"""Errors that reach the analyst as a message, never as a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Something the analyst can fix: bad input, missing file, locked memo.

    The one family of expected errors: ``title`` names what went wrong in a few words (a
    toast's or a panel's heading), ``message`` says what and where, ``hint`` what to do.
    ``str(err)`` is the complete message (what, where, and a hint).
    """

    title: str = "Cannot do that"

    def __init__(self, message: str, hint: str | None = None, *, title: str | None = None):
        self.message = message
        self.hint = hint
        if title is not None:
            self.title = title
        super().__init__(message if not hint else f"{message}\nHint: {hint}")


class MemoError(UserError):
    """memo.yaml could not be loaded (names the file, line and field)."""

    title = "memo.yaml does not load"


class StoreLocked(UserError):
    """Another process holds the memo's store."""

    title = "The memo is open elsewhere"


class RetrievalError(Exception):
    """A provider could not retrieve an entry's sources. ``message`` is a sentence the
    analyst can act on (never a key, a header or a raw page); ``requests`` counts the
    HTTP requests spent before giving up. The retrieval stage turns it into a
    ``degraded`` warning and the section carries on writer-only."""

    def __init__(self, message: str, *, requests: int = 0):
        self.message = message
        self.requests = requests
        super().__init__(message)
