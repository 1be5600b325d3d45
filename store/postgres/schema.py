"""The team store's tables, versioned: ``sourcedesk store migrate`` brings a database up to date.

Each migration is a list of statements applied in one transaction, under an advisory lock
(two analysts migrating at once apply it once), and ``sd_meta.schema_version`` records how
far a database has come. Opening a store checks the version first: an older schema asks
for ``store migrate`` (run by whoever may create tables), a newer one — written by a newer
sourcedesk — is refused with both versions named, never half-understood.

Documents (sets, run rows, namesakes, state) are stored as orjson bytes (``bytea``): they
are read and written whole, never queried inside, and text may hold what ``jsonb`` refuses
(a NUL). What is queried has a column of its own.
"""

from __future__ import annotations

from typing import Any

import psycopg

from sourcedesk.core.domain.errors import UserError

SCHEMA_VERSION = 1
MIGRATE_LOCK = 0x5D_5D_0001  # advisory lock held while migrating

MIGRATIONS: dict[int, list[str]] = {
    1: [
        "CREATE TABLE sd_meta (key text PRIMARY KEY, value text NOT NULL)",
        # Content-addressed large values (page texts, raw answers): shared by every memo.
        "CREATE TABLE sd_payloads (key text PRIMARY KEY, data bytea NOT NULL)",
        # Rejections: memo '' is the global list.
        """CREATE TABLE sd_rejects (
            memo text NOT NULL, domain text NOT NULL, note text NOT NULL DEFAULT '',
            added_at text NOT NULL, added_by text NOT NULL DEFAULT '',
            seq bigint GENERATED ALWAYS AS IDENTITY, PRIMARY KEY (memo, domain))""",
        """CREATE TABLE sd_reject_names (
            memo text NOT NULL, key text NOT NULL, name text NOT NULL, note text NOT NULL DEFAULT '',
            added_at text NOT NULL, added_by text NOT NULL DEFAULT '', PRIMARY KEY (memo, key))""",
        """CREATE TABLE sd_namesakes (
            memo text NOT NULL, key text NOT NULL, doc bytea NOT NULL, removed boolean NOT NULL DEFAULT false,
            seq bigint GENERATED ALWAYS AS IDENTITY, PRIMARY KEY (memo, key))""",
        # Versions are handed out by a counter row (locked by the upsert): never twice, never skipped.
        """CREATE TABLE sd_set_counters (
            memo text NOT NULL, section text NOT NULL, last_version integer NOT NULL, PRIMARY KEY (memo, section))""",
        """CREATE TABLE sd_source_sets (
            memo text NOT NULL, section text NOT NULL, version integer NOT NULL, id text NOT NULL,
            fingerprint text NOT NULL, degraded boolean NOT NULL, created_at text, data bytea NOT NULL,
            saved_by text NOT NULL DEFAULT '', copied_from text,
            PRIMARY KEY (memo, section, version), UNIQUE (memo, id))""",
        """CREATE TABLE sd_runs (
            memo text NOT NULL, id text NOT NULL, section text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY, doc bytea NOT NULL, PRIMARY KEY (memo, id))""",
        "CREATE INDEX sd_runs_by_section ON sd_runs (memo, section, seq DESC)",
        """CREATE TABLE sd_section_state (
            memo text NOT NULL, section text NOT NULL, state bytea NOT NULL, PRIMARY KEY (memo, section))""",
        # Who holds a section (the advisory lock itself is the truth; this row only names the holder).
        """CREATE TABLE sd_section_locks (
            memo text NOT NULL, section text NOT NULL, holder bytea NOT NULL, backend_pid integer NOT NULL,
            PRIMARY KEY (memo, section))""",
        """CREATE TABLE sd_quarantine (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, memo text NOT NULL, what text NOT NULL,
            document bytea, reason text NOT NULL, at timestamptz NOT NULL DEFAULT now())""",
    ],
}


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The database's schema version (0: sourcedesk never migrated it)."""
    found = conn.execute("SELECT to_regclass('sd_meta') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return 0
    row = conn.execute("SELECT value FROM sd_meta WHERE key = 'schema_version'").fetchone()
    try:
        return int(row[0]) if row else 0
    except (TypeError, ValueError):
        return 0


def check_version(version: int, shown: str) -> None:
    """Refuse a schema this program cannot use, naming both versions."""
    if version > SCHEMA_VERSION:
        raise UserError(
            f"the team store {shown} has schema version {version}, newer than this sourcedesk knows "
            f"(version {SCHEMA_VERSION}): it was migrated by a newer sourcedesk",
            hint="upgrade sourcedesk on this machine; nothing was read or written",
        )
    if version < SCHEMA_VERSION:
        now = "no sourcedesk tables" if version == 0 else f"schema version {version}"
        raise UserError(
            f"the team store {shown} has {now}; this sourcedesk needs version {SCHEMA_VERSION}",
            hint="run `sourcedesk store migrate` once, as a role that may create tables",
        )


def migrate(conn: psycopg.Connection[Any], shown: str) -> tuple[int, int]:
    """Apply every migration the database lacks, in one transaction; ``(before, after)``."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        before = schema_version(conn)
        if before > SCHEMA_VERSION:
            check_version(before, shown)
        for version in range(before + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version]:
                conn.execute(statement.encode("utf-8"))
            conn.execute(
                "INSERT INTO sd_meta (key, value) VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(version),),
            )
    return before, max(before, SCHEMA_VERSION)


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "check_version", "migrate", "schema_version"]
