"""A section's past runs as table rows and a detail block, from the store's run records.

Every run is recorded — failed and cancelled ones too — so the analyst can see why
the note is what it is: which frozen set it was written against, what the
reconciler did, what went wrong the time the note did not change. Records come
from older versions too, so every field is optional here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rich.text import Text

from tui.widgets.cells import Palette, plain

COLUMNS = (
    ("when", "When", 16),
    ("status", "Status", 10),
    ("set", "Source set", 30),
    ("counts", "Citations", 20),
    ("cost", "Cost", 7),
    ("took", "Took", 6),
    ("note", "Note", 9),
)
COUNT_KEYS = (("verified", "✓"), ("substituted", "≈"), ("dropped", "✗"), ("out_of_range", "#"))


def _outcome(record: Mapping[str, Any]) -> Mapping[str, Any]:
    outcome = record.get("outcome")
    return outcome if isinstance(outcome, Mapping) else {}


def _report(record: Mapping[str, Any]) -> Mapping[str, Any]:
    report = _outcome(record).get("report")
    if not isinstance(report, Mapping):
        report = record.get("report") if isinstance(record.get("report"), Mapping) else {}
    return report


def when(record: Mapping[str, Any]) -> str:
    """Local time of the run, to the minute (the id keeps the seconds)."""
    raw = record.get("finished_at") or record.get("created_at")
    try:
        return datetime.fromisoformat(str(raw)).astimezone().strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError):
        return str(raw or "—")[:16]


def counts_text(report: Mapping[str, Any]) -> str:
    if not report:
        return "—"
    parts = [f"{report.get(k, 0)}{mark}" for k, mark in COUNT_KEYS if isinstance(report.get(k, 0), int)]
    return " ".join(parts)


def status_style(status: str, palette: Palette) -> str:
    return {
        "ok": palette.success,
        "degraded": palette.warning,
        "failed": f"bold {palette.error}",
        "cancelled": palette.dim,
    }.get(status, "")


def row_cells(record: Mapping[str, Any], current_run: str | None, palette: Palette) -> tuple[Text, ...]:
    outcome = _outcome(record)
    status = str(record.get("status") or outcome.get("status") or "?")
    cost = record.get("cost") if isinstance(record.get("cost"), Mapping) else {}
    total = cost.get("total")
    timings = record.get("timings") if isinstance(record.get("timings"), Mapping) else {}
    took = timings.get("total_s")
    set_id = record.get("source_set_id") or outcome.get("source_set_id")
    reused = outcome.get("source_set_reused")
    if record.get("id") and record.get("id") == current_run:
        note = Text("current", style="bold")
    elif status in ("ok", "degraded"):
        note = Text("replaced", style="dim")
    else:
        note = Text("unchanged", style="dim")
    return (
        plain(when(record)),
        Text(status, style=status_style(status, palette)),
        plain(f"{set_id}{' (reused)' if reused else ''}" if set_id else "—"),
        plain(counts_text(_report(record))),
        Text(f"${float(total):.3f}" if isinstance(total, (int, float)) else "—", justify="right"),
        Text(f"{float(took):.1f}s" if isinstance(took, (int, float)) else "—", justify="right"),
        note,
    )


def detail(record: Mapping[str, Any], current_run: str | None, palette: Palette) -> Text:
    """Everything a record says about one run, as literal text (messages quote the services)."""
    outcome = _outcome(record)
    status = str(record.get("status") or outcome.get("status") or "?")
    out = Text()
    out.append(f"{record.get('id', 'run')}\n", style="bold")
    out.append(f"{when(record)}   ", style="dim")
    out.append(status, style=status_style(status, palette))
    if record.get("id") == current_run:
        out.append("   the current note", style="bold")
    out.append("\n\n")
    message = record.get("message") or outcome.get("message")
    if message:
        out.append(str(message) + "\n\n")
    error = record.get("error")
    if isinstance(error, Mapping) and error.get("message"):
        out.append("error: ", style="dim")
        out.append(f"{error.get('kind') or ''} {error.get('message')}\n\n".lstrip())
    set_id = record.get("source_set_id") or outcome.get("source_set_id")
    if set_id:
        out.append("source set: ", style="dim")
        out.append(str(set_id) + (" (reused, no search)" if outcome.get("source_set_reused") else "") + "\n")
    if record.get("writer"):
        out.append("writer: ", style="dim")
        out.append(str(record["writer"]) + "\n")
    if record.get("model"):
        out.append("model: ", style="dim")
        out.append(str(record["model"]) + "\n")
    report = _report(record)
    if report:
        out.append("citations: ", style="dim")
        labels = ("verified", "retitled", "substituted", "dropped", "out_of_range", "protected")
        out.append(", ".join(f"{report.get(k, 0)} {k.replace('_', ' ')}" for k in labels) + "\n")
    raw = outcome.get("raw_citation_classes")
    if isinstance(raw, Mapping) and raw:
        out.append("writer's raw citations: ", style="dim")
        out.append(", ".join(f"{v} {str(k).replace('_', ' ')}" for k, v in raw.items()) + "\n")
    requests = outcome.get("requests")
    if isinstance(requests, Mapping) and requests:
        out.append("requests: ", style="dim")
        out.append(", ".join(f"{k} {v}" for k, v in requests.items()) + "\n")
    timings = record.get("timings") if isinstance(record.get("timings"), Mapping) else {}
    if timings:
        out.append("timings: ", style="dim")
        out.append(
            ", ".join(
                f"{k.removesuffix('_s')} {float(v):.2f}s" for k, v in timings.items() if isinstance(v, (int, float))
            )
            + "\n"
        )
    warnings = outcome.get("warnings") or []
    if warnings:
        out.append("\nwarnings\n", style="bold")
        for w in warnings:
            out.append(f"  • {w}\n")
    return out
