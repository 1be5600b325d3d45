"""Citation hygiene (design §2.4): spacing, punctuation, one marker per source per paragraph.

* one space before a marker (none added at the start of a line or after an
  opening bracket); chains spaced: ``[^a][^b]`` → ``[^a] [^b]``;
* markers after closing punctuation: ``$50B[^1].`` → ``$50B. [^1]``;
* one marker per footnote per paragraph — the last one stays;
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

from collections.abc import Iterable

from core.citations.parse import ParsedDoc, normalise_source, parse
from core.citations.rewrite import Edit, TidyStats, apply_edits, rewrite_markers

_MAX_PASSES = 8


def _dedupe(doc: ParsedDoc, fates: dict[int, str | None], stats: TidyStats) -> None:
    for block in doc.blocks:
        if block.definition is not None:
            continue
        last: dict[str, int] = {}
        for idx in block.markers:
            m = doc.markers[idx]
            if m.kind != "footnote":
                continue
            if m.label in last:
                fates[last[m.label]] = None
                stats.duplicates_removed += 1
            last[m.label] = idx


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


def _tidy_once(src: str, protected: frozenset[str], stats: TidyStats) -> tuple[str, dict[str, str]]:
    doc = parse(src)
    fates: dict[int, str | None] = {}
    _dedupe(doc, fates, stats)
    renames = _renumbering(doc, fates, protected)
    for i, m in enumerate(doc.markers):
        if m.kind == "footnote" and m.label in renames and fates.get(i, "") is not None:
            fates[i] = renames[m.label]
    edits = rewrite_markers(doc, fates, hygiene=True, stats=stats)
    edits += _definition_label_edits(doc, renames)
    return apply_edits(doc.source, edits), renames


def tidy_with_stats(markdown: str, *, protected: Iterable[str] = ()) -> tuple[str, TidyStats]:
    """``tidy`` plus what it changed (``stats.renames`` maps old → new numeric labels)."""
    keys = frozenset(p.lower() for p in protected)
    stats = TidyStats()
    text = normalise_source(markdown)
    origin: dict[str, str] = {}  # current label → the label it had in the input (renamed ones only)
    for _ in range(_MAX_PASSES):
        new, renames = _tidy_once(text, keys, stats)
        updated = {cur: orig for cur, orig in origin.items() if cur not in renames}
        for cur, label in renames.items():
            updated[label] = origin.get(cur, cur)
        origin = updated
        if new == text:
            break
        text = new
    stats.renames = {orig: cur for cur, orig in origin.items() if orig != cur}
    stats.renumbered = len(stats.renames)
    return text, stats


def tidy(markdown: str, *, protected: Iterable[str] = ()) -> str:
    """Apply citation hygiene; idempotent: ``tidy(tidy(x)) == tidy(x)``."""
    return tidy_with_stats(markdown, protected=protected)[0]
