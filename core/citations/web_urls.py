"""Where a web URL is written in plain text — bare, or in the forms a browser still opens.

``find_bare_urls`` (``bare_urls``) finds what a renderer links; a browser also opens
``https:/host``, ``https:\\host`` and ``//host``, so screening looks for those too. Both
need "http", "www." or a doubled slash somewhere, which a substring test rules out
cheaply before any regular expression runs over a body.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from sourcedesk.core.citations.bare_urls import find_bare_urls

_DOUBLED_SLASHES = ("//", "\\\\", "/\\", "\\/")


def may_hold_url(text: str) -> bool:
    """Whether ``text`` holds "http" or "www." in any case, or a doubled slash: what every form
    ``find_web_urls`` reads needs. Substring tests, far cheaper than a case-blind regex over a body."""
    if any(slashes in text for slashes in _DOUBLED_SLASHES):
        return True
    lowered = text.lower()
    return "http" in lowered or "www." in lowered


_LOOSE_URL = re.compile(r"(?i)(?:https?:[/\\]+|(?<![\w:/\\])[/\\]{2}(?=[\w-]+\.[\w-]))[^\s\"'<>]+")


def find_web_urls(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Bare URLs plus the forms a browser still opens (``https:/host``, ``https:\\host``, ``//host``)."""
    if not may_hold_url(text[start:end] if start or end is not None else text):
        return []  # every form below needs "http", "www." or a doubled slash
    bare = sorted(find_bare_urls(text, start, end))
    starts = [a for a, _b in bare]
    found = list(bare)
    for m in _LOOSE_URL.finditer(text, start, len(text) if end is None else end):
        k = bisect_right(starts, m.start()) - 1  # the bare URL starting last at or before this one
        if k < 0 or m.start() >= bare[k][1]:
            url = m.group().rstrip(".,;:!?)]}")
            found.append((m.start(), m.start() + len(url)))
    return sorted(found)
