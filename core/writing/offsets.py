"""Which unit a writer's ``url_citation`` offsets count in: code points, UTF-16 code units or UTF-8 bytes.

Perplexity documents ``start_index``/``end_index`` only as a "character index". A
server written in Go counts UTF-8 bytes, one in JavaScript UTF-16 units, one in Python
code points: after the first emoji or CJK character the three disagree, and an offset
read in the wrong unit still passes ``end <= len(text)`` while binding the citation to
the wrong words. So every annotated span is read under each unit, and the unit kept is
the one under which the spans of the *whole answer* line up with its text: each starts
at a word and ends at (or just before) its claim's sentence end or a citation marker.
When no unit fits, the caller drops the spans and keeps the markers alone, with a warning.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

UNITS = ("code points", "utf-16", "utf-8")

_CLOSERS = ")]\"'”’»*_`"
_TAIL_CHARS = 60
# What may follow a span before its claim ends: up to three words, closing marks, then the end.
_TAIL = re.compile(
    r"(?:\s*[^\s.!?;:,。！？；：，…\[\]]+){0,3}?[)\]\"'”’»*_`]*"
    r"(?:(?P<stop>\s*(?:[.!?;:,。！？；：，…\n]|\[\^?[^\[\]\s]{1,40}\]))|\s*$)"
)
# A claim ends at its sentence's end or at a clause boundary (a claim is its clause: design §3).
_SENTENCE_END = ".!?;:,。！？；：，…\n"


@dataclass(frozen=True)
class Span:
    """One annotation as sent: which part's text it indexes, and its raw offsets."""

    part: int
    start: int
    end: int


class _Units:
    """Where each code point of one text starts, counted in UTF-16 units and in UTF-8 bytes
    (built only for a text that is not ASCII: in ASCII the three units agree)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._u16: list[int] | None = None
        self._u8: list[int] | None = None
        if not text.isascii():
            u16, u8 = [0], [0]
            for ch in text:
                cp = ord(ch)
                u16.append(u16[-1] + (2 if cp > 0xFFFF else 1))
                u8.append(u8[-1] + (1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4))
            self._u16, self._u8 = u16, u8

    def to_code_points(self, offset: int, unit: str) -> int | None:
        """The code-point offset of ``offset`` counted in ``unit``; None inside a character or past the end."""
        table = self._u16 if unit == "utf-16" else self._u8 if unit == "utf-8" else None
        if table is None:
            return offset if 0 <= offset <= len(self.text) else None
        i = bisect_left(table, offset)
        return i if i < len(table) and table[i] == offset else None


def _starts_a_word(text: str, at: int) -> bool:
    """The span does not begin inside a word (a wrong unit usually cuts one: ``'uilds robots'``)."""
    if at >= len(text):
        return False
    return at == 0 or not (text[at - 1].isalnum() and text[at].isalnum())


def _ends_a_claim(text: str, end: int) -> bool:
    """The span ends at a word's end, at or just before its claim's end: at most a few words
    (``… Series B`` + `` in 2025.``) before a sentence or clause end or a citation marker."""
    if 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
        return False  # it cuts a word: the unit is wrong
    j = end
    while j > 0 and text[j - 1] in " \t":
        j -= 1
    if j > 0 and (text[j - 1] in _SENTENCE_END or text[j - 1] == "]"):
        return True  # the span takes in its sentence's end (or its marker) itself
    limit = min(len(text), end + _TAIL_CHARS)
    m = _TAIL.match(text, end, limit)
    return m is not None and (m.end() < limit or limit == len(text) or bool(m.group("stop")))


def lines_up(text: str, start: int, end: int) -> bool:
    """The code-point span ``[start, end)`` starts at a word and ends its claim (an empty span: ends it)."""
    if not 0 <= start <= end <= len(text):
        return False
    return (start == end or _starts_a_word(text, start)) and _ends_a_claim(text, end)


def possible(text: str, start: int, end: int) -> bool:
    """Whether ``[start, end)`` fits inside ``text`` in some unit at all (else it is unusable, whatever the unit)."""
    return 0 <= start <= end <= len(text.encode("utf-8", "surrogatepass"))


View = Callable[[int, int, int], tuple[str, int, int]]


def _as_is(texts: list[str]) -> View:
    return lambda part, a, b: (texts[part], a, b)


def choose_unit(
    texts: list[str], spans: list[Span], view: View | None = None
) -> tuple[str | None, list[tuple[int, int] | None]]:
    """The unit under which every span lines up (code points first when several do) and the spans
    in code points of ``texts``; ``(None, [None…])`` when no unit fits them all.

    ``view(part, start, end)`` gives the text and span to judge (the caller's cleaned text, say:
    a control sequence after a span is not words); by default the texts as they are."""
    if not spans:
        return "code points", []
    judge = view or _as_is(texts)
    tables = [_Units(t) for t in texts]
    for unit in UNITS:
        converted: list[tuple[int, int] | None] = []
        for span in spans:
            table = tables[span.part]
            a, b = table.to_code_points(span.start, unit), table.to_code_points(span.end, unit)
            if a is None or b is None or not lines_up(*judge(span.part, a, b)):
                break
            converted.append((a, b))
        else:
            return unit, converted
    return None, [None] * len(spans)
