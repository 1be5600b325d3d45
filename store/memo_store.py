"""The per-memo store: ``<memo>/.sourcedesk/`` (``db.json`` + ``payloads/``).

Frozen source sets (every version kept), memo-scoped rejections, run records
and small per-section UI state. One process owns a memo's store at a time (an
inter-process lock taken on open); inside that process every operation is
serialised by a lock, so asyncio tasks and worker threads may share one
instance.

Reads never trust what is on disk: a document without its shape, a source set
that does not validate, a payload that is missing or fails its hash check is
moved to ``quarantine/`` with a notice (``take_notices``) and treated as missing
— the section's sources are retrieved again, a run record loses the field —
never a traceback.
"""

from __future__ import annotations

import copy
import secrets as _secrets
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_jsonable_python
from tinydb import Query
from tinydb.table import Table

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.domain.records import RunRecord, SectionState
from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.store import namesakes, rejections
from sourcedesk.store.json_storage import AtomicJSONStorage, Tables, encode
from sourcedesk.store.payloads import (
    LARGE_CHARS,
    PART_KEY,
    REF_KEY,
    MissingPayload,
    PayloadDir,
    externalise,
    payload_ref,
    restore,
    unloaded,
)
from sourcedesk.store.process_lock import ProcessLock

STORE_DIRNAME = ".sourcedesk"
SCHEMA_VERSION = 1
# Run fields that move to a payload file as one JSON document when large.
# The bulk of a run record (what the History tab's rows do not show) moves to one payload
# file, so db.json — rewritten whole on every change — gains only a short row per run.
RUN_BODY_FIELDS = (
    "raw_response",
    "raw_responses",
    "prompt",
    "messages",
    "response",
    "report",
    "previous_note",
    "outcome",
    "started_at",
    "web_search",
    "refresh",
    "domain_filter",
    "model",
    "note_sha256",
    "web_results",
    "annotations",
    "writer",
)
RUN_BODY_KEY = "body"

_Q = Query()


def _degraded(doc: Mapping[str, Any]) -> bool:
    """Whether a stored set is degraded (older versions kept it only inside the set)."""
    if "degraded" in doc:
        return bool(doc["degraded"])
    data = doc.get("data")
    return bool(data.get("degraded")) if isinstance(data, dict) else False


def store_dir(memo_dir: Path) -> Path:
    return Path(memo_dir) / STORE_DIRNAME


READ_WAIT_S = 2.0  # how long a reader waits for another sourcedesk process to let go of the memo


def open_existing(memo_dir: Path) -> MemoStore | None:
    """The memo's store opened for a reader that must never create one (``check-urls``,
    ``export``, ``rejects``): None when the folder has no ``.sourcedesk/db.json``. It is opened
    read-only, without the lock, so it works while the workbench has the memo open (every
    write is an atomic rename: a reader sees the file before or after a write, never half of
    it). Fulfils ``sourcedesk.core.domain.storage.EvidenceOpener``."""
    if not (store_dir(memo_dir) / "db.json").is_file():
        return None
    return MemoStore(memo_dir, read_only=True)


class MemoStore:
    def __init__(
        self,
        memo_dir: Path,
        *,
        wait_s: float = 0.0,
        on_wait: Callable[[str], object] | None = None,
        read_only: bool = False,
    ):
        """Open the memo's store, taking its lock (waiting up to ``wait_s``; ``on_wait`` hears
        who holds it when a wait begins). ``read_only``: no lock, and every write is refused."""
        self.memo_dir = Path(memo_dir)
        self.read_only = read_only
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
        self._mutex = threading.RLock()
        self._queue_lock = threading.Lock()
        self._queue: list[_PendingRun] = []
        self._lock = ProcessLock(
            self.dir / "lock",
            what=f"memo {self.memo_dir}",
            hint="close the other sourcedesk window or command using this memo, then try again",
        )
        if not read_only:
            self._lock.acquire(wait_s, on_wait)
        try:
            self._storage = AtomicJSONStorage(self.dir / "db.json", label="memo store", read_only=read_only)
            self._closed = False
            self._storage.current()  # read now: a damaged file is reported on open
            self._check_schema()
        except BaseException:
            self._lock.release()
            raise
        self.quarantine = self._storage.quarantine
        self.payloads = PayloadDir(self.dir / "payloads", self.quarantine)
        # A store dropped without close() still lets go of the memo when it is collected.
        self._finalizer = weakref.finalize(self, self._lock.release)

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            try:
                self._storage.forget()
            finally:
                self._finalizer()  # releases the lock, once

    def __enter__(self) -> MemoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoStore({str(self.memo_dir)!r}, open={not self._closed})"

    def _current(self) -> dict[str, dict[str, Any]]:
        """The database as it is now (kept in memory; never edited in place)."""
        if self._closed:
            raise RuntimeError("the memo store is closed")
        return self._storage.current()

    @contextmanager
    def _reading(self) -> Iterator[Tables]:
        """The database to read from. While another thread of this process is writing, that is
        the state before its write (the last one on disk): readers never wait for a write.
        Nothing outside this process can have changed the file — it holds the memo's lock."""
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

    def _editable(self) -> dict[str, dict[str, Any]]:
        """A copy of the database to change and hand to one ``write``: one atomic step."""
        if self._closed:
            raise RuntimeError("the memo store is closed")
        return self._storage.read() or {}

    def _table(self, name: str) -> Table:
        """A fresh TinyDB table view: never one that remembers ids from before a direct write."""
        if self._closed:
            raise RuntimeError("the memo store is closed")
        return Table(self._storage, name, cache_size=0)

    def _check_schema(self) -> None:
        meta = self._table("meta")
        doc = meta.get(_Q.key == "schema")
        if doc is None:
            if not self.read_only:  # a reader never writes: a new store gets its schema from its owner
                meta.insert({"key": "schema", "version": SCHEMA_VERSION})
        elif int(doc.get("version", 0)) > SCHEMA_VERSION:
            raise UserError(
                f"the memo store {self.dir} was written by a newer sourcedesk (schema {doc.get('version')})",
                hint="upgrade sourcedesk to open this memo",
            )

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
        if self.read_only:  # a reader treats it as missing and leaves the file to its owner
            return
        kept = self.quarantine.keep_document(f"{table}-{name}", dict(doc), reason)
        with self._mutex:
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
        with self._mutex:
            section = source_set.section
            version = max((d["version"] for d in self._set_docs(section)), default=0) + 1
            stored = source_set.model_copy(deep=True)
            stored.version = version
            stored.id = f"{section}@v{version}-{source_set.fingerprint[:8]}"
            if not stored.memo:
                stored.memo = self.memo_dir.name
            # Long texts (pages) are payloads of their own, stored once however many versions share them.
            data = externalise(stored.model_dump(mode="json"), self.payloads.put)
            encoded = encode(data)
            tables = self._editable()
            sets = tables.setdefault("source_sets", {})
            sets[str(_next_id(sets))] = {
                "id": stored.id,
                "section": section,
                "version": version,
                "fingerprint": stored.fingerprint,
                "degraded": stored.degraded,
                "created_at": data.get("created_at"),
                # The set itself is one payload file: db.json keeps only this row.
                "data": payload_ref(self.payloads.put(encoded), "json", len(encoded)),
            }
            self._storage.write(tables)
            return stored

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

    # -- rejections (memo scope) ------------------------------------------------------------

    def rejects(self) -> list[str]:
        with self._reading() as tables:
            docs = list(tables.get("rejects", {}).values())
        for doc in docs:
            if not isinstance(doc.get("domain"), str):
                self._set_aside("rejects", doc, "no domain")
        return sorted(doc["domain"] for doc in docs if isinstance(doc.get("domain"), str))

    def reject_entries(self) -> list[dict[str, Any]]:
        """Rejections with their notes and dates (``domain``, ``note``, ``added_at``)."""
        self.rejects()  # sets aside any entry without a domain first
        with self._reading() as tables:
            return rejections.list_entries(tables.get("rejects", {}).values())

    def add_reject(self, domain: str, note: str = "") -> bool:
        """False if already rejected; ``UserError`` for a public suffix or a non-domain."""
        with self._mutex:
            return rejections.add_domain(self._table("rejects"), domain, note)

    def add_rejects(self, domains: Iterable[str], note: str = "") -> int:
        with self._mutex:
            return rejections.add_domains(self._table("rejects"), domains, note)

    def remove_reject(self, domain: str) -> bool:
        with self._mutex:
            return rejections.remove_domain(self._table("rejects"), domain)

    # -- rejected names (memo scope) --------------------------------------------------------

    def reject_names(self) -> list[str]:
        """Rejected names as the analyst typed them ("Kestra Medical")."""
        with self._reading() as tables:
            return rejections.list_names(tables.get("reject_names", {}).values())

    def reject_name_entries(self) -> list[dict[str, Any]]:
        with self._reading() as tables:
            return rejections.list_name_entries(tables.get("reject_names", {}).values())

    def add_reject_name(self, name: str, note: str = "") -> bool:
        """False if the phrase is already rejected; ``UserError`` for a phrase with no words."""
        with self._mutex:
            return rejections.add_name(self._table("reject_names"), name, note)

    def remove_reject_name(self, name: str) -> bool:
        with self._mutex:
            return rejections.remove_name(self._table("reject_names"), name)

    # -- learned namesakes -----------------------------------------------------------------

    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]:
        with self._reading() as tables:
            return namesakes.learned(tables.get("namesakes", {}).values(), include_removed=include_removed)

    def add_learned_namesakes(self, items: Sequence[LearnedNamesake]) -> int:
        with self._mutex:
            return namesakes.add(self._table("namesakes"), items)

    def remove_learned_namesake(self, name: str) -> bool:
        with self._mutex:
            return namesakes.remove(self._table("namesakes"), name)

    def restore_learned_namesake(self, name: str) -> bool:
        with self._mutex:
            return namesakes.restore(self._table("namesakes"), name)

    # -- runs ----------------------------------------------------------------------------

    def save_run(
        self,
        record: RunRecord | Mapping[str, Any],
        *,
        section_state: Mapping[str, Any] | None = None,
        replace: bool = False,
    ) -> str:
        """Store a run record (plus ``id`` and ``created_at``); returns the id.

        With ``section_state`` the changes are merged into that section's state in the
        same write, so a crash can never leave one without the other. ``replace`` puts the
        record in the place of the stored one with the same id (a run that changed its
        outcome after it was recorded). Large ``raw_response``/``prompt``/… values (and any
        long string) go to payload files.

        Group commit: records saved from several threads at once (sections finishing
        together) are written in one step — one payload file for their bodies and one
        rewrite of db.json — instead of one each. Each call still returns only once its own
        record is on disk.
        """
        run = record if isinstance(record, RunRecord) else RunRecord.model_validate(dict(record))
        mine = _PendingRun(run, dict(section_state) if section_state is not None else None, replace)
        with self._queue_lock:
            self._queue.append(mine)
        with self._mutex:
            if not mine.done:  # nobody took it along in their write: write everything waiting
                with self._queue_lock:
                    batch, self._queue = self._queue, []
                try:
                    self._write_runs(batch)
                except BaseException as exc:
                    for item in batch:
                        item.error, item.done = exc, True
                    raise
        if mine.error is not None:
            raise mine.error
        return mine.run_id

    def _write_runs(self, batch: list[_PendingRun]) -> None:
        tables = self._editable()
        runs = tables.setdefault("runs", {})
        taken = {doc.get("id"): doc_id for doc_id, doc in runs.items()}
        rows: list[tuple[str, _PendingRun, dict[str, Any]]] = []
        bodies: dict[str, dict[str, Any]] = {}
        body_bytes: list[bytes] = []  # each body encoded once: the batch's payload is built from them
        for item in batch:
            run = item.run
            run_id = run.id
            doc_id = taken.get(run_id) if item.replace and run_id else None
            while doc_id is None and (not run_id or run_id in taken):
                now = clock.now()
                run_id = f"run-{now:%Y%m%dT%H%M%S}-{_secrets.token_hex(3)}"
            doc_id = doc_id or str(max([_next_id(runs), *(int(k) + 1 for k, _i, _d in rows)]))
            taken[run_id] = doc_id
            item.run_id = run_id
            data = run.model_dump(mode="json", exclude_defaults=True)
            data["id"] = run_id
            data.setdefault("created_at", clock.now().isoformat())
            report = run.the_report
            if report is not None:
                data["counts"] = report.counts()
            outcome = data.get("outcome")
            if isinstance(outcome, dict) and "report" in data:
                outcome.pop("report", None)  # the run keeps it once
            body = {k: data.pop(k) for k in RUN_BODY_FIELDS if k in data}
            encoded_body = encode(body)
            if len(encoded_body) > LARGE_CHARS:
                bodies[run_id] = body
                body_bytes.append(encoded_body)
            else:
                data.update(body)
            rows.append((doc_id, item, data))
        ref: dict[str, Any] | None = None
        if bodies:  # the bodies of the whole batch: one payload file, {"<run id>": body, ...}
            encoded = (
                b"{" + b",".join(encode(rid) + b":" + raw for rid, raw in zip(bodies, body_bytes, strict=True)) + b"}"
            )
            ref = payload_ref(self.payloads.put(encoded), "json", len(encoded))
        states = tables.setdefault("section_state", {})
        for doc_id, item, data in rows:
            if item.run_id in bodies and ref is not None:
                data[RUN_BODY_KEY] = {**ref, PART_KEY: item.run_id}
            runs[doc_id] = externalise(data, self.payloads.put)
            if item.state is not None:
                section = item.run.section
                key, doc = _state_doc(states, section)
                state = dict(doc.get("state") or {}) if doc else {}
                changes = to_jsonable_python(item.state)
                if item.run.id and changes.get("last_run") == item.run.id:
                    changes["last_run"] = item.run_id  # the id the record was stored under
                state.update(changes)
                states[key] = {"section": section, "state": state}
        self._storage.write(tables)
        for item in batch:
            item.done = True

    def runs(
        self, section: str | None = None, *, with_payloads: bool = True, limit: int | None = None
    ) -> list[RunRecord]:
        """Run records, newest first (at most ``limit``). ``with_payloads=False`` leaves the values
        kept in payload files unread (None): a cheap listing that still has status, counts, cost
        and timings."""
        with self._reading() as tables:
            table = tables.get("runs", {})
            docs = [
                doc
                for _doc_id, doc in sorted(table.items(), key=lambda kv: int(kv[0]), reverse=True)
                if section is None or doc.get("section") == section
            ]
        loaded = (self._load_run(doc, with_payloads) for doc in docs)
        return [run for run in loaded if run is not None][:limit]

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._reading() as tables:
            doc = next((d for d in tables.get("runs", {}).values() if d.get("id") == run_id), None)
        return self._load_run(doc, True) if doc is not None else None

    def _load_run(self, doc: dict[str, Any], with_payloads: bool) -> RunRecord | None:
        """The record; a payload that is missing or damaged leaves its fields out (with a
        notice); a document that is not a run record is set aside (None)."""
        try:
            if not with_payloads:
                return RunRecord.model_validate(unloaded(doc))
            gone: list[str] = []

            def missing(ref: dict[str, Any], exc: Exception) -> None:
                gone.append(f"{str(ref.get(REF_KEY, ''))[:12]}… ({exc})")
                return None

            data = restore(doc, self.payloads.get, missing=missing)  # older versions kept each large field apart
            body = data.pop(RUN_BODY_KEY, None)
            if isinstance(body, dict):
                data.update(body)
            run = RunRecord.model_validate(data)
        except (ValidationError, ValueError, TypeError, AttributeError) as exc:
            self._set_aside("runs", doc, f"not a run record: {str(exc).splitlines()[0]}")
            return None
        if gone:
            section = doc.get("section") if isinstance(doc.get("section"), str) else None
            self.quarantine.notice(
                f"run {doc.get('id')}: {len(gone)} stored part(s) could not be read and are shown as "
                f"missing: {'; '.join(gone)}",
                section,
            )
        return run

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
        with self._mutex:
            value = state.to_json() if isinstance(state, SectionState) else to_jsonable_python(dict(state))
            self._put_state(section, value)

    def update_section_state(self, section: str, changes: Mapping[str, Any]) -> SectionState:
        """Merge ``changes`` into the section's state; returns the new state."""
        with self._mutex:
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


@dataclass
class _PendingRun:
    """A run record waiting for the next write (its own, or another thread's)."""

    run: RunRecord
    state: dict[str, Any] | None
    replace: bool
    run_id: str = ""
    done: bool = False
    error: BaseException | None = None


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


def _next_id(table: Mapping[str, Any]) -> int:
    """TinyDB's own rule: one past the largest document id."""
    return max((int(k) for k in table), default=0) + 1


def _state_doc(states: Mapping[str, Any], section: str) -> tuple[str, dict[str, Any] | None]:
    """The section's state document and its id (a new id when it has none)."""
    for key, doc in states.items():
        if isinstance(doc, dict) and doc.get("section") == section:
            return key, doc
    return str(_next_id(states)), None
