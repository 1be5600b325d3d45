"""One memo on the team store (PostgreSQL): the same store as ``MemoStore``, shared by a team.

Everything the TinyDB store keeps for a memo lives in the database, keyed by the memo's
key (its folder's name, the same on every analyst's checkout): frozen source sets with their
versions, the memo's rejections, learned namesakes, run records and section state, and the
large texts they refer to (``sd_payloads``). Notes stay in the memo folder, under the
team's version control.

Every write is one transaction (a set's version, its texts and the change it announces
commit together or not at all); versions come from a counter row, so two analysts saving
the same section at once get consecutive versions. What cannot be read back (a set whose
text is missing, a document that no longer validates) is moved to ``sd_quarantine`` with
a notice and treated as missing, as in a TinyDB store.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import psycopg
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.domain.records import RunRecord, SectionState
from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.core.text.phrases import normalise_phrase
from sourcedesk.store.changes import PROCESS_ORIGIN, ChangeKind, StoreChange
from sourcedesk.store.holders import LockHolder, OnWait, now_iso, whoami
from sourcedesk.store.payloads import LARGE_CHARS, MissingPayload, externalise, payload_ref, restore, unloaded
from sourcedesk.store.postgres.connection import Database, database, release
from sourcedesk.store.postgres.feed import announce, listen
from sourcedesk.store.postgres.lists import PgRejectLists
from sourcedesk.store.postgres.locks import PgSectionLocks
from sourcedesk.store.postgres.opening import open_checked
from sourcedesk.store.postgres.payloads import PendingPayloads, PgPayloads, getter, refs_in
from sourcedesk.store.postgres.recent import forget, recent
from sourcedesk.store.quarantine import Quarantine
from sourcedesk.store.redact import encode_redacted
from sourcedesk.store.run_rows import RUN_BODY_KEY, merged_state, new_run_id, split_run
from sourcedesk.store.section_locks import SectionHold

log = logging.getLogger("sourcedesk.store")

_SET_COLUMNS = "id, section, version, data"
_KEY_RE = re.compile(r"^[0-9a-f]{64}$")


class PgMemoStore(PgRejectLists):
    backend = "postgresql"

    def __init__(self, memo_dir: Path, url: str, *, origin: str = PROCESS_ORIGIN) -> None:
        self.memo_dir = Path(memo_dir)
        if not self.memo_dir.is_dir():
            raise UserError(
                f"memo directory {self.memo_dir} does not exist",
                hint="run `sourcedesk init DIR --subject NAME --url URL` to create a memo",
            )
        self.memo_key = self.list_key = self.memo_dir.name
        self.origin = origin
        self.db: Database = database(url)
        try:
            open_checked(self.db)
        except BaseException:
            release(self.db)
            raise
        self.db.warm()  # the pool's connections open in the background while the memo loads
        self.payloads = PgPayloads(self.db)
        self.section_locks = PgSectionLocks(self.db, self.memo_key)
        self.quarantine = Quarantine(self.memo_dir / ".sourcedesk")  # its notices; documents go to sd_quarantine
        self._closed = False
        self._mutex = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        with self._mutex:
            if self._closed:
                return
            self._closed = True
        self.section_locks.close()
        release(self.db)

    def __enter__(self) -> PgMemoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PgMemoStore({self.memo_key!r} on {self.db.shown})"

    def describe_location(self) -> str:
        return f"memo {self.memo_key} on {self.db.shown}"

    def _announce(self, conn: psycopg.Connection[Any], kind: ChangeKind, what: str, section: str | None) -> None:
        announce(
            conn,
            self.db,
            StoreChange(
                kind=kind,
                what=what,
                by=whoami(),
                at=now_iso(),
                memo=self.memo_key,
                section=section,
                origin=self.origin,
            ),
        )

    # -- sections held, and changes made by others ------------------------------------------

    def hold_section(
        self, section: str, *, purpose: str = "running it", wait_s: float = 0.0, on_wait: OnWait | None = None
    ) -> SectionHold:
        return self.section_locks.hold(section, purpose=purpose, wait_s=wait_s, on_wait=on_wait)

    def section_holders(self) -> dict[str, LockHolder]:
        return self.section_locks.holders()

    def watch_changes(
        self, stop: threading.Event, *, global_store: Any = None, poll_s: float = 0.5
    ) -> Iterator[StoreChange]:
        """Changes others make to this memo and to the global lists, as NOTIFY delivers them
        (the lists this process keeps for a second are forgotten as each arrives)."""
        for change in listen(self.db, self.memo_key, self.origin, stop, poll_s=poll_s):
            forget(self.db.url, "" if change.scope == "global" else self.memo_key)
            yield change

    # -- damaged data -----------------------------------------------------------------------

    def take_notices(self, section: str | None = None) -> list[str]:
        return self.quarantine.take(section)

    def _set_aside(self, table: str, key_sql: str, params: tuple[Any, ...], section: str | None, reason: str) -> None:
        """Move one row to ``sd_quarantine`` (as found) and out of ``table``; say so once."""
        what = {"sd_source_sets": "frozen source set", "sd_runs": "run record", "sd_section_state": "section state"}
        try:
            with self.db.transaction("setting damaged data aside") as conn:
                row = conn.execute(f"DELETE FROM {table} WHERE memo = %s AND {key_sql} RETURNING *", params).fetchone()
                conn.execute(
                    "INSERT INTO sd_quarantine (memo, what, document, reason) VALUES (%s, %s, %s, %s)",
                    (self.memo_key, table, orjson.dumps(row, default=repr) if row else None, reason),
                )
        except UserError:
            log.warning("could not set aside a damaged %s of %s", table, self.memo_key)
        whose = f"section {section}: " if section else ""
        self.quarantine.notice(
            f"{whose}a damaged {what.get(table, table)} in the team store ({reason}) was moved to sd_quarantine "
            "and treated as missing",
            section,
        )

    # -- payloads ---------------------------------------------------------------------------

    def put_payload(self, data: bytes | str) -> str:
        return self.payloads.put(data)

    def get_payload(self, key: str) -> bytes:
        if not _KEY_RE.match(key or ""):
            raise MissingPayload(f"{key!r} is not a payload key", hint="payload keys are 64 hex characters")
        return self.payloads.get(key)

    def _restored(self, data: Any, missing: Any = None) -> Any:
        found = self.payloads.get_many(refs_in(data))
        return restore(data, getter(found), missing=missing)

    # -- source sets ------------------------------------------------------------------------

    def save_source_set(self, source_set: SourceSet) -> SourceSet:
        """A new version of the set's section (id and version assigned in the transaction)."""
        stored = source_set.model_copy(deep=True)
        if not stored.memo:
            stored.memo = self.memo_key
        section = stored.section
        with self.db.transaction(f"saving the sources of section {section}") as conn:
            row = conn.execute(
                "INSERT INTO sd_set_counters (memo, section, last_version) VALUES (%s, %s, 1) "
                "ON CONFLICT (memo, section) DO UPDATE SET last_version = sd_set_counters.last_version + 1 "
                "RETURNING last_version",
                (self.memo_key, section),
            ).fetchone()
            assert row is not None
            stored.version = int(row[0])
            stored.id = f"{section}@v{stored.version}-{stored.fingerprint[:8]}"
            self._insert_set(conn, stored)
            self._announce(conn, "source_set", section, section)
        return stored

    def _insert_set(self, conn: psycopg.Connection[Any], stored: SourceSet, copied_from: str | None = None) -> None:
        pending = PendingPayloads()
        data = externalise(stored.model_dump(mode="json"), pending.put)
        pending.insert(conn)
        conn.execute(
            "INSERT INTO sd_source_sets (memo, section, version, id, fingerprint, degraded, created_at, data, "
            "saved_by, copied_from) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                self.memo_key,
                stored.section,
                stored.version,
                stored.id,
                stored.fingerprint,
                stored.degraded,
                data.get("created_at"),
                encode_redacted(data),
                whoami(),
                copied_from,
            ),
        )

    def import_source_set(self, source_set: SourceSet) -> tuple[SourceSet, str]:
        """``store copy``: the set under its own id and version when they are free here;
        ``(stored, "copied" | "renumbered" | "present")``. Running it again copies nothing twice."""
        with self.db.transaction(f"copying a source set of section {source_set.section}") as conn:
            found = conn.execute(
                f"SELECT {_SET_COLUMNS} FROM sd_source_sets WHERE memo = %s AND (id = %s OR copied_from = %s)",
                (self.memo_key, source_set.id, source_set.id),
            ).fetchone()
            if found is not None:
                return source_set.model_copy(update={"id": found[0], "version": found[2]}), "present"
            taken = conn.execute(
                "SELECT 1 FROM sd_source_sets WHERE memo = %s AND section = %s AND version = %s",
                (self.memo_key, source_set.section, source_set.version),
            ).fetchone()
            stored = source_set.model_copy(deep=True)
            status = "copied"
            if taken is not None or source_set.version < 1:
                row = conn.execute(
                    "SELECT coalesce(max(version), 0) + 1 FROM sd_source_sets WHERE memo = %s AND section = %s",
                    (self.memo_key, source_set.section),
                ).fetchone()
                stored.version = int(row[0]) if row else 1
                stored.id = f"{stored.section}@v{stored.version}-{stored.fingerprint[:8]}"
                status = "renumbered"
            conn.execute(
                "INSERT INTO sd_set_counters (memo, section, last_version) VALUES (%s, %s, %s) "
                "ON CONFLICT (memo, section) DO UPDATE SET last_version = "
                "greatest(sd_set_counters.last_version, excluded.last_version)",
                (self.memo_key, stored.section, stored.version),
            )
            self._insert_set(conn, stored, copied_from=source_set.id)
        return stored, status

    def _load_set(self, row: tuple[Any, ...]) -> SourceSet | None:
        set_id, section, _version, raw = row
        try:
            data = orjson.loads(bytes(raw))
            return SourceSet.model_validate(self._restored(data))
        except MissingPayload as exc:
            reason = exc.message
        except (ValidationError, ValueError, TypeError) as exc:
            reason = f"its data does not validate: {str(exc).splitlines()[0]}"
        self._set_aside("sd_source_sets", "id = %s", (self.memo_key, set_id), section, reason)
        return None

    def _set_rows(self, where: str, params: tuple[Any, ...], order: str = "version") -> list[tuple[Any, ...]]:
        with self.db.reading("reading source sets") as conn:
            return conn.execute(
                f"SELECT {_SET_COLUMNS} FROM sd_source_sets WHERE memo = %s AND {where} ORDER BY {order}",
                (self.memo_key, *params),
            ).fetchall()

    def get_source_set(self, set_id: str) -> SourceSet | None:
        rows = self._set_rows("id = %s", (set_id,))
        return self._load_set(rows[0]) if rows else None

    def latest_source_set(
        self, section: str, *, fingerprint: str | None = None, degraded: bool | None = None
    ) -> SourceSet | None:
        """The newest version for the section (narrowed like ``MemoStore``'s); a damaged newest
        version is set aside and the one before it is the newest."""
        where, params = "section = %s", list[Any]([section])
        if fingerprint is not None:
            where, params = where + " AND fingerprint = %s", [*params, fingerprint]
        if degraded is not None:
            where, params = where + " AND degraded = %s", [*params, degraded]
        for _attempt in range(50):
            rows = self._set_rows(where, tuple(params), "version DESC LIMIT 1")
            if not rows:
                return None
            loaded = self._load_set(rows[0])
            if loaded is not None:
                return loaded
        return None

    def source_set_versions(self, section: str) -> list[SourceSet]:
        rows = self._set_rows("section = %s", (section,))
        return [s for s in (self._load_set(r) for r in rows) if s is not None]

    def sections(self) -> list[str]:
        with self.db.reading("listing sections") as conn:
            rows = conn.execute(
                "SELECT section FROM sd_source_sets WHERE memo = %(m)s UNION SELECT section FROM sd_runs "
                "WHERE memo = %(m)s UNION SELECT section FROM sd_section_state WHERE memo = %(m)s ORDER BY 1",
                {"m": self.memo_key},
            ).fetchall()
        return [r[0] for r in rows]

    # -- learned namesakes -----------------------------------------------------------------

    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]:
        items = recent(self.db.url, self.memo_key, "namesakes", self._read_learned_namesakes)
        return items if include_removed else [n for n in items if not n.removed]

    def _read_learned_namesakes(self) -> list[LearnedNamesake]:
        with self.db.reading("reading learned namesakes") as conn:
            rows = conn.execute("SELECT doc, removed FROM sd_namesakes WHERE memo = %s", (self.memo_key,)).fetchall()
        items = []
        for raw, removed in rows:
            try:
                items.append(LearnedNamesake.model_validate({**orjson.loads(bytes(raw)), "removed": bool(removed)}))
            except (ValidationError, ValueError):
                log.warning("a learned namesake of %s does not validate; skipped", self.memo_key)
        items.sort(key=lambda n: (n.added_at, normalise_phrase(n.name)))
        return items

    def add_learned_namesakes(self, items: Sequence[LearnedNamesake]) -> int:
        added: list[str] = []
        with self.db.transaction("learning namesakes") as conn:
            for item in items:
                key = normalise_phrase(item.name)
                if not key:
                    continue
                doc = item.model_dump(mode="json", exclude={"removed"})
                cur = conn.execute(
                    "INSERT INTO sd_namesakes (memo, key, doc, removed) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (memo, key) DO NOTHING",
                    (self.memo_key, key, encode_redacted(doc), item.removed),
                )
                if cur.rowcount:
                    added.append(item.name)
            if added:
                self._announce(conn, "namesake", ", ".join(added[:3]), None)
        forget(self.db.url, self.memo_key)
        return len(added)

    def _mark_namesake(self, name: str, removed: bool) -> bool:
        key = normalise_phrase(name or "")
        if not key:
            return False
        with self.db.transaction("changing a learned namesake") as conn:
            cur = conn.execute(
                "UPDATE sd_namesakes SET removed = %s WHERE memo = %s AND key = %s AND removed = %s",
                (removed, self.memo_key, key, not removed),
            )
            if cur.rowcount:
                self._announce(conn, "namesake", name, None)
        forget(self.db.url, self.memo_key)
        return bool(cur.rowcount)

    def remove_learned_namesake(self, name: str) -> bool:
        return self._mark_namesake(name, True)

    def restore_learned_namesake(self, name: str) -> bool:
        return self._mark_namesake(name, False)

    # -- runs ----------------------------------------------------------------------------

    def save_run(
        self,
        record: RunRecord | Mapping[str, Any],
        *,
        section_state: Mapping[str, Any] | None = None,
        replace: bool = False,
    ) -> str:
        """The record (and, in the same transaction, the section's state); returns its id."""
        run = record if isinstance(record, RunRecord) else RunRecord.model_validate(dict(record))
        with self.db.transaction(f"recording the run of section {run.section}") as conn, conn.pipeline():
            # Pipelined: the statements go out together, and the server is waited for only where
            # an answer is needed (was the id free? what is the state now?).
            run_id = run.id or new_run_id()
            while True:
                doc, pending = self._run_doc(run, run_id)
                pending.insert(conn)
                if replace:
                    conn.execute(
                        "INSERT INTO sd_runs (memo, id, section, doc) VALUES (%s, %s, %s, %s) ON CONFLICT (memo, id) "
                        "DO UPDATE SET doc = excluded.doc, section = excluded.section",
                        (self.memo_key, run_id, run.section, doc),
                    )
                    break
                inserted = conn.execute(
                    "INSERT INTO sd_runs (memo, id, section, doc) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (memo, id) DO NOTHING RETURNING 1",
                    (self.memo_key, run_id, run.section, doc),
                ).fetchone()
                if inserted is not None:
                    break
                run_id = new_run_id()  # the id is taken (another run's): the record gets one of its own
            if section_state is not None:
                before = self._locked_state(conn, run.section)
                self._write_state(conn, run.section, merged_state(before, section_state, run, run_id))
            self._announce(conn, "run", run.section, run.section)
        return run_id

    def _run_doc(self, run: RunRecord, run_id: str) -> tuple[bytes, PendingPayloads]:
        """The stored row of ``run`` (its body a payload when large) and the payloads it needs."""
        data, body, encoded_body = split_run(run, run_id)
        pending = PendingPayloads()
        if len(encoded_body) > LARGE_CHARS:
            data[RUN_BODY_KEY] = payload_ref(pending.put(encoded_body), "json", len(encoded_body))
        else:
            data.update(body)
        return encode_redacted(externalise(data, pending.put)), pending

    def import_run(self, run: RunRecord) -> bool:
        """``store copy``: the record under its own id, unless that id is here already."""
        with self.db.transaction(f"copying run {run.id}") as conn:
            if self._run_exists(conn, run.id):
                return False
        self.save_run(run)
        return True

    def import_section_state(self, section: str, state: SectionState) -> bool:
        """``store copy``: the section's state, only where the team store has none yet."""
        with self.db.transaction("copying a section's state") as conn:
            cur = conn.execute(
                "INSERT INTO sd_section_state (memo, section, state) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                (self.memo_key, section, encode_redacted(state.to_json())),
            )
            return bool(cur.rowcount)

    def _run_exists(self, conn: psycopg.Connection[Any], run_id: str) -> bool:
        row = conn.execute("SELECT 1 FROM sd_runs WHERE memo = %s AND id = %s", (self.memo_key, run_id)).fetchone()
        return row is not None

    def runs(
        self, section: str | None = None, *, with_payloads: bool = True, limit: int | None = None
    ) -> list[RunRecord]:
        """Newest first; ``with_payloads=False`` reads no stored body (a cheap listing)."""
        where = "memo = %s" + (" AND section = %s" if section is not None else "")
        params: tuple[Any, ...] = (self.memo_key,) + ((section,) if section is not None else ())
        with self.db.reading("reading runs") as conn:
            rows = conn.execute(f"SELECT id, section, doc FROM sd_runs WHERE {where} ORDER BY seq DESC", params)
            found = rows.fetchall()
        loaded = (self._load_run(r, with_payloads) for r in found)
        return [run for run in loaded if run is not None][:limit]

    def get_run(self, run_id: str) -> RunRecord | None:
        with self.db.reading("reading a run") as conn:
            row = conn.execute(
                "SELECT id, section, doc FROM sd_runs WHERE memo = %s AND id = %s", (self.memo_key, run_id)
            ).fetchone()
        return self._load_run(row, True) if row is not None else None

    def _load_run(self, row: tuple[Any, ...], with_payloads: bool) -> RunRecord | None:
        run_id, section, raw = row
        gone: list[str] = []
        try:
            doc = orjson.loads(bytes(raw))
            if not with_payloads:
                return RunRecord.model_validate(unloaded(doc))

            def missing(ref: dict[str, Any], exc: Exception) -> None:
                gone.append(f"{str(next(iter(ref.values()), ''))[:12]}… ({exc})")
                return None

            data = self._restored(doc, missing)
            body = data.pop(RUN_BODY_KEY, None)
            if isinstance(body, dict):
                data.update(body)
            run = RunRecord.model_validate(data)
        except (ValidationError, ValueError, TypeError, AttributeError) as exc:
            self._set_aside("sd_runs", "id = %s", (self.memo_key, run_id), section, f"not a run record: {exc}")
            return None
        if gone:
            self.quarantine.notice(
                f"run {run_id}: {len(gone)} stored part(s) could not be read and are shown as missing: "
                + "; ".join(gone),
                section,
            )
        return run

    # -- per-section state ------------------------------------------------------------------

    def _locked_state(self, conn: psycopg.Connection[Any], section: str) -> dict[str, Any]:
        """The section's state, its row locked until the transaction ends (created empty if new)."""
        conn.execute(
            "INSERT INTO sd_section_state (memo, section, state) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (self.memo_key, section, b"{}"),
        )
        row = conn.execute(
            "SELECT state FROM sd_section_state WHERE memo = %s AND section = %s FOR UPDATE", (self.memo_key, section)
        ).fetchone()
        try:
            state = orjson.loads(bytes(row[0])) if row else {}
        except ValueError:
            state = {}
        return state if isinstance(state, dict) else {}

    def _write_state(self, conn: psycopg.Connection[Any], section: str, state: dict[str, Any]) -> None:
        conn.execute(
            "UPDATE sd_section_state SET state = %s WHERE memo = %s AND section = %s",
            (encode_redacted(state), self.memo_key, section),
        )

    def section_state(self, section: str) -> SectionState:
        with self.db.reading("reading the section's state") as conn:
            row = conn.execute(
                "SELECT state FROM sd_section_state WHERE memo = %s AND section = %s", (self.memo_key, section)
            ).fetchone()
        if row is None:
            return SectionState()
        try:
            return SectionState.model_validate(orjson.loads(bytes(row[0])))
        except (ValidationError, ValueError) as exc:
            reason = f"its state does not validate: {str(exc).splitlines()[0]}"
            self._set_aside("sd_section_state", "section = %s", (self.memo_key, section), section, reason)
            return SectionState()

    def set_section_state(self, section: str, state: SectionState | Mapping[str, Any]) -> None:
        value = state.to_json() if isinstance(state, SectionState) else to_jsonable_python(dict(state))
        with self.db.transaction("saving the section's state") as conn:
            self._locked_state(conn, section)
            self._write_state(conn, section, value)

    def update_section_state(self, section: str, changes: Mapping[str, Any]) -> SectionState:
        with self.db.transaction("saving the section's state") as conn:
            state = self._locked_state(conn, section)
            state.update(to_jsonable_python(dict(changes)))
            self._write_state(conn, section, state)
        return SectionState.model_validate(state)


__all__ = ["PgMemoStore"]
