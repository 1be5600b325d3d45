"""Per-section locks on the team store: PostgreSQL advisory locks, with the holder named.

An advisory lock belongs to the session that took it, so every store keeps one connection
of its own for its locks (outside the pool) and the server lets go of them when that
process dies or loses its connection: a crashed laptop never leaves a section locked. The
lock itself is the truth; ``sd_section_locks`` only says who took it, and is believed only
while that session still holds the lock (checked against ``pg_locks``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any

import orjson
import psycopg

from sourcedesk.store.holders import LockHolder, OnWait, SectionLocked, take_waiting
from sourcedesk.store.postgres.connection import Database, StoreUnavailable
from sourcedesk.store.section_locks import SectionHold

log = logging.getLogger("sourcedesk.store")

_TAKE_SQL = """
WITH got AS (SELECT pg_try_advisory_lock(%s) AS ok),
noted AS (
    INSERT INTO sd_section_locks (memo, section, holder, backend_pid)
    SELECT %s, %s, %s, pg_backend_pid() FROM got WHERE ok
    ON CONFLICT (memo, section) DO UPDATE SET holder = excluded.holder, backend_pid = excluded.backend_pid
)
SELECT ok FROM got
"""
_RELEASE_SQL = """
WITH gone AS (DELETE FROM sd_section_locks WHERE memo = %s AND section = %s AND backend_pid = pg_backend_pid())
SELECT pg_advisory_unlock(%s)
"""
_HOLDER_SQL = """
SELECT l.section, l.holder FROM sd_section_locks l
WHERE l.memo = %(memo)s AND (%(section)s::text IS NULL OR l.section = %(section)s)
  AND EXISTS (SELECT 1 FROM pg_locks p WHERE p.locktype = 'advisory' AND p.granted AND p.pid = l.backend_pid)
"""


class PgSectionLocks:
    def __init__(self, db: Database, memo: str) -> None:
        self.db = db
        self.memo = memo
        self._conn: psycopg.Connection[Any] | None = None
        self._mutex = threading.Lock()
        self._held: dict[str, int] = {}

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._held.clear()  # a lost session lost its locks with it
            self._conn = self.db.connect()
        return self._conn

    def _try(self, section: str, key: int, me: LockHolder) -> bool:
        with self._mutex:
            if section in self._held:
                return False  # held by this store already (another job of this window)
            try:
                conn = self._connection()
                # One round trip: the lock, and (only if it was granted) the note naming its holder.
                row = conn.execute(_TAKE_SQL, (key, self.memo, section, orjson.dumps(me.to_json()))).fetchone()
                if not row or not row[0]:
                    return False
            except psycopg.Error as exc:
                raise self.db.unavailable(exc, f"locking section {section}") from None
            self._held[section] = key
            return True

    def hold(
        self, section: str, *, purpose: str = "running it", wait_s: float = 0.0, on_wait: OnWait | None = None
    ) -> SectionHold:
        key = self.db.lock_key("section", self.memo, section)
        me = LockHolder.me(purpose)
        take_waiting(
            lambda: self._try(section, key, me),
            lambda: self.holder(section),
            lambda holder, waited: SectionLocked(self.memo, section, holder, waited),
            wait_s=wait_s,
            on_wait=on_wait,
        )
        return SectionHold(section, lambda: self._release(section))

    def _release(self, section: str) -> None:
        with self._mutex:
            key = self._held.pop(section, None)
            conn = self._conn
            if key is None or conn is None or conn.closed:
                return
            try:
                conn.execute(_RELEASE_SQL, (self.memo, section, key))
            except psycopg.Error:  # the session is gone, and its locks with it
                log.info("could not release section %s cleanly (the server went away)", section)

    def holders(self, section: str | None = None) -> dict[str, LockHolder]:
        try:
            with self.db.reading("reading who holds the sections") as conn:
                rows = conn.execute(_HOLDER_SQL, {"memo": self.memo, "section": section}).fetchall()
        except StoreUnavailable:
            return {}
        found = {}
        for name, raw in rows:
            holder = LockHolder.from_json(orjson.loads(bytes(raw)))
            if holder is not None:
                found[name] = holder
        return found

    def holder(self, section: str) -> LockHolder | None:
        return self.holders(section).get(section)

    def close(self) -> None:
        for section in list(self._held):
            self._release(section)
        with self._mutex:
            if self._conn is not None:
                with contextlib.suppress(psycopg.Error):
                    self._conn.close()
                self._conn = None


__all__ = ["PgSectionLocks"]
