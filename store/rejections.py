"""Rejected domains and names: the table operations both scopes (memo and global) share.

Which domains may be rejected at all is decided in ``sourcedesk.core.sources.reject_domains``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tinydb import Query
from tinydb.table import Table

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.sources.name_rejects import canonical_name
from sourcedesk.core.sources.reject_domains import canonical_domain
from sourcedesk.core.text.phrases import normalise_phrase


def _now() -> str:
    return clock.now().isoformat(timespec="seconds")


# -- table operations (callers hold the store's locks) -------------------------------------

_Q = Query()


# The listings take the table's documents as they are (never edited): a caller reads them
# straight from the database it holds in memory, without the copy a TinyDB ``Table`` makes
# of the whole database on every read (a run lists the rejected names once per section).
Docs = Iterable[Mapping[str, Any]]


def list_domains(docs: Docs) -> list[str]:
    return sorted(doc["domain"] for doc in docs)


def list_entries(docs: Docs) -> list[dict[str, Any]]:
    """By domain; ``seq`` orders rejections made in the same second (higher: later); ``by``
    is who rejected it (``user@host``; empty for rejections older than the team store)."""
    return sorted(
        (
            {
                "domain": d["domain"],
                "note": d.get("note", ""),
                "added_at": d.get("added_at", ""),
                "seq": _seq(d),
                "by": str(d.get("by") or ""),
            }
            for d in docs
        ),
        key=lambda e: e["domain"],
    )


def _seq(doc: Mapping[str, Any]) -> int:
    value = doc.get("seq")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _next_seq(table: Table) -> int:
    """One more than any stored: a timestamp has whole seconds, and the writer's deny-list
    is cut newest first, so rejections of one second need an order of their own."""
    return max((_seq(doc) for doc in table.all()), default=0) + 1


def new_domains(have: Iterable[str], domains: Iterable[str]) -> list[str]:
    """``domains`` made canonical, without those in ``have`` or given twice, in the order given
    (``UserError`` names the first that cannot be rejected, before anything is written)."""
    seen = set(have)
    new: list[str] = []
    for raw in domains:
        domain = canonical_domain(raw)
        if domain not in seen:
            seen.add(domain)
            new.append(domain)
    return new


def add_domain(table: Table, domain: str, note: str = "", by: str = "") -> bool:
    return bool(add_domains(table, [domain], note, by))


def add_domains(table: Table, domains: Iterable[str], note: str = "", by: str = "") -> list[str]:
    """Bulk add in one write; returns the domains that were new."""
    new = new_domains((doc["domain"] for doc in table.all()), domains)
    stamp, seq = _now(), _next_seq(table)  # in the order given: the last one is the newest
    table.insert_multiple(
        {"domain": d, "note": note or "", "added_at": stamp, "seq": seq + n, "by": by} for n, d in enumerate(new)
    )
    return new


def domain_key(domain: str) -> str:
    """The stored form of a domain to remove (junk that predates validation is removable too)."""
    try:
        return canonical_domain(domain)
    except UserError:
        return (domain or "").strip().lower()


def remove_domain(table: Table, domain: str) -> bool:
    return bool(table.remove(_Q.domain == domain_key(domain)))


# -- rejected names ------------------------------------------------------------------------
#
# A rejected name ("Kestra Medical") removes every result whose title or text contains it
# as whole words, ignoring case and punctuation (``sourcedesk.core.text.phrases``). Stored as typed (shown
# back to the analyst) with its normalised key (what matching and de-duplication use).


def list_names(docs: Docs) -> list[str]:
    return [doc["name"] for doc in sorted(docs, key=lambda d: (d["key"], d["name"]))]


def list_name_entries(docs: Docs) -> list[dict[str, Any]]:
    return [
        {"name": d["name"], "note": d.get("note", ""), "added_at": d.get("added_at", ""), "by": str(d.get("by") or "")}
        for d in sorted(docs, key=lambda d: (d["key"], d["name"]))
    ]


def add_name(table: Table, name: str, note: str = "", by: str = "") -> bool:
    """False when the same phrase (ignoring case and punctuation) is already rejected."""
    shown, key = canonical_name(name)
    if table.contains(_Q.key == key):
        return False
    table.insert({"name": shown, "key": key, "note": note or "", "added_at": _now(), "by": by})
    return True


def remove_name(table: Table, name: str) -> str | None:
    """The name as it was stored, when it was rejected (and now is not)."""
    key = normalise_phrase(name or "")
    if not key:
        return None
    stored = table.get(_Q.key == key)
    if stored is None or isinstance(stored, list):
        return None
    table.remove(_Q.key == key)
    return str(stored.get("name") or name)
