"""The Warnings tab: why the section has its status, what retrieval warned about (truncation,
degraded retrieval, pins without a URL…), and what the last written note warned about."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static, TabPane

from sourcedesk.core.text.safety import clean_text
from sourcedesk.tui.widgets.cells import Palette, readable_warning
from sourcedesk.tui.widgets.section_tab import NO_ROW

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.loading import SectionData

WARNING_ICONS = {
    "degraded": "⚠",
    "truncated": "✂",
    "pin_without_url": "⚠",
    "pin_refused": "⚠",
    "namesakes_removed": "✗",
    "excluded": "−",
    "short": "…",
    "stale": "⏲",
    "out_of_range": "#",
    "writer": "✎",
    "quarantined": "⚠",
    "exa": "ℹ",
    "info": "ℹ",
}


def warnings_text(data: SectionData) -> Text:
    view = data.view
    out = Text()
    if view.why:
        out.append("Status\n", style="bold")
        out.append(f"  {view.status}: {clean_text(view.why)}\n\n")
    ss = view.source_set
    if ss is not None and ss.warnings:
        out.append(f"Retrieval ({ss.id})\n", style="bold")
        for w in ss.warnings:
            out.append(f"  {WARNING_ICONS.get(w.code, '•')} {w.code.replace('_', ' ')}: ", style="bold")
            out.append(clean_text(w.message) + "\n")
        out.append("\n")
    retrieval = {f"{w.code}: {w.message}" for w in (ss.warnings if ss else [])}
    note_only = [w for w in view.warnings if w not in retrieval]
    if note_only:
        out.append("Last written note\n", style="bold")
        for line in note_only:
            out.append(f"  • {readable_warning(clean_text(line))}\n")
    if not out:
        out.append("No warnings.", style="dim")
    return out


class WarningsTab(TabPane):
    TITLE: ClassVar[str] = "Warnings"
    TAB_ID: ClassVar[str] = "tab-warnings"
    FOCUS: ClassVar[str] = "#warnings-scroll"

    def __init__(self) -> None:
        super().__init__(self.TITLE, id=self.TAB_ID)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="warnings-scroll"):
            yield Static(id="warnings", markup=False)

    def show(self, data: SectionData, palette: Palette) -> None:
        self.query_one("#warnings", Static).update(warnings_text(data))

    def detail(self, palette: Palette) -> Text | None:
        return NO_ROW
