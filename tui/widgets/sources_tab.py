"""The Sources tab: everything the latest retrieval saw — kept, omitted by the budget, namesakes
removed, excluded — one typed ``SourceRow`` per row, and a source's facts, summary and text in
the detail pane."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, TabPane

from sourcedesk.core.sources.about import About
from sourcedesk.tui.widgets.about_cells import about_block, reason_cell, verdict_cell
from sourcedesk.tui.widgets.cells import Palette, plain, source_detail
from sourcedesk.tui.widgets.row_table import RowTable
from sourcedesk.tui.widgets.section_tab import NO_ROW, add_columns, highlighted_key, refill
from sourcedesk.tui.widgets.source_rows import COLUMNS, SourceRow, row_cells, source_rows

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.core.domain.models import SourceSet
    from sourcedesk.tui.loading import SectionData, Verdicts


class SourcesTab(TabPane):
    TITLE: ClassVar[str] = "Sources"
    TAB_ID: ClassVar[str] = "tab-sources"
    FOCUS: ClassVar[str] = "#sources"

    def __init__(self) -> None:
        super().__init__(self.TITLE, id=self.TAB_ID)
        self.rows: dict[str, SourceRow] = {}
        self.abouts: dict[str, About] = {}
        self.source_set: SourceSet | None = None
        self._drawn_with: Palette | None = None  # the colours the rows were drawn in

    def compose(self) -> ComposeResult:
        yield RowTable(id="sources", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        add_columns(self.table, COLUMNS)

    @property
    def table(self) -> DataTable:
        return self.query_one("#sources", DataTable)

    def show(self, data: SectionData, palette: Palette) -> None:
        shown, new = self.source_set, data.view.source_set
        same = shown is not None and new is not None and (shown.id, shown.version) == (new.id, new.version)
        if same and self._drawn_with is palette:
            return  # the same frozen set: its rows (and their verdicts) are on screen already
        self._drawn_with = palette
        self.source_set = data.view.source_set
        rows = source_rows(self.source_set)
        self.rows = {r.key: r for r in rows}
        self.abouts = {k: v for k, v in self.abouts.items() if k in self.rows}
        source_set = self.source_set
        if source_set is None:
            refill(self.table, [])
            return
        refill(self.table, ((r.key, row_cells(r, source_set, palette, self.abouts.get(r.key))) for r in rows))

    def show_verdicts(self, verdicts: Verdicts, palette: Palette) -> None:
        """The About and Why cells, once the verdicts are in (the rows were shown before)."""
        self.abouts = {k: v for k, v in verdicts.by_row.items() if k in self.rows}
        table = self.table
        for key, about in self.abouts.items():
            if key in table.rows:
                table.update_cell(key, "about", verdict_cell(about, palette))
                table.update_cell(key, "why", reason_cell(about))

    def highlighted(self) -> SourceRow | None:
        key = highlighted_key(self.table)
        return self.rows.get(key) if key else None

    def about_of(self, row: SourceRow | None) -> About | None:
        return self.abouts.get(row.key) if row is not None else None

    def detail(self, palette: Palette) -> Text | None:
        row = self.highlighted()
        if row is None:
            return NO_ROW
        about = self.abouts.get(row.key)
        if row.source is not None:
            out = about_block(about, palette)
            state = "included" if row.kind == "kept" else f"omitted by the budget ({row.size:,} chars)"
            if row.kind == "held":
                state = f"held out of the writer's set: about {row.held_for or 'a namesake'}"
            out.append_text(source_detail(row.source, palette, state=state))
            if row.kind == "held":
                out.append("\nk keeps it in the writer's set; n rejects the namesake's name.", style="dim")
            return out
        out = Text()
        if row.removed is None:
            return out
        out.append_text(plain(row.title or row.host))
        out.stylize("bold")
        out.append("\n" + row.url + "\n", style=palette.primary)
        out.append(f"\nremoved: {row.removed.reason}", style="bold")
        if row.removed.rule:
            out.append(" (")
            out.append(row.removed.rule)
            out.append(")")
        out.append("\n")
        out.append_text(about_block(about, palette, hints=False))  # the keys are said once, below
        out.append("\nx rejects its domain; n rejects a name", style="dim")
        if about is not None and about.phrase and about.verdict in ("namesake", "unclear"):
            out.append(" (offers ", style="dim")
            out.append(about.phrase, style="dim italic")
            out.append(")", style="dim")
        out.append("; u un-rejects a rejected one.", style="dim")
        return out
