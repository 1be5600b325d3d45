"""What changed in a store, said to everyone who has the memo open.

When one analyst rejects ``nats.aero``, a colleague's workbench on the same memo must grey
out its rows and say who did it. Every store write that another window would want to show
records a ``StoreChange`` in the same transaction as the change itself:

- on PostgreSQL it is sent with ``NOTIFY`` (delivered when the transaction commits, so a
  listener never hears of a change that was rolled back);
- in a TinyDB store it is appended to the ``changes`` table of ``db.json`` (or of the global
  list), the last ``KEEP`` of them; a watcher notices the file was replaced (a ``stat``) and
  reads the entries it has not seen.

Both backends hand them out through ``watch_changes(stop, …)``: a blocking iterator for a
worker thread, which ends when ``stop`` is set.
"""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

ChangeKind = Literal[
    "reject",  # a domain joined a rejection list
    "unreject",
    "reject_name",
    "unreject_name",
    "namesake",  # learned namesakes changed (learned, removed, restored)
    "source_set",  # a new version of a section's frozen set
    "run",  # a run was recorded
]
Scope = Literal["memo", "global"]
MANY = 10  # more changes than this of one kind in one write are announced as one ("alice rejected 500 domains")
KEEP = 64  # entries a TinyDB change log keeps (db.json is rewritten whole: kept short; a watcher polls every 0.5 s)

# Changes made by this process are not announced back to it (its own windows already know).
PROCESS_ORIGIN = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"

_VERBS = {
    "reject": "rejected",
    "unreject": "un-rejected",
    "reject_name": "rejected the name",
    "unreject_name": "un-rejected the name",
    "namesake": "changed the namesake",
    "source_set": "saved a new source set for",
    "run": "ran",
}


@dataclass(frozen=True)
class StoreChange:
    """One change: who (``user@host``) did what to which memo."""

    kind: ChangeKind
    what: str  # the domain, the name, or the section
    by: str
    at: str
    scope: Scope = "memo"
    memo: str = ""  # the memo's key ("" for the global lists)
    section: str | None = None
    origin: str = ""  # the process (and store) that made it
    seq: int = 0  # TinyDB: position in the change log

    @property
    def about_rejections(self) -> bool:
        return self.kind in ("reject", "unreject", "reject_name", "unreject_name")

    def describe(self) -> str:
        """'alice@laptop rejected nats.aero (every memo)' — the toast's words (plain text)."""
        where = " (every memo)" if self.scope == "global" else ""
        what = self.what if self.kind not in ("reject_name", "unreject_name", "namesake") else f"'{self.what}'"
        return f"{self.by} {_VERBS.get(self.kind, self.kind)} {what}{where}"

    def to_json(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in _FIELDS}

    @classmethod
    def from_json(cls, data: Any) -> StoreChange | None:
        """A change as stored or sent; None for anything that is not one (never trusted)."""
        if not isinstance(data, dict) or data.get("kind") not in _VERBS:
            return None
        try:
            return cls(
                kind=data["kind"],
                what=str(data.get("what", "")),
                by=str(data.get("by", "someone")),
                at=str(data.get("at", "")),
                scope="global" if data.get("scope") == "global" else "memo",
                memo=str(data.get("memo", "")),
                section=str(data["section"]) if isinstance(data.get("section"), str) else None,
                origin=str(data.get("origin", "")),
                seq=int(data.get("seq") or 0),
            )
        except (TypeError, ValueError):
            return None


_FIELDS = ("kind", "what", "by", "at", "scope", "memo", "section", "origin", "seq")


def summarised(kind: ChangeKind, items: list[str], noun: str) -> list[str]:
    """What to announce for ``items`` changed at once: each, or — past ``MANY`` — one line."""
    return items if len(items) <= MANY else [f"{len(items)} {noun}"]


def append_to_log(tables: dict[str, dict[str, Any]], changes: list[StoreChange]) -> None:
    """Add ``changes`` to a TinyDB database's ``changes`` table (numbered), keeping the last ``KEEP``."""
    if not changes:
        return
    log = tables.setdefault("changes", {})
    seq = max((int(k) for k in log), default=0)
    for change in changes[-KEEP:]:
        seq += 1
        log[str(seq)] = {**change.to_json(), "seq": seq}
    for key in sorted(log, key=int)[:-KEEP]:
        del log[key]


def read_log(tables: dict[str, dict[str, Any]], after: int) -> list[StoreChange]:
    """The logged changes numbered above ``after``, oldest first."""
    found = []
    for key, doc in tables.get("changes", {}).items():
        if int(key) > after:
            change = StoreChange.from_json({**doc, "seq": int(key)}) if isinstance(doc, dict) else None
            if change is not None:
                found.append(change)
    return sorted(found, key=lambda c: c.seq)


def last_seq(tables: dict[str, dict[str, Any]]) -> int:
    return max((int(k) for k in tables.get("changes", {})), default=0)


class LogReader:
    """The change log of one TinyDB file, read by a watcher of its own: a ``stat`` per poll, the
    file parsed only when it was replaced, and never written (damage is the store's to handle)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._identity: tuple[int, int, int] | None = None
        self.seen = last_seq(self._tables() or {})

    def _tables(self) -> dict[str, dict[str, Any]] | None:
        try:
            st = self.path.stat()
            identity = (st.st_ino, st.st_size, st.st_mtime_ns)
            if identity == self._identity:
                return None
            self._identity = identity
            data = orjson.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("changes", {}), dict) else None

    def fresh(self) -> list[StoreChange]:
        """Changes logged since the last call (none when the file did not change)."""
        tables = self._tables()
        if tables is None:
            return []
        found = read_log(tables, self.seen)
        if found:
            self.seen = found[-1].seq
        return found


__all__ = [
    "KEEP",
    "PROCESS_ORIGIN",
    "ChangeKind",
    "LogReader",
    "StoreChange",
    "append_to_log",
    "last_seq",
    "read_log",
]
