"""Edits on the source: markers rewritten or removed with their whitespace, lines deleted.

Only markers and whitespace ever change (plus whole definition/heading lines):
everything here works on marker *clusters* — markers separated by spaces/tabs
only — so a cluster is rewritten in one edit and neighbouring edits never
overlap. Removal takes the marker's leading space with it ("Claim [^7] goes"
→ "Claim goes"); a marker alone on its line takes the line break with it so a
paragraph is never split; two words the removed text sat between keep one
space (``A[^1]B``, ``A [^1]B`` → ``A B``).

With ``hygiene`` (the tidy step) a cluster also gets exactly one space before
it (unless it starts a line or follows an opening bracket), single spaces
inside it, the punctuation that ends its sentence moved in front of it
(``$50B[^1].`` → ``$50B. [^1]``; a comma or semicolon is not moved) and a space
after it when a word follows directly. Markers in raw HTML text are renamed or
removed, never respaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from typing import NamedTuple

from sourcedesk.core.citations.parse import InlineBlock, Marker, ParsedDoc

_HWS = " \t"
# Only punctuation that ends a sentence is moved in front of a marker: the marker then sits at
# the end of its own sentence. A comma or semicolon after a marker stays after it (the marker
# cites the clause before it; moving it past the comma would not change that, but it is not
# the end of a sentence either).
_PUNCT = re.compile(r"[.!?…。！？]+")
_OPENERS = "([{“‘«"
_AFTER_PUNCT_OK = "\"'”’)]»*_"
_CLOSING_QUOTES = "\"'”’»"  # after a sentence's full stop, these can only close a quotation
_GLUE_BEFORE = "$€£¥#@(“‘«[<`"  # a word or figure, or a link, image, autolink or code span, follows


class Edit(NamedTuple):  # a named tuple: a draft makes one per marker
    start: int
    end: int
    text: str


@dataclass
class TidyStats:
    """What hygiene changed (for ``sourcedesk tidy``'s message and reconcile's key renames)."""

    respaced: int = 0
    moved_punctuation: int = 0
    duplicates_removed: int = 0
    renumbered: int = 0
    removed: int = 0
    renames: dict[str, str] = field(default_factory=dict)  # old → new numeric label


def apply_edits(src: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits. Two removals that overlap (two marker-only lines in a row each
    taking the line break between them) are one removal; any other overlap is a bug upstream and
    the later edit is skipped rather than corrupt the text."""
    out, pos, removing = [], 0, False
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            if removing and not e.text.strip():
                pos = max(pos, e.end)
            continue
        out.append(src[pos : e.start])
        out.append(e.text)
        pos, removing = e.end, not e.text.strip()
    out.append(src[pos:])
    return "".join(out)


def delete_lines(doc: ParsedDoc, lines: set[int]) -> list[Edit]:
    """Delete whole source lines, folding the blank lines around them so at most one remains."""
    if not lines:
        return []
    n = len(doc.line_starts)
    src = doc.source

    def blank(i: int) -> bool:
        a, b = doc.line_span(i, i + 1)
        return not src[a:b].strip()

    edits, i = [], 0
    while i < n:
        if i not in lines and not blank(i):
            i += 1
            continue
        j = i
        while j < n and (j in lines or blank(j)):
            j += 1
        run = range(i, j)
        if any(k in lines for k in run):
            interior = i > 0 and j < n
            had_blank = any(k not in lines for k in run)
            keep = 1 if interior and had_blank else 0
            start, _ = doc.line_span(i, i + 1)
            _, end = doc.line_span(j - 1, j)
            edits.append(Edit(start, end, "\n" * keep))
        i = j
    return edits


def _clusters(block: InlineBlock, markers: list[Marker], members: list[int]) -> list[list[int]]:
    clusters: list[list[int]] = []
    prev: Marker | None = None
    for idx in members:
        m = markers[idx]
        if prev is not None and not block.content[prev.cend : m.cstart].strip(_HWS):
            clusters[-1].append(idx)
        else:
            clusters.append([idx])
        prev = m
    return clusters


def removal_edit(block: InlineBlock, cs: int, ce: int, following: str | None = None) -> Edit:
    """Remove content [cs, ce) with its leading space (or, at a line start, the space after it);
    alone on its line it takes the line break too, so a paragraph is never split.

    ``following`` is what will follow the removal when another edit rewrites the text at ``ce``."""
    c = block.content
    ls = cs
    while ls > 0 and c[ls - 1] in _HWS:
        ls -= 1
    te = ce
    while te < len(c) and c[te] in _HWS:
        te += 1
    line_start = ls == 0 or c[ls - 1] == "\n"
    line_end = te == len(c) or c[te] == "\n"
    if line_start and line_end:
        if ls > 0:  # join with the previous line: take this line's break and prefix
            return Edit(block.offsets[ls - 1], block.src_end(te), "")
        if te < len(c):  # first line of the block: take the break and the next line's prefix
            return Edit(block.src_start(cs), block.offsets[te + 1], "")
        return Edit(block.src_start(cs), block.src_end(ce), "")
    if line_start:
        return Edit(block.src_start(cs), block.src_end(te), "")
    # the text on both sides would touch: keep them apart when a word (or a figure) follows
    after = following if following is not None and te == ce else c[ce] if ce < len(c) else ""
    glue = (
        te == ce
        and after != ""
        and not c[ls - 1].isspace()
        and (after[0].isalnum() or after[0] in _GLUE_BEFORE or c.startswith("![", ce))
    )
    return Edit(block.src_start(ls), block.src_end(ce), " " if glue else "")


def _starts_line(c: str, i: int) -> bool:
    while i > 0 and c[i - 1] in _HWS:
        i -= 1
    return i == 0 or c[i - 1] == "\n"


def _whole_line(doc: ParsedDoc, block: InlineBlock, cs: int, ce: int) -> bool:
    """Whether the source line holding content [cs, ce) contains nothing else but whitespace."""
    start, end = block.src_start(cs), block.src_end(ce)
    line = doc.line_of(start)
    a, b = doc.line_span(line, line + 1)
    return b >= end and not (doc.source[a:start] + doc.source[end:b]).strip()


def _opens(c: str, i: int) -> bool:
    """Whether c[i] opens a bracket or quotation (a straight quote opens after a space or bracket)."""
    if c[i] in _OPENERS:
        return True
    return c[i] in "\"'" and (i == 0 or c[i - 1].isspace() or c[i - 1] in _OPENERS)


_DETACHED_PUNCT = re.compile(r"[ \t]+([.!?…。！？]+)(?=\s|$)")


def _detached_punctuation(c: str, ce: int) -> re.Match[str] | None:
    """A sentence's full stop left standing apart after its marker ("$25M [^1] ."): the stop
    is the sentence's, so it moves in front of the marker like one written against it."""
    found = _DETACHED_PUNCT.match(c, ce)
    return _PUNCT.match(c, found.start(1)) if found else None


def _hygienic(block: InlineBlock, cs: int, ce: int, text: str, starts: set[int], stats: TidyStats) -> Edit | None:
    c = block.content
    ls = cs
    while ls > 0 and c[ls - 1] in _HWS:
        ls -= 1
    line_start = ls == 0 or c[ls - 1] == "\n"
    end, replacement, moved = ce, None, False
    punct = _PUNCT.match(c, ce) or _detached_punctuation(c, ce)
    if punct and not line_start:
        pe = punct.end()
        while pe < len(c) and c[pe] in _CLOSING_QUOTES:
            pe += 1  # the sentence ends after the quotation it closes: the marker goes outside it
        if pe == len(c) or c[pe].isspace() or c[pe] in _AFTER_PUNCT_OK or pe in starts:
            end, replacement, moved = pe, c[punct.start() : pe] + " " + text, True
    if replacement is None:
        lead = c[ls:cs] if line_start or _opens(c, ls - 1) else " "
        replacement = lead + text
    if end < len(c) and c[end].isalnum():
        replacement += " "
    original = c[ls:end]
    if replacement == original:
        return None
    if moved:
        stats.moved_punctuation += 1
    elif "".join(replacement.split()) == "".join(original.split()):
        stats.respaced += 1
    offsets = block.offsets  # block.src_start / src_end, inline (one edit per marker)
    return Edit(offsets[ls], offsets[end - 1] + 1 if end > 0 else offsets[0], replacement)


def rewrite_markers(
    doc: ParsedDoc,
    fates: Mapping[int, str | None],
    *,
    hygiene: bool,
    skip_blocks: Set[int] = frozenset(),
    stats: TidyStats | None = None,
    empty_lines: set[int] | None = None,
) -> list[Edit]:
    """Edits for markers: ``fates`` maps a marker index to its new footnote label, or None to remove it.

    Footnote markers not named keep their label but still take part in clusters
    (a cluster is rewritten as a whole); bare ``[N]`` markers not named are left
    alone. Hygiene is never applied inside footnote definitions. When ``empty_lines``
    is given, a removal that would leave a source line blank adds that line to it
    instead (for ``delete_lines``, which folds the blank lines around it).
    """
    stats = stats if stats is not None else TidyStats()
    edits: list[Edit] = []
    markers = doc.markers
    for bi, block in enumerate(doc.blocks):
        if bi in skip_blocks or not block.markers:
            continue
        members = [i for i in block.markers if i in fates or markers[i].kind == "footnote"]
        starts = {markers[i].cstart for i in members}
        for cluster in _clusters(block, markers, members):
            labels = [fates[i] if i in fates else markers[i].label for i in cluster]
            kept = [f"[^{label}]" for label in labels if label is not None]
            cs, ce = markers[cluster[0]].cstart, markers[cluster[-1]].cend
            if not kept:
                stats.removed += len(cluster)
                if empty_lines is not None and _whole_line(doc, block, cs, ce):
                    empty_lines.add(doc.line_of(block.src_start(cs)))
                else:
                    edits.append(removal_edit(block, cs, ce))
                continue
            text = " ".join(kept)
            if _starts_line(block.content, cs) and block.content.startswith(":", ce):
                text += " "  # "[^1]:" at a line start would turn the claim into a definition
            if hygiene and block.definition is None and not block.html:
                edit = _hygienic(block, cs, ce, text, starts, stats)
                if edit is not None:
                    edits.append(edit)
            elif text != block.content[cs:ce]:
                edits.append(Edit(block.src_start(cs), block.src_end(ce), text))
    return edits
