"""The per-memo store on TinyDB: ``<memo>/.sourcedesk/`` (``db.json`` + ``payloads/``).

Frozen source sets (every version kept), memo-scoped rejections, run records and small
per-section UI state. The store is not owned by one process any more: a window, a command
and a colleague's window may all have the memo open. Reading needs no lock (every write
replaces ``db.json`` whole, atomically, and a reader notices the new file); each write is a
transaction taken under ``db.lock`` (held for milliseconds: the file is read again if
another process replaced it, changed, and replaced once). Whoever runs a section holds that
section's lock (``hold_section``, ``sourcedesk.store.section_locks``), so two people can work
on different sections of one memo at once. Inside a process, asyncio tasks and worker
threads may share one instance.

Reads never trust what is on disk: a document without its shape, a source set that does
not validate, a payload that is missing or fails its hash check is moved to
``quarantine/`` with a notice (``take_notices``) and treated as missing — the section's
sources are retrieved again, a run record loses the field — never a traceback.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import ValidationError
from pydantic_core import to_jsonable_python
from tinydb import Query
from tinydb.table import Table

from sourcedesk.core.domain.errors import StoreLocked, UserError
from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.domain.records import SectionState
from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.store import namesakes
from sourcedesk.store.changes import PROCESS_ORIGIN, ChangeKind, LogReader, StoreChange, append_to_log
from sourcedesk.store.holders import LockHolder, OnWait, now_iso, whoami
from sourcedesk.store.json_storage import AtomicJSONStorage, Tables, encode
from sourcedesk.store.payloads import (
    MissingPayload,
    PayloadDir,
    externalise,
    payload_ref,
    restore,
)
from sourcedesk.store.process_lock import lock_problem
from sourcedesk.store.section_locks import FileSectionLocks, SectionHold
from sourcedesk.store.tiny_lists import TinyRejectLists
from sourcedesk.store.tiny_runs import TinyRuns, _next_id, _PendingRun, _state_doc

STORE_DIRNAME = ".sourcedesk"
SCHEMA_VERSION = 1
WRITE_WAIT_S = 10.0  # a write holds db.lock for milliseconds; this long means something is stuck

_Q = Query()


def _degraded(doc: Mapping[str, Any]) -> bool:
    """Whether a stored set is degraded (older versions kept it only inside the set)."""
    if "degraded" in doc:
        return bool(doc["degraded"])
    data = doc.get("data")
    return bool(data.get("degraded")) if isinstance(data, dict) else False


def store_dir(memo_dir: Path) -> Path:
    return Path(memo_dir) / STORE_DIRNAME


def open_existing(memo_dir: Path) -> MemoStore | None:
    """The memo's store opened for a reader that must never create one (``check-urls``):
    None when the folder has no ``.sourcedesk/db.json``. Never waits: reading needs no lock.
    Fulfils ``sourcedesk.core.domain.storage.EvidenceOpener``."""
    if not (store_dir(memo_dir) / "db.json").is_file():
        return None
    return MemoStore(memo_dir)


class MemoStore(TinyRuns, TinyRejectLists):
    """One memo's TinyDB store (the default backend: one analyst, no server)."""

    backend = "tinydb"

    def __init__(self, memo_dir: Path, *, origin: str = PROCESS_ORIGIN):
        self.memo_dir = Path(memo_dir)
        if not self.memo_dir.is_dir():
            raise UserError(
                f"memo directory {self.memo_dir} does not exist",
                hint="run `sourcedesk init DIR --subject NAME --url URL` to create a memo",
            )
        self.dir = store_dir(self.memo_dir)
        try:
            self.dir.mkdir(exist_ok=True)
            ignore = self.dir / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# sourcedesk's store: local state, not for version control\n*\n")
        except OSError as exc:
            raise UserError(
                f"cannot create the memo store in {self.dir}: {exc.strerror or exc}",
                hint="check that the memo folder is writable",
            ) from None
        self.memo_key = self.memo_dir.name
        self.origin = origin
        self._mutex = threading.RLock()
        self._queue_lock = threading.Lock()
        self._queue: list[_PendingRun] = []
        self._changes: list[StoreChange] = []  # noted in the transaction under way
        self._holds: list[SectionHold] = []
        self._db_lock = FileLock(str(self.dir / "db.lock"), thread_local=False)
        self.section_locks = FileSectionLocks(self.dir, self.memo_key)
        self._storage = AtomicJSONStorage(self.dir / "db.json", label="memo store")
        self._closed = False
        self._storage.current()  # read now: a damaged file is reported on open
        self._check_schema()
        self.quarantine = self._storage.quarantine
        self.payloads = PayloadDir(self.dir / "payloads", self.quarantine)

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Let go of the sections this store holds and forget the in-memory copy."""
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            for hold in self._holds:
                hold.release()
            self._holds.clear()
            self._storage.forget()

    def __enter__(self) -> MemoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoStore({str(self.memo_dir)!r}, open={not self._closed})"

    def describe_location(self) -> str:
        return str(self.dir)

    def _current(self) -> dict[str, dict[str, Any]]:
        """The database as it is now (kept in memory; never edited in place)."""
        if self._closed:
            raise RuntimeError("the memo store is closed")
        return self._storage.current()

    @contextmanager
    def _reading(self) -> Iterator[Tables]:
        """The database to read from. While another thread of this process is writing, that is
        the state before its write (the last one on disk): readers never wait for a write."""
        if self._closed:
            raise RuntimeError("the memo store is closed")
        if self._mutex.acquire(blocking=False):
            try:
                yield self._current()
            finally:
                self._mutex.release()
            return
        committed = self._storage.committed()
        if committed is None:
            with self._mutex:
                yield self._current()
        else:
            yield committed

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One transaction: ``db.lock`` held, the file read again if another process replaced
        it, every write inside kept in memory and put on disk in one atomic replace at the end
        (with the changes it announces), or not at all when the block raises."""
        with self._mutex:
            if self._closed:
                raise RuntimeError("the memo store is closed")
            if self._storage.in_transaction:  # nested: the outer block commits
                yield
                return
            try:
                self._db_lock.acquire(timeout=WRITE_WAIT_S)
            except Timeout:
                raise StoreLocked(
                    f"the memo store {self.dir} has been busy for {WRITE_WAIT_S:g} s (another process is writing it)",
                    hint="try again; if it persists, look for a stuck sourcedesk process",
                ) from None
            except OSError as exc:  # a directory or a loop where the lock file belongs, no access
                lock_path = self.dir / "db.lock"
                raise UserError(
                    f"cannot lock the memo store for writing: {lock_path} {lock_problem(exc)}",
                    hint=f"remove {lock_path} (sourcedesk recreates it) or check the folder's permissions",
                ) from None
            self._storage.begin()
            try:
                yield
                if self._changes:
                    tables = self._storage.read() or {}
                    append_to_log(tables, self._changes)
                    self._storage.write(tables)
                self._storage.commit()
            except BaseException:
                self._storage.rollback()
                raise
            finally:
                self._changes.clear()
                self._db_lock.release(force=True)

    def _note_change(self, kind: ChangeKind, what: str, section: str | None = None) -> None:
        """Announce a change with the transaction under way (written only if it commits)."""
        self._changes.append(
            StoreChange(
                kind=kind,
                what=what,
                by=whoami(),
                at=now_iso(),
                scope="memo",
                memo=self.memo_key,
                section=section,
                origin=self.origin,
            )
        )

    def _editable(self) -> dict[str, dict[str, Any]]:
        """A copy of the database to change and hand to one ``write`` (inside ``_writing``)."""
        if self._closed:
            raise RuntimeError("the memo store is closed")
        return self._storage.read() or {}

    def _table(self, name: str) -> Table:
        """A fresh TinyDB table view: never one that remembers ids from before a direct write."""
        if self._closed:
            raise RuntimeError("the memo store is closed")
        return Table(self._storage, name, cache_size=0)

    def _check_schema(self) -> None:
        doc = next((d for d in self._current().get("meta", {}).values() if d.get("key") == "schema"), None)
        if doc is None:
            with self._writing():
                self._table("meta").insert({"key": "schema", "version": SCHEMA_VERSION})
        elif int(doc.get("version", 0)) > SCHEMA_VERSION:
            raise UserError(
                f"the memo store {self.dir} was written by a newer sourcedesk (schema {doc.get('version')}; "
                f"this one knows up to {SCHEMA_VERSION})",
                hint="upgrade sourcedesk to open this memo",
            )

    # -- sections held, and changes made by others ------------------------------------------

    def hold_section(
        self, section: str, *, purpose: str = "running it", wait_s: float = 0.0, on_wait: OnWait | None = None
    ) -> SectionHold:
        """Hold ``section`` until the hold is released (or this store closes); waits up to
        ``wait_s``, then ``SectionLocked`` names who has it. Reading never needs this."""
        hold = self.section_locks.hold(section, purpose=purpose, wait_s=wait_s, on_wait=on_wait)
        with self._mutex:
            self._holds = [h for h in self._holds if h.held] + [hold]
        return hold

    def section_holders(self) -> dict[str, LockHolder]:
        """Who holds which section of this memo now."""
        return self.section_locks.holders()

    def watch_changes(
        self, stop: threading.Event, *, global_store: Any = None, poll_s: float = 0.5
    ) -> Iterator[StoreChange]:
        """Changes other processes make to this memo (and to ``global_store``'s lists), as they
        come, until ``stop`` is set: for a worker thread. Polls the files' identity (a stat)
        every ``poll_s``; what this store itself wrote is not announced back."""
        paths = [self._storage.path] + (
            [global_store.path] if isinstance(getattr(global_store, "path", None), Path) else []
        )
        readers = [LogReader(path) for path in paths]  # their own reads: the store's copy is left alone
        while not stop.wait(poll_s):
            for reader in readers:
                for change in reader.fresh():
                    if change.origin != self.origin:
                        yield change

    # -- damaged data -----------------------------------------------------------------------

    def take_notices(self, section: str | None = None) -> list[str]:
        """What was found damaged and moved aside (about ``section``, or the store as a
        whole) since the last call; each notice is handed out once."""
        return self.quarantine.take(section)

    def _set_aside(self, table: str, doc: Mapping[str, Any], reason: str) -> None:
        """Quarantine one document of ``table`` (as found) and take it out of the database."""
        section = doc.get("section") if isinstance(doc.get("section"), str) else None
        what = {"source_sets": "frozen source set", "runs": "run record", "section_state": "section state"}.get(
            table, f"{table} entry"
        )
        name = doc.get("id") if isinstance(doc.get("id"), str) else table
        kept = self.quarantine.keep_document(f"{table}-{name}", dict(doc), reason)
        with self._writing():
            tables = self._editable()
            docs = tables.get(table, {})
            gone = [key for key, d in docs.items() if d == doc]
            for key in gone:
                del docs[key]
            if gone:
                self._storage.write(tables)
        whose = f"section {section}: " if section else ""
        self.quarantine.notice(
            f"{whose}a damaged {what} in the memo store ({reason}) was moved aside to "
            f"{self.quarantine.shown(kept)} and treated as missing",
            section,
        )

    # -- payloads ---------------------------------------------------------------------------

    def put_payload(self, data: bytes | str) -> str:
        """Store bytes (or UTF-8 text) once; returns the content key."""
        return self.payloads.put(data)

    def get_payload(self, key: str) -> bytes:
        return self.payloads.get(key)

    # -- source sets ------------------------------------------------------------------------

    def save_source_set(self, source_set: SourceSet) -> SourceSet:
        """Persist a new version for the set's section; returns the stored copy (id and version set)."""
        stored = source_set.model_copy(deep=True)
        if not stored.memo:
            stored.memo = self.memo_dir.name
        with self._writing():
            section = source_set.section
            version = max((d["version"] for d in self._set_docs(section)), default=0) + 1
            stored.version = version
            stored.id = f"{section}@v{version}-{source_set.fingerprint[:8]}"
            self._insert_set(stored)
            self._note_change("source_set", section, section)
            return stored

    def _insert_set(self, stored: SourceSet, copied_from: str | None = None) -> None:
        # Long texts (pages) are payloads of their own, stored once however many versions share them.
        data = externalise(stored.model_dump(mode="json"), self.payloads.put)
        encoded = encode(data)
        tables = self._editable()
        sets = tables.setdefault("source_sets", {})
        row: dict[str, Any] = {
            "id": stored.id,
            "section": stored.section,
            "version": stored.version,
            "fingerprint": stored.fingerprint,
            "degraded": stored.degraded,
            "created_at": data.get("created_at"),
            # The set itself is one payload file: db.json keeps only this row.
            "data": payload_ref(self.payloads.put(encoded), "json", len(encoded)),
        }
        if copied_from:
            row["copied_from"] = copied_from
        sets[str(_next_id(sets))] = row
        self._storage.write(tables)

    def sections(self) -> list[str]:
        """Every section with a stored set, a run or a state (``store copy`` walks them)."""
        with self._reading() as tables:
            found = {
                d.get("section")
                for name in ("source_sets", "runs", "section_state")
                for d in tables.get(name, {}).values()
                if isinstance(d, dict)
            }
        return sorted(s for s in found if isinstance(s, str))

    def _set_docs(self, section: str | None = None, tables: Tables | None = None) -> list[dict[str, Any]]:
        """Stored set documents (not yet read from their payloads), oldest version first; one
        without its shape is set aside."""
        tables = self._current() if tables is None else tables
        docs = [d for d in tables.get("source_sets", {}).values() if section is None or d.get("section") == section]
        good = [d for d in docs if _set_doc_shape(d)]
        for doc in docs:
            if not _set_doc_shape(doc):
                self._set_aside("source_sets", doc, "missing id, section, version or data")
        return sorted(good, key=lambda d: d["version"])

    def _load_set(self, doc: dict[str, Any]) -> SourceSet | None:
        """The set, or None after setting it aside (a payload missing or damaged, data that no
        longer validates): a set that cannot be read whole is not used at all."""
        try:
            return SourceSet.model_validate(restore(doc["data"], self.payloads.get))
        except MissingPayload as exc:
            reason = exc.message
        except (ValidationError, ValueError, TypeError) as exc:
            reason = f"its data does not validate: {str(exc).splitlines()[0]}"
        self._set_aside("source_sets", doc, reason)
        return None

    def get_source_set(self, set_id: str) -> SourceSet | None:
        with self._reading() as tables:
            doc = next((d for d in self._set_docs(None, tables) if d.get("id") == set_id), None)
        return self._load_set(doc) if doc else None

    def latest_source_set(
        self, section: str, *, fingerprint: str | None = None, degraded: bool | None = None
    ) -> SourceSet | None:
        """The newest version for the section; ``fingerprint`` and ``degraded`` narrow it
        to versions made for that request / of that kind (only that one version is read)."""
        with self._reading() as tables:
            docs = self._set_docs(section, tables)
        for doc in reversed(docs):
            if fingerprint is not None and doc.get("fingerprint") != fingerprint:
                continue
            if degraded is not None and _degraded(doc) != degraded:
                continue
            loaded = self._load_set(doc)
            if loaded is not None:  # a damaged newest version: the one before it is the newest
                return loaded
        return None

    def source_set_versions(self, section: str) -> list[SourceSet]:
        """Every stored version for the section, oldest (v1) first."""
        with self._reading() as tables:
            docs = self._set_docs(section, tables)
        return [s for s in (self._load_set(d) for d in docs) if s is not None]

    # -- rejections (memo scope): the lists are ``TinyRejectLists``'s ------------------------

    def rejects(self) -> list[str]:
        with self._reading() as tables:
            docs = list(tables.get("rejects", {}).values())
        for doc in docs:
            if not isinstance(doc.get("domain"), str):
                self._set_aside("rejects", doc, "no domain")
        return super().rejects()

    def reject_entries(self) -> list[dict[str, Any]]:
        """Rejections with their notes, dates and who made them."""
        self.rejects()  # sets aside any entry without a domain first
        return super().reject_entries()

    # -- learned namesakes -----------------------------------------------------------------

    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]:
        with self._reading() as tables:
            return namesakes.learned(tables.get("namesakes", {}).values(), include_removed=include_removed)

    def add_learned_namesakes(self, items: Sequence[LearnedNamesake]) -> int:
        with self._writing():
            added = namesakes.add(self._table("namesakes"), items)
            if added:
                self._note_change("namesake", ", ".join(i.name for i in items[:3]))
            return added

    def remove_learned_namesake(self, name: str) -> bool:
        with self._writing():
            removed = namesakes.remove(self._table("namesakes"), name)
            if removed:
                self._note_change("namesake", name)
            return removed

    def restore_learned_namesake(self, name: str) -> bool:
        with self._writing():
            restored = namesakes.restore(self._table("namesakes"), name)
            if restored:
                self._note_change("namesake", name)
            return restored

    # -- per-section state ------------------------------------------------------------------

    def section_state(self, section: str) -> SectionState:
        with self._reading() as tables:
            _key, doc = _state_doc(tables.get("section_state", {}), section)
        try:
            return SectionState.model_validate(copy.deepcopy(doc.get("state") or {}) if doc else {})
        except ValidationError as exc:
            assert doc is not None
            self._set_aside("section_state", doc, f"its state does not validate: {str(exc).splitlines()[0]}")
            return SectionState()

    def set_section_state(self, section: str, state: SectionState | Mapping[str, Any]) -> None:
        """Replace the section's state."""
        with self._writing():
            value = state.to_json() if isinstance(state, SectionState) else to_jsonable_python(dict(state))
            self._put_state(section, value)

    def update_section_state(self, section: str, changes: Mapping[str, Any]) -> SectionState:
        """Merge ``changes`` into the section's state; returns the new state."""
        with self._writing():
            _key, doc = _state_doc(self._current().get("section_state", {}), section)
            state = copy.deepcopy(doc.get("state") or {}) if doc else {}
            state.update(to_jsonable_python(dict(changes)))
            self._put_state(section, state)
            return SectionState.model_validate(state)

    def _put_state(self, section: str, state: dict[str, Any]) -> None:
        tables = self._editable()
        states = tables.setdefault("section_state", {})
        key, _doc = _state_doc(states, section)
        states[key] = {"section": section, "state": state}
        self._storage.write(tables)


def _set_doc_shape(doc: Mapping[str, Any]) -> bool:
    """A stored set's row has what every read relies on (its data may still be damaged)."""
    version = doc.get("version")
    return (
        isinstance(doc.get("id"), str)
        and isinstance(doc.get("section"), str)
        and isinstance(version, int)
        and not isinstance(version, bool)
        and isinstance(doc.get("data"), dict)
    )
