"""Citation reconciliation and hygiene — the heart of sourcedesk.

Public API (stable):

* ``reconcile(markdown, sources, *, search_results=None, protected=("deck", "dataroom", "internal"),
  exclude=None)`` → ``ReconcileResult`` with ``.text`` (reconciled and tidied, house
  "Sources" sections appended, no web URL left that retrieval did not return),
  ``.report`` (``ReconcileReport``; ``.to_json()`` is the design §6 dict plus
  ``links_removed``), ``.body`` and ``.definitions`` (for writers that lay out
  the sections themselves with ``render_sources_sections``).
* ``tidy(markdown)`` → str — citation hygiene, idempotent.
* ``format_definition(key, source)`` → one house-format definition line.
* ``render_sources_sections(definitions)`` → the ``## Sources (web search)`` /
  ``## Sources (retrieved)`` block.
* ``meaningful_tokens`` / ``is_supported`` — the substitution scorer's parts.

Modules: ``scan`` (instrumented markdown-it), ``parse`` (markers, definitions,
source offsets), ``ground`` (ground truth and its namespaces), ``tokens`` /
``support`` (claim support), ``sentences`` (claim context), ``written`` (what a
writer's definition says), ``bare_urls`` (where a URL in plain text ends),
``links`` (unretrieved URLs outside citations), ``bibliography`` (a writer's own
Sources list), ``screening`` (both, before and after citations), ``rewrite`` (marker/line edits), ``tidy``, ``reconcile``,
``report``, ``house`` (house format), ``dates``, ``placeholders``.
"""

from core.citations.ground import GroundSource, GroundTruth, coerce_source
from core.citations.house import (
    RETRIEVED_HEADING,
    WEB_HEADING,
    HouseDefinition,
    format_definition,
    render_sources_sections,
)
from core.citations.placeholders import is_placeholder_url
from core.citations.reconcile import DEFAULT_PROTECTED, ReconcileResult, reconcile
from core.citations.report import CitationRecord, ReconcileReport, ReportWarning
from core.citations.support import MIN_RATIO, MIN_SHARED, is_supported, support
from core.citations.tidy import tidy, tidy_with_stats
from core.citations.tokens import meaningful_tokens

__all__ = [
    "DEFAULT_PROTECTED",
    "MIN_RATIO",
    "MIN_SHARED",
    "RETRIEVED_HEADING",
    "WEB_HEADING",
    "CitationRecord",
    "GroundSource",
    "GroundTruth",
    "HouseDefinition",
    "ReconcileReport",
    "ReconcileResult",
    "ReportWarning",
    "coerce_source",
    "format_definition",
    "is_placeholder_url",
    "is_supported",
    "meaningful_tokens",
    "reconcile",
    "render_sources_sections",
    "support",
    "tidy",
    "tidy_with_stats",
]
