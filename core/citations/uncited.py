"""Claims left without a citation: what the analyst must source or soften.

Two kinds, in document order:

* a sentence that states a figure (money, a percentage, a count, a year, a date —
  ``sourcedesk.core.citations.figures``) or quotes someone (three words or more between
  quotation marks) and carries no marker;
* a claim whose citation was dropped (fabricated and unsupported, out of range,
  on a rejected domain) when no other citation is left on it.

A table row is one claim (its cells together); the header row is a label, not a
claim. Headings and footnote definitions are not claims.
"""

from __future__ import annotations

from collections.abc import Mapping

from sourcedesk.core.citations.bare_urls import find_bare_urls
from sourcedesk.core.citations.figures import figures
from sourcedesk.core.citations.parse import ParsedDoc
from sourcedesk.core.citations.sentences import ClaimIndex
from sourcedesk.core.citations.tidy import marker_clusters
from sourcedesk.core.verify.claims import find_quotations


def _reason(text: str) -> str | None:
    """Why ``text`` needs a citation, or None. A bare URL in it is an address, not a claim: the
    year or number in its path is no figure to source."""
    for start, end in reversed(find_bare_urls(text)):
        text = text[:start] + " " + text[end:]
    if find_quotations(text):
        return "a quotation with no citation"
    found = figures(text)
    if found:
        return f"states {found[0].text} with no citation"
    return None


def uncited_claims(
    doc: ParsedDoc, claims: ClaimIndex, fates: Mapping[int, str | None], dropped: Mapping[int, str]
) -> list[tuple[str, str]]:
    """``(claim, reason)`` for every uncited claim (see the module docstring).

    ``fates`` maps a marker to its final label (None: removed); ``dropped`` maps a removed
    marker to why its citation went."""
    found: list[tuple[int, str, str]] = []  # (source offset, claim, reason)
    rows: dict[tuple[int, int], list[int]] = {}
    for bi, block in enumerate(doc.blocks):
        if block.definition is not None or block.heading:
            continue
        if block.cell and block.table is not None:
            if block.row > 0:
                rows.setdefault((block.table, block.row), []).append(bi)
            continue
        index = claims.index(bi)
        cited: set[tuple[int, int]] = set()
        for cluster in marker_clusters(doc, bi):
            alive = [i for i in cluster if fates.get(i, doc.markers[i].label) is not None]
            if alive:
                cited.add(claims.range(cluster[0]))
                continue
            gone = [i for i in cluster if i in dropped]
            if gone:
                claim = claims.text(gone[0]) or claims.sentence(gone[0])
                found.append((doc.markers[gone[0]].start, claim, f"citation dropped: {dropped[gone[0]]}"))
                cited.add(claims.range(cluster[0]))  # said once, with why
        for start, end in index.sentences():
            if (start, end) in cited:
                continue
            text = index.claim_text(start, end)
            reason = _reason(text) if text else None
            if reason is not None:
                found.append((block.src_start(start), text, reason))
    for cells in rows.values():
        markers = [i for bi in cells for i in doc.blocks[bi].markers]
        if any(fates.get(i, doc.markers[i].label) is not None for i in markers):
            continue
        texts = [claims.index(bi).claim_text(0, len(doc.blocks[bi].content)) for bi in cells]
        text = " | ".join(t for t in texts if t)
        gone = [i for i in markers if i in dropped]
        if gone:
            found.append((doc.markers[gone[0]].start, text, f"citation dropped: {dropped[gone[0]]}"))
            continue
        reason = _reason(text)
        if reason is not None:
            found.append((doc.blocks[cells[0]].src_start(0), text, reason))
    return [(claim, reason) for _, claim, reason in sorted(found, key=lambda f: f[0])]
