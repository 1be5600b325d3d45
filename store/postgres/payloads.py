"""Large values on the team store: ``sd_payloads``, by sha256, shared by every memo.

A colleague's frozen set is only useful with its page texts, so they live on the server too
(not in anyone's ``.sourcedesk/payloads``). Like the files of a TinyDB store they are named
by the sha256 of their redacted bytes — the same text stored twice is one row — and checked
against it on read. A value once stored never changes, so this process keeps the ones it
read recently in memory (``CACHE_BYTES``): a re-run reads a set's pages without a query.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import psycopg

from sourcedesk.store.payloads import REF_KEY, MissingPayload, is_ref
from sourcedesk.store.postgres.connection import Database
from sourcedesk.store.redact import redact_bytes

CACHE_BYTES = 64 * 1024 * 1024


def refs_in(value: Any) -> set[str]:
    """Every payload key a document refers to."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if is_ref(item):
            found.add(item[REF_KEY])
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


class PendingPayloads:
    """Payloads gathered while a document is prepared, inserted in the write's transaction."""

    def __init__(self) -> None:
        self.rows: dict[str, bytes] = {}

    def put(self, data: bytes | str) -> str:
        raw = redact_bytes(data.encode("utf-8") if isinstance(data, str) else bytes(data))
        key = hashlib.sha256(raw).hexdigest()
        self.rows[key] = raw
        return key

    def insert(self, conn: psycopg.Connection[Any]) -> None:
        if self.rows:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO sd_payloads (key, data) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
                    list(self.rows.items()),
                )


class PgPayloads:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached_bytes = 0
        self._lock = threading.Lock()

    def _remember(self, key: str, raw: bytes) -> None:
        with self._lock:
            if key in self._cache or len(raw) > CACHE_BYTES // 4:
                return
            self._cache[key] = raw
            self._cached_bytes += len(raw)
            while self._cached_bytes > CACHE_BYTES and self._cache:
                _old, dropped = self._cache.popitem(last=False)
                self._cached_bytes -= len(dropped)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """The payloads found (checked against their hash); missing or damaged ones are absent."""
        found: dict[str, bytes] = {}
        wanted: list[str] = []
        with self._lock:
            for key in set(keys):
                raw = self._cache.get(key)
                if raw is None:
                    wanted.append(key)
                else:
                    self._cache.move_to_end(key)
                    found[key] = raw
        if wanted:
            with self.db.reading("reading stored texts") as conn:
                rows = conn.execute("SELECT key, data FROM sd_payloads WHERE key = ANY(%s)", (wanted,)).fetchall()
            for key, data in rows:
                raw = bytes(data)
                if hashlib.sha256(raw).hexdigest() == key:
                    found[key] = raw
                    self._remember(key, raw)
        return found

    def get(self, key: str) -> bytes:
        raw = self.get_many([key]).get(key)
        if raw is None:
            raise MissingPayload(
                f"payload {key[:12]}… is missing from the team store {self.db.shown}",
                hint="refresh the section's sources",
            )
        return raw

    def put(self, data: bytes | str) -> str:
        pending = PendingPayloads()
        key = pending.put(data)
        with self.db.transaction("storing a text") as conn:
            pending.insert(conn)
        return key


def getter(found: dict[str, bytes]) -> Any:
    """A ``restore`` getter over payloads already fetched (a missing one raises ``MissingPayload``)."""

    def get(key: str) -> bytes:
        raw = found.get(key)
        if raw is None:
            raise MissingPayload(f"payload {key[:12]}… is missing from the team store", hint="it is treated as missing")
        return raw

    return get


__all__ = ["PendingPayloads", "PgPayloads", "getter", "refs_in"]
