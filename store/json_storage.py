"""TinyDB storage that never truncates in place, never re-reads what it just wrote, and never
silently drops a damaged file.

- writes go through ``atomic_write_text`` (temp file, fsync, ``os.replace``), so a
  crash mid-write leaves the previous ``db.json`` byte-identical;
- every write is redacted (``sourcedesk.store.redact``) so API keys cannot reach the disk;
- a transaction (``begin``/``commit``/``rollback``) gathers every write of one store
  operation and puts them on disk as one atomic replace, or none of them; readers in other
  threads keep seeing the committed state meanwhile;
- the last state read or written is kept in memory with the file's identity (inode,
  size, modification and change times) at that moment. A read whose file still has
  that identity costs no I/O and no parsing; a file replaced by another process has a
  new inode (every write is a rename of a new file), so its write is picked up;
- a missing file is an empty database, and so is an empty one (never written by a store),
  with a notice that its contents were lost;
- a file that is not a TinyDB JSON document is renamed to
  ``<name>.corrupt-<timestamp>`` and reported as a ``UserError`` naming both files.
  The data is kept for the analyst to inspect; the next open starts empty;
- a single document TinyDB cannot hold (a string where an object belongs, an id
  that is not a number) is moved to ``quarantine/`` with a warning
  (``sourcedesk.store.quarantine``) and the rest of the store opens as usual.

The document is read and validated in one place (``_load``), so a stricter check of a
document's shape belongs there.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import orjson
from tinydb.storages import Storage

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.files.atomic import atomic_write_bytes
from sourcedesk.core.files.regular import NotRegularFile, read_regular
from sourcedesk.core.text.secrets import secret_values
from sourcedesk.store.quarantine import Quarantine, split_malformed
from sourcedesk.store.redact import redact

Tables = dict[str, dict[str, Any]]
FileIdentity = tuple[int, int, int, int, int]


class CorruptStore(UserError):
    """A store file could not be read as JSON; it has been moved aside, not deleted."""


def _identity(path: Path) -> FileIdentity | None:
    try:
        st = path.stat()
    except OSError:  # missing, or unreadable (a symlink loop): reading it says which
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def encode(value: Any) -> bytes:
    """Compact UTF-8 JSON (orjson: several times faster than the standard library, which
    matters because the whole database is encoded on every write)."""
    return orjson.dumps(value)


def decode(raw: bytes | str) -> Any:
    return orjson.loads(raw)


def _contains_secret(data: bytes, secrets: list[str]) -> bool:
    """Whether ``data`` (a JSON document) holds a secret, raw or JSON-escaped."""
    return any(secret.encode("utf-8") in data or orjson.dumps(secret)[1:-1] in data for secret in secrets)


class AtomicJSONStorage(Storage):
    def __init__(self, path: str | Path, *, label: str = "store") -> None:
        super().__init__()
        self.path = Path(path)
        self.label = label
        self._data: Tables | None = None
        self._identity: FileIdentity | None = None
        self.reads = 0  # times the file was parsed (tests and the bench read this)
        self.writes = 0
        self.quarantine = Quarantine(self.path.parent)
        self._pending: Tables | None = None  # a transaction's state, not yet on disk
        self._depth = 0  # nested begin()s: the outermost commit writes

    def read(self) -> Tables | None:
        data = self.current()
        # TinyDB edits what it reads before writing it back; hand out copies of the tables and
        # documents so that a failed write leaves the kept state (like the file) unchanged.
        return {name: {doc_id: dict(doc) for doc_id, doc in table.items()} for name, table in data.items()}

    def current(self) -> Tables:
        """The document as it is on disk now (kept in memory; never edit what this returns);
        inside a transaction, as the transaction has it."""
        if self._pending is not None:
            return self._pending
        identity = _identity(self.path)
        if self._data is None or identity != self._identity:
            # The identity is taken before reading: a write racing the read leaves a stale
            # identity behind, and the next call reads again rather than trusting old data.
            self._data = self._load()
            self._identity = identity
        return self._data

    def committed(self) -> Tables | None:
        """The last state read or written, without looking at the file (None: nothing yet)."""
        return self._data

    def begin(self) -> None:
        """Start (or nest in) a transaction: writes are kept until the outermost ``commit``.
        The caller holds the store's write lock for the whole of it."""
        self._depth += 1

    def commit(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._pending is not None:
            pending, self._pending = self._pending, None
            self._write_now(pending)

    def rollback(self) -> None:
        """Forget what the transaction wrote: the file, and what readers see, are as before it."""
        self._depth = 0
        self._pending = None

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def write(self, data: Tables) -> None:
        if self._depth > 0:
            self._pending = data
            return
        self._write_now(data)

    def _write_now(self, data: Tables) -> None:
        raw = encode(data)
        secrets = secret_values()
        if secrets and _contains_secret(raw, secrets):
            data = redact(data, secrets)
            raw = encode(data)
        atomic_write_bytes(self.path, raw)
        self.writes += 1
        # What was just written is what a fresh process would read: every document reaching
        # here is plain JSON data (the store converts values with pydantic's JSON mode first).
        self._data = data
        self._identity = _identity(self.path)

    def forget(self) -> None:
        """Drop the in-memory copy (the next read parses the file)."""
        self._pending = None
        self._depth = 0
        self._data = None
        self._identity = None

    def _load(self) -> Tables:
        self.reads += 1
        try:
            raw = read_regular(self.path)
        except FileNotFoundError:
            return {}
        except NotRegularFile:
            raise UserError(
                f"cannot read {self.label} {self.path}: it is not a regular file (a pipe, socket or device)",
                hint=f"move {self.path.name} out of the way; sourcedesk then starts an empty store",
            ) from None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR):
                what = "a symbolic link that leads back to itself" if exc.errno == errno.ELOOP else "a directory"
                raise UserError(
                    f"cannot read {self.label} {self.path}: it is {what}, not a store file",
                    hint=f"move {self.path.name} out of the way; sourcedesk then starts an empty store",
                ) from None
            raise UserError(
                f"cannot read {self.label} {self.path}: {exc.strerror or exc}",
                hint="check the file's permissions",
            ) from None
        if not raw.strip():
            # Every write leaves at least "{}": an empty file was cut short (a crash, a full disk,
            # a careless edit), so whatever it held is gone; say so rather than look brand new.
            self.quarantine.notice(
                f"{self.label} {self.path.name} was empty ({len(raw)} bytes): what it held was lost "
                "before this run; sourcedesk starts from an empty store"
            )
            return {}
        try:
            data = decode(raw)
        except ValueError as exc:  # orjson.JSONDecodeError (also for text that is not UTF-8)
            self._quarantine(f"not valid JSON: {exc}")
        if not isinstance(data, dict) or not all(isinstance(t, dict) for t in data.values()):
            self._quarantine("not a sourcedesk store (expected a JSON object of tables)")
        return self._set_aside_malformed(data)  # checked just above: a JSON object of tables

    def _set_aside_malformed(self, data: Tables) -> Tables:
        """Documents TinyDB cannot hold go to the quarantine folder; the rest is the store."""
        clean, bad = split_malformed(data)
        if not bad:
            return data
        kept = self.quarantine.keep_document(f"{self.path.stem}-documents", bad, "not a store document")
        count = sum(len(docs) for docs in bad.values())
        self.quarantine.notice(
            f"{self.label} {self.path.name}: {count} damaged document(s) in {', '.join(sorted(bad))} "
            f"were moved aside to {self.quarantine.shown(kept)}; the rest of the store is used as usual"
        )
        self._write_now(clean)  # the store no longer holds them; the quarantine file does
        return clean

    def _quarantine(self, reason: str) -> None:
        stamp = clock.now().strftime("%Y%m%dT%H%M%S%fZ")
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
