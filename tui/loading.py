"""What the screens show, read from memo.yaml, the notes and the store — off the event loop.

Each function here runs in a screen's thread worker (``@work(thread=True)``) and returns
plain data; only applying it to widgets happens on the event loop. Reading is done in two
passes where the second is slow: the rows first, then the ``about`` verdicts and the
namesake flags (``judge_section``, ``memo_flags``), so a large section shows its rows at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.records import CheckState, RunRecord
from sourcedesk.core.pipeline.section_state import SectionView, describe_memo, describe_section
from sourcedesk.core.sources.about import About, SourceText
from sourcedesk.tui.checks import note_sha256
from sourcedesk.tui.judging import CachedJudge
from sourcedesk.tui.widgets.source_rows import source_rows

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.app import SourcedeskApp

log = logging.getLogger("sourcedesk.tui")


@dataclass
class MemoRow:
    """One section as the memo screen shows it."""

    view: SectionView
    check_problems: int | None = None
    namesakes: list[tuple[str, About]] | None = None  # None: not judged yet


@dataclass
class SectionData:
    """Everything the section screen's tabs show."""

    view: SectionView
    run_record: RunRecord | None = None
    web_results: list[dict[str, Any]] = field(default_factory=list)
    history: list[RunRecord] = field(default_factory=list)
    note_sha: str | None = None
    check_problems: int | None = None
    saved_check: CheckState | None = None
    judge: CachedJudge | None = None


@dataclass
class Verdicts:
    """The ``about`` verdicts of a section's source rows (by row key) and web results (by position)."""

    by_row: dict[str, About] = field(default_factory=dict)
    web: list[About] = field(default_factory=list)


def about_judge(app: SourcedeskApp) -> CachedJudge:
    """The judge as the memo and the store are now; the same object (and its verdicts) until a
    run, a curation or an edit changes what it reads (``SourcedeskApp.sources_changed``)."""
    from sourcedesk.core.sources.judge import memo_judge

    names = app.global_reject_names()
    key = (
        app.loaded.memo.subject.model_dump_json(),
        tuple(n.name for n in app.store.learned_namesakes()),
        tuple(app.store.reject_names()),
        tuple(names),
    )
    current = app.judges.get(key)
    if current is None:
        current = CachedJudge(memo_judge(app.loaded.memo, app.store, global_name_rejects=names), key)
        app.judges = {key: current}  # one judge at a time: an old one's verdicts are stale
    return current


def describe(app: SourcedeskApp, section_id: str) -> SectionView:
    return describe_section(
        app.loaded,
        section_id,
        store=app.store,
        settings=app.settings,
        global_rejects=app.global_rejects(),
        global_name_rejects=app.global_reject_names(),
    )


def memo_rows(app: SourcedeskApp, only: str | None = None) -> list[MemoRow]:
    """Every section's row (or only ``only``'s), without the namesake flags."""
    if only is not None:
        views = [describe(app, only)]
    else:
        views = describe_memo(
            app.loaded,
            store=app.store,
            settings=app.settings,
            global_rejects=app.global_rejects(),
            global_name_rejects=app.global_reject_names(),
        )
    return [MemoRow(v, app.problems_of(v.id, note_sha256(v.note_path))) for v in views]


def namesake_citations(app: SourcedeskApp, view: SectionView, judge: CachedJudge) -> list[tuple[str, About]]:
    """The citations of the section's current note whose source is about a namesake (judged now)."""
    from sourcedesk.core.sources.judge import cited_namesakes

    if view.note_path is None or view.run_id is None or view.note_error:
        return []
    try:
        record = app.store.get_run(view.run_id)
        note_set = app.store.get_source_set(view.note_set_id) if view.note_set_id else None
    except UserError as exc:
        log.info("cannot read the run of %s: %s", view.id, exc)
        return []
    report = record.the_report if record is not None else None
    frozen = note_set if note_set is not None else view.source_set
    return cited_namesakes(
        list(report.citations) if report is not None else [],
        frozen.sources if frozen is not None else [],
        record.writer_results() if record is not None else [],
        judge,
    )


def memo_flags(app: SourcedeskApp, rows: list[MemoRow]) -> list[MemoRow]:
    """The second pass: the rows again, each with its namesake citations (new objects: the
    first pass's rows may be on screen already)."""
    judge = about_judge(app)
    return [replace(row, namesakes=namesake_citations(app, row.view, judge)) for row in rows]


def section_data(app: SourcedeskApp, section_id: str, view: SectionView | None = None) -> SectionData:
    """The section's state, its last run, its history and its last check (no verdicts yet)."""
    view = view or describe(app, section_id)
    record = app.store.get_run(view.run_id) if view.run_id else None
    sha = note_sha256(view.note_path)
    return SectionData(
        view=view,
        run_record=record,
        web_results=record.writer_results() if record is not None else [],
        history=[r for r in app.store.runs(section_id, with_payloads=False) if r.id],  # a listing: no payloads
        note_sha=sha,
        check_problems=app.problems_of(section_id, sha),
        saved_check=app.saved_check(section_id),
    )


def judge_section(app: SourcedeskApp, data: SectionData) -> Verdicts:
    """The second pass: the verdict of every source row and web result. A result a rejection
    removed is judged on the text an earlier version of the set stored for it (its title
    alone would say too little)."""
    from sourcedesk.core.sources.curation import find_in_versions

    judge = about_judge(app)
    data.judge = judge
    out = Verdicts()
    versions = None
    rows = source_rows(data.view.source_set)
    texts: list[SourceText] = []
    for row in rows:
        text = row.text
        if row.source is None and row.removed is not None and row.removed.reason in ("rejected", "excluded"):
            if versions is None:
                versions = app.store.source_set_versions(data.view.id)
            stored = find_in_versions(versions, row.url)
            text = SourceText.of(stored) if stored is not None else text
        texts.append(text)
    # One section: a namesake's site passes its verdict to its other pages (core.sources.about).
    out.by_row = {row.key: about for row, about in zip(rows, judge.judge_section(texts), strict=True)}
    out.web = [judge.judge(SourceText.of(r)) for r in data.web_results]
    return out


def full_run(app: SourcedeskApp, run_id: str) -> RunRecord | None:
    """One run record with its payloads (the history's detail pane)."""
    return app.store.get_run(run_id)
