"""Citation reconciliation and hygiene — the heart of sourcedesk.

Public API (stable):

* ``reconcile(markdown, sources, *, search_results=None, protected=("deck", "dataroom", "internal"),
  exclude=None)`` → ``ReconcileResult`` with ``.text`` (reconciled and tidied, house
  "Sources" sections appended, no web URL left that retrieval did not return),
  ``.report`` (``ReconcileReport``; ``.to_json()`` is the documented ``reconcile --json`` dict plus
  ``links_removed``), ``.body`` and ``.definitions`` (for writers that lay out
  the sections themselves with ``render_sources_sections``).
* ``tidy(markdown)`` → str — citation hygiene, idempotent.
* ``format_definition(key, source)`` → one house-format definition line.
* ``render_sources_sections(definitions)`` → the ``## Sources (web search)`` /
  ``## Sources (retrieved)`` block.
* ``supports_text(claim, passage)`` → ``Verdict`` — the support check on one passage;
  ``terms`` — what counts as a word in any script.

Modules: ``scan`` (instrumented markdown-it), ``parse`` (markers, definitions,
source offsets), ``ground`` (ground truth and its namespaces), ``tokens`` /
``figures`` / ``relations`` / ``support`` (claim support), ``sentences`` (claim binding),
``uncited`` (claims left without a citation), ``html_links`` (raw HTML), ``written`` (what a
writer's definition says), ``bare_urls`` (where a URL in plain text ends),
``links`` (unretrieved URLs outside citations), ``bibliography`` (a writer's own
Sources list), ``screening`` (both, before and after citations), ``rewrite`` (marker/line edits), ``tidy``, ``reconcile``,
``report``, ``house`` (house format), ``dates``, ``placeholders``.
"""

from sourcedesk.core.citations.ground import GroundSource, GroundTruth, coerce_source
from sourcedesk.core.citations.house import (
    RETRIEVED_HEADING,
    WEB_HEADING,
    HouseDefinition,
    format_definition,
    render_sources_sections,
)
from sourcedesk.core.citations.placeholders import is_placeholder_url
from sourcedesk.core.citations.reconcile import DEFAULT_PROTECTED, ReconcileResult, reconcile
from sourcedesk.core.citations.report import CitationRecord, ReconcileReport, ReportWarning, UncitedClaim
from sourcedesk.core.citations.support import SUPPORTED_MIN, Verdict, supports_text
from sourcedesk.core.citations.tidy import tidy, tidy_with_stats
from sourcedesk.core.citations.tokens import terms

__all__ = [
    "DEFAULT_PROTECTED",
    "RETRIEVED_HEADING",
    "SUPPORTED_MIN",
    "WEB_HEADING",
    "CitationRecord",
    "GroundSource",
    "GroundTruth",
    "HouseDefinition",
    "ReconcileReport",
    "ReconcileResult",
    "ReportWarning",
    "UncitedClaim",
    "Verdict",
    "coerce_source",
    "format_definition",
    "is_placeholder_url",
    "reconcile",
    "render_sources_sections",
    "supports_text",
    "terms",
    "tidy",
    "tidy_with_stats",
]
