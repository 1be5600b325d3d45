"""Where unexpected errors go: a log file in the platform's user log directory.

The analyst never sees a raw traceback. What went wrong is written down here in
full (with the traceback) and the message on screen names this file. Everything
logged under ``sourcedesk.*`` at WARNING or above lands here — the workbench's
``log.exception`` calls too. API keys are taken out of every line before it is
written.
"""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from sourcedesk.core.config.settings import log_dir
from sourcedesk.store.redact import redact_text

LOGGER = "sourcedesk"
LOG_NAME = "sourcedesk.log"
MAX_BYTES = 1_000_000
BACKUPS = 2
_MAX_SHOWN = 200

log = logging.getLogger(LOGGER)


class _RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))


class _LogFile(RotatingFileHandler):
    """The handler ``setup_logging`` installs (recognised so it is installed once)."""


def log_file() -> Path:
    return log_dir() / LOG_NAME


def _installed() -> _LogFile | None:
    return next((h for h in log.handlers if isinstance(h, _LogFile)), None)


def setup_logging() -> Path | None:
    """Send ``sourcedesk.*`` warnings and errors to the log file; returns its path (None when
    the log directory cannot be created: errors are then only summarised on screen)."""
    path = log_file()
    current = _installed()
    if current is not None:
        if Path(current.baseFilename) == path.resolve():
            return path
        log.removeHandler(current)
        current.close()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    handler = _LogFile(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_RedactingFormatter("%(asctime)s %(levelname)s %(name)s [pid %(process)d] %(message)s"))
    log.addHandler(handler)
    return path


def logged_at() -> Path | None:
    """The file errors are written to now (None when logging was never set up)."""
    current = _installed()
    return Path(current.baseFilename) if current is not None else None


def report_unexpected(exc: BaseException, what: str) -> str:
    """Log ``exc`` with its traceback; returns the short message for the screen."""
    path = logged_at() or setup_logging()
    log.error("unexpected error in %s", what, exc_info=(type(exc), exc, exc.__traceback__))
    text = " ".join(redact_text(str(exc)).split())
    if len(text) > _MAX_SHOWN:
        text = text[: _MAX_SHOWN - 1] + "…"
    summary = f"unexpected error: {type(exc).__name__}{': ' + text if text else ''}"
    if path is None:
        return summary + " (no log file could be written)"
    return f"{summary}\nThe details, with the traceback, are in {path}"
