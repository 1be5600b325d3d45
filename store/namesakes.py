"""Learned namesakes in the memo store (the ``namesakes`` table); callers hold the store's locks.

A removed one stays in the table, marked, so that the next retrieval does not learn it again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tinydb import Query
from tinydb.table import Table

from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.core.text.phrases import normalise_phrase

_Q = Query()


def learned(docs: Iterable[Mapping[str, Any]], *, include_removed: bool = False) -> list[LearnedNamesake]:
    """The table's documents (read as they are, never edited) as learned namesakes."""
    items = [LearnedNamesake.model_validate({k: v for k, v in doc.items() if k != "key"}) for doc in docs]
    items.sort(key=lambda n: (n.added_at, normalise_phrase(n.name)))
    return items if include_removed else [n for n in items if not n.removed]


def add(table: Table, items: Sequence[LearnedNamesake]) -> int:
    """Insert the names not stored yet (removed ones included); returns how many were new."""
    known = {doc.get("key") for doc in table.all()}
    fresh = []
    for item in items:
        key = normalise_phrase(item.name)
        if key and key not in known:
            known.add(key)
            fresh.append({**item.model_dump(mode="json"), "key": key})
    if fresh:
        table.insert_multiple(fresh)
    return len(fresh)


def remove(table: Table, name: str) -> bool:
    """Mark a learned name removed; False when there is no such (live) name."""
    key = normalise_phrase(name or "")
    if not key or not table.contains((_Q.key == key) & (_Q.removed == False)):  # noqa: E712 - TinyDB query syntax
        return False
    table.update({"removed": True}, _Q.key == key)
    return True


def restore(table: Table, name: str) -> bool:
    """Undo ``remove`` (the analyst changed their mind)."""
    key = normalise_phrase(name or "")
    if not key or not table.contains((_Q.key == key) & (_Q.removed == True)):  # noqa: E712 - TinyDB query syntax
        return False
    table.update({"removed": False}, _Q.key == key)
    return True
