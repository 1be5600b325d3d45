"""TinyDB storage that never truncates in place and never silently drops a damaged file.

- writes go through ``atomic_write_text`` (temp file, fsync, ``os.replace``), so a
  crash mid-write leaves the previous ``db.json`` byte-identical;
- every write is redacted (``store.redact``) so API keys cannot reach the disk;
- a missing or empty file is an empty database;
- a file that is not a TinyDB JSON document is renamed to
  ``<name>.corrupt-<timestamp>`` and reported as a ``UserError`` naming both files.
  The data is kept for the analyst to inspect; the next open starts empty;
- a single document TinyDB cannot hold (a string where an object belongs, an id
  that is not a number) is moved to ``quarantine/`` with a warning
  (``store.quarantine``) and the rest of the store opens as usual.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

from core.errors import UserError
from store.atomic_file import atomic_write_text
from store.quarantine import Quarantine, split_malformed
from store.redact import redact


class CorruptStore(UserError):
    """A store file could not be read as JSON; it has been moved aside, not deleted."""


class AtomicJSONStorage(Storage):
    def __init__(self, path: str | Path, *, label: str = "store", cache: bool = True):
        """``cache=True`` keeps the last state read or written in memory (reads then cost no
        parsing): only valid while this process holds the store's lock."""
        super().__init__()
        self.path = Path(path)
        self.label = label
        self._cache = cache
        self._data: dict[str, dict[str, Any]] | None = None
        self.quarantine = Quarantine(self.path.parent)

    def read(self) -> dict[str, dict[str, Any]] | None:
        data = self._data if self._cache else None
        if data is None:
            text = self._read_file()
            data = self._set_aside_malformed(json.loads(text) if text else {})
            if self._cache:
                self._data = data
        # TinyDB edits what it reads before writing it back; hand out copies of the tables and
        # documents so that a failed write leaves the cached state (like the file) unchanged.
        return {name: {doc_id: dict(doc) for doc_id, doc in table.items()} for name, table in data.items()}

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        text = json.dumps(redact(data), ensure_ascii=False, separators=(",", ":"))
        atomic_write_text(self.path, text)
        if self._cache:
            self._data = json.loads(text)  # exactly what a fresh process would read

    def _set_aside_malformed(self, data: dict[str, Any]) -> dict[str, Any]:
        clean, bad = split_malformed(data)
        if not bad:
            return data
        kept = self.quarantine.keep_document(f"{self.path.stem}-documents", bad, "not a store document")
        count = sum(len(docs) for docs in bad.values())
        self.quarantine.notice(
            f"{self.label} {self.path.name}: {count} damaged document(s) in {', '.join(sorted(bad))} "
            f"were moved aside to {self.quarantine.shown(kept)}; the rest of the store is used as usual"
        )
        self.write(clean)  # the store no longer holds them; the quarantine file does
        return json.loads(json.dumps(clean))

    def _read_file(self) -> str:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return ""
        except OSError as exc:
            raise UserError(
                f"cannot read {self.label} {self.path}: {exc.strerror or exc}",
                hint="check the file's permissions",
            ) from None
        if not raw.strip():
            return ""
        try:
            text = raw.decode("utf-8")
            data = json.loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            self._quarantine(f"not valid JSON: {exc}")
        if not isinstance(data, dict) or not all(isinstance(t, dict) for t in data.values()):
            self._quarantine("not a sourcedesk store (expected a JSON object of tables)")
        return text

    def _quarantine(self, reason: str) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        try:
            os.replace(self.path, aside)
        except OSError as exc:
            raise CorruptStore(
                f"{self.label} {self.path} is damaged ({reason}) and could not be moved aside ({exc})",
                hint=f"move {self.path.name} out of the way yourself; sourcedesk then starts an empty store",
            ) from None
        raise CorruptStore(
            f"{self.label} {self.path} is damaged ({reason}); it was moved aside to {aside.name}",
            hint=(
                f"nothing was deleted: repair the JSON in {aside} and rename it back to {self.path.name} "
                "to recover, or run again to start with an empty store"
            ),
        )
