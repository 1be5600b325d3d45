"""Rejected domains and names: what a valid one is, and the table operations both scopes share.

A rejection excludes a domain and all of its subdomains from retrieval, so a
rejection of a public suffix (``com``, ``co.uk``) would silently exclude whole
swathes of the web: those are refused, as is anything that is not a host name.
Only the ICANN part of the Public Suffix List counts here: rejecting a
privately-run suffix such as ``blogspot.com`` or ``github.io`` is a sensible
thing for an analyst to do.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from publicsuffixlist import PublicSuffixList
from tinydb import Query
from tinydb.table import Table

from core.errors import UserError
from core.exclusions import canonical_domain as exclusion_domain
from core.name_rejects import canonical_name
from core.phrases import normalise_phrase

_LABEL_RE = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$")
_EXAMPLE_HINT = "give a registrable domain such as example.com (a URL is fine: its host is used)"


@lru_cache(maxsize=1)
def _icann_suffixes() -> PublicSuffixList:
    # The bundled snapshot only: never fetched.
    return PublicSuffixList(only_icann=True)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


REJECT_CONSEQUENCE = "rejecting it would exclude every site registered under it"


def canonical_domain(text: str, *, consequence: str = REJECT_CONSEQUENCE) -> str:
    """``"https://WWW.Example.com/x"`` → ``"example.com"``; ``UserError`` for junk and public suffixes.

    ``consequence`` finishes the public-suffix message ("rejecting it would …").
    """
    raw = (text or "").strip()
    if not raw or raw in ("*.", "."):
        raise UserError("an empty domain name was given", hint=_EXAMPLE_HINT)
    host = exclusion_domain(raw)  # the same canonical form the exclusion matcher uses
    if not host:
        raise UserError(f"{text.strip()!r} is not a domain name", hint=_EXAMPLE_HINT)
    if _is_ip(host):
        return host
    labels = host.split(".")
    if not all(_LABEL_RE.match(label) for label in labels):
        raise UserError(f"{text.strip()!r} is not a domain name", hint=_EXAMPLE_HINT)
    if _icann_suffixes().is_public(host, accept_unknown=False):
        raise UserError(f"{host!r} is a public suffix: {consequence}", hint=_EXAMPLE_HINT)
    if len(labels) < 2:
        raise UserError(f"{host!r} is not a full domain name (it has no dot)", hint=_EXAMPLE_HINT)
    return host


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- table operations (callers hold the store's locks) -------------------------------------

_Q = Query()


def list_domains(table: Table) -> list[str]:
    return sorted(doc["domain"] for doc in table.all())


def list_entries(table: Table) -> list[dict[str, Any]]:
    return sorted(
        ({"domain": d["domain"], "note": d.get("note", ""), "added_at": d.get("added_at", "")} for d in table.all()),
        key=lambda e: e["domain"],
    )


def add_domain(table: Table, domain: str, note: str = "") -> bool:
    domain = canonical_domain(domain)
    if table.contains(_Q.domain == domain):
        return False
    table.insert({"domain": domain, "note": note or "", "added_at": _now()})
    return True


def add_domains(table: Table, domains: Iterable[str], note: str = "") -> int:
    """Bulk add in one write; returns how many were new."""
    have = {doc["domain"] for doc in table.all()}
    new: list[str] = []
    for raw in domains:
        domain = canonical_domain(raw)
        if domain not in have:
            have.add(domain)
            new.append(domain)
    stamp = _now()
    table.insert_multiple({"domain": d, "note": note or "", "added_at": stamp} for d in new)
    return len(new)


def remove_domain(table: Table, domain: str) -> bool:
    try:
        key = canonical_domain(domain)
    except UserError:
        key = (domain or "").strip().lower()  # let junk that predates validation be removed
    return bool(table.remove(_Q.domain == key))


# -- rejected names ------------------------------------------------------------------------
#
# A rejected name ("Kestra Medical") removes every result whose title or text contains it
# as whole words, ignoring case and punctuation (``core.phrases``). Stored as typed (shown
# back to the analyst) with its normalised key (what matching and de-duplication use).


def list_names(table: Table) -> list[str]:
    return [doc["name"] for doc in sorted(table.all(), key=lambda d: (d["key"], d["name"]))]


def list_name_entries(table: Table) -> list[dict[str, Any]]:
    return [
        {"name": d["name"], "note": d.get("note", ""), "added_at": d.get("added_at", "")}
        for d in sorted(table.all(), key=lambda d: (d["key"], d["name"]))
    ]


def add_name(table: Table, name: str, note: str = "") -> bool:
    """False when the same phrase (ignoring case and punctuation) is already rejected."""
    shown, key = canonical_name(name)
    if table.contains(_Q.key == key):
        return False
    table.insert({"name": shown, "key": key, "note": note or "", "added_at": _now()})
    return True


def remove_name(table: Table, name: str) -> bool:
    key = normalise_phrase(name or "")
    return bool(key) and bool(table.remove(_Q.key == key))
