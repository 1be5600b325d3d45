"""A claim's loose numbers: the numbers it writes in digits that no figure holds.

``figures`` reads a number as a figure only with what it counts or measures ("40 employees",
"$2M", "12%"); "the number of customers increased to 4,150" gives it nothing to read. Such a
number must still be in the source (``SupportScorer`` calls the claim at most ``partial``
otherwise), or "4,150 customers" would read as supported by a page that says 1,450.
"""

from __future__ import annotations

import re

from sourcedesk.core.citations.figures import Figure

# Digits between non-word characters: not glued to a name ("COVID-19", "H1"), a fraction or a
# range ("24/7"), a currency, a percent or another number.
_DIGIT_RUN = re.compile(r"(?<![\w.,/$€£¥-])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w%/]|[.,]\d)")
MIN_VALUE = 10  # "3 offices" and "version 2" are not what a claim stands on


def loose_numbers(text: str, found: tuple[Figure, ...]) -> tuple[tuple[str, float], ...]:
    """``(as written, value)`` of each number of ``MIN_VALUE`` or more outside every figure in ``found``
    (the figures read from ``text``)."""
    spans = [(f.start, f.end) for f in found]
    out = []
    for m in _DIGIT_RUN.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in spans):
            continue
        value = float(m.group().replace(",", ""))
        if value >= MIN_VALUE:
            out.append((m.group(), value))
    return tuple(out)
