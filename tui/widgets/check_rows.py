"""A section's last check (liveness of its cited URLs, grounding of its quotes and
figures) as table rows, a summary and a detail block.

One table for both halves of a check, URL rows first (``url:N``), then grounding
rows (``ground:N``): key, what was checked (URL / quote / statistic), status,
the URL or the quoted text, and the detail. Problems — ``dead``, ``soft_404``,
``placeholder``, ``not_found`` — are in the error colour; what could not be
decided (offline, 5xx, 403 on a page retrieval never returned, no stored
text…) in the warning colour or dimmed, never as a pass.

URLs, titles, quoted text and details come from the note, the web and the
writer: every one of them is redacted, has its control characters shown
escaped (as ``check-urls`` prints them) and becomes a ``rich.text.Text`` —
never markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from sourcedesk.core.verify.check import (
    PROBLEM_GROUNDING_STATUSES,
    PROBLEM_URL_STATUSES,
    CheckReport,
    GroundingRow,
    UrlRow,
)
from sourcedesk.core.verify.targets import UNCITED_STATISTIC
from sourcedesk.store.redact import redact_text
from sourcedesk.tui.commands.check_urls import clean
from sourcedesk.tui.widgets.cells import Palette, block, plain

COLUMNS = (
    ("key", "Key", 7),  # "[^E12]" whole: cut, it reads as another marker
    ("check", "Check", 14),  # "uncited figure" whole
    ("status", "Status", 17),  # "blocked (private)"
    ("what", "URL / text", 38),
    ("detail", "Detail", 30),
)
LABELS = {
    "soft_404": "soft 404",
    "unverified_403": "unverified 403",
    "blocked_private": "blocked (private)",
    "not_found": "not found",
}
PROBLEMS = PROBLEM_URL_STATUSES | PROBLEM_GROUNDING_STATUSES
UNDECIDED = frozenset({"unreachable", "error", "unverified_403", "paywall"})
UNKNOWN = frozenset({"blocked_private", "skipped", "unverifiable"})
GOOD = frozenset({"ok", "redirected", "forbidden", "supported"})

EXPLAIN = {
    "ok": "the page answered 200 and is not an error page or a paywall stub.",
    "redirected": "the page answered after redirects; the final address is recorded.",
    "dead": "404/410, or a host name that does not exist while other URLs answered: the page is gone.",
    "soft_404": "answered 200, but with a 'page not found' page (or a deep link sent to the home page).",
    "paywall": "a 'subscribe to continue' stub: the page exists, its text is not readable.",
    "forbidden": "401/403 — retrieval really returned this page, so it exists.",
    "unverified_403": "401/403 on a page retrieval never returned: not proof that it exists.",
    "error": "5xx, timeout or an odd answer after retries: undecided, not dead.",
    "unreachable": "no connection or no DNS: the network is in doubt, so this is undecided, not dead.",
    "placeholder": "a placeholder or fabrication pattern (example.com, XXXX, /path/to/, {…}): never requested.",
    "blocked_private": "a private, loopback or link-local address: not requested (allow_private_urls allows it).",
    "skipped": "not a web URL (a local file source): nothing to fetch.",
    "supported": "appears verbatim in the cited source's stored text "
    "(only whitespace, quote styles and dashes normalised).",
    "not_found": "the cited source's text is stored and this does not appear in it verbatim — "
    "check the figure or the quotation against the source.",
    "unverifiable": "no stored text for the cited source: it cannot be checked (which is not 'supported').",
}


def safe(value: Any) -> str:
    """Untrusted text as ``check-urls`` prints it: secrets redacted, control characters escaped."""
    return clean(value, redact_text)


def label(status: str) -> str:
    return LABELS.get(status, status.replace("_", " "))


def status_style(status: str, palette: Palette) -> str:
    if status in PROBLEMS:
        return f"bold {palette.error}"
    if status in UNDECIDED:
        return palette.warning
    if status in UNKNOWN:
        return palette.dim
    if status in GOOD:
        return palette.success
    return ""


def _key(key: str | None) -> Text:
    return plain(f"[^{safe(key)}]" if key else "link")


def url_cells(row: UrlRow, palette: Palette) -> tuple[Text, ...]:
    return (
        _key(row.key),
        Text("URL", style=palette.dim),
        Text(label(row.status), style=status_style(row.status, palette)),
        plain(safe(row.url)),
        plain(safe(row.detail)),
    )


# An uncited money amount or percentage is looked for in every source of the frozen set.
UNCITED_EXPLAIN = {
    "supported": "uncited, but a retrieved source states it: cite that source",
    "not_found": "uncited, and no retrieved source states this figure",
    "unverifiable": "uncited; the frozen set's text is not known",
}


def _explain(row: GroundingRow) -> str:
    if row.kind == UNCITED_STATISTIC:
        return UNCITED_EXPLAIN.get(row.status, "")
    return EXPLAIN.get(row.status, "")


def grounding_cells(row: GroundingRow, palette: Palette) -> tuple[Text, ...]:
    text = f"“{row.text}”" if row.kind == "quote" else row.text
    uncited = row.kind == UNCITED_STATISTIC
    return (
        Text("—", style=palette.warning) if uncited else _key(row.key),
        Text("uncited figure" if uncited else row.kind, style=palette.dim),
        Text(label(row.status), style=status_style(row.status, palette)),
        plain(safe(text)),
        plain(_explain(row), style=palette.dim),
    )


def rows(report: CheckReport, palette: Palette) -> list[tuple[str, tuple[Text, ...]]]:
    """(row key, cells) for every URL row, then every grounding row."""
    out = [(f"url:{i}", url_cells(r, palette)) for i, r in enumerate(report.urls)]
    out += [(f"ground:{i}", grounding_cells(r, palette)) for i, r in enumerate(report.grounding)]
    return out


def _counted(counts: Mapping[str, Any], palette: Palette) -> Text:
    out = Text()
    first = True
    for status, n in counts.items():
        if status == "total" or not n:
            continue
        if not first:
            out.append(", ")
        out.append(f"{n} {label(status)}", style=status_style(status, palette))
        first = False
    return out


def grounding_words(report: CheckReport) -> str:
    """'4 supported, 1 not found' — the grounding counts as one phrase, for a notice."""
    counts = report.counts()["grounding"]
    if not counts["total"]:
        return "no quotations or figures to ground"
    return ", ".join(f"{n} {label(s)}" for s, n in counts.items() if s != "total" and n)


def summary(report: CheckReport, palette: Palette) -> Text:
    """One line like ``check-urls`` prints, styled by severity."""
    counts = report.counts()
    out = Text()
    if report.liveness:
        out.append(f"{counts['urls']['total']} URL(s)")
        part = _counted(counts["urls"], palette)
        if part:
            out.append(": ")
            out.append_text(part)
    else:
        out.append("URLs not checked yet (v checks them over the network)", style=palette.dim)
    out.append(" · ")
    out.append(f"grounding: {counts['grounding']['total']} item(s)")
    part = _counted(counts["grounding"], palette)
    if part:
        out.append(": ")
        out.append_text(part)
    out.append(" · ")
    problems = counts["problems"]
    out.append(f"{problems} problem(s)", style=f"bold {palette.error}" if problems else palette.success)
    return out


def warnings_block(warnings: list[str], palette: Palette) -> Text:
    out = Text()
    for warning in warnings:
        out.append("⚠ ", style=palette.warning)
        out.append_text(block(safe(warning)))
        out.append("\n")
    return out


def _heading(key: str | None, status: str, kind: str, palette: Palette) -> Text:
    out = Text()
    out.append_text(_key(key))
    out.stylize("bold")
    out.append(f"  {kind}  ", style=palette.dim)
    out.append(label(status), style=status_style(status, palette))
    out.append("\n\n")
    return out


def url_detail(row: UrlRow, palette: Palette) -> Text:
    """Everything the check saw for one cited URL, literal."""
    out = _heading(row.key, row.status, "URL", palette)
    if row.title:
        out.append_text(block(safe(row.title), style="bold"))
        out.append("\n")
    out.append_text(block(safe(row.url), style=palette.primary))
    out.append("\n")
    if row.final_url and row.final_url != row.url:
        out.append("→ ", style=palette.dim)
        out.append_text(block(safe(row.final_url), style=palette.primary))
        out.append("\n")
    facts = []
    if row.http_status:
        facts.append(f"HTTP {row.http_status}")
    facts.append("in the retrieved set" if row.in_retrieved_set else "not in the retrieved set")
    out.append("\n" + " · ".join(facts) + "\n", style=palette.dim)
    if row.detail:
        out.append("\n")
        out.append_text(block(safe(row.detail)))
        out.append("\n")
    if row.status in EXPLAIN:
        out.append(f"\n{label(row.status)}: {EXPLAIN[row.status]}\n", style=palette.dim)
    return out


def grounding_detail(row: GroundingRow, url: str | None, palette: Palette) -> Text:
    """One quotation or figure, the source it is attributed to, and what the verdict means."""
    out = _heading(row.key, row.status, row.kind, palette)
    out.append_text(block(safe(f"“{row.text}”" if row.kind == "quote" else row.text), style="bold"))
    if row.kind == UNCITED_STATISTIC:
        out.append("\n\nno citation: looked for in every source of the frozen set\n", style=palette.dim)
    else:
        out.append("\n\ncited source: ", style=palette.dim)
        out.append_text(block(safe(url) if url else "—", style=palette.primary))
        out.append("\n")
    if _explain(row):
        out.append(f"\n{label(row.status)}: {_explain(row)}\n", style=palette.dim)
    return out
