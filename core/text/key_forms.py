"""Where an API key appears in a text, in whatever spelling a server echoed it back.

A server that reflects the key does not always reflect it verbatim: a 401 body may
percent-encode it (``%70%70%6c%78…``), a log line upper-case it, a page reverse it, and
text can split it with a character that renders as nothing (U+200B, U+00AD) so an exact
match misses it while a reader still sees the key. So the text is read once into a
*skeleton* — lower-cased, ``%xx`` and ``&#…;`` decoded, invisible characters dropped — with
a map back to the original offsets; every occurrence of a key, or of the key reversed, in
the skeleton is a stretch of the original to redact. Linear in the text: plain stretches
are lower-cased whole, and only the (rare) escapes and invisibles are handled one by one.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable

# Characters that render as nothing and may be slipped between a key's characters.
INVISIBLE_CLASS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
_SPECIAL = re.compile(rf"%[0-9A-Fa-f]{{2}}|&#[xX][0-9A-Fa-f]{{1,6}};|&#[0-9]{{1,7}};|[{INVISIBLE_CLASS}]+")


def _decode(token: str) -> str:
    if token[0] == "%":
        return chr(int(token[1:], 16)).lower()
    if token.startswith("&#"):
        body = token[2:-1]
        code = int(body[1:], 16) if body[:1] in "xX" else int(body)
        return chr(code).lower() if code <= 0x10FFFF else ""
    return ""  # invisible characters


_DECODED: dict[str, str] = {}


def _decoded(m: re.Match[str]) -> str:
    token = m.group()
    out = _DECODED.get(token)
    if out is None:
        out = _decode(token)
        if len(_DECODED) < 4096:
            _DECODED[token] = out
    return out


def _lower(segment: str) -> str:
    low = segment.lower()
    if len(low) == len(segment):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in segment)  # "İ" lower-cases to two


class Skeleton:
    """``text`` as compared with keys, and the way back to ``text``'s offsets."""

    def __init__(self, text: str) -> None:
        pieces: list[str] = []
        self._starts: list[int] = [0]  # skeleton offset where each run starts
        self._origins: list[int] = [0]  # the original offset of that start
        self._widths: list[int] = [0]  # 0: a plain run (1:1); else the original width of one decoded token
        pos = 0
        length = 0
        for m in _SPECIAL.finditer(text):
            if m.start() > pos:
                pieces.append(_lower(text[pos : m.start()]))
                self._mark(length, pos, 0)
                length += m.start() - pos
            decoded = _decode(m.group())
            self._mark(length, m.start(), m.end() - m.start())
            pieces.append(decoded)
            length += len(decoded)
            pos = m.end()
        pieces.append(_lower(text[pos:]))
        self._mark(length, pos, 0)
        self.text = "".join(pieces)

    def _mark(self, skeleton_at: int, original_at: int, width: int) -> None:
        if self._starts[-1] == skeleton_at:
            self._origins[-1], self._widths[-1] = original_at, width
        else:
            self._starts.append(skeleton_at)
            self._origins.append(original_at)
            self._widths.append(width)

    def original(self, at: int, *, end: bool = False) -> int:
        """The original offset of skeleton offset ``at`` (``end``: of the character before it, plus one)."""
        probe = at - 1 if end else at
        i = bisect_right(self._starts, probe) - 1
        origin, width = self._origins[i], self._widths[i]
        if width:  # a decoded token is one skeleton character standing for ``width`` original ones
            return origin + width if end else origin
        return origin + (at - self._starts[i])


def key_spans(text: str, keys: Iterable[str]) -> list[tuple[int, int]]:
    """Merged ``(start, end)`` stretches of ``text`` that spell one of ``keys`` (or a key reversed)."""
    forms = {f for key in keys if key for f in (key.lower(), key.lower()[::-1])}
    if not forms or not text:
        return []
    special = _SPECIAL.search(text) is not None
    haystack = _lower(_SPECIAL.sub(_decoded, text)) if special else _lower(text)
    if not any(form in haystack for form in forms):
        return []  # the usual case: no key in any spelling, and no map back is needed
    skeleton = Skeleton(text) if special else None
    if skeleton is not None:
        haystack = skeleton.text
    found: list[tuple[int, int]] = []
    for form in forms:
        at = haystack.find(form)
        while at >= 0:
            found.append((at, at + len(form)))
            at = haystack.find(form, at + 1)
    if not found:
        return []
    if skeleton is not None:
        found = [(skeleton.original(a), skeleton.original(b, end=True)) for a, b in found]
    found.sort()
    merged = [found[0]]
    for a, b in found[1:]:
        if a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged
