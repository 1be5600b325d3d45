"""The Report tab: the reconcile counts, one row per citation (its status, support verdict,
evidence and the ``about`` verdict of its source) and one per claim left uncited, filterable by
status, support verdict, weak or uncited."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, Select, Static, TabPane

from sourcedesk.core.domain.records import StoredCitation, UncitedClaim
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.sources.about import VERDICTS, About, SourceText
from sourcedesk.tui.widgets.about_cells import about_block, verdict_cell
from sourcedesk.tui.widgets.cells import Palette, count_phrases, plain
from sourcedesk.tui.widgets.row_table import RowTable
from sourcedesk.tui.widgets.section_tab import NO_ROW, add_columns, highlighted_key, refill

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.loading import SectionData, Verdicts

REPORT_STATUSES = ("verified", "substituted", "dropped", "out_of_range", "protected")
REPORT_SUPPORTS = ("supported", "partial", "unsupported", "unchecked")
# What the Report tab filters on: a status, a support verdict, weak citations, or the uncited claims.
REPORT_FILTERS = (*REPORT_STATUSES, "weak", *REPORT_SUPPORTS, "uncited")
REPORT_COLUMNS = (
    ("key", "Key", 5),
    ("status", "Status", 19),  # "verified (retitled)" whole
    ("support", "Support", 12),
    ("about", "About", 10),
    ("claim", "Claim", 30),
    ("evidence", "Evidence", 30),
    ("cited", "Cited URL", 20),
    ("resolved", "Resolved URL", 20),
    ("score", "Score", 5),
)
ReportRow = StoredCitation | UncitedClaim


def shown(cite: StoredCitation, wanted: str | None) -> bool:
    if wanted is None:
        return True
    if wanted == "weak":
        return cite.weak
    if wanted in REPORT_SUPPORTS:
        return cite.support == wanted
    return cite.status == wanted


class ReportTab(TabPane):
    TITLE: ClassVar[str] = "Report"
    TAB_ID: ClassVar[str] = "tab-report"
    FOCUS: ClassVar[str] = "#report"

    def __init__(self) -> None:
        super().__init__(self.TITLE, id=self.TAB_ID)
        self.filter: str | None = None
        self.rows: dict[str, ReportRow] = {}
        self.data: SectionData | None = None
        self.verdicts: Verdicts | None = None
        self.palette: Palette | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="report-counts", markup=False)
        yield Select(
            [(f.replace("_", " "), f) for f in REPORT_FILTERS],
            prompt="all citations",
            id="report-filter",
            allow_blank=True,
            compact=True,
        )
        yield RowTable(id="report", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        add_columns(self.table, REPORT_COLUMNS)

    @property
    def table(self) -> DataTable:
        return self.query_one("#report", DataTable)

    def show(self, data: SectionData, palette: Palette) -> None:
        self.data, self.palette = data, palette
        self._fill()

    def show_verdicts(self, verdicts: Verdicts, palette: Palette) -> None:
        self.verdicts = verdicts
        table = self.table
        for key, row in self.rows.items():
            if isinstance(row, StoredCitation) and key in table.rows:
                table.update_cell(key, "about", verdict_cell(self.cite_about(row), palette))

    def cycle_filter(self) -> None:
        """The next filter (status, support, weak, uncited), then all citations again."""
        order: list[str | None] = [None, *REPORT_FILTERS]
        self.filter = order[(order.index(self.filter) + 1) % len(order)]
        select = self.query_one("#report-filter", Select)
        with self.prevent(Select.Changed):
            select.value = self.filter if self.filter else Select.BLANK
        self._fill()

    @on(Select.Changed, "#report-filter")
    def _filter_chosen(self, event: Select.Changed) -> None:
        value = event.value
        self.filter = value if isinstance(value, str) and value in REPORT_FILTERS else None
        self._fill()

    def _citations(self) -> list[StoredCitation]:
        record = self.data.run_record if self.data is not None else None
        report = record.the_report if record is not None else None
        return list(report.citations) if report is not None else []

    def _uncited(self) -> list[UncitedClaim]:
        record = self.data.run_record if self.data is not None else None
        report = record.the_report if record is not None else None
        return list(report.uncited) if report is not None else []

    def _fill(self) -> None:
        palette, data = self.palette, self.data
        if palette is None or data is None:
            return
        self.query_one("#report-counts", Static).update(self._counts(data, palette))
        self.rows = {}
        refill(self.table, self._rows(palette))

    def _counts(self, data: SectionData, palette: Palette) -> Text:
        view = data.view
        counts = view.counts if view.note_path else {}
        head = Text()
        if not counts:
            head.append("No report yet: run the section (r).", style="dim")
            return head
        head.append("  ·  ".join(count_phrases(counts)))
        head.append("\nsupport: ")
        head.append("  ·  ".join(f"{counts.get(k, 0)} {k}" for k in REPORT_SUPPORTS))
        weak, uncited = counts.get("weak", 0), counts.get("uncited", 0)
        head.append("  ·  ")
        head.append(f"{weak} weak", style=f"bold {palette.error}" if weak else "")
        head.append("  ·  ")
        head.append(f"{uncited} uncited claim(s)", style=f"bold {palette.warning}" if uncited else "")
        if self.filter:
            head.append(f"   showing: {self.filter.replace('_', ' ')}", style="bold")
        return head

    def _rows(self, palette: Palette) -> Iterator[tuple[str, Sequence[Text]]]:
        styles = {
            "verified": palette.success,
            "substituted": palette.warning,
            "dropped": palette.error,
            "out_of_range": palette.error,
            "protected": "dim",
        }
        support_styles = {
            "supported": palette.success,
            "partial": palette.warning,
            "unsupported": palette.error,
            "unchecked": "dim",
        }
        if self.filter != "uncited":
            for i, cite in enumerate(self._citations()):
                if not shown(cite, self.filter):
                    continue
                key = f"cite:{i}"
                self.rows[key] = cite
                label = cite.status.replace("_", " ") + (" (retitled)" if cite.retitled else "")
                support = cite.support or ""
                support_cell = Text(support, style=support_styles.get(support, ""))
                if cite.weak:
                    support_cell = Text("weak", style=f"bold {palette.error}")  # retrieved, but unsupported
                score = cite.score
                yield (
                    key,
                    (
                        plain(cite.key),
                        Text(label, style=styles.get(cite.status, "")),
                        support_cell,
                        verdict_cell(self.cite_about(cite), palette),
                        plain(cite.claim),
                        plain(cite.evidence or cite.reason),
                        plain(cite.cited_url),
                        plain(cite.resolved_url),
                        Text("" if score is None else f"{float(score):.2f}", justify="right"),
                    ),
                )
        if self.filter in (None, "uncited"):
            for i, claim in enumerate(self._uncited()):
                key = f"uncited:{i}"
                self.rows[key] = claim
                yield (
                    key,
                    (
                        Text("—", style="dim"),
                        Text("uncited claim", style=f"bold {palette.warning}"),
                        Text(""),
                        Text(""),
                        plain(claim.claim),
                        plain(claim.reason),
                        Text(""),
                        Text(""),
                        Text(""),
                    ),
                )

    def cite_about(self, cite: StoredCitation) -> About | None:
        """The verdict of a citation's resolved source, judged now (namesakes may have changed)."""
        url, data = cite.resolved_url, self.data
        if cite.status not in ("verified", "substituted") or not url or data is None:
            return None
        judge = data.judge
        if judge is not None:
            key = normalise_url(url)
            ss = data.view.source_set
            for source in ss.sources if ss else []:
                if normalise_url(source.url) == key:
                    return judge.judge(SourceText.of(source))
            web = self.verdicts.web if self.verdicts is not None else []
            for result, about in zip(data.web_results, web, strict=False):
                if normalise_url(str(result.get("url") or "")) == key:
                    return about
        stored = cite.about or {}  # as the reconciler recorded it
        verdict = next((v for v in VERDICTS if v == stored.get("verdict")), None)
        return About(verdict, str(stored.get("reason") or "")) if verdict is not None else None

    def detail(self, palette: Palette) -> Text | None:
        key = highlighted_key(self.table)
        row = self.rows.get(key) if key else None
        if isinstance(row, StoredCitation):
            return self._citation_detail(row, palette)
        if isinstance(row, UncitedClaim):
            out = Text()
            out.append("Uncited claim\n\n", style=f"bold {palette.warning}")
            out.append(row.claim + "\n\n")
            out.append("why: ", style="dim")
            out.append(row.reason + "\n")
            out.append("\nCite a retrieved source for it, or soften it.", style="dim")
            return out
        return NO_ROW

    def _citation_detail(self, cite: StoredCitation, palette: Palette) -> Text:
        out = Text()
        out.append(f"[^{cite.key}]  {cite.status}", style="bold")
        if cite.support:
            out.append(f"  ·  {cite.support}")
        if cite.weak:
            out.append("  ·  WEAK: retrieved, but it does not support its claim", style=f"bold {palette.error}")
        out.append("\n\nclaim\n", style="dim")
        out.append(cite.claim + "\n")
        if cite.evidence:
            out.append("\nevidence (the source's best passage)\n", style="dim")
            out.append(cite.evidence + "\n")
        if cite.reason:
            out.append("\nwhy: ", style="dim")
            out.append(cite.reason + "\n")
        out.append("\ncited: ", style="dim")
        out.append((cite.cited_url or "—") + "\n")
        out.append("resolved: ", style="dim")
        out.append((cite.resolved_url or "—") + "\n")
        about = self.cite_about(cite)
        if about is not None:
            out.append("\n")
            out.append_text(about_block(about, palette))
        return out
