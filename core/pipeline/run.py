"""The ``run`` pipeline: retrieve → write → reconcile → tidy → note, per section.

The order is the safety argument: everything that can fail (retrieval, the
writer call) happens while the previous note is still intact, and the note is
replaced in one atomic step only at the end. A writer failure, a timeout or a
cancellation therefore leaves the old note byte-identical and says why in the
outcome. Retrieval trouble never blocks a run: it degrades (writer-only, with a
warning). Every run — failed ones too — is recorded in the memo store with its
inputs, the raw writer answer, the reconcile report, timings and cost.

One function per stage, each reading the ``SectionRun`` and what the stage before
it produced: ``resolve_sources`` → ``write_section`` → ``reconcile_section`` →
``save_note``. ``run_section`` strings them together and turns every failure into
an outcome.

Sections run concurrently, bounded by ``max_concurrent_sections``; the provider
and writer clients (and so their rate limiters and connection pools) are shared,
and one section's failure never stops the others. A section only ever writes
its own note file.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx

from sourcedesk.core.citations import reconcile
from sourcedesk.core.citations.bare_urls import find_bare_urls
from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.domain.records import RunError, RunRecord, SectionState, StoredOutcome, StoredReport
from sourcedesk.core.domain.storage import MemoStorage, RejectLists, RunStore
from sourcedesk.core.files.atomic import remove_stale_temporaries
from sourcedesk.core.files.regular import read_regular
from sourcedesk.core.memo.loader import LoadedMemo
from sourcedesk.core.memo.spec import ExaEntry, Memo, Section
from sourcedesk.core.net.deadline import DeadlineExceeded, within
from sourcedesk.core.net.hosts import PinRefused, excluded_by, host_matches_any, validate_pin
from sourcedesk.core.net.policy import WRITER_RETRY
from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.notes.note import NoteRecord, note_path, render_note, write_note_atomic
from sourcedesk.core.pipeline.judging import judge_section
from sourcedesk.core.pipeline.worker import in_worker
from sourcedesk.core.sources.about import AboutJudge
from sourcedesk.core.sources.judge import (
    RunSets,
    annotate,
    annotate_results,
    cited_namesake_keys,
    memo_judge,
    verdict_of,
)
from sourcedesk.core.sources.name_rejects import assemble as assemble_names
from sourcedesk.core.sources.providers import ProviderClients
from sourcedesk.core.sources.retrieve import check_section_ids, retrieve_section_outcome
from sourcedesk.core.writing.choice import LEGACY_MODELS, choose
from sourcedesk.core.writing.domain_filter import domain_filter_for
from sourcedesk.core.writing.prompt import build_prompt, effective_web_search
from sourcedesk.core.writing.registry import Writer, WriteRequest, WriterError, WriterResponse, writer_class
from sourcedesk.core.writing.results import is_placeholder

log = logging.getLogger("sourcedesk.run")

# "cancelled" is not "failed": the analyst stopped the run, nothing went wrong with the section.
Status = Literal["ok", "degraded", "failed", "cancelled"]
Stage = Literal["retrieving", "writing", "reconciling", "judging", "saved", "failed", "cancelled"]
Progress = Callable[[str, str], Any]
T = TypeVar("T")

_MAX_WARNING = 240
WRITER_DEADLINE = "the writer call (writer_deadline_s)"


class RunCancelled(Exception):
    """The analyst cancelled the section (the ``cancel`` event was set)."""


@dataclass
class RunOutcome:
    """What one section's run did, for the CLI, the TUI and the bench."""

    section: str
    status: Status
    message: str = ""  # why it failed or was cancelled ("" when it did neither)
    error_kind: str | None = None  # auth, server, timeout, ... (WriterError kinds), user, internal; cancelled
    note_path: Path | None = None
    report: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    cost: dict[str, float] = field(default_factory=lambda: {"retrieval": 0.0, "writer": 0.0, "total": 0.0})
    source_set_id: str | None = None
    source_set_reused: bool = False
    run_id: str | None = None
    timings: dict[str, float] = field(default_factory=lambda: {"retrieval_s": 0.0, "writer_s": 0.0, "total_s": 0.0})
    # HTTP requests per retrieval provider the section uses ("exa": 0 for a reused set), and the writer's
    requests: dict[str, int] = field(default_factory=lambda: {"writer": 0})
    sources: list[dict[str, Any]] = field(default_factory=list)  # the frozen set, each with its about verdict
    web_results: list[dict[str, Any]] = field(default_factory=list)  # the writer's results, with about
    recorded: bool = False  # the memo store holds this run's record (a later record replaces it)
    namesake_citations: list[str] = field(default_factory=list)  # keys of citations whose source is a namesake's

    @property
    def flagged(self) -> bool:
        """Written, but it cites a namesake's page: never plain ``ok``."""
        return bool(self.namesake_citations)

    @property
    def ok(self) -> bool:
        """A note was written (a degraded one is still a note)."""
        return self.status in ("ok", "degraded")

    def to_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "status": self.status,
            "message": self.message,
            "error_kind": self.error_kind,
            "note_path": str(self.note_path) if self.note_path else None,
            "report": self.report,
            "warnings": list(self.warnings),
            "cost": dict(self.cost),
            "source_set_id": self.source_set_id,
            "source_set_reused": self.source_set_reused,
            "run_id": self.run_id,
            "timings": dict(self.timings),
            "requests": dict(self.requests),
            "sources": list(self.sources),
            "web_results": list(self.web_results),
            "namesake_citations": list(self.namesake_citations),
        }


# ---------------------------------------------------------------- helpers


def _new_run_id(now: datetime) -> str:
    return f"run-{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_WARNING else text[: _MAX_WARNING - 1] + "…"


def _note_warning(text: str, known: set[str]) -> str:
    """A warning as the note's frontmatter may carry it: a URL that no retrieval returned
    (the reconciler names the ones it removed) is cut to ``host/…`` so the note never
    holds it. The run record keeps the full text."""
    spans = find_bare_urls(text)
    for start, end in reversed(spans):
        url = text[start:end]
        if normalise_url(url) not in known:
            text = text[:start] + f"{host_of(url) or 'link'}/…" + text[end:]
    return text


def writer_pins(memo: Memo, section: Section, source_set: SourceSet | None) -> list[str]:
    """The hosts the writer's own search is pinned to: only when every Exa entry of the
    section is ``pin: entity`` (a section that also searches wide must not be pinned).
    Taken from the frozen set's request when it has one, so templates are already rendered."""
    exa = [e for e in section.include_sources if isinstance(e, ExaEntry)]
    if not exa or any(e.pin != "entity" for e in exa):
        return []
    entries = (source_set.request or {}).get("entries") if source_set is not None else None
    pins: list[str] = []
    if entries:
        for entry in entries:
            if isinstance(entry, dict) and entry.get("provider") == "exa":
                pins += [p for p in entry.get("pins") or [] if isinstance(p, str)]
    else:
        for raw in ([memo.subject.url] if memo.subject.url else []) + list(memo.subject.domains):
            try:
                pins.append(validate_pin(raw))
            except PinRefused:
                continue
    return list(dict.fromkeys(pins))


def _source_json(source: Source) -> dict[str, Any]:
    return {
        "marker": source.marker,
        "title": source.title,
        "url": source.url,
        "provider": source.provider,
        "about": source.about,
    }


def _result_json(n: int, result: Mapping[str, object]) -> dict[str, Any]:
    return {"n": n, "title": result.get("title"), "url": result.get("url"), "about": result.get("about")}


async def _until_cancelled(awaitable: Awaitable[T], cancel: asyncio.Event | None) -> T:
    """Await ``awaitable`` unless ``cancel`` is set first (then the work is cancelled)."""
    if cancel is None:
        return await awaitable
    if cancel.is_set():
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise RunCancelled()
    task = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):  # we only care that it stopped
                await task
        waiter.cancel()
    if task.cancelled():
        raise RunCancelled()
    return task.result()


def _emit(progress: Progress | None, section_id: str, stage: Stage) -> None:
    if progress is None:
        return
    try:
        progress(section_id, stage)
    except Exception:
        log.exception("progress callback failed for %s/%s", section_id, stage)


def writer_from_settings(settings: Settings, memo: Memo, *, http: httpx.AsyncClient | None = None) -> Writer:
    """The memo's writer backend (``writer.api``, else the ``writer_api`` setting), configured."""
    api = memo.writer.api or settings.writer_api
    retry = dataclasses.replace(
        WRITER_RETRY,
        max_retries=max(0, min(settings.max_retries, WRITER_RETRY.max_retries)),
        max_retry_after_s=settings.retry_max_wait_s,
    )
    cls = writer_class(api)
    model = memo.writer.model or settings.writer_model
    if cls.has_presets and model and model.strip().lower() in LEGACY_MODELS:
        model = None  # mapped per section by choose(); the backend's default is the fallback
    model = model or cls.default_model
    try:
        writer: Writer = cls(
            settings.writer_url,
            settings.key_for(api),
            model=model,
            http=http,
            timeout=settings.writer_timeout_s,
            retry=retry,
            requests_per_minute=settings.writer_requests_per_minute,
            stream=settings.writer_stream,
            deadline_s=settings.writer_deadline_s,
            max_response_bytes=settings.writer_max_response_bytes,
            max_answer_chars=settings.writer_max_answer_chars,
        )
    except ValueError as exc:
        raise UserError(str(exc), hint="memo.yaml writer: {model: …}, or SOURCEDESK_WRITER_MODEL") from None
    return writer


def newest_first(entries: list[dict[str, Any]]) -> list[str]:
    """Rejected domains, most recently rejected first (what a capped deny-list keeps)."""
    # ``seq`` orders the rejections of one second (several domains rejected at once)
    ordered = sorted(entries, key=lambda e: (str(e.get("added_at") or ""), int(e.get("seq") or 0)), reverse=True)
    return [str(e["domain"]) for e in ordered if e.get("domain")]


def _explain_skipped(report: dict[str, Any], skipped: dict[int, str], unnumbered: int) -> None:
    """Citations of a number no usable search result holds (a malformed result skipped, or,
    when results are numbered by id, a number none carries): say so, instead of the
    reconciler's wording for a blocked result, and never show the placeholder address."""
    cited = [c for c in report.get("citations", []) if c.get("cited_url") and is_placeholder(str(c["cited_url"]))]
    if not cited and not any("skipped-result.invalid" in str(w) for w in report.get("warnings", [])):
        return
    report["warnings"] = [w for w in report.get("warnings", []) if "skipped-result.invalid" not in str(w)]
    for citation in cited:
        citation["cited_url"] = None
        try:
            number = int(str(citation.get("key")))
        except ValueError:
            continue
        if number in skipped:
            report["warnings"].append(
                f"[{number}] cited the writer's search result {number}, which was malformed "
                f"({skipped[number]}) and skipped; removed"
            )
        else:
            also = f", and {unnumbered} malformed result(s) without an id were skipped" if unnumbered else ""
            report["warnings"].append(
                f"[{number}] cited no usable search result: the results are numbered by their ids "
                f"and none is {number}{also}; removed"
            )


# ---------------------------------------------------------------- one section, stage by stage


@dataclass
class SectionRun:
    """One section's run in progress: what every stage reads, and the outcome and run
    record the stages fill in (the record is what the memo store keeps)."""

    loaded: LoadedMemo
    section: Section
    store: MemoStorage
    settings: Settings
    writer: Writer
    outcome: RunOutcome
    record: RunRecord
    started: datetime
    progress: Progress | None = None
    cancel: asyncio.Event | None = None
    global_rejects: list[str] = field(default_factory=list)
    global_name_rejects: list[str] = field(default_factory=list)
    sets: RunSets | None = None  # every section's newest frozen set, shared by the run's sections
    t0: float = field(default_factory=time.monotonic)
    doing: str = "retrieving"  # the stage in words, for a failure or cancellation message

    @property
    def memo(self) -> Memo:
        return self.loaded.memo

    @property
    def web_search(self) -> bool:
        return bool(self.record.web_search)

    def enter(self, stage: Stage, doing: str | None = None) -> None:
        self.doing = doing or stage
        _emit(self.progress, self.section.id, stage)


@dataclass
class Resolved:
    """Stage 1's product: the frozen set, and its sources with their about verdicts."""

    source_set: SourceSet
    sources: list[Source]
    judge: AboutJudge


@dataclass
class CitablePolicy:
    """Which writer results the section may cite: inside the entity pin, not rejected, and
    (for a wide section) not an aggregator."""

    pins: list[str]
    rejects: list[str]
    aggregators: list[str]

    def blocked(self, url: str) -> bool:
        if is_placeholder(url):
            return False  # not the analyst's doing; explained separately
        if self.pins and not host_matches_any(url, self.pins):
            return True
        return bool(excluded_by(url, [*self.rejects, *self.aggregators]))

    def refused_hosts(self, results: Sequence[Mapping[str, object]]) -> list[str]:
        return sorted({host_of(str(r["url"])) or str(r["url"]) for r in results if self.blocked(str(r["url"]))})


@dataclass
class Written:
    """Stage 2's product: the writer's answer and the rules its results are held to."""

    response: WriterResponse
    policy: CitablePolicy


@dataclass
class Reconciled:
    """Stage 3's product: the finished section text and the web results it may cite."""

    text: str
    web_results: list[dict[str, object]]


async def resolve_sources(
    run: SectionRun, *, refresh: bool, clients: ProviderClients | None, now: datetime | None
) -> Resolved:
    """Stage 1: the section's frozen source set (reused or retrieved; degrades, never blocks)."""
    run.enter("retrieving")
    if run.sets is None:
        run.sets = RunSets(run.memo, run.store)
    retrieval = await _until_cancelled(
        retrieve_section_outcome(
            run.loaded,
            run.section.id,
            store=run.store,
            settings=run.settings,
            global_rejects=run.global_rejects,
            refresh=refresh,
            clients=clients,
            now=now,
            global_name_rejects=run.global_name_rejects,
            sets=run.sets,
        ),
        run.cancel,
    )
    source_set = retrieval.source_set
    if run.sets is None:
        run.sets = RunSets(run.memo, run.store)
    run.sets.note(source_set)
    judge = memo_judge(
        run.memo, run.store, extra=[source_set], global_name_rejects=run.global_name_rejects, sets=run.sets
    )
    sources = annotate(judge, source_set.sources)
    outcome = run.outcome
    outcome.sources = [_source_json(s) for s in sources]
    outcome.timings["retrieval_s"] = round(time.monotonic() - run.t0, 4)
    outcome.source_set_id = source_set.id or None
    outcome.source_set_reused = retrieval.reused
    for name in dict.fromkeys(e.provider for e in run.section.include_sources):
        outcome.requests[name] = retrieval.requests_by_provider.get(name, 0)
    outcome.cost["retrieval"] = 0.0 if retrieval.reused or retrieval.kept_previous else source_set.cost_dollars
    outcome.warnings += [_short(f"{w.code}: {w.message}") for w in source_set.warnings]
    run.record.source_set_id = outcome.source_set_id
    run.record.source_set_reused = retrieval.reused
    return Resolved(source_set, sources, judge)


def _citable_policy(run: SectionRun, source_set: SourceSet) -> CitablePolicy:
    pins = writer_pins(run.memo, run.section, source_set)
    rejects = list(dict.fromkeys([*newest_first(run.store.reject_entries()), *run.global_rejects]))
    memo_aggregators = run.memo.settings.aggregators
    aggregators = [] if pins else list(memo_aggregators if memo_aggregators is not None else run.settings.aggregators)
    return CitablePolicy(pins, rejects, aggregators)


async def write_section(run: SectionRun, resolved: Resolved) -> Written:
    """Stage 2: the prompt, the writer's own search pinned like retrieval, and the answer
    (within ``writer_deadline_s``; ``WriterError``/``DeadlineExceeded`` end the run)."""
    run.enter("writing")
    memo, web_search = run.memo, run.web_search
    choice = choose(memo, run.section, has_presets=run.writer.has_presets, default_model=run.settings.writer_model)
    prompt = build_prompt(
        memo,
        run.section,
        resolved.source_set,
        today=run.started.date(),
        web_search=web_search,
        namesakes=resolved.judge.namesake_refs,
    )
    policy = _citable_policy(run, resolved.source_set)
    domain_filter = (
        domain_filter_for(
            policy.pins, [*policy.rejects, *policy.aggregators], cap=run.settings.writer_domain_filter_cap
        )
        if web_search
        else []
    )
    request = WriteRequest(
        prompt=prompt,
        web_search=web_search,
        domain_filter=tuple(domain_filter),
        model=choice.model,
        preset=choice.preset,
        temperature=memo.writer.temperature,
    )
    record = run.record
    record.model = f"preset:{choice.preset}" if choice.preset and web_search else (choice.model or run.writer.model)
    record.writer_api = run.writer.api
    record.writer = run.writer.describe(request)
    record.domain_filter = list(domain_filter)
    record.prompt = {"system": prompt.system, "user": prompt.user, "markers": list(prompt.markers)}
    t1 = time.monotonic()
    try:
        response: WriterResponse = await _until_cancelled(
            within(run.writer.write(request), run.settings.writer_deadline_s, what=WRITER_DEADLINE), run.cancel
        )
    finally:
        run.outcome.timings["writer_s"] = round(time.monotonic() - t1, 4)
    outcome = run.outcome
    outcome.requests["writer"] = response.requests
    outcome.cost["writer"] = float(response.cost_dollars or 0.0)
    # In strict mode the writer's web results are not sources, so warnings about them are moot.
    outcome.warnings += [_short(w) for w in response.warnings if web_search or w not in response.web.warnings]
    record.model = response.model or record.model
    record.raw_response = response.raw
    record.web_results = response.search_results
    record.annotations = response.annotations
    record.annotation_offsets = response.offset_unit
    return Written(response, policy)


async def reconcile_section(run: SectionRun, resolved: Resolved, written: Written) -> Reconciled:
    """Stage 3: every citation checked against the ground truth (frozen set ∪ this run's
    citable web results), then tidied; the report goes to the outcome and the record.

    The reconciling itself runs on a worker thread (``in_worker``): a long answer never
    keeps Ctrl-C or a cancel waiting, and a cancelled run never reaches ``save_note``."""
    run.enter("reconciling")
    memo, outcome, response, policy = run.memo, run.outcome, written.response, written.policy
    web_search = run.web_search
    web_results = annotate_results(resolved.judge, response.web.indexed(), resolved.sources) if web_search else []
    outcome.web_results = [_result_json(i + 1, r) for i, r in enumerate(web_results)]
    if not web_search and len(response.web):
        outcome.warnings.append(
            f"writer: strict mode, but the writer returned {len(response.web)} web result(s); "
            "they were not accepted as sources"
        )
    refused = policy.refused_hosts(response.search_results if web_search else [])
    if refused:
        why = (
            "outside the pinned hosts or from rejected domains"
            if policy.pins
            else "from rejected domains or aggregators"
        )
        outcome.warnings.append(
            f"writer: its own search returned results {why} ({', '.join(refused)}); they were not accepted as sources"
        )
    # A result naming a rejected name keeps its [N] slot (other numbers must not shift),
    # but nothing can cite it: a citation to it is dropped.
    names = assemble_names(memo_names=run.store.reject_names(), global_names=run.global_name_rejects)
    named = {normalise_url(str(r.get("url"))): hit for r in web_results if (hit := names.match(r)) is not None}
    if named:
        phrases = ", ".join(f"'{p}'" for p in dict.fromkeys(h.phrase for h in named.values()))
        outcome.warnings.append(
            f"writer: its own search returned {len(named)} result(s) naming a rejected name ({phrases}); "
            "they were not accepted as sources"
        )
    # A result about a namesake keeps its [N] slot too, but is no ground truth: its page is
    # another company's, whatever the writer wrote next to it.
    theirs = {normalise_url(str(r.get("url"))) for r in web_results if verdict_of(r) == "namesake"}
    theirs -= (
        set(named) | {normalise_url(s.url) for s in resolved.sources}
    )  # kept in by the analyst: flagged | {normalise_url(s.url) for s in resolved.sources}  # kept in by the analyst: flagged
    if theirs:
        outcome.warnings.append(
            f"writer: its own search returned {len(theirs)} result(s) about a namesake; "
            "they were not accepted as sources"
        )
    result = await in_worker(
        reconcile,
        response.content,
        resolved.sources,
        search_results=web_results,
        protected=tuple(memo.settings.protected_keys),
        exclude=lambda url: (
            is_placeholder(url) or policy.blocked(url) or named.get(normalise_url(url)) or normalise_url(url) in theirs
        ),
        subject=[memo.subject.name, *memo.subject.aliases],
        one_marker_per_source=memo.settings.one_marker_per_source_per_paragraph,
    )
    report: dict[str, Any] = dict(result.report.to_json())
    unnumbered = sum(1 for s in response.web.skipped if s.number is None) if web_search else 0
    _explain_skipped(report, response.web.skipped_numbers() if web_search else {}, unnumbered)
    outcome.report = report
    outcome.warnings += [_short(w) for w in report.get("warnings", [])]
    outcome.status = "degraded" if resolved.source_set.degraded else "ok"
    outcome.namesake_citations = cited_namesake_keys(report)
    if outcome.namesake_citations:
        keys = ", ".join(f"[^{k}]" for k in outcome.namesake_citations)
        outcome.warnings.append(f"the note cites {len(outcome.namesake_citations)} source(s) about a namesake: {keys}")
    # ``result.text`` is already tidy and ends with the house "Sources" sections.
    return Reconciled(result.text, web_results)


async def save_note(run: SectionRun, resolved: Resolved, reconciled: Reconciled) -> None:
    """Stage 4: the note, atomically, and only now. The run record (with any hand-edited
    text it keeps) and the new note's hash are stored before the note is replaced: a
    kill at any point leaves a note sourcedesk knows as its own (the new one, or the
    previous one whose hash the state still remembers)."""
    outcome, record, source_set = run.outcome, run.record, resolved.source_set
    known = {normalise_url(s.url) for s in source_set.sources} | {
        normalise_url(str(r.get("url"))) for r in reconciled.web_results if r.get("url")
    }
    note = render_note(
        NoteRecord(
            section=run.section.id,
            title=run.section.title,
            run_id=record.id,
            model=record.model or "",
            generated_at=run.started,
            status=outcome.status,
            web_search=run.web_search,
            source_set_id=source_set.id or None,
            source_set_version=source_set.version or None,
            source_set_fingerprint=source_set.fingerprint or None,
            counts=outcome.report or {},
            warnings=[_note_warning(w, known) for w in outcome.warnings],
            namesake_citations=outcome.namesake_citations,
            cost_retrieval=outcome.cost["retrieval"],
            cost_writer=outcome.cost["writer"],
            cost_judge=outcome.cost.get("judge"),
        ),
        reconciled.text,
    )
    run.doing = "saving the note"
    path = note_path(run.loaded.dir, run.memo, run.section.id)
    if path.is_symlink():  # its target's text would be read into the store, and the link replaced
        raise UserError(
            f"{path.name} is a symbolic link, and sourcedesk writes notes only as regular files, so it was not replaced",
            hint="replace the link with the note itself (or remove it), then re-run",
        )
    previous = _previous_note(run.store, path, run.section.id)
    if previous is not None:
        record.previous_note = previous
        outcome.warnings.append(
            f"the previous note had edits made outside sourcedesk; its text is kept in run {record.id} (previous_note)"
        )
    record.note_sha256 = hashlib.sha256(note.encode("utf-8")).hexdigest()
    outcome.note_path = path
    _finish(run.store, record, outcome, run.t0, run.progress)
    if not outcome.recorded and previous is not None:
        raise UserError(
            f"{path.name} was edited outside sourcedesk and its text could not be kept in the memo store, "
            "so it was not replaced",
            hint="save your edits elsewhere or check that the memo's .sourcedesk folder is writable, then re-run",
        )
    if not outcome.recorded:  # a note naming a run and a set the store does not hold would be half-written
        why = outcome.warnings.pop() if outcome.warnings else "the memo store did not take it"
        raise UserError(f"{why}; the note was not written")
    write_note_atomic(path, note)
    run.enter("saved")


async def run_section(
    loaded_memo: LoadedMemo,
    section_id: str,
    *,
    store: MemoStorage,
    settings: Settings,
    refresh: bool = False,
    writer: Writer | None = None,
    clients: ProviderClients | None = None,
    global_rejects: Sequence[str] = (),
    progress: Progress | None = None,
    now: datetime | None = None,
    cancel: asyncio.Event | None = None,
    global_name_rejects: Sequence[str] = (),
    sets: RunSets | None = None,
) -> RunOutcome:
    """Run one section end to end. Never raises for writer or retrieval trouble: the
    outcome says ``failed`` and why, and the previous note is untouched. Setting ``cancel``
    ends the run with status ``cancelled`` (the note is untouched too); an
    ``asyncio.CancelledError`` is recorded the same way and then re-raised.

    ``global_rejects``/``global_name_rejects``: the analyst's global rejection lists (the
    caller reads them from its global store); ``clients``: the run's shared provider clients;
    ``sets``: the memo's frozen sets as the run sees them (a run of several sections shares one)."""
    memo = loaded_memo.memo
    try:
        section = memo.section(section_id)
    except KeyError:
        raise UserError(
            f"{loaded_memo.path}: no section with id {section_id!r}",
            hint=f"valid section ids: {', '.join(s.id for s in memo.sections)}",
        ) from None
    started = now or clock.now()
    record = RunRecord(id=_new_run_id(started), section=section_id, started_at=started.isoformat())
    outcome = RunOutcome(section=section_id, status="failed", run_id=record.id)
    try:
        if writer is None:
            writer = writer_from_settings(settings, memo)  # opens a connection per call: nothing to close
    except UserError as exc:
        _fail(outcome, "user", f"{exc}; the previous note is unchanged")
        _finish(store, record, outcome, time.monotonic(), progress)
        return outcome
    # A backend without web search of its own (OpenAI-compatible) writes every section strictly.
    record.web_search = effective_web_search(memo, section) and writer.searches_web
    record.refresh = refresh
    run = SectionRun(
        loaded=loaded_memo,
        section=section,
        store=store,
        settings=settings,
        writer=writer,
        outcome=outcome,
        record=record,
        started=started,
        progress=progress,
        cancel=cancel,
        global_rejects=list(global_rejects),
        global_name_rejects=list(global_name_rejects),
        sets=sets,
    )
    try:
        resolved = await resolve_sources(run, refresh=refresh, clients=clients, now=now)
        written = await write_section(run, resolved)
        reconciled = await reconcile_section(run, resolved, written)
        await judge_section(run, resolved, reconciled)  # off unless support.judge: model
        await save_note(run, resolved, reconciled)
        return outcome
    except asyncio.CancelledError:
        _cancelled(outcome, run.doing)
        _finish(store, record, outcome, run.t0, progress, replace=outcome.recorded)
        raise
    except Exception as exc:
        if not _expected_failure(run, exc):
            log.exception("section %s failed while %s", section_id, run.doing)
            _fail(
                outcome, "internal", f"{run.doing} failed ({type(exc).__name__}: {exc}); the previous note is unchanged"
            )
    _finish(store, record, outcome, run.t0, progress, replace=outcome.recorded)
    return outcome


def _expected_failure(run: SectionRun, exc: Exception) -> bool:
    """Put a failure the run knows how to name into the outcome and the record; False for
    anything else (a bug, which the caller logs with its traceback)."""
    outcome, record = run.outcome, run.record
    if isinstance(exc, RunCancelled):
        _cancelled(outcome, run.doing)
    elif isinstance(exc, WriterError):
        _fail(outcome, exc.kind, f"writer failed: {exc.message}; the previous note is unchanged")
        outcome.requests["writer"] = exc.requests
        record.error = RunError(kind=exc.kind, status=exc.status, message=exc.message)
    elif isinstance(exc, DeadlineExceeded):  # the writer call's total deadline (retrieval contains its own)
        message = (
            f"the writer gave no complete answer within {exc.seconds:g} s (writer_deadline_s): "
            "it stalled or sent too slowly"
        )
        _fail(outcome, "timeout", f"writer failed: {message}; the previous note is unchanged")
        record.error = RunError(kind="timeout", status=None, message=message)
    elif isinstance(exc, UserError):
        _fail(outcome, "user", f"{exc}; the previous note is unchanged")
    else:
        return False
    return True


def _fail(outcome: RunOutcome, kind: str, message: str, *, status: Status = "failed") -> None:
    outcome.status = status
    outcome.message = _short(message)
    outcome.note_path = None
    outcome.error_kind = kind


def _cancelled(outcome: RunOutcome, doing: str) -> None:
    _fail(outcome, "cancelled", f"cancelled while {doing}; the previous note is unchanged", status="cancelled")


MAX_NOTE_BYTES = 64 * 1024 * 1024  # far past any note (an answer is at most writer_max_answer_chars)


def _previous_note(store: RunStore, path: Path, section_id: str) -> str | None:
    """The current note's text when someone edited it since sourcedesk wrote it (kept, not lost)."""
    try:
        current = read_regular(path, MAX_NOTE_BYTES, follow_links=False)  # a FIFO or a link never hangs or leaks
    except OSError:
        return None
    state = store.section_state(section_id)
    if hashlib.sha256(current).hexdigest() in (state.note_sha256, state.prior_note_sha256):
        return None
    return current.decode("utf-8", errors="replace")


# ---------------------------------------------------------------- recording the run


def _finish(
    store: RunStore,
    record: RunRecord,
    outcome: RunOutcome,
    t0: float,
    progress: Progress | None,
    *,
    replace: bool = False,
) -> bool:
    """Record the run and the section's state in one store write; True when it was stored.
    ``replace``: the run was recorded as about to write its note, and then did not.

    The write happens here, on the event loop (a few milliseconds). Handing it to a worker
    thread made no run faster — 20 sections re-run against their frozen sets took as long —
    but every step of the write then waited for the loop to let go of the interpreter lock,
    which tripled the time spent writing."""
    state = _closing_record(store, record, outcome, t0, progress, replace=replace)
    return _store_record(store, record, state, outcome, replace=replace)


def _closing_record(
    store: RunStore,
    record: RunRecord,
    outcome: RunOutcome,
    t0: float,
    progress: Progress | None,
    *,
    replace: bool,
) -> dict[str, Any]:
    """Complete ``record`` now that the outcome is decided; the section-state changes to store with it."""
    outcome.timings["total_s"] = round(time.monotonic() - t0, 4)
    outcome.cost["total"] = round(
        outcome.cost["retrieval"] + outcome.cost["writer"] + outcome.cost.get("judge", 0.0), 6
    )
    if outcome.status in ("failed", "cancelled"):
        _emit(progress, outcome.section, outcome.status)
    record.status = outcome.status
    record.message = outcome.message
    record.finished_at = clock.now().isoformat()
    record.report = StoredReport.model_validate(outcome.report) if outcome.report is not None else None
    record.outcome = StoredOutcome.model_validate(outcome.to_json())
    record.timings = dict(outcome.timings)
    record.cost = dict(outcome.cost)
    state: dict[str, Any] = {"last_run": record.id, "last_status": outcome.status}
    try:
        before = store.section_state(outcome.section)
    except Exception:  # the store went away (a team server stopped): storing the record fails and says so
        log.warning("could not read the state of section %s", outcome.section, exc_info=True)
        before = SectionState()
    if outcome.ok:  # only a note about to be written has a new hash; the one it replaces stays known
        state["note_sha256"] = record.note_sha256
        state["prior_note_sha256"] = before.note_sha256
    elif replace:  # the new note never landed: the note on disk is the one before it
        record.note_sha256 = None
        state["note_sha256"] = before.prior_note_sha256
    return state


def _store_record(
    store: RunStore, run: RunRecord, state: dict[str, Any], outcome: RunOutcome, *, replace: bool
) -> bool:
    try:
        # One write: the record and the section's state land together, so no crash can leave
        # a record without its state (or the reverse) and make sourcedesk's own note look edited.
        outcome.run_id = store.save_run(run, section_state=state, replace=replace)
        outcome.recorded = True
        return True
    except Exception as exc:
        log.exception("could not record run of section %s", outcome.section)
        outcome.warnings.append(_short(f"the run could not be recorded in the memo store: {exc}"))
        return False


# ---------------------------------------------------------------- a whole memo


async def run_memo(
    loaded: LoadedMemo,
    section_ids: list[str] | None = None,
    *,
    store: MemoStorage,
    global_lists: RejectLists,
    settings: Settings,
    refresh: bool = False,
    progress: Progress | None = None,
    now: datetime | None = None,
    cancel: asyncio.Event | None = None,
    on_outcome: Callable[[RunOutcome], Any] | None = None,
) -> list[RunOutcome]:
    """Run the requested sections (all by default) concurrently; outcomes in the order asked.

    ``store`` is the memo's open store and ``global_lists`` the analyst's global
    rejections (the caller opens both). ``on_outcome`` sees each section's outcome as
    soon as it is final, so a caller that is interrupted still has the sections that
    completed."""
    ids = check_section_ids(loaded, section_ids)
    for folder, levels in ((loaded.dir, 0), (loaded.dir / "sections", 0), (loaded.dir / ".sourcedesk", 2)):
        remove_stale_temporaries(folder, levels=levels)  # what a killed run left (the store's lock is ours now)
    global_rejects = newest_first(global_lists.reject_entries())
    global_names = global_lists.reject_names()
    semaphore = asyncio.Semaphore(max(1, int(settings.max_concurrent_sections)))
    clients = ProviderClients(settings)
    sets = RunSets(loaded.memo, store)
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(settings.writer_timeout_s)) as http:
            writer = writer_from_settings(settings, loaded.memo, http=http)

            async def one(section_id: str) -> RunOutcome:
                async with semaphore:
                    outcome = await run_section(
                        loaded,
                        section_id,
                        store=store,
                        settings=settings,
                        refresh=refresh,
                        writer=writer,
                        clients=clients,
                        global_rejects=global_rejects,
                        progress=progress,
                        now=now,
                        cancel=cancel,
                        global_name_rejects=global_names,
                        sets=sets,
                    )
                if on_outcome is not None:
                    try:
                        on_outcome(outcome)
                    except Exception:
                        log.exception("outcome callback failed for %s", section_id)
                return outcome

            return list(await asyncio.gather(*(one(s) for s in ids)))
    finally:
        await clients.aclose()


__all__ = [
    "Reconciled",
    "Resolved",
    "RunCancelled",
    "RunOutcome",
    "SectionRun",
    "Written",
    "reconcile_section",
    "resolve_sources",
    "run_memo",
    "run_section",
    "save_note",
    "write_section",
    "writer_from_settings",
    "writer_pins",
]
