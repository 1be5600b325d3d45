"""What does a marker cite? The clause before it (claim binding).

A character window bleeds tokens from neighbouring claims, and a whole sentence
does too when it makes two claims ("Cresta, which raised $125M [^1], was founded
in 2017 [^2]."). So a marker binds to its **clause**: from the previous marker (or
a ``;`` clause boundary) in the same sentence up to the marker. House style puts
the marker after the terminator (``$50B. [^1]``): a marker that follows a
sentence's closing punctuation — possibly after other markers — binds to the
sentence BEFORE it (from its last earlier marker on). A marker with nothing
before it in its sentence binds to the sentence it opens. Sentences never cross
an inline block (paragraph, list item, heading, table cell); a table cell's
claim also carries its row's first cell and its column's header, so "$125M [^1]"
in the Funding column of Lumora's row reads "Lumora Funding $125M".

Terminators include the CJK full stop, question and exclamation marks, which
need no space after them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # parse imports nothing from here; the type is only for readers
    from sourcedesk.core.citations.parse import InlineBlock, ParsedDoc
    from sourcedesk.core.citations.scan import Span

_TERMINATORS = ".!?…。！？"
_WIDE_TERMINATORS = "。！？"  # end a sentence with no space after them
_CLOSERS = "\"'”’)]»*_"
# Abbreviations usually followed by a capitalised word or a number that is NOT a new sentence
# ("Dr. Smith", "vs. Google", "No. 1"). "Inc."/"Ltd." are left out: followed by a capital they
# usually do end a sentence, and followed by lower case the boundary is rejected anyway.
_ABBREVIATIONS = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|approx|Fig|No)|\be\.g|\bi\.e)\.$", re.I)


def _terminator_run_ends(c: str) -> list[int]:
    """Where each maximal run of terminators in ``c`` ends, in order (``str.find`` per terminator
    present: a regex scan of every character of a paragraph costs several times more)."""
    at: list[int] = []
    for mark in _TERMINATORS:
        i = c.find(mark)
        while i >= 0:
            at.append(i)
            i = c.find(mark, i + 1)
    at.sort()
    return [i + 1 for k, i in enumerate(at) if k + 1 == len(at) or at[k + 1] != i + 1]


class SentenceIndex:
    """Sentence boundaries of one inline block, computed once; markers are transparent."""

    def __init__(self, content: str, marker_spans: list[tuple[int, int]]):
        self.content = content
        self.markers = sorted(marker_spans)
        self._marker_ends = [end for _start, end in self.markers]  # sorted too: markers never overlap
        self._back: dict[int, int] = {}
        self._claims: dict[tuple[int, int], str] = {}  # _skip_back's answers: a cluster of N markers costs N, not N²
        self._marker_at = dict(self.markers)
        self._marker_end_at = {end: start for start, end in self.markers}
        self.ends = self._boundaries()
        self._end_set = set(self.ends)

    def _skip_forward(self, i: int) -> int:
        c = self.content
        while i < len(c):
            if c[i].isspace():
                i += 1
            elif i in self._marker_at:
                i = self._marker_at[i]
            else:
                break
        return i

    def _skip_back(self, i: int) -> int:
        c = self.content
        seen: list[int] = []
        while i > 0:
            if i in self._back:
                i = self._back[i]
                break
            seen.append(i)
            if c[i - 1].isspace():
                i -= 1
            elif i in self._marker_end_at:
                i = self._marker_end_at[i]
            else:
                break
        for j in seen:  # every position passed on the way skips back to the same place
            self._back[j] = i
        return i

    def _boundaries(self) -> list[int]:
        c = self.content
        n = len(c)
        ends = []
        for run_end in _terminator_run_ends(c):
            end = run_end
            while end < n and c[end] in _CLOSERS:
                end += 1
            last = c[run_end - 1]
            wide = last in _WIDE_TERMINATORS
            if end < n and not (c[end].isspace() or end in self._marker_at or wide):
                continue  # "1.5", "nats.io", "e.g.," — not a sentence end
            nxt = self._skip_forward(end)
            if nxt < n and c[nxt].islower() and not wide:
                continue  # "Inc. raised", "U.S. market"
            if last == "." and _ABBREVIATIONS.search(c[max(0, run_end - 8) : run_end]):
                continue
            ends.append(end)
        return ends

    def sentence_for(self, cstart: int) -> tuple[int, int]:
        """Content range of the claim a marker starting at ``cstart`` refers to."""
        return self._sentence_for(cstart, self._skip_back(cstart))

    def _sentence_for(self, cstart: int, before: int) -> tuple[int, int]:
        if before in self._end_set:  # marker after the full stop: the sentence before it
            i = bisect_right(self.ends, before - 1)
            return (self.ends[i - 1] if i > 0 else 0), before
        i = bisect_right(self.ends, cstart)
        start = self.ends[i - 1] if i > 0 else 0
        end = self.ends[i] if i < len(self.ends) else len(self.content)
        return start, end

    def clause_for(self, cstart: int) -> tuple[int, int]:
        """Content range of the clause a marker starting at ``cstart`` cites (see the module docstring)."""
        before = self._skip_back(cstart)
        s_start, s_end = self._sentence_for(cstart, before)
        # Up to the marker's cluster: what lies between "before" and the marker is only markers
        # and spaces (the same claim text), and a cluster of N markers then costs N, not N².
        end = before
        start = s_start
        # The last marker ending at or before "before" — if it is in this sentence (and not of
        # this marker's cluster, which starts at or after "before"), it closes the clause before.
        k = bisect_right(self._marker_ends, before) - 1
        if k >= 0 and self.markers[k][0] >= s_start:
            start = max(start, self.markers[k][1])
        c = self.content
        last_break = max(c.rfind(";", start, end), c.rfind("；", start, end))  # the clause breaks
        if last_break >= 0:
            start = last_break + 1
        if not c[start:end].strip(" \t\n,;:—–-，、；：،؛"):
            return s_start, s_end  # nothing before the marker: it cites the sentence it opens
        return start, end

    def sentences(self) -> list[tuple[int, int]]:
        """Every sentence of the block as a content range."""
        out, start = [], 0
        for end in [*self.ends, len(self.content)]:
            if self.content[start:end].strip():
                out.append((start, end))
            start = end
        return out

    def claim_text(self, start: int, end: int) -> str:
        """The text with every marker removed and whitespace collapsed. Remembered per range:
        every marker of a sentence that is all markers cites the whole sentence."""
        key = (start, end)
        text = self._claims.get(key)
        if text is None:
            text = self._claims[key] = self._claim_text(start, end)
        return text

    def _claim_text(self, start: int, end: int) -> str:
        c = self.content
        parts, i = [], start
        markers = self.markers
        for k in range(bisect_right(self._marker_ends, start), len(markers)):  # from the first ending after start
            ms, me = markers[k]
            if ms >= end:
                break
            parts.append(c[i : max(ms, i)])
            i = max(i, me)
        parts.append(c[i:end])
        text = " ".join("".join(parts).split())
        if _SPACE_THEN_MARK.search(text):  # the only space left is " " (what the join put)
            for spaced, mark in _SPACED_PUNCTUATION:
                if spaced in text:
                    text = text.replace(spaced, mark)
        return text.strip(" ,;:—–-，、；：،؛")  # the clause's separator, in any script, is not its text

    def claim_for(self, cstart: int) -> str:
        """The clause a marker cites, as text."""
        return self.claim_text(*self.clause_for(cstart))

    def sentence_text(self, cstart: int) -> str:
        return self.claim_text(*self.sentence_for(cstart))


def _as_read(block: InlineBlock) -> str:
    """The block's content as a reader reads it, offsets unchanged: link destinations, raw HTML
    tags and autolinked URLs become spaces (a claim is its words, not its markup)."""
    content = block.content
    if "<" not in content and not any(_read_as_space(s) for s in block.spans):
        return content  # nothing to blank (footnote references read as they are)
    chars = list(content)

    def blank(a: int, b: int) -> None:
        chars[a:b] = " " * (b - a)

    for s in block.spans:
        if s.rule == "html_inline" or s.rule == "autolink":
            blank(s.start, s.end)
        elif s.rule in ("link", "image") and s.label_end is not None:
            blank(s.start, s.start + (2 if s.rule == "image" else 1))
            blank(s.label_end, s.end)
    if block.html:
        for m in _TAG.finditer(content):
            blank(m.start(), m.end())
    return "".join(chars)


def _read_as_space(s: Span) -> bool:
    """Whether a span holds markup a reader does not read (blanked by ``_as_read``)."""
    return s.rule == "html_inline" or s.rule == "autolink" or (s.rule in ("link", "image") and s.label_end is not None)


_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_SPACED_PUNCTUATION = tuple((" " + mark, mark) for mark in ".,;:!?。，；：！？")  # a space before it goes
_SPACE_THEN_MARK = re.compile(r" [.,;:!?。，；：！？]")


class ClaimIndex:
    """The claim binding of a parsed document: which sentence each marker cites.

    One ``SentenceIndex`` per inline block, built on first use (every marker of
    the block is transparent to sentence boundaries). The reconciler and
    ``check-urls`` grounding both bind through here, so they can never disagree
    about which sentence a citation supports.
    """

    def __init__(self, doc: ParsedDoc):
        self.doc = doc
        self._index: dict[int, SentenceIndex] = {}
        self._cells: dict[tuple[int, int, int], int] | None = None

    def index(self, block: int) -> SentenceIndex:
        found = self._index.get(block)
        if found is None:
            content = self.doc.blocks[block]
            spans = [(self.doc.markers[i].cstart, self.doc.markers[i].cend) for i in content.markers]
            found = self._index[block] = SentenceIndex(_as_read(content), spans)
        return found

    def range(self, marker_index: int) -> tuple[int, int]:
        """Content range (in the marker's block) of the sentence the marker cites."""
        m = self.doc.markers[marker_index]
        return self.index(m.block).sentence_for(m.cstart)

    def sentence(self, marker_index: int) -> str:
        """The whole sentence a marker sits in (or follows), markers removed."""
        m = self.doc.markers[marker_index]
        return self.index(m.block).sentence_text(m.cstart)

    def clause(self, marker_index: int) -> str:
        """The clause a marker cites, as text."""
        m = self.doc.markers[marker_index]
        return self.index(m.block).claim_for(m.cstart)

    def context(self, marker_index: int) -> str:
        """Labels that frame a table cell's claim: its row's first cell and its column's header."""
        row, header = self.labels(marker_index)
        if not header or header == row:
            return row  # outside a table (both ""), or one label
        return f"{row}; {header}" if row else header

    def labels(self, marker_index: int) -> tuple[str, str]:
        """A table cell's ``(row's first cell, column's header)``, each "" when there is none (or
        the cell is that label itself); ``("", "")`` outside a table."""
        block = self.doc.blocks[self.doc.markers[marker_index].block]
        if not block.cell or block.table is None:
            return "", ""
        row = self._cell_text(block.table, block.row, 0) if block.col > 0 else ""
        header = self._cell_text(block.table, 0, block.col) if block.row > 0 else ""
        return row, header

    def text(self, marker_index: int) -> str:
        """The claim a marker cites, as the analyst reads it: a table cell's labels, then its clause."""
        context, clause = self.context(marker_index), self.clause(marker_index)
        return f"{context}; {clause}" if context else clause

    def _cell_text(self, table: int, row: int, col: int) -> str:
        if self._cells is None:
            self._cells = {}
            for bi, b in enumerate(self.doc.blocks):
                if b.cell and b.table is not None:
                    self._cells[(b.table, b.row, b.col)] = bi
        found = self._cells.get((table, row, col))
        if found is None:
            return ""
        idx = self.index(found)
        return idx.claim_text(0, len(idx.content))
