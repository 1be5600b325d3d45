"""Which sentence does a marker cite? (sentence-scoped claim context)

A character window bleeds tokens from neighbouring claims, so the claim is one
sentence. House style puts the marker after the terminator (``$50B. [^1]``):
a marker that follows a sentence's closing punctuation — possibly after other
markers — binds to the sentence BEFORE it; any other marker binds to the
sentence it sits in. Sentences never cross an inline block (paragraph, list
item, heading, table cell).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # parse imports nothing from here; the type is only for readers
    from core.citations.parse import ParsedDoc

_TERMINATORS = ".!?…"
_CLOSERS = "\"'”’)]»*_"
# Abbreviations usually followed by a capitalised word or a number that is NOT a new sentence
# ("Dr. Smith", "vs. Google", "No. 1"). "Inc."/"Ltd." are left out: followed by a capital they
# usually do end a sentence, and followed by lower case the boundary is rejected anyway.
_ABBREVIATIONS = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|approx|Fig|No)|\be\.g|\bi\.e)\.$", re.I)


class SentenceIndex:
    """Sentence boundaries of one inline block, computed once; markers are transparent."""

    def __init__(self, content: str, marker_spans: list[tuple[int, int]]):
        self.content = content
        self.markers = sorted(marker_spans)
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
        while i > 0:
            if c[i - 1].isspace():
                i -= 1
            elif i in self._marker_end_at:
                i = self._marker_end_at[i]
            else:
                break
        return i

    def _boundaries(self) -> list[int]:
        c = self.content
        ends = []
        for m in re.finditer(f"[{re.escape(_TERMINATORS)}]+", c):
            end = m.end()
            while end < len(c) and c[end] in _CLOSERS:
                end += 1
            if end < len(c) and not (c[end].isspace() or end in self._marker_at):
                continue  # "1.5", "nats.io", "e.g.," — not a sentence end
            nxt = self._skip_forward(end)
            if nxt < len(c) and c[nxt].islower():
                continue  # "Inc. raised", "U.S. market"
            if m.group().endswith(".") and _ABBREVIATIONS.search(c[max(0, m.end() - 8) : m.end()]):
                continue
            ends.append(end)
        return ends

    def sentence_for(self, cstart: int) -> tuple[int, int]:
        """Content range of the claim a marker starting at ``cstart`` refers to."""
        before = self._skip_back(cstart)
        if before in self._end_set:  # marker after the full stop: the sentence before it
            i = bisect_right(self.ends, before - 1)
            return (self.ends[i - 1] if i > 0 else 0), before
        i = bisect_right(self.ends, cstart)
        start = self.ends[i - 1] if i > 0 else 0
        end = self.ends[i] if i < len(self.ends) else len(self.content)
        return start, end

    def claim_text(self, start: int, end: int) -> str:
        """The sentence with every marker removed and whitespace collapsed."""
        c = self.content
        parts, i = [], start
        for ms, me in self.markers:
            if me <= start or ms >= end:
                continue
            parts.append(c[i : max(ms, i)])
            i = max(i, me)
        parts.append(c[i:end])
        text = " ".join("".join(parts).split())
        return re.sub(r"\s+([.,;:!?])", r"\1", text)

    def claim_for(self, cstart: int) -> str:
        return self.claim_text(*self.sentence_for(cstart))


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

    def index(self, block: int) -> SentenceIndex:
        found = self._index.get(block)
        if found is None:
            content = self.doc.blocks[block]
            spans = [(self.doc.markers[i].cstart, self.doc.markers[i].cend) for i in content.markers]
            found = self._index[block] = SentenceIndex(content.content, spans)
        return found

    def range(self, marker_index: int) -> tuple[int, int]:
        """Content range (in the marker's block) of the sentence the marker cites."""
        m = self.doc.markers[marker_index]
        return self.index(m.block).sentence_for(m.cstart)

    def text(self, marker_index: int) -> str:
        m = self.doc.markers[marker_index]
        return self.index(m.block).claim_for(m.cstart)
