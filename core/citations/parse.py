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
  consumes as block syntax). A group ``[1,2]`` / ``[1, 2]`` / ``[1-3]`` is one marker per
  number, all sharing the group's source range;
* Perplexity-style ``[N](https://…)`` — a link whose text is a number and whose
  destination is a web URL is the bare citation ``[N]`` with the URL the writer
  gave (``Marker.url``);
* with ``malformed=True`` (the reconciler), ``[^ E1]`` / ``[^E1 ]`` — not footnote
  syntax (a space inside), but plainly a marker — is read as ``[^E1]``
  (``Marker.raw`` keeps what was written).

A bare, link or malformed marker at a line start directly followed by ``:`` is
not a citation: it is written like a definition (``[2]: see below``), and
rewritten as ``[^2]:`` it would become one.

Link reference definitions (``[ref]: url``), raw HTML blocks and code blocks
(fenced, indented, front matter) are recorded with their source lines: the
first two can carry URLs, the last never changes.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from markdown_it.token import Token

from sourcedesk.core.citations.plain import LINK_DEFINITION, plain_tokens
from sourcedesk.core.citations.plain import Token as PlainToken
from sourcedesk.core.citations.scan import Span, scan

# markdown-it's block tokens, or the lighter ones ``sourcedesk.core.citations.plain`` builds for a plain draft.
BlockToken = Token | PlainToken

# At most three digits: a writer's search returns tens of results, and "[2019]" is a year.
_BARE_ITEM = r"\d{1,3}(?:[ \t]*[-–][ \t]*\d{1,3})?"
BARE_RE = re.compile(rf"\[({_BARE_ITEM}(?:[ \t]*,[ \t]*{_BARE_ITEM})*)\]")
MAX_RANGE = 10  # "[1-3]" is three citations…
MAX_RANGED_NUMBER = 99  # …while "[2019-2024]" is a span of years, not six citations


def bare_numbers(group: str) -> list[str] | None:
    """The citation numbers of a bare group (``1, 3-5`` → 1 3 4 5); None when a range is not
    a plausible citation range (descending, wider than ``MAX_RANGE``, or past ``MAX_RANGED_NUMBER``)."""
    numbers: list[str] = []
    for item in group.split(","):
        ends = [e.strip() for e in re.split("[-–]", item)]
        if len(ends) == 1:
            numbers.append(ends[0])
            continue
        a, b = int(ends[0]), int(ends[1])
        if not a < b or b - a >= MAX_RANGE or b > MAX_RANGED_NUMBER:
            return None
        numbers += [str(n) for n in range(a, b + 1)]
    return numbers


_NUMERIC_LINK = re.compile(r"\[\d{1,3}\](\[\])?")
MALFORMED_RE = re.compile(r"\[\^(?:[ \t]+(\w[\w.-]*)[ \t]*|(\w[\w.-]*)[ \t]+)\]")
_NUMERIC_TEXT = re.compile(r"\s*(\d{1,3})\s*")
# What a browser opens as a web address: http(s) with any run of slashes or backslashes
# ("https:/x.io", "https:\\x.io"), protocol-relative "//x.io", and GFM's scheme-less "www.".
_WEB_URL = re.compile(r"(?i)^(?:https?:[/\\]+|[/\\]{2}(?=[^/\\\s])|www\.)")
_WS = " \t"


@lru_cache(maxsize=4096)
def is_web_url(href: str | None) -> bool:
    """Link targets the no-unretrieved-URL rule covers: http(s) (however many slashes),
    protocol-relative ``//host`` and GFM's scheme-less ``www.`` — entities decoded first,
    since a renderer decodes them (``&#104;ttps://``)."""
    return href is not None and bool(href) and bool(_WEB_URL.match(html.unescape(href).strip()))


class Marker(NamedTuple):
    kind: str  # "footnote" | "bare"
    label: str  # "3", "E2", "deck"; for bare markers the digits
    start: int  # source offsets of the whole marker text
    end: int
    block: int  # index in ParsedDoc.blocks
    cstart: int  # offsets in the block content
    cend: int
    definition: int | None  # index of the enclosing footnote definition, if any
    url: str | None = None  # ``[N](url)``: the URL the writer gave this bare citation
    raw: str | None = None  # the source text when it is not the canonical form (groups, links, "[^ E1]")

    @property
    def text(self) -> str:
        """The marker as written in the source."""
        if self.raw is not None:
            return self.raw
        return f"[^{self.label}]" if self.kind == "footnote" else f"[{self.label}]"


@dataclass
class InlineBlock:
    content: str
    offsets: Sequence[int]  # content index → source offset (len(content) + 1 entries; a range when unbroken)
    line: int  # first source line (0-based)
    spans: list[Span]
    definition: int | None
    heading: bool = False
    markers: list[int] = field(default_factory=list)  # indices in ParsedDoc.markers, in order
    line_end: int = 0  # source lines [line, line_end) of the block (a setext heading's underline included)
    cell: bool = False  # a table cell (shares its source line with other cells)
    html: bool = False  # text between the tags of a raw HTML block (markers found by pattern, not by markdown-it)
    table: int | None = None  # for a cell: which table of the document, and where in it (row 0 = header)
    row: int = 0
    col: int = 0

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


@dataclass(frozen=True)
class Reference:
    """A link reference definition ``[label]: href "title"`` (markdown-it consumed it as block syntax)."""

    label: str  # normalised by markdown-it (case-folded, upper-cased)
    href: str
    title: str
    line_start: int
    line_end: int
    duplicate: bool = False  # a later definition of a label already defined: markdown-it ignores it


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
    numeric_reference_links: int = 0  # [N] resolved as a link to a non-web reference definition
    references: list[Reference] = field(default_factory=list)
    html_blocks: list[tuple[int, int]] = field(default_factory=list)  # source lines [start, end) of raw HTML
    code_blocks: list[tuple[int, int]] = field(default_factory=list)  # fenced/indented code, front matter
    front_matter: tuple[int, int] | None = None  # source lines [start, end) of YAML front matter
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
    i = src.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = src.find("\n", i + 1)
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
            offsets[pos + k : pos + k + len(core)] = range(ls + o, ls + o + len(core))
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


def parse(
    markdown: str,
    *,
    always_match_refs: bool = True,
    code_blocks: bool = True,
    malformed: bool = False,
    plain: bool = True,
) -> ParsedDoc:
    """Parse a (normalised) draft. See ``normalise_source``; offsets refer to its result.

    ``malformed=True`` also reads ``[^ E1]`` (a space inside) as the footnote marker ``[^E1]``.
    A plain draft (``sourcedesk.core.citations.plain``) gets markdown-it's tokens without running it;
    ``plain=False`` always runs the full parse (the two are tested to agree)."""
    src = normalise_source(markdown)
    env: dict[str, Any] = {}
    fast = plain_tokens(src) if plain and always_match_refs else None
    tokens: Sequence[BlockToken]
    if fast is not None:
        tokens, spans_by_token = fast
    else:
        tokens, spans_by_token = scan(src, always_match_refs=always_match_refs, code_blocks=code_blocks, env=env)
    doc = ParsedDoc(source=src, line_starts=_line_starts(src) if src else [0])
    doc.references = _references(env)
    def_stack: list[int] = []
    cursors: dict[int, int] = {}
    parent: BlockToken | None = None
    grid = [-1, -1, -1]  # table, row, column of the current cell
    for tok in tokens:
        kind = tok.type
        if kind == "inline":  # the most common token, first
            if tok.map is not None:
                _add_block(doc, tok, parent, spans_by_token.get(id(tok), []), def_stack, cursors, malformed)
                if doc.blocks[-1].cell:
                    block = doc.blocks[-1]
                    block.table, block.row, block.col = grid
            continue
        if kind == LINK_DEFINITION:
            assert isinstance(tok, PlainToken)  # only the plain path makes this token
            _add_link_definition(doc, tok, spans_by_token[id(tok)][0])
            continue
        if kind == "table_open":
            grid = [grid[0] + 1, -1, -1]
        elif kind == "tr_open":
            grid[1], grid[2] = grid[1] + 1, -1
        elif kind in ("th_open", "td_open"):
            grid[2] += 1
        if kind == "footnote_reference_open":
            first, last = tok.map or (0, 0)
            while last > first + 1 and not src[slice(*doc.line_span(last - 1, last))].strip():
                last -= 1  # trailing blank lines belong to the document, not the definition
            start, end = doc.line_span(first, last)
            doc.definitions.append(Definition(tok.meta["label"], first, last, start, end))
            def_stack.append(len(doc.definitions) - 1)
        elif kind == "footnote_reference_close":
            def_stack.pop()
        elif kind == "heading_open" or kind in ("th_open", "td_open"):
            parent = tok
        elif kind == "html_block" and tok.map is not None:
            doc.html_blocks.append((tok.map[0], tok.map[1]))
            _add_html_blocks(doc, tok, def_stack[-1] if def_stack else None, malformed)
        elif kind in ("fence", "code_block", "front_matter") and tok.map is not None:
            doc.code_blocks.append((tok.map[0], tok.map[1]))
            if kind == "front_matter":
                doc.front_matter = (tok.map[0], tok.map[1])
        if tok.nesting == -1:
            parent = None
    return doc


def _references(env: dict[str, Any]) -> list[Reference]:
    found = [(label, ref, False) for label, ref in env.get("references", {}).items()]
    found += [(ref.get("label", ""), ref, True) for ref in env.get("duplicate_refs", [])]
    out = []
    for label, ref, duplicate in found:
        first, last = ref.get("map") or (0, 0)
        out.append(Reference(label, str(ref.get("href", "")), str(ref.get("title", "")), first, last, duplicate))
    return sorted(out, key=lambda r: r.line_start)


_FOOTNOTE_IN_HTML = re.compile(r"\[\^([^\]\s]{1,256})\]")


def _add_html_blocks(doc: ParsedDoc, tok: BlockToken, definition: int | None, malformed: bool) -> None:
    """Text between the tags of a raw HTML block, as inline blocks, so markers written there
    (``<p>claim [^1]</p>``) are citations like any other — never orphans left behind."""
    from sourcedesk.core.citations.html_links import scan_html  # html_links reads web URLs with this module's rule

    assert tok.map is not None
    start, end = doc.line_span(tok.map[0], tok.map[1])
    source = doc.source[start:end]
    if "[" not in source:
        return
    for a, b in scan_html(source).text:
        content = source[a:b]
        if "[" not in content:
            continue
        offset = start + a
        block = InlineBlock(
            content,
            range(offset, offset + len(content) + 1),
            doc.line_of(offset),
            [],
            definition,
            line_end=doc.line_of(offset + max(len(content) - 1, 0)) + 1,
            html=True,
        )
        bi = len(doc.blocks)
        doc.blocks.append(block)
        found: list[tuple[int, int, str, str, str | None]] = []
        for m in _FOOTNOTE_IN_HTML.finditer(content):
            found.append((m.start(), m.end(), "footnote", m.group(1), None))
        taken = [(f[0], f[1]) for f in found]
        for m in BARE_RE.finditer(content):
            numbers = bare_numbers(m.group(1))
            if numbers is None or _overlaps(taken, m.start(), m.end()):
                continue
            raw = m.group() if len(numbers) > 1 else None
            found += [(m.start(), m.end(), "bare", n, raw) for n in numbers]
        if malformed:
            taken = [(f[0], f[1]) for f in found]
            for m in MALFORMED_RE.finditer(content):
                if not _overlaps(taken, m.start(), m.end()):
                    found.append((m.start(), m.end(), "footnote", m.group(1) or m.group(2), m.group()))
        for cstart, cend, kind, label, raw in sorted(found, key=lambda f: f[0]):
            block.markers.append(len(doc.markers))
            doc.markers.append(
                Marker(kind, label, offset + cstart, offset + cend, bi, cstart, cend, definition, raw=raw)
            )


def _add_link_definition(doc: ParsedDoc, tok: PlainToken, link: Span) -> None:
    """What markdown-it's open, inline and close tokens of a footnote definition that is one plain
    link on a line of its own add (``_add_block`` on its inline token, in one step): the definition,
    its block, and the bare citation ``[N](url)`` when the link is one."""
    assert tok.map is not None
    first, last = tok.map
    while last > first + 1 and not doc.source[slice(*doc.line_span(last - 1, last))].strip():
        last -= 1  # trailing blank lines belong to the document, not the definition
    start, end = doc.line_span(first, last)
    di, bi = len(doc.definitions), len(doc.blocks)
    doc.definitions.append(Definition(tok.meta["label"], first, last, start, end, [bi]))
    content = tok.content
    offsets = range(tok.start, tok.start + len(content) + 1)
    block = InlineBlock(content, offsets, first, [link], di, False, [], first + 1, False)
    doc.blocks.append(block)
    number = citation_link_label(content, link)
    if number is not None:  # the link covers the block: nothing else in it can be a marker
        block.markers.append(len(doc.markers))
        doc.markers.append(Marker("bare", number, offsets[0], offsets[-1], bi, 0, len(content), di, link.href, content))


def _defines(content: str, cstart: int, cend: int) -> bool:
    """Whether text at a line start is followed by ":" — written like a definition, not a citation."""
    return (cstart == 0 or content[cstart - 1] == "\n") and content.startswith(":", cend)


def citation_link_label(content: str, span: Span) -> str | None:
    """The number of a Perplexity-style ``[N](https://…)`` link span, else None."""
    if span.rule != "link" or span.label_end is None or not is_web_url(span.href):
        return None
    m = _NUMERIC_TEXT.fullmatch(content, span.start + 1, span.label_end)
    return m.group(1) if m else None


def _add_block(
    doc: ParsedDoc,
    tok: BlockToken,
    parent: BlockToken | None,
    spans: list[Span],
    def_stack: list[int],
    cursors: dict[int, int],
    malformed: bool = False,
) -> None:
    content = tok.content
    tok_map = tok.map
    assert tok_map is not None  # the caller passes only inline tokens that carry their lines
    parent_map = parent.map if parent is not None else None
    cell = parent is not None and parent.type in ("th_open", "td_open")
    start = getattr(tok, "start", -1)  # a plain draft's block runs on unbroken from a known offset
    if start >= 0:
        offsets: Sequence[int] = range(start, start + len(content) + 1)
    else:
        offsets = _map_offsets(doc, content, tok_map[0], cell, cursors)
        unbroken = range(offsets[0], offsets[0] + len(offsets))
        if offsets == list(unbroken):
            offsets = unbroken  # the form the plain path gives (the two parses compare equal)
    definition = def_stack[-1] if def_stack else None
    heading = parent is not None and not cell
    line_end = (parent_map if heading and parent_map else tok_map)[1]
    block = InlineBlock(content, offsets, tok_map[0], spans, definition, heading, [], line_end, cell)
    bi = len(doc.blocks)
    doc.blocks.append(block)
    if definition is not None:
        doc.definitions[definition].blocks.append(bi)
    if block.heading:
        first, last = parent_map or tok_map
        doc.headings.append(Heading(first, last, content.strip()))
    # (content start, order, content end, kind, label, url, raw text when not canonical)
    found: list[tuple[int, int, int, str, str, str | None, str | None]] = []
    whole = False  # a block that is one span (a definition's "[Title](url)") has nothing outside it to look in
    for s in spans:
        if not s.nested and s.start == 0 and s.end >= len(content):
            whole = True
        if s.rule == "footnote_ref":
            if s.nested:
                doc.link_text_refs.append(s.label or "")
            else:
                found.append((s.start, 0, s.end, "footnote", s.label or "", None, None))
        elif s.rule == "footnote_inline" and not s.nested:
            doc.inline_notes.append(content[s.start + 2 : s.end - 1])  # markers inside are citations too
        elif s.rule == "link" and not s.nested:
            number = citation_link_label(content, s)
            if number is not None:
                found.append((s.start, 0, s.end, "bare", number, s.href, content[s.start : s.end]))
            elif content[s.end - 1] == "]" and _NUMERIC_LINK.fullmatch(content, s.start, s.end):
                doc.numeric_reference_links += 1
    bare = list(BARE_RE.finditer(content)) if not whole else []
    if bare:
        taken = [(a, b) for a, _, b, *_ in found] + _protected([s for s in spans if s.rule != "footnote_ref"])
        for m in bare:
            if not _overlaps(taken, m.start(), m.end()):
                numbers = bare_numbers(m.group(1))
                if numbers is None:
                    continue
                raw = m.group() if len(numbers) > 1 else None
                found += [(m.start(), k, m.end(), "bare", n, None, raw) for k, n in enumerate(numbers)]
    odd = list(MALFORMED_RE.finditer(content)) if malformed and not whole and "[^" in content else []
    if odd:
        taken = [(a, b) for a, _, b, *_ in found] + _protected(spans)
        for m in odd:
            if not _overlaps(taken, m.start(), m.end()):
                found.append((m.start(), 0, m.end(), "footnote", m.group(1) or m.group(2), None, m.group()))
    if len(found) > 1:
        found.sort(key=itemgetter(0, 1))
    for cstart, _, cend, kind, label, url, raw in found:
        if (kind == "bare" or raw is not None) and _defines(content, cstart, cend):
            continue  # "[2]: text" is a (broken) definition; as "[^2]: text" it would become one
        start = offsets[cstart]
        end = offsets[cend - 1] + 1 if cend > 0 else offsets[0]  # block.src_end, inline (a draft has many)
        if doc.source[start:end] != content[cstart:cend]:
            doc.unmapped += 1
            continue
        block.markers.append(len(doc.markers))
        doc.markers.append(Marker(kind, label, start, end, bi, cstart, cend, definition, url, raw))
