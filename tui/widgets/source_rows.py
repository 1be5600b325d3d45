"""The rows of a section's source table: kept, omitted by budget, held out (about a namesake:
shown greyed, ``k`` keeps one in), namesakes, excluded.

One list for everything the latest retrieval saw, so the analyst can tell at a
glance what the writer will get and what was filtered out — and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from sourcedesk.core.domain.models import RemovedSource, Source, SourceSet
from sourcedesk.core.net.hosts import host_matches_any
from sourcedesk.core.net.urls import host_of
from sourcedesk.core.sources.about import About, SourceText
from sourcedesk.core.sources.curation import DROPPED_RULE
from sourcedesk.core.sources.name_rejects import is_name_rule, name_of_rule
from sourcedesk.tui.widgets.about_cells import reason_cell, verdict_cell
from sourcedesk.tui.widgets.cells import Palette, plain, source_label

# (key, label, width): titles, hosts and reasons are cut with an ellipsis so every column
# stays in view at 160 columns; the detail pane shows them in full, with the date and provider.
COLUMNS = (
    ("marker", "Marker", 6),
    ("title", "Title", 20),
    ("host", "Host", 14),
    ("about", "About", 10),
    ("why", "Why", 20),
    ("pin", "Pin", 10),
    ("state", "State", 22),  # "name rejected (global)", "excluded by the entry" whole
)

REASON_WORDS = {
    "namesake": "namesake removed",
    "rejected": "rejected",
    "aggregator": "aggregator excluded",
    "excluded": "excluded by the entry",
    "duplicate": "duplicate",
}


@dataclass
class SourceRow:
    key: str
    kind: str  # kept | omitted | held | namesake | excluded
    held_for: str = ""  # held out: the namesake it is about
    source: Source | None = None
    removed: RemovedSource | None = None
    size: int = 0

    @property
    def url(self) -> str:
        return self.source.url if self.source is not None else (self.removed.url if self.removed else "")

    @property
    def host(self) -> str:
        if self.source is not None:
            return self.source.host
        return (self.removed.host if self.removed else "") or (host_of(self.url) or "")

    @property
    def title(self) -> str:
        return self.source.title if self.source is not None else (self.removed.title if self.removed else "")

    @property
    def dropped(self) -> bool:
        """Taken out of the frozen set by the analyst (``d``), not by a rule."""
        return self.removed is not None and self.removed.rule == DROPPED_RULE

    @property
    def rejected_domain(self) -> str | None:
        """The domain whose rejection removed this row (from the rule ``memo:nats.aero``)."""
        if self.removed is None or self.removed.reason != "rejected" or is_name_rule(self.removed.rule):
            return None
        rule = self.removed.rule or ""
        return rule.split(":", 1)[1] if ":" in rule else (rule or self.host)

    @property
    def rejected_name(self) -> str | None:
        """The name whose rejection removed this row (from the rule ``memo-name:Kestra Medical``)."""
        if self.removed is None or self.removed.reason != "rejected" or not is_name_rule(self.removed.rule):
            return None
        return name_of_rule(self.removed.rule)

    @property
    def text(self) -> SourceText:
        """What the about verdict reads: the whole source, or the title of a removed result."""
        if self.source is not None:
            return SourceText.of(self.source)
        return SourceText(self.url, self.title)


def source_rows(source_set: SourceSet | None) -> list[SourceRow]:
    if source_set is None:
        return []
    rows = [SourceRow(f"kept:{i}", "kept", source=s, size=s.size) for i, s in enumerate(source_set.sources)]
    rows += [
        SourceRow(f"omitted:{i}", "omitted", source=o.source, size=o.size) for i, o in enumerate(source_set.omitted)
    ]
    rows += [
        SourceRow(f"held:{i}", "held", source=h.source, size=h.source.size, held_for=h.namesake)
        for i, h in enumerate(source_set.held_out)
    ]
    rows += [SourceRow(f"namesake:{i}", "namesake", removed=r) for i, r in enumerate(source_set.namesakes)]
    rows += [SourceRow(f"excluded:{i}", "excluded", removed=r) for i, r in enumerate(source_set.excluded)]
    return rows


def _entry_request(source_set: SourceSet, entry: int) -> dict:
    """The include-sources entry as it was sent when this set was retrieved."""
    entries = (source_set.request or {}).get("entries") or []
    if 0 <= entry < len(entries) and isinstance(entries[entry], dict):
        return entries[entry]
    return {}


def _pin_text(row: SourceRow, source_set: SourceSet, palette: Palette) -> Text:
    if row.kind == "namesake":
        return Text("✗ namesake", style=f"bold {palette.error}")
    source = row.source
    if source is None:
        return Text("")
    if source.provider == "writer":
        return Text("web result", style="dim")
    if source.provider != "exa":
        return Text("local", style="dim")
    entry = _entry_request(source_set, source.entry)
    if entry.get("pin") == "entity":
        pins = [p for p in entry.get("pins") or [] if isinstance(p, str)]
        if host_matches_any(source.url, pins):
            return Text("✓ pinned", style=palette.success)
        return Text("✗ off-pin", style=palette.error)
    return Text("wide", style="dim")


def _state_text(row: SourceRow, palette: Palette) -> Text:
    if row.kind == "kept":
        return Text("included", style=palette.success)
    if row.kind == "omitted":
        return Text("omitted (budget)", style=palette.warning)  # its size: in the detail pane
    if row.kind == "held":
        return Text(f"held out: about {row.held_for or 'a namesake'}", style="dim")
    reason = row.removed.reason if row.removed else ""
    if row.dropped:
        return Text("dropped (this set)", style=palette.warning)
    word = REASON_WORDS.get(reason, reason)
    if reason == "rejected" and row.removed and row.removed.rule:
        scope = row.removed.rule.split(":", 1)[0]
        what = "name rejected" if is_name_rule(row.removed.rule) else "rejected"
        word = f"{what} ({'global' if scope.startswith('global') else 'memo'})"
    style = palette.error if reason in ("namesake", "rejected") else "dim"
    return Text(word, style=style)


def row_cells(row: SourceRow, source_set: SourceSet, palette: Palette, about: About | None = None) -> list[Text]:
    source = row.source
    marker = (
        Text(source.marker or "—", style="bold")
        if source is not None and row.kind == "kept"
        else Text("—", style="dim")
    )
    title = source_label(row.title, row.host)
    if row.kind != "kept":
        title.stylize("dim")
    return [
        marker,
        title,
        plain(row.host),
        verdict_cell(about, palette),
        reason_cell(about),
        _pin_text(row, source_set, palette),
        _state_text(row, palette),
    ]
