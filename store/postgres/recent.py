"""The lists a run reads again and again, kept for a second.

A run of twenty sections reads the memo's rejected domains and names and its learned
namesakes once per section (and the rejected names several times): on a server that is a
round trip each, a third of the store's time in a frozen re-run. The answer read within the
last ``TTL_S`` is reused instead, shared by every store of the process on the same list, and
forgotten at once when this process changes that list or hears (``watch_changes``) that a
colleague did. So a colleague's reject reaches a run that starts at most ``TTL_S`` later, and
this process's own changes are seen at once.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
TTL_S = 1.0

_values: dict[tuple[str, str, str], tuple[float, Any]] = {}
_lock = threading.Lock()


def recent(url: str, list_key: str, what: str, read: Callable[[], T]) -> T:
    """``read()``'s answer for this list, or the one read within the last ``TTL_S`` (a copy)."""
    key = (url, list_key, what)
    now = time.monotonic()
    with _lock:
        found = _values.get(key)
    if found is not None and now - found[0] < TTL_S:
        return copy.deepcopy(found[1])  # type: ignore[no-any-return]  # what read() returned, stored as is
    value = read()
    with _lock:
        _values[key] = (now, value)
    return copy.deepcopy(value)


def forget(url: str, list_key: str | None = None) -> None:
    """Drop what is kept for ``list_key`` (a memo's key, "" for the global lists; None: all)."""
    with _lock:
        for key in [k for k in _values if k[0] == url and (list_key is None or k[1] == list_key)]:
            del _values[key]


__all__ = ["TTL_S", "forget", "recent"]
