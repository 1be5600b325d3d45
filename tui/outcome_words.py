"""A finished run in one notice: what the reconciler did, what it cost, what grounding found."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.notifications import SeverityLevel

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.core.pipeline.run import RunOutcome
    from sourcedesk.tui.checks import SectionCheck

COUNTED = (
    ("verified", "verified"),
    ("substituted", "substituted"),
    ("dropped", "dropped"),
    ("out_of_range", "out of range"),
)


def outcome_notice(outcome: RunOutcome, grounded: SectionCheck | None = None) -> tuple[str, SeverityLevel]:
    """``(text, severity)`` of the notice for ``outcome``."""
    sid = outcome.section
    if outcome.status == "cancelled":
        return f"{sid}: {outcome.message}", "information"
    if outcome.status == "failed":
        return f"{sid}: {outcome.message}", "error"
    report = outcome.report or {}
    parts = [f"{report.get(k, 0)} {label}" for k, label in COUNTED if report.get(k)]
    reused = "frozen set reused" if outcome.source_set_reused else "sources retrieved"
    text = f"{sid}: {outcome.status} — {', '.join(parts) or 'no citations'}; {reused}; ${outcome.cost['total']:.3f}"
    if "judge" in outcome.cost:  # the model judge ran (support.judge: model): its share of the total
        text += f" (model judge ${outcome.cost['judge']:.3f}, {(report.get('judge') or {}).get('judged', 0)} judged)"
    if grounded is not None:
        from sourcedesk.tui.widgets.check_rows import grounding_words

        text += f"; grounding: {grounding_words(grounded.report)}"
        if grounded.problems and outcome.status != "degraded":
            return text + " — the section's Checks tab (7) lists them", "warning"
    if outcome.status == "degraded":
        first = next((w for w in outcome.warnings if w.startswith(("degraded", "stale"))), "")
        return text + (f"\n{first}" if first else ""), "warning"
    return text, "information"
