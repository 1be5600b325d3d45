"""The per-memo store: ``<memo>/.sourcedesk/`` (``db.json`` + ``payloads/``).

Frozen source sets (every version kept), memo-scoped rejections, run records
and small per-section UI state. One process owns a memo's store at a time (an
inter-process lock taken on open); inside that process every operation is
serialised by a lock, so asyncio tasks and worker threads may share one
instance.

Reads never trust what is on disk: a document that does not have its shape, a
source set that does not validate, a payload that is missing or fails its hash
check is moved to ``quarantine/`` with a notice (``take_notices``) and treated as
missing — the section's sources are retrieved again, a run record loses the
field — never a traceback.
"""

from __future__ import annotations

import copy
import secrets as _secrets
import threading
import weakref
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_jsonable_python
from tinydb import Query, TinyDB
from tinydb.table import Document

from core.errors import UserError
from core.models import SourceSet
from store import rejections
from store.json_storage import AtomicJSONStorage
from store.payloads import REF_KEY, MissingPayload, PayloadDir, externalise, restore
from store.process_lock import ProcessLock

STORE_DIRNAME = ".sourcedesk"
SCHEMA_VERSION = 1
# Run fields that move to a payload file as one JSON document when large.
RUN_PAYLOAD_FIELDS = ("raw_response", "raw_responses", "prompt", "messages", "response", "report", "previous_note")

_Q = Query()


def store_dir(memo_dir: Path) -> Path:
    return Path(memo_dir) / STORE_DIRNAME


class MemoStore:
    def __init__(self, memo_dir: Path, *, wait_s: float = 0.0):
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
        self._mutex = threading.RLock()
        self._lock = ProcessLock(
            self.dir / "lock",
            what=f"memo {self.memo_dir}",
            hint="close the other sourcedesk window or command using this memo, then try again",
        )
        self._lock.acquire(wait_s)
        try:
            self._db = TinyDB(self.dir / "db.json", storage=AtomicJSONStorage, label="memo store")
            self._db.table("meta", cache_size=0).all()  # read now: a damaged file is reported on open
            self._check_schema()
        except BaseException:
            self._lock.release()
            raise
        self.quarantine = self._db.storage.quarantine
        self.payloads = PayloadDir(self.dir / "payloads", self.quarantine)
        self._closed = False
        # A store dropped without close() still lets go of the memo when it is collected.
        self._finalizer = weakref.finalize(self, self._lock.release)

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            try:
                self._db.close()
            finally:
                self._finalizer()  # releases the lock, once

    def __enter__(self) -> MemoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoStore({str(self.memo_dir)!r}, open={not self._closed})"

    def _table(self, name: str):
        if self._closed:
            raise RuntimeError("the memo store is closed")
        return self._db.table(name, cache_size=0)

    def _check_schema(self) -> None:
        meta = self._db.table("meta", cache_size=0)
        doc = meta.get(_Q.key == "schema")
        if doc is None:
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

    def _set_aside(self, table: str, doc: Document | dict[str, Any], reason: str) -> None:
        """Quarantine one document of ``table`` and remove it from the database."""
        section = doc.get("section") if isinstance(doc.get("section"), str) else None
        doc_id = getattr(doc, "doc_id", None)
        what = {"source_sets": "frozen source set", "runs": "run record", "section_state": "section state"}.get(
            table, f"{table} entry"
        )
        name = doc.get("id") if isinstance(doc.get("id"), str) else f"{table}-{doc_id}"
        kept = self.quarantine.keep_document(f"{table}-{name}", dict(doc), reason)
        if doc_id is not None:
            self._table(table).remove(doc_ids=[doc_id])
        whose = f"section {section}: " if section else ""
        self.quarantine.notice(
            f"{whose}a damaged {what} in the memo store ({reason}) was moved aside to "
            f"{self.quarantine.shown(kept)} and treated as missing",
            section,
        )

    def _set_docs(self, cond: Any = None) -> list[Document]:
        """Source-set documents (matching ``cond``) that have their shape; the others are set aside."""
        table = self._table("source_sets")
        docs = table.search(cond) if cond is not None else table.all()
        good = []
        for doc in docs:
            if (
                isinstance(doc.get("id"), str)
                and isinstance(doc.get("section"), str)
                and isinstance(doc.get("version"), int)
                and not isinstance(doc.get("version"), bool)
                and isinstance(doc.get("data"), dict)
            ):
                good.append(doc)
            else:
                self._set_aside("source_sets", doc, "missing id, section, version or data")
        return good

    def _payload_gone(self, where: list[str]) -> Any:
        def missing(ref: dict[str, Any], exc: Exception) -> None:
            where.append(f"{ref.get(REF_KEY, '')!s:.12}… ({exc})")
            return None

        return missing

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
            table = self._table("source_sets")
            section = source_set.section
            versions = [d["version"] for d in self._set_docs(_Q.section == section)]
            version = max(versions, default=0) + 1
            stored = source_set.model_copy(deep=True)
            stored.version = version
            stored.id = f"{section}@v{version}-{source_set.fingerprint[:8]}"
            if not stored.memo:
                stored.memo = self.memo_dir.name
            data = externalise(stored.model_dump(mode="json"), self.payloads.put)
            table.insert(
                {
                    "id": stored.id,
                    "section": section,
                    "version": version,
                    "fingerprint": stored.fingerprint,
                    "created_at": data.get("created_at"),
                    "data": data,
                }
            )
            return stored

    def _load_set(self, doc: Document) -> SourceSet | None:
        """The set, or None after quarantining it (a payload missing or damaged, or data
        that no longer validates): a set that cannot be read whole is not used at all."""
        try:
            return SourceSet.model_validate(restore(doc["data"], self.payloads.get))
        except MissingPayload as exc:
            reason = exc.message
        except (ValidationError, ValueError, TypeError) as exc:
            reason = f"its data does not validate: {str(exc).splitlines()[0]}"
        self._set_aside("source_sets", doc, reason)
        return None

    def get_source_set(self, set_id: str) -> SourceSet | None:
        with self._mutex:
            docs = self._set_docs(_Q.id == set_id)
            return self._load_set(docs[0]) if docs else None

    def latest_source_set(self, section: str) -> SourceSet | None:
        with self._mutex:
            for doc in sorted(self._set_docs(_Q.section == section), key=lambda d: d["version"], reverse=True):
                loaded = self._load_set(doc)
                if loaded is not None:
                    return loaded
            return None

    def source_set_versions(self, section: str) -> list[SourceSet]:
        """Every stored version for the section, oldest (v1) first."""
        with self._mutex:
            docs = sorted(self._set_docs(_Q.section == section), key=lambda d: d["version"])
            return [s for s in (self._load_set(d) for d in docs) if s is not None]

    # -- rejections (memo scope) ------------------------------------------------------------

    def _rejects_table(self):
        """The rejections table, any entry without a domain set aside first."""
        table = self._table("rejects")
        for doc in table.all():
            if not isinstance(doc.get("domain"), str):
                self._set_aside("rejects", doc, "no domain")
        return table

    def rejects(self) -> list[str]:
        with self._mutex:
            return rejections.list_domains(self._rejects_table())

    def reject_entries(self) -> list[dict[str, Any]]:
        """Rejections with their notes and dates (``domain``, ``note``, ``added_at``)."""
        with self._mutex:
            return rejections.list_entries(self._rejects_table())

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

    # -- runs -------------------------------------------------------------------------------

    def save_run(self, record: dict[str, Any]) -> str:
        """Store a run record as given, plus ``id`` and ``created_at``; returns the id.

        Large ``raw_response``/``prompt``/… values (and any long string) go to payload files.
        """
        with self._mutex:
            table = self._table("runs")
            data = to_jsonable_python(dict(record))
            run_id = data.get("id")
            if not isinstance(run_id, str) or not run_id or table.contains(_Q.id == run_id):
                now = datetime.now(UTC)
                run_id = f"run-{now:%Y%m%dT%H%M%S}-{_secrets.token_hex(3)}"
            data["id"] = run_id
            data.setdefault("created_at", datetime.now(UTC).isoformat())
            table.insert(externalise(data, self.payloads.put, whole_keys=RUN_PAYLOAD_FIELDS))
            return run_id

    def _restore_run(self, doc: Document) -> dict[str, Any]:
        """A run record with its payloads; a missing or damaged one becomes None, with a notice."""
        gone: list[str] = []
        record = restore(dict(doc), self.payloads.get, missing=self._payload_gone(gone))
        if gone:
            section = doc.get("section") if isinstance(doc.get("section"), str) else None
            self.quarantine.notice(
                f"run {doc.get('id')}: {len(gone)} stored field(s) could not be read and are shown as "
                f"missing: {'; '.join(gone)}",
                section,
            )
        return record

    def runs(self, section: str | None = None, *, with_payloads: bool = True) -> list[dict[str, Any]]:
        """Run records, newest first. ``with_payloads=False`` leaves payload refs unresolved (cheap listing)."""
        with self._mutex:
            table = self._table("runs")
            docs = table.search(_Q.section == section) if section is not None else table.all()
            docs = sorted(docs, key=lambda d: d.doc_id, reverse=True)
            if not with_payloads:
                return [copy.deepcopy(dict(d)) for d in docs]
            return [self._restore_run(d) for d in docs]

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        with self._mutex:
            doc = self._table("runs").get(_Q.id == run_id)
            return self._restore_run(doc) if doc else None

    # -- per-section UI state ---------------------------------------------------------------

    def section_state(self, section: str) -> dict[str, Any]:
        with self._mutex:
            doc = self._table("section_state").get(_Q.section == section)
            if doc is not None and not isinstance(doc.get("state"), dict):
                self._set_aside("section_state", doc, "its state is not a mapping")
                return {}
            return copy.deepcopy(doc["state"]) if doc else {}

    def set_section_state(self, section: str, state: dict[str, Any]) -> None:
        """Replace the section's state (a small JSON-able dict)."""
        with self._mutex:
            value = to_jsonable_python(dict(state))
            self._table("section_state").upsert({"section": section, "state": value}, _Q.section == section)

    def update_section_state(self, section: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Merge ``changes`` into the section's state; returns the new state."""
        with self._mutex:
            state = self.section_state(section)
            state.update(to_jsonable_python(dict(changes)))
            self.set_section_state(section, state)
            return state
