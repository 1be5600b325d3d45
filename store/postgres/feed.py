"""Changes on the team store, sent with NOTIFY and heard with LISTEN.

``announce`` sends a ``StoreChange`` inside the writer's transaction: PostgreSQL delivers it
only when that transaction commits, so no workbench hears of a reject that was rolled back.
``listen`` is the other end, for a worker thread: one connection of its own, ``LISTEN``,
and every change about the watched memo (or the global lists) that another process made,
until ``stop`` is set. A server that goes away is retried quietly; the changes made
meanwhile are seen at the next refresh, not announced.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import orjson
import psycopg

from sourcedesk.store.changes import StoreChange
from sourcedesk.store.postgres.connection import CHANNEL, Database, StoreUnavailable

log = logging.getLogger("sourcedesk.store")

MAX_WHAT = 200  # a NOTIFY payload is at most 8000 bytes


def announce(conn: psycopg.Connection[Any], db: Database, change: StoreChange) -> None:
    data = change.to_json()
    data["what"] = str(data["what"])[:MAX_WHAT]
    data["schema"] = db.channel_key()
    conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, orjson.dumps(data).decode("utf-8")))


def listen(
    db: Database, memo: str, origin: str, stop: threading.Event, *, poll_s: float = 0.5, with_global: bool = True
) -> Iterator[StoreChange]:
    """Changes to ``memo`` (and, ``with_global``, to the global lists) by others, as they come."""
    conn: psycopg.Connection[Any] | None = None
    while not stop.is_set():
        if conn is None or conn.closed:
            try:
                conn = db.connect()
                conn.execute(f"LISTEN {CHANNEL}")
            except (StoreUnavailable, psycopg.Error):
                log.info("the change feed of %s is not reachable; trying again", db.shown)
                conn = None
                stop.wait(max(poll_s, 2.0))
                continue
        try:
            for note in conn.notifies(timeout=poll_s):
                change = _parse(note.payload, db)
                if change is None or change.origin == origin:
                    continue
                if change.memo == memo or (with_global and change.scope == "global"):
                    yield change
                if stop.is_set():
                    break
        except psycopg.Error:
            log.info("the change feed of %s was cut; reconnecting", db.shown)
            try:
                conn.close()
            finally:
                conn = None
    if conn is not None:
        conn.close()


def _parse(payload: str, db: Database) -> StoreChange | None:
    try:
        data = orjson.loads(payload)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("schema") != db.channel_key():
        return None
    return StoreChange.from_json(data)


__all__ = ["announce", "listen"]
