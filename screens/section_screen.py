"""The section screen: what was retrieved, what the writer cited, what the note says.

Tabs: sources (kept, omitted by budget, namesakes removed, excluded — from the
latest frozen set), the reconcile report (every citation with its support verdict
and evidence, weak ones flagged, and the claims left uncited; filterable by
status, verdict, weak or uncited), warnings, the
note preview (markers highlighted), the writer's web results, the history of
every run of the section (failed and cancelled ones included), and the checks of
the note (grounding after every run, because it is offline and cheap; URL liveness
only on ``v``, because it costs a request per URL). A detail
pane on the right follows the highlighted row of whichever table has focus.

Every source and web result shows its ``about`` verdict (``sourcedesk.core.sources.about``) and why:
the subject, a namesake, some other company, or unclear.

Curation happens here (``sourcedesk.screens.section_actions``): reject a domain (x) or a name (n,
offered from the namesake phrase the verdict found), un-reject either (u), drop one
source from the set (d; u restores it), keep a web result (k), toggle the pin mode (p),
see the memo's namesakes (N); then re-run against the frozen set (r) or refresh
retrieval (R). ``sourcedesk.core.sources.curation`` and ``sourcedesk.core.memo.pin_edit`` do the work on disk.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Select, Static, TabbedContent, TabPane

from sourcedesk.core.domain.records import RunRecord, StoredCitation, UncitedClaim
from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.pipeline.section_state import SectionView
from sourcedesk.core.sources.about import VERDICTS, About, AboutJudge, SourceText
from sourcedesk.core.sources.curation import find_in_versions
from sourcedesk.core.sources.judge import name_to_offer
from sourcedesk.core.text.safety import clean_text
from sourcedesk.screens.section_actions import SectionActions
from sourcedesk.tui.checks import note_sha256
from sourcedesk.tui.widgets import check_rows, run_history
from sourcedesk.tui.widgets.about_cells import about_block, reason_cell, verdict_cell
from sourcedesk.tui.widgets.cells import highlight_markers, plain, source_detail, status_cell
from sourcedesk.tui.widgets.source_rows import COLUMNS as SOURCE_COLUMNS
from sourcedesk.tui.widgets.source_rows import SourceRow, row_cells, source_rows

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
WEB_COLUMNS = (
    ("n", "#", 3),
    ("title", "Title", 26),
    ("host", "Host", 16),
    ("date", "Date", 10),
    ("inset", "In set", 6),
    ("about", "About", 10),
    ("why", "Why", 24),
)
PANE_FOCUS = {
    "tab-sources": "#sources",
    "tab-report": "#report",
    "tab-warnings": "#warnings-scroll",
    "tab-note": "#note-scroll",
    "tab-web": "#web",
    "tab-history": "#history",
    "tab-checks": "#checks",
}
TABS = ("tab-sources", "tab-report", "tab-warnings", "tab-note", "tab-web", "tab-history", "tab-checks")
TABLES = {
    "tab-sources": "#sources",
    "tab-report": "#report",
    "tab-web": "#web",
    "tab-history": "#history",
    "tab-checks": "#checks",
}
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


class SectionScreen(SectionActions):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("r", "run", "Run"),
        Binding("R", "refresh_run", "Refresh", key_display="R"),
        Binding("c", "cancel", "Cancel"),
        Binding("p", "toggle_pin", "Pin"),
        Binding("x", "reject", "Reject"),
        Binding("n", "reject_name", "Reject name"),
        Binding("d", "drop", "Drop"),
        Binding("u", "unreject", "Un-reject"),
        Binding("k", "keep", "Keep"),
        Binding("f", "cycle_filter", "Filter"),
        Binding("v", "verify", "Verify"),
        Binding("N", "namesakes", "Namesakes", key_display="N", show=False),
        *[Binding(str(i + 1), f"tab('{tab}')", tab[4:].title(), show=False) for i, tab in enumerate(TABS)],
    ]
    NARROW_FOOTER_HIDES = frozenset({"toggle_pin", "drop", "unreject", "keep", "toggle_theme"})

    def __init__(self, section_id: str) -> None:
        super().__init__()
        self.section_id = section_id
        self.view: SectionView | None = None
        self.rows: dict[str, SourceRow] = {}
        self.run_record: RunRecord | None = None
        self.web_results: list[dict[str, Any]] = []
        self.judge: AboutJudge | None = None
        self.abouts: dict[str, About] = {}  # source row key -> verdict
        self.web_abouts: list[About] = []
        self.history: dict[str, RunRecord] = {}
        self.report_filter: str | None = None
        self._frame = 0
        self._note_sha: str | None = None  # the note's bytes as last read (for the check badge)
        self._check_problems: int | None = None

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="§")
        yield Static(id="section-head", markup=False)
        yield Static(id="section-why", markup=False)
        with Horizontal(id="section-body"):
            with TabbedContent(id="section-tabs", initial="tab-sources"):
                with TabPane("Sources", id="tab-sources"):
                    yield DataTable(id="sources", cursor_type="row", zebra_stripes=True)
                with TabPane("Report", id="tab-report"):
                    yield Static(id="report-counts", markup=False)
                    yield Select(
                        [(f.replace("_", " "), f) for f in REPORT_FILTERS],
                        prompt="all citations",
                        id="report-filter",
                        allow_blank=True,
                        compact=True,
                    )
                    yield DataTable(id="report", cursor_type="row", zebra_stripes=True)
                with TabPane("Warnings", id="tab-warnings"):
                    with VerticalScroll(id="warnings-scroll"):
                        yield Static(id="warnings", markup=False)
                with TabPane("Note", id="tab-note"):
                    with VerticalScroll(id="note-scroll"):
                        yield Static(id="note", markup=False)
                with TabPane("Web results", id="tab-web"):
                    yield DataTable(id="web", cursor_type="row", zebra_stripes=True)
                with TabPane("History", id="tab-history"):
                    yield DataTable(id="history", cursor_type="row", zebra_stripes=True)
                with TabPane("Checks", id="tab-checks"):
                    yield Static(id="checks-summary", markup=False)
                    yield DataTable(id="checks", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="detail-pane"):
                yield Static(id="detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        for table_id, columns in (
            ("#sources", SOURCE_COLUMNS),
            ("#report", REPORT_COLUMNS),
            ("#web", WEB_COLUMNS),
            ("#history", run_history.COLUMNS),
            ("#checks", check_rows.COLUMNS),
        ):
            table = self.query_one(table_id, DataTable)
            for key, label, width in columns:
                table.add_column(label, key=key, width=width)
        # No reload here: ScreenResume follows the mount (and every return to this screen).
        self.set_interval(0.12, self._spin)
        self.query_one("#sources", DataTable).focus()

    def on_screen_resume(self) -> None:
        self.reload()

    # ------------------------------------------------------------------ loading

    def reload(self) -> None:
        app = self.sd_app
        try:
            self.view = app.describe(self.section_id)
        except KeyError:  # the section left memo.yaml
            app.say(f"Section {self.section_id} is no longer in memo.yaml.", "warning")
            app.pop_screen()
            return
        self.run_record = app.store.get_run(self.view.run_id) if self.view.run_id else None
        self.web_results = self.run_record.writer_results() if self.run_record is not None else []
        self.judge = app.about_judge()
        self.web_abouts = [self.judge.judge(SourceText.of(r)) for r in self.web_results]
        self.sub_title = self.view.section.title
        self._read_check_state()
        self._fill_head()
        self._fill_sources()
        self._fill_report()
        self._fill_warnings()
        self._fill_note()
        self._fill_web()
        self._fill_history()
        self._fill_checks()
        self._show_detail()

    def check_changed(self, section_id: str) -> None:
        """A check of this section started, progressed or finished: head line and Checks tab."""
        if not self.is_mounted or section_id != self.section_id:
            return
        self._read_check_state()
        self._fill_head()
        self._fill_checks()
        if self._active_tab() == "tab-checks":
            self._show_detail()

    def _read_check_state(self) -> None:
        """The note's hash and its last check's problems, read once (the head line repaints often)."""
        note = self.view.note_path if self.view is not None else None
        self._note_sha = note_sha256(note)
        self._check_problems = self.sd_app.check_problems(self.section_id, note)

    def section_changed(self, section_id: str | None) -> None:
        if not self.is_mounted:
            return
        if section_id is None or (section_id == self.section_id and section_id not in self.sd_app.jobs):
            self.reload()
        elif section_id == self.section_id:
            self._fill_head()

    def _spin(self) -> None:
        checking = self.section_id in self.sd_app.check_jobs
        if (self.section_id in self.sd_app.jobs or checking) and self.is_current:
            self._frame += 1
            self._fill_head()
            if checking:  # progress (URLs done) without rebuilding the rows
                self.query_one("#checks-summary", Static).update(self._checks_summary())

    def _fill_head(self) -> None:
        view, app = self.view, self.sd_app
        if view is None:
            return
        palette = app.palette
        job = app.jobs.get(self.section_id)
        out = Text()
        out.append(view.section.title, style="bold")
        out.append(f"  {view.id}   ", style="dim")
        out.append_text(
            status_cell("running", palette, job.stage_text, self._frame) if job else status_cell(view.status, palette)
        )
        modes = sorted(set(view.pin_modes))
        out.append(f"   pin: {'/'.join(modes) if modes else '—'}")
        ss = view.source_set
        if ss is not None:
            out.append(f"   set {ss.id} · {len(ss.sources)} kept")
            if ss.omitted:
                out.append(f", {len(ss.omitted)} omitted by budget", style=palette.warning)
            if ss.namesakes:
                out.append(f", {len(ss.namesakes)} namesakes removed")
            if ss.excluded:
                out.append(f", {len(ss.excluded)} excluded")
        if view.cost is not None:
            out.append(f"   ${view.cost:.3f}")
        checking = app.check_jobs.get(self.section_id)
        if checking is not None:
            out.append("   ")
            out.append_text(status_cell("running", palette, checking.text, self._frame))
        elif self._check_problems:
            out.append(f"   ✗{self._check_problems} check problem(s)", style=f"bold {palette.error}")
        self.query_one("#section-head", Static).update(out)
        why = Text()
        if job is not None:
            why.append(f"Running: {job.stage_text}… c cancels; the current note stays until the run succeeds.")
        elif view.why:
            why.append(clean_text(view.why))
        self.query_one("#section-why", Static).update(why)

    def _fill_sources(self) -> None:
        table = self.query_one("#sources", DataTable)
        keep = table.cursor_row
        table.clear()
        source_set = self.view.source_set if self.view else None
        rows = source_rows(source_set)
        self.rows = {r.key: r for r in rows}
        self.abouts = self._judge_rows(rows)
        palette = self.sd_app.palette
        if source_set is not None:
            for row in rows:
                table.add_row(*row_cells(row, source_set, palette, self.abouts.get(row.key)), key=row.key)
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))

    def _judge_rows(self, rows: list[SourceRow]) -> dict[str, About]:
        """Each row's verdict; a removed result is judged on the text an earlier version of the
        set stored for it (its title alone would say too little)."""
        judge = self.judge
        if judge is None:
            return {}
        versions = None
        texts: list[SourceText] = []
        for row in rows:
            text = row.text
            if row.source is None and row.removed is not None and row.removed.reason in ("rejected", "excluded"):
                if versions is None:
                    versions = self.sd_app.store.source_set_versions(self.section_id)
                stored = find_in_versions(versions, row.url)
                text = SourceText.of(stored) if stored is not None else text
            texts.append(text)
        # One section: a namesake's site passes its verdict to its other pages (core.sources.about).
        return {row.key: about for row, about in zip(rows, judge.judge_section(texts), strict=True)}

    def _citations(self) -> list[StoredCitation]:
        report = self.run_record.the_report if self.run_record is not None else None
        return list(report.citations) if report is not None else []

    def _uncited(self) -> list[UncitedClaim]:
        report = self.run_record.the_report if self.run_record is not None else None
        return list(report.uncited) if report is not None else []

    def _shown(self, cite: StoredCitation) -> bool:
        wanted = self.report_filter
        if wanted is None:
            return True
        if wanted == "weak":
            return cite.weak
        if wanted in REPORT_SUPPORTS:
            return cite.support == wanted
        return cite.status == wanted

    def _fill_report(self) -> None:
        view = self.view
        counts = view.counts if view and view.note_path else {}
        head = Text()
        if not counts:
            head.append("No report yet: run the section (r).", style="dim")
        else:
            labels = (
                ("verified", "verified"),
                ("retitled", "retitled"),
                ("substituted", "substituted"),
                ("dropped", "dropped"),
                ("out_of_range", "out of range"),
                ("protected", "protected"),
                ("links_removed", "unretrieved links removed"),
            )
            head.append("  ·  ".join(f"{counts.get(k, 0)} {label}" for k, label in labels))
            head.append("\nsupport: ")
            head.append("  ·  ".join(f"{counts.get(k, 0)} {k}" for k in REPORT_SUPPORTS))
            palette = self.sd_app.palette
            weak, uncited = counts.get("weak", 0), counts.get("uncited", 0)
            head.append("  ·  ")
            head.append(f"{weak} weak", style=f"bold {palette.error}" if weak else "")
            head.append("  ·  ")
            head.append(f"{uncited} uncited claim(s)", style=f"bold {palette.warning}" if uncited else "")
            if self.report_filter:
                head.append(f"   showing: {self.report_filter.replace('_', ' ')}", style="bold")
        self.query_one("#report-counts", Static).update(head)
        table = self.query_one("#report", DataTable)
        table.clear()
        palette = self.sd_app.palette
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
        if self.report_filter != "uncited":
            for i, cite in enumerate(self._citations()):
                if not self._shown(cite):
                    continue
                status = cite.status
                label = status.replace("_", " ") + (" (retitled)" if cite.retitled else "")
                support = cite.support or ""
                support_cell = Text(support, style=support_styles.get(support, ""))
                if cite.weak:
                    support_cell = Text("weak", style=f"bold {palette.error}")  # retrieved, but unsupported
                score = cite.score
                table.add_row(
                    plain(cite.key),
                    Text(label, style=styles.get(status, "")),
                    support_cell,
                    verdict_cell(self._cite_about(cite), palette),
                    plain(cite.claim),
                    plain(cite.evidence or cite.reason),
                    plain(cite.cited_url),
                    plain(cite.resolved_url),
                    Text("" if score is None else f"{float(score):.2f}", justify="right"),
                    key=f"cite:{i}",
                )
        if self.report_filter in (None, "uncited"):
            for i, claim in enumerate(self._uncited()):
                table.add_row(
                    Text("—", style="dim"),
                    Text("uncited claim", style=f"bold {palette.warning}"),
                    Text(""),
                    Text(""),
                    plain(claim.claim),
                    plain(claim.reason),
                    Text(""),
                    Text(""),
                    Text(""),
                    key=f"uncited:{i}",
                )

    def _cite_about(self, cite: StoredCitation) -> About | None:
        """The verdict of a citation's resolved source, judged now (namesakes may have changed)."""
        url = cite.resolved_url
        if cite.status not in ("verified", "substituted") or not url or self.judge is None:
            return None
        key = normalise_url(url)
        ss = self.view.source_set if self.view else None
        for source in ss.sources if ss else []:
            if normalise_url(source.url) == key:
                return self.judge.judge(SourceText.of(source))
        for result, about in zip(self.web_results, self.web_abouts, strict=False):
            if normalise_url(str(result.get("url") or "")) == key:
                return about
        stored = cite.about or {}  # as the reconciler recorded it
        verdict = next((v for v in VERDICTS if v == stored.get("verdict")), None)
        return About(verdict, str(stored.get("reason") or "")) if verdict is not None else None

    def _fill_warnings(self) -> None:
        view = self.view
        out = Text()
        if view is None:
            return
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
                out.append(f"  • {clean_text(line)}\n")
        if not out:
            out.append("No warnings.", style="dim")
        self.query_one("#warnings", Static).update(out)

    def _fill_note(self) -> None:
        view = self.view
        if view is None or view.note_path is None:
            text = Text("No note yet — r writes it from the frozen sources.", style="dim")
        elif view.note_error:
            text = Text(view.note_error, style="bold")
        else:
            text = Text(f"{view.note_path.name}\n\n", style="dim")
            text.append_text(highlight_markers(view.body.strip("\n"), self.sd_app.palette))
        self.query_one("#note", Static).update(text)

    def _fill_web(self) -> None:
        table = self.query_one("#web", DataTable)
        keep = table.cursor_row  # the result just kept or rejected stays highlighted
        table.clear()
        ss = self.view.source_set if self.view else None
        in_set = {normalise_url(s.url): s.marker for s in (ss.sources if ss else [])}
        palette = self.sd_app.palette
        for i, result in enumerate(self.web_results):
            url = str(result.get("url") or "")
            marker = in_set.get(normalise_url(url)) if url else None
            about = self.web_abouts[i] if i < len(self.web_abouts) else None
            number = result.get("n")  # the [n] that cites it (skipped results keep their numbers)
            table.add_row(
                Text(str(number if isinstance(number, int) else i + 1), justify="right"),
                plain(result.get("title") or host_of(url) or url),
                plain(host_of(url) or ""),
                plain(str(result.get("date") or result.get("last_updated") or "")[:10]),
                Text(marker or "", style="bold"),
                verdict_cell(about, palette),
                reason_cell(about),
                key=f"web:{i}",
            )
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))

    def _fill_history(self) -> None:
        table = self.query_one("#history", DataTable)
        keep = table.cursor_row
        table.clear()
        records = self.sd_app.store.runs(self.section_id, with_payloads=False)  # listing only: no payload reads
        self.history = {r.id: r for r in records if r.id}
        current = self.view.run_id if self.view else None
        palette = self.sd_app.palette
        for run_id, record in self.history.items():
            table.add_row(*run_history.row_cells(record, current, palette), key=f"run:{run_id}")
        if records:
            table.move_cursor(row=min(keep, table.row_count - 1))

    def _checks_summary(self) -> Text:
        """What the Checks tab says above its rows: a check running, the last one, or why there is none."""
        app, view = self.sd_app, self.view
        palette = app.palette
        head = Text()
        check = app.last_check(self.section_id)
        checking = app.check_jobs.get(self.section_id)
        note_path = view.note_path if view is not None else None
        if checking is not None:
            head.append(f"{checking.text}…", style=f"bold {palette.accent}")
            head.append("  (the rows below are from the previous check)\n" if check else "\n", style=palette.dim)
        if note_path is None:
            head.append(
                "No note yet — r writes it; then v checks its URLs, and its quotes and figures "
                "against the stored sources.",
                style=palette.dim,
            )
        elif check is None:
            saved = app.saved_check(self.section_id) if checking is None else None
            if saved and self._check_problems is not None:
                problems = saved.problems
                head.append(f"Checked {saved.at[:16].replace('T', ' ')} UTC: ", style=palette.dim)
                head.append(f"{problems} problem(s)", style=f"bold {palette.error}" if problems else palette.success)
                head.append(" — v checks again to list them.", style=palette.dim)
            elif checking is None:
                head.append(
                    "Not checked yet: v checks every cited URL (network) and grounds each quote and "
                    "figure in the stored text of its source.",
                    style=palette.dim,
                )
        else:
            kind = "URLs and grounding" if check.liveness else "grounding only (offline, after the run)"
            head.append(f"{check.note_name} · {kind} · {check.at.astimezone():%H:%M:%S}", style=palette.dim)
            if check.note_sha256 != self._note_sha:
                head.append("  — the note changed since: v checks it again", style=palette.warning)
            head.append("\n")
            head.append_text(check_rows.summary(check.report, palette))
            if check.report.warnings:
                head.append("\n")
                head.append_text(check_rows.warnings_block(check.report.warnings, palette))
                head.rstrip()
        return head

    def _fill_checks(self) -> None:
        """The last check of the note (grounding after a run; URLs too after v)."""
        self.query_one("#checks-summary", Static).update(self._checks_summary())
        table = self.query_one("#checks", DataTable)
        keep = table.cursor_row
        table.clear()
        check = self.sd_app.last_check(self.section_id)
        if check is None or self.view is None or self.view.note_path is None:
            return
        for key, cells in check_rows.rows(check.report, self.sd_app.palette):
            table.add_row(*cells, key=key)
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))

    # ------------------------------------------------------------------ detail pane

    def _active_table(self) -> DataTable | None:
        active = self.query_one("#section-tabs", TabbedContent).active
        table_id = TABLES.get(active)
        return self.query_one(table_id, DataTable) if table_id else None

    def _row_key(self, table: DataTable) -> str | None:
        if table.row_count == 0:
            return None
        try:
            return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001 - empty or changing table
            return None

    def highlighted_source(self) -> SourceRow | None:
        key = self._row_key(self.query_one("#sources", DataTable))
        return self.rows.get(key) if key else None

    def _name_target(self) -> tuple[str, str]:
        """``(phrase to offer, what it came from)`` for the highlighted source or web result."""
        active = self._active_tab()
        about = None
        item: object | None = None
        if active == "tab-web":
            key = self._row_key(self.query_one("#web", DataTable))
            index = int(key.split(":", 1)[1]) if key else -1
            about = self.web_abouts[index] if 0 <= index < len(self.web_abouts) else None
            item = self.web_results[index] if 0 <= index < len(self.web_results) else None
        else:
            row = self.highlighted_source()
            about = self.abouts.get(row.key) if row is not None else None
            item = row.source if row is not None else None
        if about is None:
            return "", ""
        if about.verdict != "namesake" or self.judge is None:
            return about.phrase or "", about.verdict
        store, memo = self.sd_app.store, self.sd_app.loaded.memo
        sets = [store.latest_source_set(s.id) for s in memo.sections]
        return name_to_offer(self.judge, about, sets, item), about.verdict

    def highlighted_web_result(self) -> dict[str, Any] | None:
        key = self._row_key(self.query_one("#web", DataTable))
        if not key:
            return None
        index = int(key.split(":", 1)[1])
        return self.web_results[index] if index < len(self.web_results) else None

    def _show_detail(self) -> None:
        palette = self.sd_app.palette
        table = self._active_table()
        out = Text()
        key = self._row_key(table) if table is not None else None
        if key and key.startswith(("kept:", "omitted:", "held:", "namesake:", "excluded:")):
            row = self.rows.get(key)
            if row is not None and row.source is not None:
                out = about_block(self.abouts.get(key), palette)
                state = "included" if row.kind == "kept" else f"omitted by the budget ({row.size:,} chars)"
                if row.kind == "held":
                    state = f"held out of the writer's set: about {row.held_for or 'a namesake'}"
                out.append_text(source_detail(row.source, palette, state=state))
                if row.kind == "held":
                    out.append("\nk keeps it in the writer's set; n rejects the namesake's name.", style="dim")
            elif row is not None and row.removed is not None:
                out.append_text(plain(row.title or row.host))
                out.stylize("bold")
                out.append("\n" + row.url + "\n", style=palette.primary)
                out.append(f"\nremoved: {row.removed.reason}", style="bold")
                if row.removed.rule:
                    out.append(" (")
                    out.append(row.removed.rule)
                    out.append(")")
                out.append("\n")
                out.append_text(about_block(self.abouts.get(key), palette))
                out.append("\nx rejects its domain; n rejects a name; u un-rejects a rejected one.", style="dim")
        elif key and key.startswith("cite:"):
            cite = self._citations()[int(key.split(":", 1)[1])]
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
            about = self._cite_about(cite)
            if about is not None:
                out.append("\n")
                out.append_text(about_block(about, palette))
        elif key and key.startswith("uncited:"):
            found = self._uncited()
            index = int(key.split(":", 1)[1])
            claim = found[index] if index < len(found) else UncitedClaim()
            out.append("Uncited claim\n\n", style=f"bold {palette.warning}")
            out.append(claim.claim + "\n\n")
            out.append("why: ", style="dim")
            out.append(claim.reason + "\n")
            out.append("\nCite a retrieved source for it, or soften it.", style="dim")
        elif key and key.startswith("web:"):
            result = self.highlighted_web_result() or {}
            out.append_text(plain(result.get("title") or host_of(str(result.get("url") or "")) or ""))
            out.stylize("bold")
            out.append("\n" + str(result.get("url") or "") + "\n", style=palette.primary)
            out.append("\n" + str(result.get("snippet") or "") + "\n\n")
            index = int(key.split(":", 1)[1])
            out.append_text(about_block(self.web_abouts[index] if index < len(self.web_abouts) else None, palette))
            out.append("\nk keeps it in the frozen set as a W source; x rejects its domain.", style="dim")
        elif key and key.startswith("run:"):
            run_id = key.split(":", 1)[1]
            record = self.history.get(run_id)
            if record is not None:
                record = self.sd_app.store.get_run(run_id) or record  # the rows are a listing; the detail is all of it
                out = run_history.detail(record, self.view.run_id if self.view else None, palette)
        elif key and key.startswith(("url:", "ground:")):
            out = self._check_detail(key) or out
        else:
            out.append("Highlight a row to see its details.", style="dim")
        self.query_one("#detail", Static).update(out)

    def _check_detail(self, key: str) -> Text | None:
        check = self.sd_app.last_check(self.section_id)
        if check is None:
            return None
        kind, index = key.split(":", 1)
        i = int(index)
        if kind == "url":
            urls = check.report.urls
            return check_rows.url_detail(urls[i], self.sd_app.palette) if i < len(urls) else None
        grounding = check.report.grounding
        if i >= len(grounding):
            return None
        row = grounding[i]
        return check_rows.grounding_detail(row, check.url_by_key.get(row.key), self.sd_app.palette)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id in PANE_FOCUS:
            self._focus_pane(event.pane.id)
        self._show_detail()

    def on_select_changed(self, event: Select.Changed) -> None:
        value = event.value
        self.report_filter = value if isinstance(value, str) and value in REPORT_FILTERS else None
        self._fill_report()

    # ------------------------------------------------------------------ actions

    def action_back(self) -> None:
        self.sd_app.pop_screen()

    def action_tab(self, tab: str) -> None:
        self.query_one("#section-tabs", TabbedContent).active = tab
        self._focus_pane(tab)
        self.call_after_refresh(self._show_detail)

    def _focus_pane(self, tab: str) -> None:
        """Move focus into the shown pane: focus left in a hidden pane pulls the tabs back to it."""
        pane = self.query_one(f"#{tab}", TabPane)
        focused = self.focused
        if focused is None or pane not in focused.ancestors_with_self:
            self.query_one(PANE_FOCUS[tab]).focus()

    def action_run(self) -> None:
        self.sd_app.start_run(self.section_id)

    def action_refresh_run(self) -> None:
        self.sd_app.start_run(self.section_id, refresh=True)

    def action_cancel(self) -> None:
        app = self.sd_app
        if self.section_id not in app.jobs and self.section_id in app.check_jobs:
            app.cancel_check(self.section_id, why="cancelled")
            return
        app.cancel_run(self.section_id)

    def action_verify(self) -> None:
        if self.sd_app.start_check(self.section_id):
            self.action_tab("tab-checks")

    def action_cycle_filter(self) -> None:
        order = [None, *REPORT_FILTERS]
        self.report_filter = order[(order.index(self.report_filter) + 1) % len(order)]
        select = self.query_one("#report-filter", Select)
        with self.prevent(Select.Changed):
            select.value = self.report_filter if self.report_filter else Select.BLANK
        self.query_one("#section-tabs", TabbedContent).active = "tab-report"
        self._fill_report()
