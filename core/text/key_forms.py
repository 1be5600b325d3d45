"""Where an API key appears in a text, in whatever spelling a server echoed it back.

A server that reflects the key does not always reflect it verbatim: a 401 body may
percent-encode it (``%70%70%6c%78…``, or twice: ``%2570…``), a JSON body escape it
(``\\u0070…``), a log line upper-case it (or write it in fullwidth letters), a page
reverse it, an ``Authorization`` echo carry it in base64, and text can split it with a
character that renders as nothing (U+200B, U+00AD, a tag character, a combining mark;
raw, as ``&#173;``, ``&shy;`` or ``%E2%80%8B``) so an exact match misses it while a reader
still sees the key. So the text is read once into a *skeleton* — case-folded, escapes
decoded, invisible characters dropped — with a map back to the original offsets; every
occurrence of a key, or of the key reversed, in the skeleton is a stretch of the original
to redact, and so is the key's base64 in any alignment. Linear in the text: plain
stretches are folded whole, and only the (rare) escapes and invisibles are handled one by
one.
"""

from __future__ import annotations

import base64
import re
from bisect import bisect_right
from collections.abc import Iterable
from urllib.parse import unquote_to_bytes

# Characters that render as nothing and may be slipped between a key's characters: format
# characters (soft hyphen, zero-width, bidi, word joiner, BOM, tags), variation selectors,
# fillers, and combining marks (a key under accents is still read as the key).
INVISIBLE_CLASS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\u0300-\u036f\u0600-\u0605\u06dd\u070f\u08e2\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff"
    "\ufe20-\ufe2f\ufff9-\ufffb\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_INVISIBLE = re.compile(f"[{INVISIBLE_CLASS}]+")
# HTML's names for invisible characters (a named entity that is visible is left as it is).
_INVISIBLE_ENTITIES = (
    "shy|ZeroWidthSpace|zwnj|zwj|lrm|rlm|NoBreak|InvisibleTimes|InvisibleComma|ApplyFunction|it|ic|af"
    "|NegativeVeryThinSpace|NegativeThinSpace|NegativeMediumSpace|NegativeThickSpace"
)
_SPECIAL = re.compile(
    rf"(?=[%&\\{INVISIBLE_CLASS}])"  # one class test rules most places out before any alternative runs
    r"(?:%[0-9A-Fa-f]{2}[%0-9A-Fa-f]*"  # a run of percent escapes (UTF-8 bytes; %25xx is %xx encoded again)
    r"|&#[xX][0-9A-Fa-f]{1,6};|&#[0-9]{1,7};"
    rf"|&(?:{_INVISIBLE_ENTITIES});"
    r"|\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}|\\U[0-9A-Fa-f]{8}"  # JSON and Python escapes
    rf"|[{INVISIBLE_CLASS}]+)"
)
# Fullwidth ASCII (U+FF01…U+FF5E) reads as ASCII: folded one character for one.
_FULLWIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}


def _fold(segment: str) -> str:
    """``segment`` lower-cased and fullwidth letters made ASCII, one character for one."""
    low = segment.translate(_FULLWIDTH).lower()
    if len(low) == len(segment):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in segment.translate(_FULLWIDTH))  # "İ" → two


def _decode(token: str) -> str:
    """The text an escape (or a run of them) stands for, folded, without invisible characters."""
    if token[0] == "%":
        text = unquote_to_bytes(token).decode("utf-8", "replace")
        if "%" in text:  # encoded twice
            text = unquote_to_bytes(text).decode("utf-8", "replace")
    elif token.startswith("&#"):
        body = token[2:-1]
        code = int(body[1:], 16) if body[:1] in "xX" else int(body)
        text = chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else ""
    elif token[0] == "\\":
        code = int(token[2:], 16)
        text = chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else ""
    else:
        return ""  # invisible characters, raw or as a named entity
    return _fold(_INVISIBLE.sub("", text))


_DECODED: dict[str, str] = {}


def _decoded(m: re.Match[str]) -> str:
    token = m.group()
    out = _DECODED.get(token)
    if out is None:
        out = _decode(token)
        if len(_DECODED) < 4096:
            _DECODED[token] = out
    return out


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
                pieces.append(_fold(text[pos : m.start()]))
                self._mark(length, pos, 0)
                length += m.start() - pos
            decoded = _decoded(m)
            self._mark(length, m.start(), m.end() - m.start())
            pieces.append(decoded)
            length += len(decoded)
            pos = m.end()
        pieces.append(_fold(text[pos:]))
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
        if width:  # a decoded token stands, whole, for ``width`` original characters
            return origin + width if end else origin
        return origin + (at - self._starts[i])


MIN_BASE64_CORE = 12  # a shorter stretch of a key's base64 could turn up by chance


def base64_cores(key: str) -> set[str]:
    """The stretches of ``key``'s base64 (standard and URL-safe) that are the same wherever the
    key sits in the encoded bytes: the characters fed only by the key's own bytes, in each of
    the three alignments."""
    raw = key.encode("utf-8")
    cores: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        first = -(-shift * 8 // 6)  # the first character no prefix byte feeds
        last = ((shift + len(raw)) * 8) // 6  # the characters before it take no byte after the key
        core = encoded[first:last]
        if len(core) >= MIN_BASE64_CORE:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


def _base64_spans(text: str, keys: Iterable[str]) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for key in keys:
        for core in base64_cores(key):
            at = text.find(core)
            while at >= 0:
                found.append((at, at + len(core)))
                at = text.find(core, at + 1)
    return found


def _merged(found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    found.sort()
    merged = [found[0]]
    for a, b in found[1:]:
        if a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def key_spans(text: str, keys: Iterable[str]) -> list[tuple[int, int]]:
    """Merged ``(start, end)`` stretches of ``text`` that spell one of ``keys`` (or a key reversed)."""
    keys = [key for key in keys if key]
    forms = {f for key in keys for f in (key.lower(), key.lower()[::-1])}
    if not forms or not text:
        return []
    found = _base64_spans(text, keys)
    special = _SPECIAL.search(text) is not None
    haystack = _fold(_SPECIAL.sub(_decoded, text)) if special else _fold(text)
    if any(form in haystack for form in forms):
        skeleton = Skeleton(text) if special else None
        if skeleton is not None:
            haystack = skeleton.text
        spelled: list[tuple[int, int]] = []
        for form in forms:
            at = haystack.find(form)
            while at >= 0:
                spelled.append((at, at + len(form)))
                at = haystack.find(form, at + 1)
        if skeleton is not None:
            spelled = [(skeleton.original(a), skeleton.original(b, end=True)) for a, b in spelled]
        found += spelled
    return _merged(found) if found else []
