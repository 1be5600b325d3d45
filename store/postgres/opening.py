"""The first contact with a team store: reach it, check its schema, learn its namespace.

Done once per URL and process, before any store on it reads or writes: a wrong password or
an unreachable host is one line naming the URL (no password) here, not a traceback later,
and a schema this program does not know is refused before anything is touched.
"""

from __future__ import annotations

import psycopg

from sourcedesk.store.postgres.connection import Database
from sourcedesk.store.postgres.schema import check_version, migrate, schema_version


def open_checked(db: Database) -> None:
    """Reach ``db`` and check its schema (``UserError`` names what is wrong); remembers its
    schema name (lock keys and notifications are scoped by it)."""
    if db.schema:
        return
    conn = db.connect()
    try:
        version = schema_version(conn)
        check_version(version, db.shown)
        row = conn.execute("SELECT current_schema()").fetchone()
        db.schema = str(row[0]) if row and row[0] else "public"
    except psycopg.Error as exc:
        raise db.unavailable(exc, "checking its schema") from None
    finally:
        conn.close()


def migrate_database(db: Database) -> tuple[int, int]:
    """``sourcedesk store migrate``: bring ``db`` up to this program's schema; ``(before, after)``."""
    conn = db.connect(autocommit=True)
    try:
        return migrate(conn, db.shown)
    except psycopg.Error as exc:
        raise db.unavailable(exc, "migrating its schema") from None
    finally:
        conn.close()


__all__ = ["migrate_database", "open_checked"]
