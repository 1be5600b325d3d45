"""What a figure measures: the words around it ("valued at $2 billion", "ARR of $48 million").

Two figures of the same value support each other only when they measure the same thing: "$48
million" of ARR is not "$48 million" raised. The words around a figure in its clause — up to
``BEFORE`` words before it and ``AFTER`` after, read as terms, so "annual recurring revenue"
and "ARR" meet — are its **measure**. A claim figure is *confirmed* by a source figure of the
same value whose measure shares a term with its own (the memo's subject's names, figures and
scale words aside).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache

from sourcedesk.core.citations.figures import Figure, less_precise, matches, same_quantity
from sourcedesk.core.citations.tokens import UNSPACED_RE as UNSPACED
from sourcedesk.core.citations.tokens import normalise_text, term_set, terms

BEFORE, AFTER = 6, 4
_WORD = re.compile(r"[^\W\d_][\w'’&-]*")
_STOP = re.compile(r"[.!?](?=\s|$)|[;:()。；！？\n]")
_SCALE_WORDS = term_set("thousand million billion trillion percent per cent dollars euros pounds yen")


_WINDOW = 160  # characters each side of a figure that its measure words are read from


@lru_cache(maxsize=64)
def _clause_marks(text: str) -> tuple[str, list[int], list[int]]:
    """``normalise_text(text)`` with the ends and starts of its clause stops, found once per text:
    read again for every figure, a hostile answer with thousands of amounts took minutes."""
    norm = normalise_text(text)
    found = list(_STOP.finditer(norm))
    return norm, [m.end() for m in found], [m.start() for m in found]


@lru_cache(maxsize=32768)
def measure(text: str, start: int, end: int) -> frozenset[str]:
    """The terms around the figure at [start, end) of ``normalise_text(text)``, within its clause."""
    norm, ends, starts = _clause_marks(text)
    at = bisect_right(ends, start)
    lo = ends[at - 1] if at else 0
    if start and _STOP.match(norm, start - 1, start):  # a stop just before the figure
        lo = max(lo, start)
    after_at = bisect_left(starts, end)
    hi = starts[after_at] if after_at < len(starts) else len(norm)
    lo, hi = max(lo, start - _WINDOW), min(hi, end + _WINDOW)
    before = _WORD.findall(norm, lo, start)[-BEFORE:]
    after = _WORD.findall(norm, end, hi)[:AFTER]
    words = " ".join(before + after)
    if UNSPACED.search(norm, lo, hi):  # CJK: no word breaks; the characters around the figure
        words += " " + norm[max(lo, start - 8) : start] + " " + norm[end : min(hi, end + 6)]
    return term_set(words) - _SCALE_WORDS


@lru_cache(maxsize=32768)
def measure_by_distance(text: str, start: int, end: int) -> tuple[str, ...]:
    """The terms of ``measure``, nearest the figure first (a word before it before one after it at
    the same distance): "founded in 2017 and employs 350" is a founding year, not a headcount."""
    norm = normalise_text(text)
    stops = [m.end() for m in _STOP.finditer(norm, 0, start)]
    lo = stops[-1] if stops else 0
    stop_after = _STOP.search(norm, end)
    hi = stop_after.start() if stop_after else len(norm)
    # Terms of the words around, read as phrases ("went public" is one term), nearest first.
    before = terms(" ".join(_WORD.findall(norm, lo, start)[-BEFORE:]))[::-1]
    after = terms(" ".join(_WORD.findall(norm, end, hi)[:AFTER]))
    ordered: list[str] = []
    for i in range(max(len(before), len(after))):
        for side in (before, after):
            if i < len(side) and side[i] not in ordered and side[i] not in _SCALE_WORDS:
                ordered.append(side[i])
    return tuple(ordered)


def confirmed_in(
    claim_text: str, figure: Figure, passages: list[tuple[str, tuple[Figure, ...]]], ignore: frozenset[str]
) -> int | None:
    """The index of the first passage stating ``figure`` (a figure of ``claim_text``) with a
    measure that shares a term with the claim figure's own, or None."""
    wanted = measure(claim_text, figure.start, figure.end) - ignore
    if not wanted:
        return None
    for i, (text, found) in enumerate(passages):
        for g in found:
            if matches(figure, g) and wanted & measure(text, g.start, g.end):
                return i
    return None


MIN_SHARED = 2  # measure terms a conflicting figure must share with the claim's (one is chance)
# When a figure is, not what it is: "in the first half of 2024" names no measure.
_PERIOD = term_set(
    "year years quarter quarters month months half first second third fourth fiscal fy h1 h2 q1 q2 q3 q4 "
    "week weeks day days period end ended ending earlier ago previous last prior since until "
    "january february march april may june july august september october november december"
)


def given_otherwise(
    claim_text: str, figure: Figure, passages: list[tuple[str, tuple[Figure, ...]]], ignore: frozenset[str]
) -> tuple[int, Figure] | None:
    """Where the source gives the claim figure's measure another value, when it states the claim's
    value only as something else: "bought a 40% stake" against "bought a 60% stake … the seller
    keeps the remaining 40%". Returns (passage index, the source's figure), or None when some
    mention of the value shares a measure term with the claim's, or no other value shares
    ``MIN_SHARED`` of them."""
    wanted = measure(claim_text, figure.start, figure.end) - ignore - _PERIOD
    if len(wanted) < MIN_SHARED:
        return None
    rival: tuple[int, Figure] | None = None
    best, stated = MIN_SHARED - 1, False
    for i, (text, found) in enumerate(passages):
        for g in found:
            if matches(figure, g):
                if wanted & measure(text, g.start, g.end):
                    return None  # stated as the claim's measure somewhere
                stated = True
            elif same_quantity(figure, g) and not less_precise(figure, g):
                shared = len(wanted & measure(text, g.start, g.end))
                if shared > best:
                    best, rival = shared, (i, g)
    return rival if stated else None  # a value the source never gives is the other checks' to judge
