"""Run records in a TinyDB memo store: group-committed writes and reads that survive damage.

Part of ``MemoStore`` (a mixin): it supplies ``_writing``, ``_reading``, ``_editable``,
``_storage``, ``payloads``, ``quarantine``, ``_set_aside`` and ``_note_change``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from sourcedesk.core.domain.records import RunRecord
from sourcedesk.store.changes import ChangeKind
from sourcedesk.store.json_storage import AtomicJSONStorage, Tables, encode
from sourcedesk.store.payloads import (
    LARGE_CHARS,
    PART_KEY,
    REF_KEY,
    PayloadDir,
    externalise,
    payload_ref,
    restore,
    unloaded,
)
from sourcedesk.store.quarantine import Quarantine
from sourcedesk.store.run_rows import RUN_BODY_KEY, merged_state, new_run_id, split_run


class TinyRuns:
    """``save_run``, ``runs`` and ``get_run`` of the TinyDB memo store."""

    _mutex: threading.RLock
    _queue_lock: threading.Lock
    _queue: list[_PendingRun]
    _storage: AtomicJSONStorage
    payloads: PayloadDir
    quarantine: Quarantine

    def _writing(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _reading(self) -> AbstractContextManager[Tables]:
        raise NotImplementedError

    def _editable(self) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    def _set_aside(self, table: str, doc: Mapping[str, Any], reason: str) -> None:
        raise NotImplementedError

    def _note_change(self, kind: ChangeKind, what: str, section: str | None = None) -> None:
        raise NotImplementedError

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
                    with self._writing():
                        self._write_runs(batch)
                except BaseException as exc:
                    for item in batch:
                        item.error, item.done = exc, True
                    raise
                for item in batch:
                    item.done = True
        if mine.error is not None:
            raise mine.error
        return mine.run_id

    def _write_runs(self, batch: list[_PendingRun]) -> None:
        tables = self._editable()
        runs = tables.setdefault("runs", {})
        taken = {doc.get("id"): doc_id for doc_id, doc in runs.items()}
        rows: list[tuple[str, _PendingRun, dict[str, Any]]] = []
        bodies: dict[str, bytes] = {}  # each body encoded once: the batch's payload is built from them
        for item in batch:
            run_id = item.run.id
            doc_id = taken.get(run_id) if item.replace and run_id else None
            while doc_id is None and (not run_id or run_id in taken):
                run_id = new_run_id()
            doc_id = doc_id or str(max([_next_id(runs), *(int(k) + 1 for k, _i, _d in rows)]))
            taken[run_id] = doc_id
            item.run_id = run_id
            data, body, encoded_body = split_run(item.run, run_id)
            if len(encoded_body) > LARGE_CHARS:
                bodies[run_id] = encoded_body
            else:
                data.update(body)
            rows.append((doc_id, item, data))
        ref: dict[str, Any] | None = None
        if bodies:  # the bodies of the whole batch: one payload file, {"<run id>": body, ...}
            encoded = b"{" + b",".join(encode(rid) + b":" + raw for rid, raw in bodies.items()) + b"}"
            ref = payload_ref(self.payloads.put(encoded), "json", len(encoded))
        states = tables.setdefault("section_state", {})
        for doc_id, item, data in rows:
            if item.run_id in bodies and ref is not None:
                data[RUN_BODY_KEY] = {**ref, PART_KEY: item.run_id}
            runs[doc_id] = externalise(data, self.payloads.put)
            if item.state is not None:
                section = item.run.section
                key, doc = _state_doc(states, section)
                state = merged_state(doc.get("state") if doc else None, item.state, item.run, item.run_id)
                states[key] = {"section": section, "state": state}
            self._note_change("run", item.run.section, item.run.section)
        self._storage.write(tables)

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


@dataclass
class _PendingRun:
    """A run record waiting for the next write (its own, or another thread's)."""

    run: RunRecord
    state: dict[str, Any] | None
    replace: bool
    run_id: str = ""
    done: bool = False
    error: BaseException | None = None


def _next_id(table: Mapping[str, Any]) -> int:
    """TinyDB's own rule: one past the largest document id."""
    return max((int(k) for k in table), default=0) + 1


def _state_doc(states: Mapping[str, Any], section: str) -> tuple[str, dict[str, Any] | None]:
    """The section's state document and its id (a new id when it has none)."""
    for key, doc in states.items():
        if isinstance(doc, dict) and doc.get("section") == section:
            return key, doc
    return str(_next_id(states)), None
