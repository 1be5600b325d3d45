"""Table cells and text blocks as ``rich.text.Text`` — never as markup strings.

Titles, snippets, URLs and note text come from the web or from the writer. A
DataTable renders a plain ``str`` cell as Rich markup, so ``"[bold red]pwn[/]"``
would be styled and ``"[link=…]"`` would become a link. Every cell here is a
``Text`` built from the raw string (``Text(value)`` never parses markup); styles
are applied as spans afterwards.

Outside text was cleaned where it entered (``sourcedesk.core.text.safety``); the cells clean
it once more, so that data stored by an older version — or any path that forgot
— still cannot put an escape sequence on the analyst's terminal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rich.text import Text

from sourcedesk.core.domain.models import Source
from sourcedesk.core.text.safety import clean_text, clean_tree

RUNNING = "●"  # a section or a check at work (its stage follows)
BAR_WIDTH = 12
_MARKER_RE = re.compile(r"\[\^[^\]\s]+\](?::)?|\[\d+\]")
_HEADING_RE = re.compile(r"^#{1,6} .*$", re.MULTILINE)


class Palette:
    """Colours taken from the active Textual theme, so cells follow the light/dark switch."""

    def __init__(self, theme: Any = None):
        get = (
            (lambda name, default: getattr(theme, name, None) or default)
            if theme is not None
            else (lambda name, default: default)
        )
        self.success = get("success", "green")
        self.warning = get("warning", "yellow")
        self.error = get("error", "red")
        self.accent = get("accent", "cyan")
        self.primary = get("primary", "blue")
        variables = getattr(theme, "variables", None) or {}
        self.marker = variables.get("marker-foreground", self.accent)
        self.dim = "dim"


def plain(value: Any, style: str = "") -> Text:
    """Untrusted text as a cell: one line, literal, cleaned."""
    text = "" if value is None else " ".join(clean_text(str(value)).split())
    return Text(text, style=style, no_wrap=True, overflow="ellipsis")


def block(value: Any, style: str = "") -> Text:
    """Untrusted multi-line text, literal, cleaned, wrapping."""
    return Text("" if value is None else clean_text(str(value), multiline=True), style=style)


def _safe(value: Any) -> str:
    return clean_text("" if value is None else str(value), multiline=True)


def status_cell(status: str, palette: Palette, stage: str = "") -> Text:
    if status == "running":
        return Text(f"{RUNNING} {stage or 'running'}", style=f"bold {palette.accent}")
    style = {
        "never run": palette.dim,
        "fresh": f"bold {palette.success}",
        "stale": palette.warning,
        "degraded": f"bold {palette.warning}",
        "failed": f"bold {palette.error}",
    }.get(status, "")
    return Text(status, style=style)


def citations_bar(counts: Mapping[str, int] | None, palette: Palette, width: int = BAR_WIDTH) -> Text:
    """Verified (retitled included) / substituted / dropped as a proportional bar plus numbers — out of
    range (``N#``: a number with no source) counted apart, red in the bar — and how many verified
    citations are weak (retrieved, but not supporting their claim)."""
    if not counts:
        return Text("—", style=palette.dim)
    verified = int(counts.get("verified", 0) or 0)  # retitled ones included: they are verified
    substituted = int(counts.get("substituted", 0) or 0)
    out_of_range = int(counts.get("out_of_range", 0) or 0)  # cited a number with no source: not "dropped"
    dropped = int(counts.get("dropped", 0) or 0) + out_of_range  # the bar's red part: both were taken out
    total = verified + substituted + dropped
    if total == 0:
        return Text("no citations", style=palette.dim)
    cells = [round(width * n / total) for n in (verified, substituted, dropped)]
    # Every non-zero part stays visible; the bar keeps its width (0: the counts alone).
    for i, n in enumerate((verified, substituted, dropped)):
        if n and not cells[i] and width:
            cells[i] = 1
    while sum(cells) > width:
        cells[cells.index(max(cells))] -= 1
    while sum(cells) < width:
        cells[cells.index(max(cells))] += 1
    bar = Text()
    for n, style in zip(cells, (palette.success, palette.warning, palette.error), strict=False):
        bar.append("█" * n, style=style)
    bar.append(f"{' ' if width else ''}{verified}✓ {substituted}≈ {dropped - out_of_range}✗")
    if out_of_range:
        bar.append(f" {out_of_range}#")
    weak = int(counts.get("weak", 0) or 0)
    if weak:
        bar.append(f" {weak} weak", style=f"bold {palette.error}")
    return bar


def flags_cell(
    truncated: int,
    warnings: int,
    palette: Palette,
    check_problems: int | None = None,
    uncited: int = 0,
    *,
    namesakes: int = 0,
) -> Text:
    """Truncation, warning, (last check of the current note) problem, uncited-claim and
    namesake-citation badges."""
    parts = []
    if truncated:
        parts.append((f"✂{truncated}", f"bold {palette.warning}"))
    if warnings:
        parts.append((f"⚠{warnings}", palette.warning))
    if check_problems:
        parts.append((f"✗{check_problems}", f"bold {palette.error}"))
    if uncited:
        parts.append((f"?{uncited}", palette.warning))
    if namesakes:
        parts.append((f"⚑{namesakes}", f"bold {palette.error}"))
    out = Text()
    for i, (text, style) in enumerate(parts):
        if i:
            out.append(" ")
        out.append(text, style=style)
    return out


def cost_cell(cost: float | None) -> Text:
    return Text("—" if cost is None else f"${cost:.3f}", justify="right")


def pin_cell(modes: list[str]) -> Text:
    if not modes:
        return Text("—", style="dim")
    unique = sorted(set(modes))
    return Text(unique[0] if len(unique) == 1 else "mixed")


def source_label(source_title: str, host: str) -> Text:
    """A source's title, or its host (dimmed) when the title is empty."""
    if source_title and source_title.strip():
        return plain(source_title)
    return plain(host or "(no title)", style="italic dim")


def highlight_markers(body: str, palette: Palette) -> Text:
    """A note body, literal, with citation markers and headings emphasised by spans."""
    body = _safe(body)
    text = Text(body)
    for match in _HEADING_RE.finditer(body):
        text.stylize("bold", match.start(), match.end())
    for match in _MARKER_RE.finditer(body):
        text.stylize(f"bold {palette.marker}", match.start(), match.end())
    return text


def source_detail(source: Source, palette: Palette, *, state: str = "") -> Text:
    """Facts (as the prompt shows them), summary, highlights and a text excerpt."""
    out = Text()
    out.append_text(source_label(source.title, source.host).copy())
    out.stylize("bold")
    out.append("\n")
    out.append(clean_text(source.url), style=palette.primary)
    meta = [p for p in (source.marker, source.provider, source.host, (source.published_date or "")[:10], state) if p]
    out.append("\n" + clean_text(" · ".join(meta)) + "\n", style="dim")
    if source.facts:
        out.append("\nFacts\n", style=f"bold {palette.accent}")
        cleaned = source.model_copy(update={"facts": clean_tree(source.facts)})  # before YAML escapes them
        out.append(_safe(cleaned.facts_yaml))
    if source.summary:
        out.append("\nSummary\n", style=f"bold {palette.accent}")
        out.append(_safe(source.summary) + "\n")
    if source.highlights:
        out.append("\nHighlights\n", style=f"bold {palette.accent}")
        for h in source.highlights:
            out.append(f"• {_safe(h)}\n")
    if source.text:
        excerpt = source.text[:1500] + ("…" if len(source.text) > 1500 else "")
        out.append(f"\nText ({len(source.text):,} chars)\n", style=f"bold {palette.accent}")
        out.append(_safe(excerpt) + "\n")
    if not (source.facts or source.summary or source.highlights or source.text):
        out.append("\n(no content stored for this source)\n", style="dim")
    return out


def readable_warning(line: str) -> str:
    """A stored warning ``"namesakes_removed: 2 sources …"`` as the analyst reads it:
    ``"namesakes removed: 2 sources …"`` — never a raw field name."""
    code, sep, rest = line.partition(": ")
    if sep and code and code.replace("_", "").isalpha() and code == code.lower() and "_" in code:
        return f"{code.replace('_', ' ')}: {rest}"
    return line


# The reconcile counts in words, in the order every view says them.
COUNT_WORDS = (
    ("verified", "verified"),
    ("retitled", "retitled"),
    ("substituted", "substituted"),
    ("dropped", "dropped"),
    ("out_of_range", "out of range"),
    ("protected", "protected"),
    ("links_removed", "unretrieved links removed"),
)


def count_phrases(counts: Mapping[str, int], keys: tuple[str, ...] | None = None) -> list[str]:
    """The reconcile counts as every view says them: retitled citations are verified ones
    ("6 verified (1 retitled)"), so they are said inside that count, never beside it as
    another kind; out of range is its own count, never part of "dropped"."""
    phrases = []
    for key, label in COUNT_WORDS:
        if key == "retitled" or (keys is not None and key not in keys):
            continue
        phrase = f"{counts.get(key, 0)} {label}"
        if key == "verified" and counts.get("retitled", 0):
            phrase += f" ({counts['retitled']} retitled)"
        phrases.append(phrase)
    return phrases
