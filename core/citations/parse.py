"""A draft as the reconciler sees it: markers, definitions and prose, with source offsets.

Built on ``scan`` (instrumented markdown-it). Each inline block's content is
mapped back to source offsets line by line — markdown-it strips container
prefixes (``> ``, list indents) and table pipes, never changes the characters in
between — so an edit can name exact source characters and nothing else.

Markers:

* footnote references ``[^label]`` found by the footnote plugin, outside code
  and link text (those inside link text are kept apart in ``link_text_refs``);
* bare numeric markers ``[N]`` — not footnote syntax, so looked for only in
  prose ranges (never in code, link text, autolinks, raw HTML, escapes, entities,
  inline notes, nor in ``[N]: …`` reference definitions, which markdown-it
  consumes as block syntax).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from markdown_it.token import Token

from core.citations.scan import Span, scan

BARE_RE = re.compile(r"\[(\d{1,4})\]")
_WS = " \t"


@dataclass(frozen=True)
class Marker:
    kind: str  # "footnote" | "bare"
    label: str  # "3", "E2", "deck"; for bare markers the digits
    start: int  # source offsets of the whole marker text
    end: int
    block: int  # index in ParsedDoc.blocks
    cstart: int  # offsets in the block content
    cend: int
    definition: int | None  # index of the enclosing footnote definition, if any

    @property
    def text(self) -> str:
        return f"[^{self.label}]" if self.kind == "footnote" else f"[{self.label}]"


@dataclass
class InlineBlock:
    content: str
    offsets: list[int]  # content index → source offset (len(content) + 1 entries)
    line: int  # first source line (0-based)
    spans: list[Span]
    definition: int | None
    heading: bool = False
    markers: list[int] = field(default_factory=list)  # indices in ParsedDoc.markers, in order

    def src_start(self, i: int) -> int:
        return self.offsets[i]

    def src_end(self, i: int) -> int:
        """Source offset just after content index ``i - 1`` (exclusive end of a range ending at i)."""
        return self.offsets[i - 1] + 1 if i > 0 else self.offsets[0]


@dataclass
class Definition:
    label: str
    line_start: int  # source lines [line_start, line_end) holding the definition
    line_end: int
    start: int  # source offsets of those lines (end includes the final newline if any)
    end: int
    blocks: list[int] = field(default_factory=list)


@dataclass
class Heading:
    line_start: int
    line_end: int
    text: str


@dataclass
class ParsedDoc:
    source: str
    line_starts: list[int]
    blocks: list[InlineBlock] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    link_text_refs: list[str] = field(default_factory=list)  # footnote refs inside link text
    inline_notes: list[str] = field(default_factory=list)  # ^[...] contents (nested notes included)
    numeric_reference_links: int = 0  # [N] that markdown-it resolved as reference links
    unmapped: int = 0  # markers whose source position could not be verified (never edited)

    def line_of(self, offset: int) -> int:
        return bisect_right(self.line_starts, offset) - 1

    def line_span(self, first: int, last: int) -> tuple[int, int]:
        """Source offsets covering lines [first, last) including their newlines."""
        start = self.line_starts[first]
        end = self.line_starts[last] if last < len(self.line_starts) else len(self.source)
        return start, end


def normalise_source(text: str) -> str:
    """What markdown-it parses: ``\\r\\n``/``\\r`` → ``\\n`` and NUL → U+FFFD (offsets must agree)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def _line_starts(src: str) -> list[int]:
    starts = [0]
    for m in re.finditer("\n", src):
        starts.append(m.end())
    if starts[-1] == len(src) and len(starts) > 1:
        starts.pop()  # no line after a final newline
    return starts


def _map_offsets(doc: ParsedDoc, content: str, first_line: int, cell: bool, cursors: dict[int, int]) -> list[int]:
    src = doc.source
    offsets = [0] * (len(content) + 1)
    pos = 0
    last = len(doc.line_starts) - 1
    lines = content.split("\n")
    for i, cline in enumerate(lines):
        ln = min(first_line + i, last)
        ls = doc.line_starts[ln]
        le = src.find("\n", ls)
        le = len(src) if le < 0 else le
        sline = src[ls:le]
        cursor = cursors.get(ln, 0)
        k = len(cline) - len(cline.lstrip(_WS))
        core = cline[k:]
        o = -1
        if core:
            if not cell:
                for candidate in (sline, sline.rstrip(_WS)):
                    if candidate.endswith(core) and len(candidate) - len(core) >= cursor:
                        o = len(candidate) - len(core)
                        break
            if o < 0:
                o = sline.find(core, cursor)
        if o >= 0 or not core:
            o = max(o, cursor) if core else cursor
            for j in range(k):
                offsets[pos + j] = ls + max(cursor, o - k + j)
            for j in range(len(core)):
                offsets[pos + k + j] = ls + o + j
            cursors[ln] = o + len(core)
        else:  # characters were dropped inside the line (escaped table pipes): align greedily
            s = cursor
            for j, ch in enumerate(cline):
                found = sline.find(ch, s)
                offsets[pos + j] = ls + (found if found >= 0 else s)
                s = found + 1 if found >= 0 else s
            cursors[ln] = s
        end = pos + len(cline)
        if i < len(lines) - 1:
            offsets[end] = le  # the newline
        else:
            offsets[end] = offsets[end - 1] + 1 if end > 0 else ls + cursors.get(ln, 0)
        pos = end + 1
    return offsets


def _protected(spans: list[Span]) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in spans if not s.nested]


def _overlaps(ranges: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(a < end and start < b for a, b in ranges)


def parse(markdown: str, *, always_match_refs: bool = True, code_blocks: bool = True) -> ParsedDoc:
    """Parse a (normalised) draft. See ``normalise_source``; offsets refer to its result."""
    src = normalise_source(markdown)
    tokens, spans_by_token = scan(src, always_match_refs=always_match_refs, code_blocks=code_blocks)
    doc = ParsedDoc(source=src, line_starts=_line_starts(src) if src else [0])
    def_stack: list[int] = []
    cursors: dict[int, int] = {}
    parent: Token | None = None
    for tok in tokens:
        if tok.type == "footnote_reference_open":
            first, last = tok.map or (0, 0)
            while last > first + 1 and not src[slice(*doc.line_span(last - 1, last))].strip():
                last -= 1  # trailing blank lines belong to the document, not the definition
            start, end = doc.line_span(first, last)
            doc.definitions.append(Definition(tok.meta["label"], first, last, start, end))
            def_stack.append(len(doc.definitions) - 1)
        elif tok.type == "footnote_reference_close":
            def_stack.pop()
        elif tok.type == "heading_open":
            parent = tok
        elif tok.type in ("th_open", "td_open"):
            parent = tok
        elif tok.type == "inline" and tok.map is not None:
            _add_block(doc, tok, parent, spans_by_token.get(id(tok), []), def_stack, cursors)
        if tok.type not in ("inline",) and tok.nesting == -1:
            parent = None
    return doc


def _add_block(doc, tok, parent, spans, def_stack, cursors) -> None:
    content = tok.content
    cell = parent is not None and parent.type in ("th_open", "td_open")
    offsets = _map_offsets(doc, content, tok.map[0], cell, cursors)
    definition = def_stack[-1] if def_stack else None
    block = InlineBlock(content, offsets, tok.map[0], spans, definition, heading=parent is not None and not cell)
    bi = len(doc.blocks)
    doc.blocks.append(block)
    if definition is not None:
        doc.definitions[definition].blocks.append(bi)
    if block.heading:
        first, last = parent.map or tok.map
        doc.headings.append(Heading(first, last, content.strip()))
    found: list[tuple[int, int, str, str]] = []
    for s in spans:
        if s.rule == "footnote_ref":
            if s.nested:
                doc.link_text_refs.append(s.label or "")
            else:
                found.append((s.start, s.end, "footnote", s.label or ""))
        elif s.rule == "footnote_inline" and not s.nested:
            doc.inline_notes.append(content[s.start + 2 : s.end - 1])  # markers inside are citations too
        elif s.rule == "link" and not s.nested and re.fullmatch(r"\[\d{1,4}\](\[\])?", content[s.start : s.end]):
            doc.numeric_reference_links += 1
    taken = [(a, b) for a, b, _, _ in found] + _protected([s for s in spans if s.rule != "footnote_ref"])
    for m in BARE_RE.finditer(content):
        if not _overlaps(taken, m.start(), m.end()):
            found.append((m.start(), m.end(), "bare", m.group(1)))
    for cstart, cend, kind, label in sorted(found):
        start, end = block.src_start(cstart), block.src_end(cend)
        if doc.source[start:end] != content[cstart:cend]:
            doc.unmapped += 1
            continue
        block.markers.append(len(doc.markers))
        doc.markers.append(Marker(kind, label, start, end, bi, cstart, cend, definition))
