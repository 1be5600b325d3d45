"""Rejected domains and names kept in a TinyDB file: what the memo store and the global list share.

Both keep the same two tables (``rejects``, ``reject_names``) and announce the same changes;
they differ in where the file is and how a write is locked, which each supplies through
``_writing`` (a transaction under the file's write lock), ``_reading`` and ``_note_change``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from tinydb.table import Table

from sourcedesk.store import rejections
from sourcedesk.store.changes import ChangeKind, Scope, summarised
from sourcedesk.store.holders import whoami
from sourcedesk.store.json_storage import Tables


class TinyRejectLists:
    """The rejection lists of one TinyDB file (the memo's ``db.json`` or ``global.json``)."""

    scope: Scope = "memo"

    # -- supplied by the store ------------------------------------------------------------

    def _writing(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _reading(self) -> AbstractContextManager[Tables]:
        raise NotImplementedError

    def _table(self, name: str) -> Table:
        raise NotImplementedError

    def _note_change(self, kind: ChangeKind, what: str, section: str | None = None) -> None:
        raise NotImplementedError

    # -- domains --------------------------------------------------------------------------

    def _valid_domain_docs(self, tables: Tables) -> Iterator[dict[str, Any]]:
        return (d for d in tables.get("rejects", {}).values() if isinstance(d.get("domain"), str))

    def rejects(self) -> list[str]:
        with self._reading() as tables:
            return rejections.list_domains(self._valid_domain_docs(tables))

    def reject_entries(self) -> list[dict[str, Any]]:
        """Rejections with their notes, dates and who made them (``domain``, ``note``,
        ``added_at``, ``seq``, ``by``)."""
        with self._reading() as tables:
            return rejections.list_entries(self._valid_domain_docs(tables))

    def add_reject(self, domain: str, note: str = "") -> bool:
        """False if already rejected; ``UserError`` for a public suffix or a non-domain."""
        return bool(self.add_rejects([domain], note))

    def add_rejects(self, domains: Iterable[str], note: str = "") -> int:
        """Reject every domain in one write; returns how many were new."""
        with self._writing():
            new = rejections.add_domains(self._table("rejects"), domains, note, whoami())
            for what in summarised("reject", new, "domains"):
                self._note_change("reject", what)
            return len(new)

    def remove_reject(self, domain: str) -> bool:
        with self._writing():
            removed = rejections.remove_domain(self._table("rejects"), domain)
            if removed:
                self._note_change("unreject", rejections.domain_key(domain))
            return removed

    # -- names ----------------------------------------------------------------------------

    def reject_names(self) -> list[str]:
        """Rejected names as the analyst typed them ("Kestra Medical")."""
        with self._reading() as tables:
            return rejections.list_names(tables.get("reject_names", {}).values())

    def reject_name_entries(self) -> list[dict[str, Any]]:
        with self._reading() as tables:
            return rejections.list_name_entries(tables.get("reject_names", {}).values())

    def add_reject_name(self, name: str, note: str = "") -> bool:
        """False if the phrase is already rejected; ``UserError`` for a phrase with no words."""
        with self._writing():
            added = rejections.add_name(self._table("reject_names"), name, note, whoami())
            if added:
                self._note_change("reject_name", " ".join(name.split()))
            return added

    def remove_reject_name(self, name: str) -> bool:
        with self._writing():
            stored = rejections.remove_name(self._table("reject_names"), name)
            if stored is not None:
                self._note_change("unreject_name", stored)
            return stored is not None


__all__ = ["TinyRejectLists"]
