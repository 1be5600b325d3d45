"""Outside text made safe to show, store and print: the one cleaning function.

Titles, snippets, page text, error bodies and URLs come from servers we do not
control. Printed raw, ``ESC[2J`` blanks the analyst's screen, ``ESC]0;…`` retitles
the terminal, ``ESC]52;…`` writes the clipboard, ``ESC]8;…`` plants a hidden link
and U+202E turns ``exe.pdf`` into ``fdp.exe``. A server may also echo our API key
back. So everything that enters the product from outside passes through
``clean_text`` once, where it enters:

- whole escape sequences are removed (CSI, OSC with its payload — title, clipboard,
  hyperlink —, DCS/SOS/PM/APC strings, two-byte escapes), in their 7-bit and
  8-bit forms; an unterminated string sequence ends at the line's end;
- every other C0 and C1 control character and DEL is removed; a multi-line text
  keeps its newlines and tabs (``\\r\\n`` and a lone ``\\r`` become ``\\n``: a bare
  carriage return would let text overwrite what is already on the line), a
  one-line text turns them into spaces;
- bidirectional embeddings, overrides and isolates (U+202A–U+202E,
  U+2066–U+2069) are removed, and so are the invisible characters that reorder or
  hide text: the direction marks LRM, RLM and ALM (U+200E, U+200F, U+061C), the
  zero-width space, word joiner and byte-order mark (U+200B, U+2060–U+2064, U+FEFF),
  the soft hyphen (U+00AD) and U+180E; the line and paragraph separators U+2028 and
  U+2029 are line breaks like ``\n`` (zero-width joiners stay: scripts and emoji need them);
- a lone surrogate (``"\\ud800"`` decodes to one in JSON) is replaced by U+FFFD, the
  replacement character: such a string cannot be written as UTF-8 at all;
- every known API key is replaced by ``[redacted]``, in whatever spelling a server echoed
  it (``sourcedesk.core.text.key_forms``: percent- or entity-encoded, another case,
  reversed, split by an invisible character).

``clean_mapped`` does the same and keeps a map from offsets in the original text
to offsets in the cleaned one, so character spans that refer to the original (a
writer's citation annotations) can be moved onto the cleaned text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sourcedesk.core.text.key_forms import key_spans
from sourcedesk.core.text.secrets import MIN_SECRET_LEN, REDACTED, secret_values

# Escape sequences, whole. The payload of a string sequence (OSC, DCS, SOS, PM, APC)
# ends at its terminator (BEL, ESC \ or ST) or, when a server leaves it open, at the
# end of the line — a terminal would swallow the rest of the output instead.
_SEQUENCE = (
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: cursor moves, erase, colours, queries
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC 0/8/52, DCS, …
    r"|\x1b[ -/]*[0-~]?"  # any other escape (two-byte and nF forms)
)
_LINE_BREAK = r"\r\n?|[\n\u2028\u2029]"
_BIDI = "\u202a-\u202e\u2066-\u2069"
# Invisible characters that reorder or hide text (the zero-width joiners U+200C/U+200D are not among them,
# nor the variation selectors: emoji and many scripts need them). Besides the marks, spaces and word joiners:
# the Hangul and Khmer fillers a blank-looking name is made of, the deprecated format characters, interlinear
# annotation, shorthand and musical format controls, and the tag characters that smuggle hidden ASCII.
INVISIBLES = (
    "\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f\u2060-\u2064\u206a-\u206f"
    "\u3164\ufeff\uffa0\ufff9-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f"
)
_SURROGATE = "\ud800-\udfff"
_CONTROL = f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}{INVISIBLES}]"
_TAB = r"\t"
_UNSAFE = re.compile(
    f"(?P<seq>{_SEQUENCE})|(?P<br>{_LINE_BREAK})|(?P<tab>{_TAB})|(?P<ctl>{_CONTROL})|(?P<sur>[{_SURROGATE}])"
)
# The fast path: most text has nothing to clean.
_SUSPECT = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\r\u2028\u2029{_BIDI}{INVISIBLES}{_SURROGATE}]")
_ONE_LINE_SUSPECT = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\u2028\u2029{_BIDI}{INVISIBLES}{_SURROGATE}]")

#: What no cleaned text contains (tests look for it in every output).
UNSAFE_CHARACTER = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\u2028\u2029{_BIDI}{INVISIBLES}{_SURROGATE}]")
#: What makes outside text hostile: controls other than line breaks and tabs, bidi controls.
HOSTILE_CHARACTER = re.compile(f"[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f{_BIDI}]")
#: Characters a reader cannot see, or a lone surrogate: cleaning takes them out too, with a note of its own.
INVISIBLE_CHARACTER = re.compile(f"[{INVISIBLES}\u2028\u2029{_SURROGATE}]")


def _replacement(match: re.Match[str], multiline: bool) -> str:
    kind = match.lastgroup
    if kind == "br":
        return "\n" if multiline else " "
    if kind == "tab":
        return "\t" if multiline else " "
    if kind == "sur":
        return "\ufffd"
    return ""


def _secrets(secrets: Iterable[str] | None) -> list[str]:
    # Something shorter than any real key ("sandbox", "test") is not redacted: it would
    # take ordinary words out of the text.
    found = secret_values() if secrets is None else [s for s in secrets if s and len(s) >= MIN_SECRET_LEN]
    return sorted(set(found), key=len, reverse=True)


def clean_text(text: str, *, multiline: bool = False, secrets: Iterable[str] | None = None) -> str:
    """``text`` with escape sequences, control characters and bidi controls removed and
    API keys redacted. ``secrets``: the keys to redact (default: every known key)."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    suspect = _SUSPECT if multiline else _ONE_LINE_SUSPECT
    if suspect.search(text):
        text = _UNSAFE.sub(lambda m: _replacement(m, multiline), text)
    spans = key_spans(text, _secrets(secrets))
    if spans:
        text = _redacted(text, spans)
    return text


def _redacted(text: str, spans: list[tuple[int, int]]) -> str:
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        pieces += [text[pos:start], REDACTED]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


# A server can nest a JSON value hundreds of levels deep (``[[[[…]]]]`` in a usage block):
# walking it, storing it or printing it would exceed Python's recursion limit. No answer
# we read needs more than a few levels, so a deeper branch is kept as this marker.
MAX_TREE_DEPTH = 64
TOO_DEEP = "[nested too deeply; not kept]"


def clean_tree(value: object, *, secrets: Iterable[str] | None = None) -> object:
    """A copy of a JSON-like value (facts, entity records, a whole document) with every
    string cleaned — keys as one-line text, values as multi-line text — and every branch
    deeper than ``MAX_TREE_DEPTH`` replaced by ``TOO_DEEP``."""
    keys = _secrets(secrets)

    def walk(v: object, depth: int) -> object:
        if isinstance(v, str):
            return clean_text(v, multiline=True, secrets=keys)
        if isinstance(v, (Mapping, list, tuple)) and depth >= MAX_TREE_DEPTH:
            return TOO_DEEP
        if isinstance(v, Mapping):
            return {
                (clean_text(k, secrets=keys) if isinstance(k, str) else k): walk(x, depth + 1) for k, x in v.items()
            }
        if isinstance(v, (list, tuple)):
            return [walk(x, depth + 1) for x in v]
        return v

    return walk(value, 0)


def too_deep(value: object, limit: int = MAX_TREE_DEPTH) -> bool:
    """Whether a JSON-like value nests deeper than ``limit`` (what ``clean_tree`` cuts off)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (Mapping, list, tuple)):
            if depth >= limit:
                return True
            children = v.values() if isinstance(v, Mapping) else v
            stack.extend((x, depth + 1) for x in children)
    return False


def clean_document(document: Mapping[str, object], *, secrets: Iterable[str] | None = None) -> dict[str, object]:
    """``clean_tree`` for a JSON object: a cleaned copy that is still a dict."""
    cleaned = clean_tree(document, secrets=secrets)
    return cleaned if isinstance(cleaned, dict) else {}


@dataclass(frozen=True)
class Taint:
    """What cleaning a JSON-like value will take out, for the warnings that say so."""

    controls: bool = False  # terminal control sequences or bidi controls
    invisible: bool = False  # invisible characters, separators or lone surrogates
    echoed: bool = False  # an API key, in any spelling

    def __bool__(self) -> bool:
        return self.controls or self.invisible or self.echoed


def tainted(value: object, secrets: Iterable[str] | None = None) -> Taint:
    """What ``value`` (anywhere in it, keys included) carries that cleaning removes."""
    keys = _secrets(secrets)
    controls = invisible = echoed = False
    stack = [value]
    while stack and not (controls and invisible and echoed):
        v = stack.pop()
        if isinstance(v, str):
            controls = controls or bool(HOSTILE_CHARACTER.search(v))
            invisible = invisible or bool(INVISIBLE_CHARACTER.search(v))
            echoed = echoed or bool(keys and key_spans(v, keys))
        elif isinstance(v, Mapping):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return Taint(controls, invisible, echoed)


# ---------------------------------------------------------------- cleaning with an offset map


@dataclass(frozen=True)
class _Edit:
    start: int  # in the text the edit applies to
    end: int
    new_length: int


class OffsetMap:
    """Where each offset of the original text ended up in the cleaned text.

    Built from the edits cleaning made (a removed sequence, a redacted key); an
    offset inside a removed or replaced stretch maps to its edge — ``start`` of a
    span to the left edge, ``end`` to the right — so a span never loses a
    character that survived cleaning and never reaches into a neighbour."""

    def __init__(self, edits: Sequence[_Edit] = ()) -> None:
        self._edits = sorted(edits, key=lambda e: e.start)
        self._starts = [e.start for e in self._edits]
        shifts: list[int] = []
        total = 0
        for e in self._edits:
            shifts.append(total)
            total += e.new_length - (e.end - e.start)
        self._shift_before = shifts  # total shift from edits before edit i
        self._total = total

    def offset(self, original: int, *, right: bool = False) -> int:
        """The cleaned-text offset of ``original`` (``right``: an end offset)."""
        i = bisect_right(self._starts, original) - 1
        if i < 0:
            return original
        e = self._edits[i]
        shift = self._shift_before[i]
        new_start = e.start + shift
        if original >= e.end:
            return original + shift + e.new_length - (e.end - e.start)
        if original == e.start or not right:
            return new_start
        return new_start + e.new_length

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The cleaned-text span of the original ``[start, end)``."""
        new_start = self.offset(start)
        return new_start, max(new_start, self.offset(end, right=True))

    def then(self, after: OffsetMap) -> OffsetMap:
        """This map followed by ``after`` (which was built on this map's output)."""
        return _Chain(self, after)


class _Chain(OffsetMap):
    def __init__(self, first: OffsetMap, second: OffsetMap) -> None:
        super().__init__()
        self._first, self._second = first, second

    def offset(self, original: int, *, right: bool = False) -> int:
        return self._second.offset(self._first.offset(original, right=right), right=right)


@dataclass(frozen=True)
class Cleaned:
    """A cleaned text and the map of offsets from the original into it."""

    text: str
    offsets: OffsetMap

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.offsets.span(start, end)


def clean_mapped(text: str, *, multiline: bool = True, secrets: Iterable[str] | None = None) -> Cleaned:
    """``clean_text`` that also returns where every original offset went."""
    out: list[str] = []
    edits: list[_Edit] = []
    pos = 0
    for m in _UNSAFE.finditer(text):
        replacement = _replacement(m, multiline)
        out.append(text[pos : m.start()])
        out.append(replacement)
        if len(replacement) != m.end() - m.start():
            edits.append(_Edit(m.start(), m.end(), len(replacement)))
        pos = m.end()
    out.append(text[pos:])
    cleaned = "".join(out)
    first = OffsetMap(edits)
    redacted_edits: list[_Edit] = []
    spans = key_spans(cleaned, _secrets(secrets))
    if spans:
        redacted_edits = [_Edit(start, end, len(REDACTED)) for start, end in spans]
        cleaned = _redacted(cleaned, spans)
    offsets = first.then(OffsetMap(redacted_edits)) if redacted_edits else first
    return Cleaned(cleaned, offsets)


__all__ = [
    "HOSTILE_CHARACTER",
    "INVISIBLE_CHARACTER",
    "MAX_TREE_DEPTH",
    "TOO_DEEP",
    "UNSAFE_CHARACTER",
    "Cleaned",
    "OffsetMap",
    "Taint",
    "clean_mapped",
    "clean_text",
    "clean_tree",
    "tainted",
    "too_deep",
]
