"""Errors that reach the analyst as a message, never as a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Something the analyst can fix: bad input, missing file, locked memo.

    ``str(err)`` is the complete message (what, where, and a hint).
    """

    def __init__(self, message: str, hint: str | None = None):
        self.message = message
        self.hint = hint
        super().__init__(message if not hint else f"{message}\nHint: {hint}")


class MemoError(UserError):
    """memo.yaml could not be loaded (names the file, line and field)."""


class StoreLocked(UserError):
    """Another process holds the memo's store."""
