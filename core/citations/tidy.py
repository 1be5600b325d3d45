"""Citation hygiene: spacing, punctuation, duplicates — and no claim ever loses its citation.

* one space before a marker (none added at the start of a line or after an
  opening bracket); chains spaced: ``[^a][^b]`` → ``[^a] [^b]``;
* markers after closing punctuation: ``$50B[^1].`` → ``$50B. [^1]`` — a marker
  only ever moves past the punctuation that ends its own sentence;
* duplicate markers are removed only inside one cluster of adjacent markers
  (``[^E5][^E5]`` → ``[^E5]``): the same source cited on two sentences stays on both;
* opt-in (``one_marker_per_source``, a memo setting): one marker per footnote per
  paragraph, the last one staying — except that a sentence whose only citation is
  that marker keeps it;
* numeric footnotes renumbered 1…n in order of first appearance, so drops leave
  no holes (definitions renamed with them); marker keys like ``E3`` name a
  source in the frozen set and are never renumbered, nor are protected keys;
* code spans, fenced/indented code, link text and footnote definitions' bodies
  are never touched; only markers and whitespace move.

Each pass is linear; passes repeat until nothing changes (punctuation only ever
moves left past markers, so this terminates), which makes ``tidy`` idempotent
even on malformed chains like ``X[^1].[^2].``.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping

from sourcedesk.core.citations.parse import Definition, ParsedDoc, normalise_source, parse
from sourcedesk.core.citations.rewrite import Edit, TidyStats, apply_edits, rewrite_markers
from sourcedesk.core.citations.sentences import ClaimIndex

_MAX_PASSES = 8
_HWS = " \t"


def marker_clusters(doc: ParsedDoc, block_index: int) -> list[list[int]]:
    """The block's markers grouped into clusters of adjacent markers (only spaces or tabs between)."""
    block = doc.blocks[block_index]
    clusters: list[list[int]] = []
    for idx in block.markers:
        m = doc.markers[idx]
        if clusters and not block.content[doc.markers[clusters[-1][-1]].cend : m.cstart].strip(_HWS):
            clusters[-1].append(idx)
        else:
            clusters.append([idx])
    return clusters


def one_marker_per_source_edits(doc: ParsedDoc, claims: ClaimIndex, targets: Mapping[int, Hashable]) -> set[int]:
    """Markers the one-marker-per-source-per-paragraph style removes: every earlier repeat of a
    source in a paragraph, unless it is the only citation of its sentence (no claim loses its citation)."""
    removed: set[int] = set()
    for block in doc.blocks:
        if block.definition is not None:
            continue
        alive = [i for i in block.markers if i in targets]
        last = {targets[i]: i for i in alive}
        for i in alive:
            if last[targets[i]] == i:
                continue
            sentence = claims.range(i)
            others = [
                j
                for j in alive
                if j != i and j not in removed and targets[j] != targets[i] and claims.range(j) == sentence
            ]
            if others:
                removed.add(i)
    return removed


def _dedupe(doc: ParsedDoc, fates: dict[int, str | None], stats: TidyStats, one_marker_per_source: bool) -> None:
    for bi, block in enumerate(doc.blocks):
        if block.definition is not None or block.html:
            continue
        for cluster in marker_clusters(doc, bi):
            seen: set[str] = set()
            for idx in cluster:
                m = doc.markers[idx]
                if m.kind != "footnote":
                    continue
                if m.label in seen:
                    fates[idx] = None
                    stats.duplicates_removed += 1
                seen.add(m.label)
    if one_marker_per_source:
        targets = {
            i: m.label
            for i, m in enumerate(doc.markers)
            if m.kind == "footnote"
            and m.definition is None
            and not doc.blocks[m.block].html
            and fates.get(i, "") is not None
        }
        for idx in one_marker_per_source_edits(doc, ClaimIndex(doc), targets):
            fates[idx] = None
            stats.duplicates_removed += 1


_MARKER = r"\[\^[^\]\s]{1,256}\]"  # a label is short (see scan.FOOTNOTE_LABEL_MAX): no scan to the end
_UNTIDY = re.compile(
    rf"(?<![\s(\[{{“‘«]){_MARKER}"  # glued to the word before (or to another marker)
    rf"|{_MARKER}[.!?…。！？]"  # sentence-ending punctuation after a marker
    rf"|{_MARKER}\w"  # a word glued after
    rf"|[ \t]{{2,}}{_MARKER}"  # more than one space before
    rf"|({_MARKER})[ \t]*\1"  # a duplicate in a cluster
)
_NUMERIC_REF = re.compile(r"\[\^(\d+)\]")
_MARKER_AT = re.compile(_MARKER)
_WORD_AT = re.compile(r"\w")
_OPENERS = "([{“‘«"
_CLOSING_PUNCTUATION = ".!?…。！？"
_DETACHED_STOP = re.compile(r"[ \t]+[.!?…。！？]+(?=\s|$)")


def untidy_marker(text: str) -> bool:
    """Whether a marker in ``text`` is untidy: what ``_UNTIDY`` matches, tested marker by marker
    (every "[^" is tried, overlapping ones too) instead of at every character — and a marker that
    repeats one earlier in its cluster ("[^1] [^2] [^1]"), which tidy removes too."""
    cluster: set[str] = set()
    cluster_end = -1
    i = text.find("[^")
    while i >= 0:
        m = _MARKER_AT.match(text, i)
        if m is not None:
            end, marker = m.end(), m.group()
            if not (
                0 <= cluster_end <= i
                and (cluster_end == i or (text[cluster_end] in " \t" and not text[cluster_end:i].strip(" \t")))
            ):
                cluster = set()  # something other than spaces since the last marker: a new cluster
            if marker in cluster:
                return True
            cluster.add(marker)
            cluster_end = end
            before = text[i - 1] if i > 0 else ""
            if not before or not (before.isspace() or before in _OPENERS):
                return True  # glued to what comes before (or the text opens with it)
            if end < len(text) and (text[end] in _CLOSING_PUNCTUATION or _WORD_AT.match(text, end)):
                return True
            if _DETACHED_STOP.match(text, end):
                return True  # "[^1] ." : the sentence's stop stands apart after the marker
            if before == "\t" or (i >= 2 and text[i - 2] in " \t" and before == " "):
                return True  # a tab, or more than one space, before it
            k = end
            while k < len(text) and text[k] in " \t":
                k += 1
            if text.startswith(marker, k):
                return True  # a duplicate in a cluster
        i = text.find("[^", i + 1)
    return False


def needs_tidy(text: str) -> bool:
    """Whether ``tidy`` could change ``text`` — a cheap scan, so text that is already tidy
    (what the reconciler's own edits produce) is not parsed again. May say yes for text in
    code (then tidy runs and changes nothing); never says no when tidy would act."""
    if "[^" not in text:
        return False
    if untidy_marker(text):
        return True
    order = list(dict.fromkeys(_NUMERIC_REF.findall(text)))
    return order != [str(n) for n in range(1, len(order) + 1)]


def _renumbering(doc: ParsedDoc, fates: dict[int, str | None], protected: frozenset[str]) -> dict[str, str]:
    def numeric(label: str) -> bool:
        return label.isdigit() and label.lower() not in protected

    order: list[str] = []
    seen: set[str] = set()
    body = [i for i, m in enumerate(doc.markers) if m.kind == "footnote" and m.definition is None]
    rest = [m.label for m in doc.markers if m.kind == "footnote" and m.definition is not None]
    candidates = [doc.markers[i].label for i in body if fates.get(i, "") is not None]
    for label in [*candidates, *(d.label for d in doc.definitions), *rest]:
        if numeric(label) and label not in seen:
            seen.add(label)
            order.append(label)
    return {old: str(n) for n, old in enumerate(order, 1) if old != str(n)}


def _definition_label_edits(doc: ParsedDoc, renames: dict[str, str]) -> list[Edit]:
    edits = []
    for d in doc.definitions:
        if d.label in renames:
            needle = f"[^{d.label}]:"
            at = doc.source.find(needle, d.start, d.end)
            if at >= 0:
                edits.append(Edit(at + 2, at + 2 + len(d.label), renames[d.label]))
    return edits


def _tidy_once(
    src: str, protected: frozenset[str], stats: TidyStats, one_marker_per_source: bool = False
) -> tuple[str, dict[str, str]]:
    doc = parse(src)
    fates: dict[int, str | None] = {}
    _dedupe(doc, fates, stats, one_marker_per_source)
    renames = _renumbering(doc, fates, protected)
    for i, m in enumerate(doc.markers):
        if m.kind == "footnote" and m.label in renames and fates.get(i, "") is not None:
            fates[i] = renames[m.label]
    edits = rewrite_markers(doc, fates, hygiene=True, stats=stats)
    edits += _definition_label_edits(doc, renames)
    return apply_edits(doc.source, edits), renames


def tidy_with_stats(
    markdown: str, *, protected: Iterable[str] = (), one_marker_per_source: bool = False
) -> tuple[str, TidyStats]:
    """``tidy`` plus what it changed (``stats.renames`` maps old → new numeric labels)."""
    keys = frozenset(p.lower() for p in protected)
    stats = TidyStats()
    text = normalise_source(markdown)
    origin: dict[str, str] = {}  # current label → the label it had in the input (renamed ones only)
    for _ in range(_MAX_PASSES):
        new, renames = _tidy_once(text, keys, stats, one_marker_per_source)
        updated = {cur: orig for cur, orig in origin.items() if cur not in renames}
        for cur, label in renames.items():
            updated[label] = origin.get(cur, cur)
        origin = updated
        if new == text:
            break
        text = new
    stats.renames = {orig: cur for cur, orig in origin.items() if orig != cur}
    stats.renumbered = len(stats.renames)
    return _definitions_in_order(text, keys), stats


def _definitions_in_order(text: str, protected: frozenset[str]) -> str:
    """Numeric footnote definitions listed together put in numeric order ("[^2] [^3] [^1]" after
    a renumbering reads [^1] [^2] [^3]); only whole definitions move, within their own list."""
    if "[^" not in text:
        return text
    doc = parse(text)
    groups: list[list[Definition]] = []
    for d in doc.definitions:
        if groups and not text[groups[-1][-1].end : d.start].strip():
            groups[-1].append(d)
        else:
            groups.append([d])
    edits: list[tuple[int, int, str]] = []
    for group in groups:
        labels = [d.label for d in group]
        if len(group) < 2 or not all(x.isdigit() and x.lower() not in protected for x in labels):
            continue
        ordered = sorted(group, key=lambda d: int(d.label))
        if ordered == group:
            continue
        bodies = [text[d.start : d.end].rstrip("\n") for d in ordered]
        pieces = []
        for slot, body in zip(group, bodies, strict=True):
            tail = text[slot.start : slot.end][len(text[slot.start : slot.end].rstrip("\n")) :]
            pieces.append((slot.start, slot.end, body + tail))
        edits += pieces
    for start, end, piece in sorted(edits, reverse=True):
        text = text[:start] + piece + text[end:]
    return text


def tidy(markdown: str, *, protected: Iterable[str] = (), one_marker_per_source: bool = False) -> str:
    """Apply citation hygiene; idempotent: ``tidy(tidy(x)) == tidy(x)``."""
    return tidy_with_stats(markdown, protected=protected, one_marker_per_source=one_marker_per_source)[0]
