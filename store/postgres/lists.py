"""Rejected domains and names on the team store: the memo's lists and the global ones (memo '').

The same rules as the TinyDB lists (``sourcedesk.store.rejections``: canonical domains,
names compared ignoring case and punctuation, a note, when and who); each change is one
transaction that also announces it (``feed.announce``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import psycopg

from sourcedesk.core.sources.name_rejects import canonical_name
from sourcedesk.core.text.phrases import normalise_phrase
from sourcedesk.store.changes import PROCESS_ORIGIN, ChangeKind, Scope, StoreChange, summarised
from sourcedesk.store.holders import now_iso, whoami
from sourcedesk.store.postgres.connection import Database
from sourcedesk.store.postgres.feed import announce
from sourcedesk.store.postgres.recent import forget, recent
from sourcedesk.store.redact import redact_text
from sourcedesk.store.rejections import domain_key, new_domains


class PgRejectLists:
    """One scope's lists: ``memo`` is the memo's key, or '' for the global lists."""

    backend = "postgresql"
    scope: Scope = "memo"
    db: Database
    list_key: str = ""  # the memo column's value for this scope
    origin: str = PROCESS_ORIGIN

    def _change(self, conn: psycopg.Connection[Any], kind: ChangeKind, what: str, section: str | None = None) -> None:
        forget(self.db.url, self.list_key)  # this process sees its own change at once
        announce(
            conn,
            self.db,
            StoreChange(
                kind=kind,
                what=what,
                by=whoami(),
                at=now_iso(),
                scope=self.scope,
                memo=self.list_key,
                section=section,
                origin=self.origin,
            ),
        )

    # -- domains --------------------------------------------------------------------------

    def reject_entries(self) -> list[dict[str, Any]]:
        return recent(self.db.url, self.list_key, "rejects", self._read_reject_entries)

    def _read_reject_entries(self) -> list[dict[str, Any]]:
        with self.db.reading("reading rejections") as conn:
            rows = conn.execute(
                "SELECT domain, note, added_at, seq, added_by FROM sd_rejects WHERE memo = %s ORDER BY domain",
                (self.list_key,),
            ).fetchall()
        return [{"domain": d, "note": n, "added_at": a, "seq": int(s), "by": b} for d, n, a, s, b in rows]

    def rejects(self) -> list[str]:
        return [e["domain"] for e in self.reject_entries()]

    def add_reject(self, domain: str, note: str = "") -> bool:
        return bool(self.add_rejects([domain], note))

    def add_rejects(self, domains: Iterable[str], note: str = "") -> int:
        wanted = new_domains((), domains)  # UserError for a bad one, before anything is written
        stamp, by, note = now_iso(), whoami(), redact_text(note or "")
        with self.db.transaction("rejecting domains") as conn:
            rows = conn.execute(
                "INSERT INTO sd_rejects (memo, domain, note, added_at, added_by) "
                "SELECT %s, d, %s, %s, %s FROM unnest(%s::text[]) WITH ORDINALITY AS t(d, n) ORDER BY n "
                "ON CONFLICT (memo, domain) DO NOTHING RETURNING domain",
                (self.list_key, note, stamp, by, wanted),
            ).fetchall()
            added = {r[0] for r in rows}
            for what in summarised("reject", [d for d in wanted if d in added], "domains"):
                self._change(conn, "reject", what)
        return len(added)

    def remove_reject(self, domain: str) -> bool:
        key = domain_key(domain)
        with self.db.transaction("un-rejecting a domain") as conn:
            cur = conn.execute("DELETE FROM sd_rejects WHERE memo = %s AND domain = %s", (self.list_key, key))
            if cur.rowcount:
                self._change(conn, "unreject", key)
            return bool(cur.rowcount)

    def import_rejects(self, entries: Iterable[dict[str, Any]]) -> int:
        """``store copy``: entries as another store listed them (when and who kept); new ones only."""
        added = 0
        with self.db.transaction("copying rejections") as conn:
            for e in sorted(entries, key=lambda e: int(e.get("seq") or 0)):
                cur = conn.execute(
                    "INSERT INTO sd_rejects (memo, domain, note, added_at, added_by) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (memo, domain) DO NOTHING",
                    (
                        self.list_key,
                        e["domain"],
                        e.get("note") or "",
                        e.get("added_at") or now_iso(),
                        e.get("by") or "",
                    ),
                )
                added += cur.rowcount
        forget(self.db.url, self.list_key)
        return added

    def import_reject_names(self, entries: Iterable[dict[str, Any]]) -> int:
        added = 0
        with self.db.transaction("copying rejected names") as conn:
            for e in entries:
                key = normalise_phrase(e["name"])
                if not key:
                    continue
                cur = conn.execute(
                    "INSERT INTO sd_reject_names (memo, key, name, note, added_at, added_by) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (memo, key) DO NOTHING",
                    (
                        self.list_key,
                        key,
                        e["name"],
                        e.get("note") or "",
                        e.get("added_at") or now_iso(),
                        e.get("by") or "",
                    ),
                )
                added += cur.rowcount
        forget(self.db.url, self.list_key)
        return added

    # -- names ----------------------------------------------------------------------------

    def reject_name_entries(self) -> list[dict[str, Any]]:
        return recent(self.db.url, self.list_key, "names", self._read_reject_name_entries)

    def _read_reject_name_entries(self) -> list[dict[str, Any]]:
        with self.db.reading("reading rejected names") as conn:
            rows = conn.execute(
                "SELECT name, note, added_at, added_by FROM sd_reject_names WHERE memo = %s ORDER BY key, name",
                (self.list_key,),
            ).fetchall()
        return [{"name": n, "note": note, "added_at": a, "by": b} for n, note, a, b in rows]

    def reject_names(self) -> list[str]:
        return [e["name"] for e in self.reject_name_entries()]

    def add_reject_name(self, name: str, note: str = "") -> bool:
        shown, key = canonical_name(name)
        with self.db.transaction("rejecting a name") as conn:
            cur = conn.execute(
                "INSERT INTO sd_reject_names (memo, key, name, note, added_at, added_by) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (memo, key) DO NOTHING",
                (self.list_key, key, redact_text(shown), redact_text(note or ""), now_iso(), whoami()),
            )
            if cur.rowcount:
                self._change(conn, "reject_name", shown)
            return bool(cur.rowcount)

    def remove_reject_name(self, name: str) -> bool:
        key = normalise_phrase(name or "")
        if not key:
            return False
        with self.db.transaction("un-rejecting a name") as conn:
            row = conn.execute(
                "DELETE FROM sd_reject_names WHERE memo = %s AND key = %s RETURNING name", (self.list_key, key)
            ).fetchone()
            if row is not None:
                self._change(conn, "unreject_name", row[0])
            return row is not None


__all__ = ["PgRejectLists"]
