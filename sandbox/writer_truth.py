"""The sandbox writer's record of what it did: one entry per citation key in the answer.

``sandbox_truth.citations`` lets a bench score raw writer output without
re-deriving it: ``class`` is one of CLASSES — ``correct`` (URL among this
answer's search results, title and date right; or an in-range bare ``[N]``),
``wrong_metadata`` (real result URL, wrong title and/or date in the
definition), ``invented`` (a URL retrieval never returned), ``out_of_range``
(``[^E9]`` of 6, ``[12]`` of 8) and ``retrieved`` (an in-range ``[^E3]``).
``supported_by`` names the ground-truth source that supports the cited
sentence (for ``invented``: null means nothing does, so the reconciler should
drop it rather than substitute). ``occurrences``/``defined`` are counted on the
final text, so they stay true after ``max_tokens`` truncation.
"""

from __future__ import annotations

import re
from typing import Any

from sourcedesk.core.writing.answer_truth import raw_citation_classes

CLASSES = ("correct", "wrong_metadata", "invented", "out_of_range", "retrieved")


def truth_entries(paras: list[list[Any]], order: list[Any], orphans: list[Any], content: str) -> list[dict]:
    """Entries for every distinct marker: inline ones in reading order, then definitions only."""
    entries: list[dict[str, Any]] = []
    seen: set[int] = set()
    cites = [c for para in paras for u in para for c in u.cites] + order + orphans
    for cite in cites:
        if id(cite) in seen:
            continue
        seen.add(id(cite))
        marker = cite.marker()
        entry = {
            "key": cite.label,
            "marker": marker,
            "kind": cite.kind,
            "url": cite.url,
            "class": cite.cls,
            "supported_by": cite.supported_by,
            "occurrences": 0,
            "defined": cite.kind == "footnote",
        }
        if cite.kind == "footnote":
            entry.update(title=cite.title, date=cite.date, title_ok=cite.title_ok, date_ok=cite.date_ok)
        if not any(e["marker"] == marker for e in entries):
            entries.append(entry)
    return recount(entries, content)


def recount(entries: list[dict[str, Any]], content: str) -> list[dict[str, Any]]:
    """Inline occurrences and definitions as they stand in ``content`` (also after truncation)."""
    lines = content.split("\n")
    body = "\n".join(line for line in lines if not re.match(r"^\[\^[^\]]+\]:", line))
    for entry in entries:
        marker = entry["marker"]
        pattern = re.escape(marker) if entry["kind"] != "numeric" else rf"(?<!\^)\[{re.escape(entry['key'])}\]"
        entry["occurrences"] = len(re.findall(pattern, body))
        if entry["kind"] == "footnote":
            entry["defined"] = any(line.startswith(marker + ":") for line in lines)
    return entries


def class_counts(truth: dict[str, Any]) -> dict[str, int]:
    counts = dict.fromkeys(CLASSES, 0)
    for entry in truth.get("citations", []):
        counts[entry["class"]] += 1
    return counts


__all__ = ["CLASSES", "class_counts", "raw_citation_classes", "recount", "truth_entries"]
