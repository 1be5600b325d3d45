"""The Web results tab: the writer's own search results, whether the frozen set holds each, and
its ``about`` verdict; ``k`` keeps one in the set as a W source."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, TabPane

from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.sources.about import About
from sourcedesk.tui.widgets.about_cells import about_block, reason_cell, verdict_cell
from sourcedesk.tui.widgets.cells import Palette, plain
from sourcedesk.tui.widgets.row_table import RowTable
from sourcedesk.tui.widgets.section_tab import NO_ROW, add_columns, highlighted_key, refill

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.loading import SectionData, Verdicts

WEB_COLUMNS = (
    ("n", "#", 3),
    ("title", "Title", 26),
    ("host", "Host", 16),
    ("date", "Date", 10),
    ("inset", "In set", 6),
    ("about", "About", 10),
    ("why", "Why", 24),
)


@dataclass
class WebRow:
    """One of the writer's results, where it stands in the list."""

    index: int
    result: dict[str, Any]

    @property
    def url(self) -> str:
        return str(self.result.get("url") or "")


class WebTab(TabPane):
    TITLE: ClassVar[str] = "Web results"
    TAB_ID: ClassVar[str] = "tab-web"
    FOCUS: ClassVar[str] = "#web"

    def __init__(self) -> None:
        super().__init__(self.TITLE, id=self.TAB_ID)
        self.rows: dict[str, WebRow] = {}
        self.abouts: list[About] = []
        self.results: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield RowTable(id="web", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        add_columns(self.table, WEB_COLUMNS)

    @property
    def table(self) -> DataTable:
        return self.query_one("#web", DataTable)

    def show(self, data: SectionData, palette: Palette) -> None:
        self.results = list(data.web_results)
        if len(self.abouts) != len(self.results):
            self.abouts = []
        ss = data.view.source_set
        in_set = {normalise_url(s.url): s.marker for s in (ss.sources if ss else [])}
        self.rows = {f"web:{i}": WebRow(i, r) for i, r in enumerate(self.results)}
        refill(self.table, self._cells(in_set, palette))

    def _cells(self, in_set: dict[str, str | None], palette: Palette) -> Iterator[tuple[str, Sequence[Text]]]:
        for key, row in self.rows.items():
            result, url = row.result, row.url
            marker = in_set.get(normalise_url(url)) if url else None
            number = result.get("n")  # the [n] that cites it (skipped results keep their numbers)
            about = self.abouts[row.index] if row.index < len(self.abouts) else None
            yield (
                key,
                (
                    Text(str(number if isinstance(number, int) else row.index + 1), justify="right"),
                    plain(result.get("title") or host_of(url) or url),
                    plain(host_of(url) or ""),
                    plain(str(result.get("date") or result.get("last_updated") or "")[:10]),
                    Text(marker or "", style="bold"),
                    verdict_cell(about, palette),
                    reason_cell(about),
                ),
            )

    def show_verdicts(self, verdicts: Verdicts, palette: Palette) -> None:
        self.abouts = list(verdicts.web)
        table = self.table
        for key, row in self.rows.items():
            if row.index < len(self.abouts) and key in table.rows:
                table.update_cell(key, "about", verdict_cell(self.abouts[row.index], palette))
                table.update_cell(key, "why", reason_cell(self.abouts[row.index]))

    def highlighted(self) -> WebRow | None:
        key = highlighted_key(self.table)
        return self.rows.get(key) if key else None

    def about_of(self, row: WebRow | None) -> About | None:
        return self.abouts[row.index] if row is not None and row.index < len(self.abouts) else None

    def detail(self, palette: Palette) -> Text | None:
        row = self.highlighted()
        if row is None:
            return NO_ROW
        result = row.result
        out = Text()
        out.append_text(plain(result.get("title") or host_of(row.url) or ""))
        out.stylize("bold")
        out.append("\n" + row.url + "\n", style=palette.primary)
        out.append("\n" + str(result.get("snippet") or "") + "\n\n")
        out.append_text(about_block(self.about_of(row), palette))
        out.append("\nk keeps it in the frozen set as a W source; x rejects its domain.", style="dim")
        return out
