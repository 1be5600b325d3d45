"""Every log record leaves clean: no API key, no terminal control sequence.

A log line is written wherever a handler points (stderr, a log file, a test's
capture), and its message is often built from text a server sent us — an error
body, a URL, a title. Rather than trusting every call site, the record factory
(installed by ``core/__init__``) cleans each record as it is made: the formatted
message, and the traceback of a logged exception (which can quote the same text),
go through ``sourcedesk.core.text.safety.clean_text``.
"""

from __future__ import annotations

import logging
import traceback

from sourcedesk.core.text.safety import clean_text


def _safe(text: str) -> str:
    return clean_text(text, multiline=True)


def clean_record(record: logging.LogRecord) -> logging.LogRecord:
    """``record`` with its message (arguments merged in) and its traceback cleaned."""
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a broken %-format: let logging report it as it always has
        return record
    record.msg, record.args = _safe(message), None
    if record.exc_info and record.exc_info[0] is not None:
        record.exc_text = _safe("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
    return record


__all__ = ["clean_record"]
