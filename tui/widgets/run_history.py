"""A section's past runs as table rows and a detail block, from the store's run records.

Every run is recorded — failed and cancelled ones too — so the analyst can see why
the note is what it is: which frozen set it was written against, what the
reconciler did, what went wrong the time the note did not change. Records come
from older versions too, so every field is optional here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from rich.text import Text

from sourcedesk.core.domain.records import RunRecord
from sourcedesk.core.writing.answer_truth import raw_citation_classes
from sourcedesk.tui.widgets.cells import Palette, count_phrases, plain, readable_warning

# Essential columns first (at 120 columns the source set's long id pushed the cost off screen).
COLUMNS = (
    ("when", "When", 16),
    ("status", "Status", 10),
    ("counts", "Citations", 16),
    ("cost", "Cost", 7),
    ("note", "Note", 9),
    ("took", "Took", 6),
    ("set", "Source set", 30),
)
COUNT_KEYS = (("verified", "✓"), ("substituted", "≈"), ("dropped", "✗"), ("out_of_range", "#"))


def when(record: RunRecord) -> str:
    """Local time of the run, to the minute (the id keeps the seconds)."""
    raw = record.finished_at or record.created_at
    try:
        return datetime.fromisoformat(str(raw)).astimezone().strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError):
        return str(raw or "—")[:16]


def counts_text(counts: Mapping[str, int] | None) -> str:
    if not counts:
        return "—"
    return " ".join(f"{counts.get(k, 0)}{mark}" for k, mark in COUNT_KEYS)


def status_style(status: str, palette: Palette) -> str:
    return {
        "ok": palette.success,
        "degraded": palette.warning,
        "failed": f"bold {palette.error}",
        "cancelled": palette.dim,
    }.get(status, "")


def row_cells(record: RunRecord, current_run: str | None, palette: Palette) -> tuple[Text, ...]:
    status = record.run_status
    total = record.cost.get("total")
    took = record.timings.get("total_s")
    set_id = record.source_set_id
    if record.id and record.id == current_run:
        note = Text("current", style="bold")
    elif status in ("ok", "degraded"):
        note = Text("replaced", style="dim")
    else:
        note = Text("unchanged", style="dim")
    return (
        plain(when(record)),
        Text(status, style=status_style(status, palette)),
        plain(counts_text(record.report_counts)),
        Text("—" if total is None else f"${total:.3f}", justify="right"),
        note,
        Text("—" if took is None else f"{took:.1f}s", justify="right"),
        plain(f"{set_id}{' (reused)' if record.reused else ''}" if set_id else "—"),
    )


def detail(record: RunRecord, current_run: str | None, palette: Palette) -> Text:
    """Everything a record says about one run, as literal text (messages quote the services)."""
    outcome = record.outcome
    status = record.run_status
    out = Text()
    out.append(f"{record.id or 'run'}\n", style="bold")
    out.append(f"{when(record)}   ", style="dim")
    out.append(status, style=status_style(status, palette))
    if record.id == current_run:
        out.append("   the current note", style="bold")
    out.append("\n\n")
    message = record.message or (outcome.message if outcome else "")
    if message:
        out.append(message + "\n\n")
    error = record.error
    if error is not None and error.message:
        out.append("error: ", style="dim")
        out.append(f"{error.kind or ''} {error.message}\n\n".lstrip())
    if record.source_set_id:
        out.append("source set: ", style="dim")
        out.append(record.source_set_id + (" (reused, no search)" if record.reused else "") + "\n")
    if record.writer:
        out.append("writer: ", style="dim")
        out.append(str(record.writer) + "\n")
    if record.model:
        out.append("model: ", style="dim")
        out.append(record.model + "\n")
    counts = record.report_counts
    if counts:
        out.append("citations: ", style="dim")
        shown = ("verified", "substituted", "dropped", "out_of_range", "protected")
        out.append(", ".join(count_phrases(counts, shown)) + "\n")
    raw = raw_citation_classes(record.raw_response)  # only an answer from the offline sandbox has them
    if raw:
        out.append("writer's raw citations: ", style="dim")
        out.append(", ".join(f"{v} {k.replace('_', ' ')}" for k, v in raw.items()) + "\n")
    requests = outcome.requests if outcome else {}
    if requests:
        out.append("requests: ", style="dim")
        out.append(", ".join(f"{k} {v}" for k, v in requests.items()) + "\n")
    if record.timings:
        out.append("timings: ", style="dim")
        out.append(", ".join(f"{k.removesuffix('_s')} {v:.2f}s" for k, v in record.timings.items()) + "\n")
    if record.warnings:
        out.append("\nwarnings\n", style="bold")
        for w in record.warnings:
            out.append(f"  • {readable_warning(w)}\n")
    return out
