"""The ``run`` pipeline: retrieve → write → reconcile → tidy → note, per section.

The order is the safety argument: everything that can fail (retrieval, the
writer call) happens while the previous note is still intact, and the note is
replaced in one atomic step only at the end. A writer failure, a timeout or a
cancellation therefore leaves the old note byte-identical and says why in the
outcome. Retrieval trouble never blocks a run: it degrades (writer-only, with a
warning). Every run — failed ones too — is recorded in the memo store with its
inputs, the raw writer answer, the reconcile report, timings and cost.

Sections run concurrently, bounded by ``max_concurrent_sections``; the Exa and
writer clients (and so their rate limiters and connection pools) are shared,
and one section's failure never stops the others. A section only ever writes
its own note file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import logging
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx

from core.citations import reconcile
from core.citations.bare_urls import find_bare_urls
from core.deadline import DeadlineExceeded, within
from core.errors import UserError
from core.hosts import PinRefused, excluded_by, host_matches_any, validate_pin
from core.http_policy import WRITER_RETRY
from core.memo import Memo, Section
from core.memo_judge import annotate, annotate_results, memo_judge
from core.memo_loader import LoadedMemo, load_memo
from core.models import SourceSet
from core.name_rejects import assemble as assemble_names
from core.notes import NoteRecord, note_path, render_note, write_note_atomic
from core.prompt import build_prompt, effective_web_search
from core.records import RunRecord
from core.retrieval import check_section_ids, exa_client_from_settings, retrieve_section_outcome
from core.settings import Settings
from core.urls import host_of, normalise_url
from core.writers import Writer, WriteRequest, WriterError, WriterResponse, writer_class
from core.writers.choice import LEGACY_MODELS, choose
from core.writers.domain_filter import domain_filter_for
from core.writers.results import is_placeholder

log = logging.getLogger("sourcedesk.run")

# "cancelled" is not "failed": the analyst stopped the run, nothing went wrong with the section.
Status = Literal["ok", "degraded", "failed", "cancelled"]
Stage = Literal["retrieving", "writing", "reconciling", "saved", "failed", "cancelled"]
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
    requests: dict[str, int] = field(default_factory=lambda: {"exa": 0, "writer": 0})
    raw_citation_classes: dict[str, int] | None = None  # sandbox only: class of every raw citation
    sources: list[dict[str, Any]] = field(default_factory=list)  # the frozen set, each with its about verdict
    web_results: list[dict[str, Any]] = field(default_factory=list)  # the writer's results, with about
    recorded: bool = False  # the memo store holds this run's record (a later record replaces it)

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
            "raw_citation_classes": self.raw_citation_classes,
            "sources": list(self.sources),
            "web_results": list(self.web_results),
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


def _report_json(report: Any) -> dict[str, Any]:
    return report.to_json() if hasattr(report, "to_json") else dict(report)


def writer_pins(memo: Memo, section: Section, source_set: SourceSet | None) -> list[str]:
    """The hosts the writer's own search is pinned to: only when every Exa entry of the
    section is ``pin: entity`` (a section that also searches wide must not be pinned).
    Taken from the frozen set's request when it has one, so templates are already rendered."""
    exa = [e for e in section.include_sources if e.provider == "exa"]
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


def _source_json(source: Any) -> dict[str, Any]:
    return {
        "marker": source.marker,
        "title": source.title,
        "url": source.url,
        "provider": source.provider,
        "about": source.about,
    }


def _result_json(n: int, result: dict[str, Any]) -> dict[str, Any]:
    return {"n": n, "title": result.get("title"), "url": result.get("url"), "about": result.get("about")}


def _classes(raw: dict[str, Any]) -> dict[str, int] | None:
    truth = raw.get("sandbox_truth") if isinstance(raw, dict) else None
    if not isinstance(truth, dict) or not isinstance(truth.get("citations"), list):
        return None
    counts = Counter(str(c.get("class")) for c in truth["citations"] if isinstance(c, dict))
    return dict(sorted(counts.items()))


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
    ordered = sorted(entries, key=lambda e: str(e.get("added_at") or ""), reverse=True)
    return [str(e["domain"]) for e in ordered if e.get("domain")]


def _blocked_hosts(results: list[dict[str, Any]], blocked: Callable[[str], object]) -> list[str]:
    """Hosts of writer results the section may not cite (rejected, an aggregator, outside the pin)."""
    return sorted({host_of(str(r["url"])) or str(r["url"]) for r in results if blocked(str(r["url"]))})


def _explain_skipped(report: dict[str, Any], skipped: dict[int, str]) -> None:
    """Citations of a skipped (malformed) search result: say so, instead of the reconciler's
    wording for a blocked result, and never show the placeholder address."""
    if not skipped:
        return
    report["warnings"] = [w for w in report.get("warnings", []) if "skipped-result.invalid" not in str(w)]
    for citation in report.get("citations", []):
        if citation.get("cited_url") and is_placeholder(str(citation["cited_url"])):
            citation["cited_url"] = None
            try:
                number = int(str(citation.get("key")))
            except ValueError:
                continue
            reason = skipped.get(number, "malformed")
            report["warnings"].append(
                f"[{number}] cited the writer's search result {number}, which was malformed ({reason}) and skipped; removed"
            )


# ---------------------------------------------------------------- one section


async def run_section(
    loaded_memo: LoadedMemo,
    section_id: str,
    *,
    store: Any,
    settings: Settings,
    refresh: bool = False,
    writer: Writer | None = None,
    exa_client: Any = None,
    global_rejects: list[str] | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
    cancel: asyncio.Event | None = None,
    global_name_rejects: list[str] | None = None,
) -> RunOutcome:
    """Run one section end to end. Never raises for writer or retrieval trouble: the
    outcome says ``failed`` and why, and the previous note is untouched. Setting ``cancel``
    ends the run with status ``cancelled`` (the note is untouched too); an
    ``asyncio.CancelledError`` is recorded the same way and then re-raised."""
    memo = loaded_memo.memo
    try:
        section = memo.section(section_id)
    except KeyError:
        raise UserError(
            f"{loaded_memo.path}: no section with id {section_id!r}",
            hint=f"valid section ids: {', '.join(s.id for s in memo.sections)}",
        ) from None
    started = now or datetime.now(UTC)
    run_id = _new_run_id(started)
    path = note_path(loaded_memo.dir, memo, section_id)
    outcome = RunOutcome(section=section_id, status="failed", run_id=run_id)
    try:
        if writer is None:
            writer = writer_from_settings(settings, memo)  # opens a connection per call: nothing to close
    except UserError as exc:
        _fail(outcome, "user", f"{exc}; the previous note is unchanged")
        record0 = {"id": run_id, "section": section_id, "started_at": started.isoformat()}
        _finish(store, record0, outcome, time.monotonic(), progress)
        return outcome
    # A backend without web search of its own (OpenAI-compatible) writes every section strictly.
    web_search = effective_web_search(memo, section) and writer.searches_web
    choice = choose(memo, section, has_presets=writer.has_presets, default_model=settings.writer_model)
    record: dict[str, Any] = {
        "id": run_id,
        "section": section_id,
        "started_at": started.isoformat(),
        "web_search": web_search,
        "refresh": refresh,
    }
    t0 = time.monotonic()
    stage = "retrieving"
    source_set: SourceSet | None = None
    try:
        # 1. Resolve sources (degrades with warnings; never blocks).
        _emit(progress, section_id, "retrieving")
        if global_rejects is None or global_name_rejects is None:
            from store.global_store import GlobalStore

            global_store = GlobalStore()
            if global_rejects is None:
                global_rejects = newest_first(global_store.reject_entries())
            if global_name_rejects is None:
                global_name_rejects = global_store.reject_names()
        retrieval = await _until_cancelled(
            retrieve_section_outcome(
                loaded_memo,
                section_id,
                store=store,
                settings=settings,
                global_rejects=global_rejects,
                refresh=refresh,
                exa_client=exa_client,
                now=now,
                global_name_rejects=global_name_rejects,
            ),
            cancel,
        )
        source_set = retrieval.source_set
        judge = memo_judge(memo, store, extra=[source_set], global_name_rejects=global_name_rejects or [])
        sources = annotate(judge, source_set.sources)
        outcome.sources = [_source_json(s) for s in sources]
        outcome.timings["retrieval_s"] = round(time.monotonic() - t0, 4)
        outcome.source_set_id = source_set.id or None
        outcome.source_set_reused = retrieval.reused
        outcome.requests["exa"] = retrieval.requests
        outcome.cost["retrieval"] = 0.0 if retrieval.reused or retrieval.kept_previous else source_set.cost_dollars
        outcome.warnings += [_short(f"{w.code}: {w.message}") for w in source_set.warnings]
        record.update(source_set_id=outcome.source_set_id, source_set_reused=retrieval.reused)

        # 2. Write.
        stage = "writing"
        _emit(progress, section_id, "writing")
        prompt = build_prompt(
            memo, section, source_set, today=started.date(), web_search=web_search, namesakes=judge.namesake_refs
        )
        pins = writer_pins(memo, section, source_set)
        memo_rejects = newest_first(store.reject_entries())
        rejects = list(dict.fromkeys([*memo_rejects, *global_rejects]))
        aggregators = (
            []
            if pins
            else list(memo.settings.aggregators if memo.settings.aggregators is not None else settings.aggregators)
        )
        domain_filter = (
            domain_filter_for(pins, [*rejects, *aggregators], cap=settings.writer_domain_filter_cap)
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
        record.update(
            model=f"preset:{choice.preset}" if choice.preset and web_search else (choice.model or writer.model),
            writer_api=writer.api,
            writer=writer.describe(request),
            domain_filter=domain_filter,
            prompt={"system": prompt.system, "user": prompt.user, "markers": list(prompt.markers)},
        )
        t1 = time.monotonic()
        try:
            response: WriterResponse = await _until_cancelled(
                within(writer.write(request), settings.writer_deadline_s, what=WRITER_DEADLINE), cancel
            )
        finally:
            outcome.timings["writer_s"] = round(time.monotonic() - t1, 4)
        outcome.requests["writer"] = response.requests
        outcome.cost["writer"] = float(response.cost_dollars or 0.0)
        outcome.raw_citation_classes = _classes(response.raw)
        # In strict mode the writer's web results are not sources, so warnings about them are moot.
        outcome.warnings += [_short(w) for w in response.warnings if web_search or w not in response.web.warnings]
        record.update(
            model=response.model or record["model"],
            raw_response=response.raw,
            web_results=response.search_results,
            annotations=response.annotations,
        )

        # 3. Reconcile against ground truth (frozen set ∪ this run's search results), then tidy.
        stage = "reconciling"
        _emit(progress, section_id, "reconciling")
        web_results = annotate_results(judge, response.web.indexed()) if web_search else []
        outcome.web_results = [_result_json(i + 1, r) for i, r in enumerate(web_results)]
        if not web_search and len(response.web):
            outcome.warnings.append(
                f"writer: strict mode, but the writer returned {len(response.web)} web result(s); "
                "they were not accepted as sources"
            )

        def blocked(url: str) -> bool:
            """Not citable here: outside the entity pin, rejected, or (wide sections) an aggregator."""
            if is_placeholder(url):
                return False  # not the analyst's doing; explained separately
            if pins and not host_matches_any(url, pins):
                return True
            return bool(excluded_by(url, [*rejects, *aggregators]))

        refused = _blocked_hosts(response.search_results if web_search else [], blocked)
        if refused:
            why = (
                "outside the pinned hosts or from rejected domains" if pins else "from rejected domains or aggregators"
            )
            outcome.warnings.append(
                f"writer: its own search returned results {why} ({', '.join(refused)}); they were not accepted as sources"
            )
        # A result naming a rejected name keeps its [N] slot (other numbers must not shift),
        # but nothing can cite it: a citation to it is dropped.
        names = assemble_names(memo_names=store.reject_names(), global_names=global_name_rejects or [])
        named = {normalise_url(str(r.get("url"))): hit for r in web_results if (hit := names.match(r)) is not None}
        if named:
            phrases = ", ".join(f"'{p}'" for p in dict.fromkeys(h.phrase for h in named.values()))
            outcome.warnings.append(
                f"writer: its own search returned {len(named)} result(s) naming a rejected name ({phrases}); "
                "they were not accepted as sources"
            )
        result = reconcile(
            response.content,
            sources,
            search_results=web_results,
            protected=tuple(memo.settings.protected_keys),
            exclude=lambda url: is_placeholder(url) or blocked(url) or named.get(normalise_url(url)),
            subject=[memo.subject.name, *memo.subject.aliases],
            one_marker_per_source=memo.settings.one_marker_per_source_per_paragraph,
        )
        # ``result.text`` is already tidy and ends with the house "Sources" sections.
        text = result.text
        outcome.report = _report_json(result.report)
        _explain_skipped(outcome.report, response.web.skipped_numbers() if web_search else {})
        outcome.warnings += [_short(w) for w in outcome.report.get("warnings", [])]
        outcome.status = "degraded" if source_set.degraded else "ok"

        # 4. The note, atomically, and only now.
        known = {normalise_url(s.url) for s in source_set.sources} | {
            normalise_url(str(r.get("url"))) for r in web_results if isinstance(r, dict) and r.get("url")
        }
        note = render_note(
            NoteRecord(
                section=section_id,
                title=section.title,
                run_id=run_id,
                model=record["model"],
                generated_at=started,
                status=outcome.status,
                web_search=web_search,
                source_set_id=source_set.id or None,
                source_set_version=source_set.version or None,
                source_set_fingerprint=source_set.fingerprint or None,
                counts=outcome.report,
                warnings=[_note_warning(w, known) for w in outcome.warnings],
                cost_retrieval=outcome.cost["retrieval"],
                cost_writer=outcome.cost["writer"],
            ),
            text,
        )
        stage = "saving the note"
        previous = _previous_note(store, path, section_id)
        if previous is not None:
            record["previous_note"] = previous
            outcome.warnings.append(
                f"the previous note had edits made outside sourcedesk; its text is kept in run {run_id} (previous_note)"
            )
        record["note_sha256"] = hashlib.sha256(note.encode("utf-8")).hexdigest()
        outcome.note_path = path
        # The record (with any hand-edited text it keeps) and the new note's hash are stored
        # before the note is replaced: a kill at any point leaves a note sourcedesk knows as
        # its own (the new one, or the previous one whose hash the state still remembers).
        await _finish_off_loop(store, record, outcome, t0, progress)
        if not outcome.recorded and previous is not None:
            raise UserError(
                f"{path.name} was edited outside sourcedesk and its text could not be kept in the memo store, "
                "so it was not replaced",
                hint="save your edits elsewhere or check that the memo's .sourcedesk folder is writable, then re-run",
            )
        write_note_atomic(path, note)
        _emit(progress, section_id, "saved")
        return outcome
    except asyncio.CancelledError:
        _cancelled(outcome, stage)
        _finish(store, record, outcome, t0, progress, replace=outcome.recorded)
        raise
    except RunCancelled:
        _cancelled(outcome, stage)
    except WriterError as exc:
        _fail(outcome, exc.kind, f"writer failed: {exc.message}; the previous note is unchanged")
        outcome.requests["writer"] = exc.requests
        record["error"] = {"kind": exc.kind, "status": exc.status, "message": exc.message}
    except DeadlineExceeded as exc:  # the writer call's total deadline (retrieval contains its own)
        message = (
            f"the writer gave no complete answer within {exc.seconds:g} s (writer_deadline_s): "
            "it stalled or sent too slowly"
        )
        _fail(outcome, "timeout", f"writer failed: {message}; the previous note is unchanged")
        record["error"] = {"kind": "timeout", "status": None, "message": message}
    except UserError as exc:
        _fail(outcome, "user", f"{exc}; the previous note is unchanged")
    except Exception as exc:
        log.exception("section %s failed while %s", section_id, stage)
        _fail(outcome, "internal", f"{stage} failed ({type(exc).__name__}: {exc}); the previous note is unchanged")
    await _finish_off_loop(store, record, outcome, t0, progress, replace=outcome.recorded)
    return outcome


def _fail(outcome: RunOutcome, kind: str, message: str, *, status: Status = "failed") -> None:
    outcome.status = status
    outcome.message = _short(message)
    outcome.note_path = None
    outcome.error_kind = kind


def _cancelled(outcome: RunOutcome, stage: str) -> None:
    _fail(outcome, "cancelled", f"cancelled while {stage}; the previous note is unchanged", status="cancelled")


def _previous_note(store: Any, path: Path, section_id: str) -> str | None:
    """The current note's text when someone edited it since sourcedesk wrote it (kept, not lost)."""
    try:
        current = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return None
    state = store.section_state(section_id)
    if hashlib.sha256(current).hexdigest() in (state.note_sha256, state.prior_note_sha256):
        return None
    return current.decode("utf-8", errors="replace")


def _finish(
    store: Any,
    record: dict[str, Any],
    outcome: RunOutcome,
    t0: float,
    progress: Progress | None,
    *,
    replace: bool = False,
) -> bool:
    """Record the run and the section's state in one store write; True when it was stored.
    ``replace``: the run was recorded as about to write its note, and then did not."""
    run, state = _closing_record(store, record, outcome, t0, progress, replace=replace)
    return _store_record(store, run, state, outcome, replace=replace)


async def _finish_off_loop(
    store: Any,
    record: dict[str, Any],
    outcome: RunOutcome,
    t0: float,
    progress: Progress | None,
    *,
    replace: bool = False,
) -> bool:
    """``_finish`` with the store write in a worker thread: the other sections' work goes on
    while this one's record reaches the disk, and records finished at the same moment share
    one write (the store's group commit). A cancellation arriving meanwhile waits for the
    write to land, so the record it then stores replaces this one instead of racing it."""
    run, state = _closing_record(store, record, outcome, t0, progress, replace=replace)
    future = _store_writer().submit(_store_record, store, run, state, outcome, replace=replace)
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        future.result()  # a few milliseconds at most: the thread needs nothing from this loop
        raise


_WRITER: concurrent.futures.ThreadPoolExecutor | None = None


def _store_writer() -> concurrent.futures.ThreadPoolExecutor:
    global _WRITER
    if _WRITER is None:
        _WRITER = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="sourcedesk-store")
    return _WRITER


def _closing_record(
    store: Any,
    record: dict[str, Any],
    outcome: RunOutcome,
    t0: float,
    progress: Progress | None,
    *,
    replace: bool,
) -> tuple[RunRecord, dict[str, Any]]:
    """The record and the section-state changes to store, once the outcome is decided."""
    outcome.timings["total_s"] = round(time.monotonic() - t0, 4)
    outcome.cost["total"] = round(outcome.cost["retrieval"] + outcome.cost["writer"], 6)
    if outcome.status in ("failed", "cancelled"):
        _emit(progress, outcome.section, outcome.status)
    record.update(
        status=outcome.status,
        message=outcome.message,
        finished_at=datetime.now(UTC).isoformat(),
        report=outcome.report,
        outcome=outcome.to_json(),
        timings=dict(outcome.timings),
        cost=dict(outcome.cost),
    )
    state: dict[str, Any] = {"last_run": record["id"], "last_status": outcome.status}
    before = store.section_state(outcome.section)
    if outcome.ok:  # only a note about to be written has a new hash; the one it replaces stays known
        state["note_sha256"] = record.get("note_sha256")
        state["prior_note_sha256"] = before.note_sha256
    elif replace:  # the new note never landed: the note on disk is the one before it
        record.pop("note_sha256", None)
        state["note_sha256"] = before.prior_note_sha256
    return RunRecord.model_validate(record), state


def _store_record(store: Any, run: RunRecord, state: dict[str, Any], outcome: RunOutcome, *, replace: bool) -> bool:
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
    memo_dir: Path | str,
    section_ids: list[str] | None = None,
    *,
    refresh: bool = False,
    settings: Settings | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
    cancel: asyncio.Event | None = None,
    store: Any = None,
    on_outcome: Callable[[RunOutcome], Any] | None = None,
) -> list[RunOutcome]:
    """Run the requested sections (all by default) concurrently; outcomes in the order asked.

    Opens (and locks) the memo store unless one is passed in (the TUI holds its own).
    ``on_outcome`` sees each section's outcome as soon as it is final, so a caller that
    is interrupted still has the sections that completed."""
    from store.global_store import GlobalStore
    from store.memo_store import MemoStore

    settings = settings or Settings()
    loaded = load_memo(Path(memo_dir), writer_api=settings.writer_api)
    ids = check_section_ids(loaded, section_ids)
    global_store = GlobalStore()
    global_rejects = newest_first(global_store.reject_entries())
    global_names = global_store.reject_names()
    semaphore = asyncio.Semaphore(max(1, int(settings.max_concurrent_sections)))
    exa_client = exa_client_from_settings(settings) if settings.retrieval_enabled else None
    own_store = store is None
    if own_store:
        store = MemoStore(loaded.dir)
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
                        exa_client=exa_client,
                        global_rejects=global_rejects,
                        progress=progress,
                        now=now,
                        cancel=cancel,
                        global_name_rejects=global_names,
                    )
                if on_outcome is not None:
                    try:
                        on_outcome(outcome)
                    except Exception:
                        log.exception("outcome callback failed for %s", section_id)
                return outcome

            return list(await asyncio.gather(*(one(s) for s in ids)))
    finally:
        if exa_client is not None:
            await exa_client.aclose()
        if own_store:
            store.close()


__all__ = ["RunCancelled", "RunOutcome", "run_memo", "run_section", "writer_from_settings", "writer_pins"]
