"""Shares written as words ("a quarter of its staff", "two thirds of revenue"): percentages the
figure reader (``sourcedesk.core.citations.figures``) reports beside the ones written with digits,
so "25% of its staff" meets "a quarter of its workforce" and "30%" is seen to differ from it.

Only a fraction with its count ("a", "one", "two", "three") and "of" after it is a share: "the
first quarter of 2025" and "the first half of the year" are periods, and "half of" counts only
when no ordinal or article stands before it."""

from __future__ import annotations

import re
from collections.abc import Iterator

_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4}
_PARTS = {"half": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fifth": 5, "fifths": 5, "tenth": 10}
_SHARE = re.compile(
    r"(?i)\b(?:(?P<count>an?|one|two|three|four)[\s-]+)?(?P<part>half|thirds?|quarters?|fifths?|tenth)\s+of\b"
)
_NOT_SHARE = re.compile(r"(?i)\b(?:the|first|second|last|latter|former|other|this|that|h)\s*\Z")


def shares(norm: str) -> Iterator[tuple[float, str, int, int]]:
    """(percentage, the words, start, end) of every share ``norm`` writes in words."""
    for m in _SHARE.finditer(norm):
        count, part = m.group("count"), m.group("part").lower()
        if count is None and (part != "half" or _NOT_SHARE.search(norm, max(0, m.start() - 12), m.start())):
            continue
        n = _COUNTS[count.lower()] if count else 1
        if n >= _PARTS[part] or (n > 1 and not part.endswith("s")):
            continue  # "four quarters of" is no share; "two third of" is no English
        end = m.end("part")
        yield round(100.0 * n / _PARTS[part], 2), norm[m.start() : end], m.start(), end
