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
from functools import lru_cache

from sourcedesk.core.citations.figures import Figure, matches
from sourcedesk.core.citations.tokens import UNSPACED_RE as UNSPACED
from sourcedesk.core.citations.tokens import normalise_text, term_set, terms

BEFORE, AFTER = 6, 4
_WORD = re.compile(r"[^\W\d_][\w'’&-]*")
_STOP = re.compile(r"[.!?](?=\s|$)|[;:()。；！？\n]")
_SCALE_WORDS = term_set("thousand million billion trillion percent per cent dollars euros pounds yen")


@lru_cache(maxsize=32768)
def measure(text: str, start: int, end: int) -> frozenset[str]:
    """The terms around the figure at [start, end) of ``normalise_text(text)``, within its clause."""
    norm = normalise_text(text)
    stops = [m.end() for m in _STOP.finditer(norm, 0, start)]
    lo = stops[-1] if stops else 0
    stop_after = _STOP.search(norm, end)
    hi = stop_after.start() if stop_after else len(norm)
    before = _WORD.findall(norm, lo, start)[-BEFORE:]
    after = _WORD.findall(norm, end, hi)[:AFTER]
    words = " ".join(before + after)
    if UNSPACED.search(norm[lo:hi]):  # CJK: no word breaks; the characters around the figure
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
