"""Damaged store data is moved aside, said out loud, and treated as missing.

A store lives for months and people copy, sync and hand-edit it: a document can
lose a field, a table can gain a stray string, a payload file can be truncated
by a full disk. None of that may stop a run with a traceback, and none of it may
be used silently either. What cannot be read is written, as found, to
``.sourcedesk/quarantine/`` (nothing is deleted), removed from where it was, and
a notice names it; the caller carries on as if it had never been stored (a
source set is retrieved again, a run record loses the field).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sourcedesk.core.domain import clock
from sourcedesk.core.files.atomic import atomic_write_text

log = logging.getLogger("sourcedesk.store")

QUARANTINE_DIRNAME = "quarantine"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.@-]+")


def _stamp() -> str:
    return clock.now().strftime("%Y%m%dT%H%M%S%fZ")


@dataclass(frozen=True)
class Notice:
    section: str | None  # the section the damaged data belonged to, when known
    message: str


class Quarantine:
    """``<store>/quarantine/`` and the notices about what was put there."""

    def __init__(self, store_dir: Path) -> None:
        self.dir = Path(store_dir) / QUARANTINE_DIRNAME
        self._notices: list[Notice] = []
        self._lock = threading.Lock()

    def _target(self, name: str) -> Path:
        return self.dir / f"{_UNSAFE_NAME.sub('_', name)[:80]}-{_stamp()}"

    def keep_document(self, name: str, document: Any, reason: str) -> Path:
        """Write a damaged document (as found) to the quarantine folder; returns the file."""
        target = self._target(name).with_suffix(".json")
        payload = {"reason": reason, "document": document}
        atomic_write_text(target, json.dumps(payload, ensure_ascii=False, indent=2, default=repr))
        return target

    def keep_file(self, path: Path, name: str) -> Path | None:
        """Move a damaged file into the quarantine folder; None when it could not be moved."""
        target = self._target(name)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        except OSError as exc:
            log.warning("could not move the damaged file %s aside: %s", path, exc)
            return None
        return target

    def notice(self, message: str, section: str | None = None) -> None:
        log.warning("%s", message)
        with self._lock:
            if all(n.message != message for n in self._notices):
                self._notices.append(Notice(section, message))

    def take(self, section: str | None = None) -> list[str]:
        """Notices about ``section`` plus those about no section in particular (each is
        handed out once, so one run's report carries it and the next does not)."""
        with self._lock:
            mine = [n for n in self._notices if n.section in (section, None)]
            self._notices = [n for n in self._notices if n not in mine]
        return [n.message for n in mine]

    def shown(self, path: Path) -> str:
        """A quarantined file as the analyst finds it: ``.sourcedesk/quarantine/NAME``."""
        return f"{self.dir.parent.name}/{self.dir.name}/{path.name}"


def split_malformed(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """TinyDB tables with every document that TinyDB itself cannot hold (not a JSON object,
    or an id that is not a number) taken out: ``(clean, {table: {id: document}})``."""
    clean: dict[str, Any] = {}
    bad: dict[str, dict[str, Any]] = {}
    for name, table in data.items():
        kept: dict[str, Any] = {}
        for doc_id, doc in table.items():
            if isinstance(doc, dict) and str(doc_id).strip().lstrip("-").isdigit():
                kept[doc_id] = doc
            else:
                bad.setdefault(name, {})[doc_id] = doc
        clean[name] = kept
    return clean, bad


__all__ = ["QUARANTINE_DIRNAME", "Notice", "Quarantine", "split_malformed"]
