"""Every log record leaves clean: no API key, no terminal control sequence.

A log line is written wherever a handler points (stderr, a log file, a test's
capture), and its message is often built from text a server sent us — an error
body, a URL, a title. Rather than trusting every call site, the record factory
cleans each record as it is made: the formatted message, and the traceback of a
logged exception (which can quote the same text), go through
``core.text_safety.clean_text``. Installed when ``core`` is imported, so no
entry point can forget it.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from core.text_safety import clean_text

_installed = False


def _safe(text: str) -> str:
    return clean_text(text, multiline=True)


def install() -> None:
    """Wrap the current log-record factory (idempotent)."""
    global _installed
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken %-format: let logging report it as it always has
            return record
        record.msg, record.args = _safe(message), None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = _safe("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        return record

    logging.setLogRecordFactory(factory)
    _installed = True


__all__ = ["install"]
