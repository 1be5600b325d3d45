"""The retrieval stage: one section's include-sources → a frozen, persisted source set.

Order of business for a section:

1. **Plan** without the network: render every entry (queries after template
   interpolation, pins, exclusions) and fingerprint it with the budget.
2. **Reuse** the newest stored, non-degraded set with that fingerprint if it is
   younger than the TTL and no refresh was asked for — zero HTTP requests. (Not
   only the latest version: toggling a pin away and back returns the same set.)
3. Otherwise **retrieve** entry by entry; dedupe across entries (first wins),
   pack to the budget, and only then assign markers (E1…En, no holes).
4. **Degrade, never block.** A failure (no key, retrieval off, 401/402/403, 429
   or 5xx after retries, timeout, malformed body, or Exa answering with no
   results at all) becomes a ``degraded`` warning naming the cause; the function
   still returns a set. Retrieval off skips network providers only: local
   ``files`` entries are still read.

Failed refreshes never cost the analyst the curated set: if a retrieval
degrades and an earlier good set with the same fingerprint exists, that set is
returned (not re-saved) with a ``stale`` warning, whatever its age. A degraded
set is saved only when there is nothing better, and is never reused — the next
run tries the network again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import RetrievalError, UserError
from sourcedesk.core.domain.models import RemovedSource, RunWarning, Source, SourceSet
from sourcedesk.core.domain.storage import MemoStorage, RejectLists, SourceSetStore
from sourcedesk.core.memo.loader import LoadedMemo
from sourcedesk.core.memo.templates import template_variables
from sourcedesk.core.net.deadline import Deadline, DeadlineExceeded, until
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.sources.budget import MARKER_PREFIXES, assign_markers, pack
from sourcedesk.core.sources.extraction import with_facts
from sourcedesk.core.sources.holdout import curated_now, hold_out_namesakes
from sourcedesk.core.sources.namesakes import learn_from_set, remember
from sourcedesk.core.sources.providers import (
    ProviderClients,
    ProviderContext,
    ProviderResult,
    get_provider,
    marker_prefixes,
)
from sourcedesk.core.sources.rejected import Rejections

log = logging.getLogger("sourcedesk.retrieval")

WRITER_ONLY = "the section continues writer-only"


@dataclass
class SectionPlan:
    section_id: str
    request: dict[str, Any]  # what the fingerprint covers (also stored on the set)
    fingerprint: str
    budget_chars: int
    ttl_hours: float
    context: ProviderContext


@dataclass
class RetrievalOutcome:
    """A section's set plus what this call did to get it (the set alone cannot say)."""

    source_set: SourceSet
    reused: bool = False  # the frozen set was reused: no network
    requests: int = 0  # HTTP requests made by this call
    requests_by_provider: dict[str, int] = field(default_factory=dict)  # the same, per provider name
    kept_previous: bool = False  # retrieval degraded; an earlier good set was kept


def fingerprint_of(request: dict[str, Any]) -> str:
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def plan_section(
    loaded: LoadedMemo,
    section_id: str,
    *,
    settings: Settings,
    memo_rejects: list[str],
    global_rejects: list[str],
    memo_name_rejects: Sequence[str] = (),
    global_name_rejects: Sequence[str] = (),
    now: datetime | None = None,
) -> SectionPlan:
    """Resolve the section's request without any I/O beyond the memo already loaded.

    The fingerprint covers the request *without* the analyst's rejected domains and
    names: those are enforced on every set, retrieved or reused (``enforce_rejections``),
    so a rejection curates the frozen sets instead of making every section's request new
    — and a set it does not touch keeps its version."""
    memo = loaded.memo
    section = memo.section(section_id)
    now = now or clock.now()
    ctx = ProviderContext(
        memo=memo,
        section=section,
        variables=template_variables(memo, section, today=now.date()),
        settings=settings,
        memo_dir=loaded.dir,
        memo_rejects=list(memo_rejects),
        global_rejects=list(global_rejects),
        memo_name_rejects=list(memo_name_rejects),
        global_name_rejects=list(global_name_rejects),
        now=now,
    )
    identity = dataclasses.replace(
        ctx, memo_rejects=[], global_rejects=[], memo_name_rejects=[], global_name_rejects=[]
    )
    budget = memo.settings.budget_chars or settings.budget_chars
    entries = []
    bare = []
    for index, entry in enumerate(section.include_sources):
        provider = get_provider(entry.provider)
        entries.append(provider.describe(entry, ctx.with_entry(index)))
        bare.append(provider.describe(entry, identity.with_entry(index)))
    request = {"entries": entries, "budget_chars": budget}
    ttl = memo.settings.source_ttl_hours if memo.settings.source_ttl_hours is not None else settings.source_ttl_hours
    fingerprint = fingerprint_of({"entries": bare, "budget_chars": budget})
    return SectionPlan(section_id, request, fingerprint, budget, float(ttl), ctx)


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _good_versions(store: SourceSetStore, section_id: str, fingerprint: str) -> list[SourceSet]:
    """The newest stored non-degraded set for this exact request (only that one is read)."""
    latest = store.latest_source_set(section_id, fingerprint=fingerprint, degraded=False)
    return [latest] if latest is not None else []


def _dedupe_key(url: str) -> str:
    # Local-file URLs (``file:notes/a.md``) are compared exactly: the web normaliser is
    # about hosts and would fold different relative paths together.
    return url if url.lower().startswith("file:") else normalise_url(url)


def _size_list(items: list[tuple[str, int]], limit: int = 6) -> str:
    shown = ", ".join(f"{name} ({size:,} chars)" for name, size in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _label(source: Source) -> str:
    return source.title or source.host or source.url


async def _fetch_entries(plan: SectionPlan, settings: Settings, clients: ProviderClients) -> list[ProviderResult]:
    """Every entry, in order; each failure is contained to its entry.

    The whole section has one deadline (``retrieval_deadline_s``): an entry still
    running when it ends is stopped, and network entries after it are not started
    (local files are still read) — each says so in a warning."""
    section = plan.context.section
    results: list[ProviderResult] = []
    deadline = Deadline(settings.retrieval_deadline_s, "the section's retrieval (retrieval_deadline_s)")
    for index, entry in enumerate(section.include_sources):
        provider = get_provider(entry.provider)
        ctx = dataclasses.replace(plan.context.with_entry(index), clients=clients)
        what = f"{provider.name} entry {index + 1}"
        failed: str | None = None
        result = ProviderResult()
        if provider.uses_network and not settings.retrieval_enabled:
            failed = f"retrieval is switched off (retrieval_enabled: false) — {what} was skipped; {WRITER_ONLY}"
        elif provider.missing_key(settings):
            failed = (
                f"no {provider.display_name} API key is set — {what} was skipped; set {provider.key_env}; {WRITER_ONLY}"
            )
        elif provider.uses_network and deadline.expired:
            failed = (
                f"{what} was not started: the section's retrieval had used up its "
                f"{deadline.seconds:g} s deadline (retrieval_deadline_s); {WRITER_ONLY}"
            )
        else:
            requests_before = clients.requests_sent(provider)
            try:
                fetching = provider.fetch(entry, ctx)
                if provider.uses_network:
                    result = await until(fetching, deadline)
                else:
                    result = await fetching
            except DeadlineExceeded:
                spent = clients.requests_sent(provider) - requests_before
                result = ProviderResult(requests=max(spent, 0))
                failed = (
                    f"{what} was stopped: the section's retrieval took longer than its "
                    f"{deadline.seconds:g} s deadline (retrieval_deadline_s); {WRITER_ONLY}"
                )
            except RetrievalError as exc:
                result = ProviderResult(requests=exc.requests)
                failed = f"{exc.message} — {what} returned no sources; {WRITER_ONLY}"
            except Exception as exc:
                log.exception("retrieval of %s in section %s failed", what, section.id)
                failed = f"{what} failed unexpectedly ({type(exc).__name__}: {exc}); {WRITER_ONLY}"
        if failed:
            result.degraded = True
            result.warnings.append(RunWarning(code="degraded", message=failed, entry=index))
        results.append(result)
    return results


def _assemble(plan: SectionPlan, loaded: LoadedMemo, results: list[ProviderResult]) -> SourceSet:
    """Dedupe, pack, number and account for everything that was removed."""
    sources: list[Source] = []
    namesakes: list[RemovedSource] = []
    excluded: list[RemovedSource] = []
    warnings: list[RunWarning] = []
    first_entry: dict[str, int] = {}
    duplicates = 0
    for index, result in enumerate(results):
        namesakes += result.namesakes
        excluded += result.excluded
        warnings += result.warnings
        for source in result.sources:
            key = _dedupe_key(source.url)
            if key in first_entry:
                duplicates += 1
                excluded.append(
                    RemovedSource(
                        url=source.url,
                        host=source.host,
                        title=source.title,
                        reason="duplicate",
                        rule=f"entry {first_entry[key] + 1}",
                    )
                )
                continue
            first_entry[key] = index
            sources.append(source)
    if duplicates:
        warnings.append(
            RunWarning(
                code="info",
                message=f"{duplicates} source(s) returned by more than one entry were kept once (first entry wins)",
            )
        )
    kept, omitted = pack(sources, plan.budget_chars)
    kept = assign_markers(kept, {**MARKER_PREFIXES, **marker_prefixes()})
    if omitted:
        used = sum(s.size for s in kept)
        warnings.append(
            RunWarning(
                code="truncated",
                message=f"{len(omitted)} source(s) omitted by the {plan.budget_chars:,}-character budget "
                f"({used:,} used by {len(kept)} kept): " + _size_list([(_label(o.source), o.size) for o in omitted]),
            )
        )
    degraded = any(r.degraded for r in results)
    return with_facts(
        SourceSet(
            memo=loaded.dir.name,
            section=plan.section_id,
            fingerprint=plan.fingerprint,
            request=plan.request,
            sources=kept,
            omitted=omitted,
            namesakes=namesakes,
            excluded=excluded,
            warnings=warnings,
            cost_dollars=round(sum(r.cost_dollars for r in results), 6),
            requests=sum(r.requests for r in results),
            budget_chars=plan.budget_chars,
            degraded=degraded,
        )
    )


def _same_outcome(a: SourceSet, b: SourceSet) -> bool:
    return [s.url for s in a.sources] == [s.url for s in b.sources] and [w.message for w in a.warnings] == [
        w.message for w in b.warnings
    ]


def rejections_of(plan: SectionPlan) -> Rejections:
    """The analyst's rejected domains and names in force for this plan."""
    ctx = plan.context
    return Rejections.of(
        memo_domains=ctx.memo_rejects,
        global_domains=ctx.global_rejects,
        memo_names=ctx.memo_name_rejects,
        global_names=ctx.global_name_rejects,
    )


def enforce_rejections(source_set: SourceSet, rejections: Rejections) -> SourceSet | None:
    """``source_set`` without the sources the current rejections cover (re-packed and
    renumbered, not saved), or None when it holds none. No network: a reject made since
    the set was retrieved — in another memo, or globally — applies to it at once."""
    from sourcedesk.core.sources.curation import rebuild  # curation builds on this module

    held = (h.source for h in source_set.held_out)
    covered = rejections.covered([*source_set.sources, *(o.source for o in source_set.omitted), *held])
    if not covered:
        return None
    curated = rebuild(
        source_set, drop_urls={s.url for s, _ in covered}, excluded_add=[removal for _, removal in covered]
    )
    rules = ", ".join(dict.fromkeys(r.rule for _, r in covered))
    warning = RunWarning(
        code="excluded",
        message=f"removed {len(covered)} source(s) from the frozen set {source_set.id or source_set.section} "
        f"that a rejection covers: {rules}",
    )
    return curated.model_copy(update={"warnings": [*curated.warnings, warning], "requests": 0, "cost_dollars": 0.0})


def _learn_namesakes(store: MemoStorage, loaded: LoadedMemo, source_set: SourceSet) -> None:
    """Impostors the pin removed and rejected domains' titles teach namesakes (``sourcedesk.core.sources.namesakes``)."""
    subject = loaded.memo.subject
    pins = [p for e in source_set.request.get("entries", []) if isinstance(e, dict) for p in e.get("pins") or []]
    learned = learn_from_set(
        source_set,
        subject_name=subject.name,
        aliases=subject.aliases,
        subject_hosts=pins,
        declared=[n.name for n in subject.namesakes],
    )
    try:
        remember(store, learned)
    except Exception:  # learning is a bonus: never fail a retrieval over it
        log.exception("could not store learned namesakes")


async def retrieve_section_outcome(
    loaded_memo: LoadedMemo,
    section_id: str,
    *,
    store: MemoStorage,
    settings: Settings,
    global_rejects: Sequence[str] = (),
    refresh: bool = False,
    clients: ProviderClients | None = None,
    now: datetime | None = None,
    global_name_rejects: Sequence[str] = (),
    sets: Any = None,
) -> RetrievalOutcome:
    """The section's set and what getting it cost. ``clients``: the run's shared provider
    clients (without them the call opens its own and closes them); ``sets``: the memo's sets as
    the run sees them (``sourcedesk.core.sources.judge.RunSets``), read once for every section."""
    owned = clients is None
    clients = clients if clients is not None else ProviderClients(settings)
    try:
        outcome = await _retrieve(
            loaded_memo,
            section_id,
            store=store,
            settings=settings,
            global_rejects=global_rejects,
            refresh=refresh,
            clients=clients,
            now=now,
            global_name_rejects=global_name_rejects,
            sets=sets,
        )
    finally:
        if owned:
            await clients.aclose()
    # Damaged stored data met on the way (set aside, treated as missing) is reported with this
    # run; it is not saved into the set, so it is said once.
    notices = store.take_notices(section_id)
    if notices:
        extra = [RunWarning(code="quarantined", message=n) for n in notices]
        outcome.source_set = outcome.source_set.model_copy(update={"warnings": [*outcome.source_set.warnings, *extra]})
    return outcome


async def _retrieve(
    loaded_memo: LoadedMemo,
    section_id: str,
    *,
    store: MemoStorage,
    settings: Settings,
    global_rejects: Sequence[str],
    refresh: bool,
    clients: ProviderClients,
    now: datetime | None,
    global_name_rejects: Sequence[str],
    sets: Any = None,
) -> RetrievalOutcome:
    now = _aware(now or clock.now())
    plan = plan_section(
        loaded_memo,
        section_id,
        settings=settings,
        memo_rejects=store.rejects(),
        global_rejects=list(global_rejects),
        memo_name_rejects=store.reject_names(),
        global_name_rejects=global_name_rejects,
        now=now,
    )
    rejections = rejections_of(plan)
    good = _good_versions(store, section_id, plan.fingerprint)
    if good and not refresh:
        age = now - _aware(good[0].created_at)
        if age < timedelta(hours=plan.ttl_hours):
            curated = curated_now(store, loaded_memo, good[0], rejections, global_name_rejects, sets)
            if curated is None:
                return RetrievalOutcome(source_set=good[0], reused=True)
            return RetrievalOutcome(source_set=store.save_source_set(curated), reused=True)

    results = await _fetch_entries(plan, settings, clients)
    by_provider: dict[str, int] = {}
    for entry, result in zip(plan.context.section.include_sources, results, strict=True):
        by_provider[entry.provider] = by_provider.get(entry.provider, 0) + result.requests
    fresh = _assemble(plan, loaded_memo, results)
    fresh = enforce_rejections(fresh, rejections) or fresh  # providers that do not know every rule
    if (latest_kept := store.latest_source_set(section_id)) is not None:  # "keep in" outlives a refresh
        fresh = fresh.model_copy(update={"kept_in": list(latest_kept.kept_in)})
    if not fresh.degraded:
        fresh = hold_out_namesakes(store, loaded_memo, fresh, global_name_rejects, sets) or fresh

    if fresh.degraded and good:
        previous = good[0]
        causes = [w for w in fresh.warnings if w.code == "degraded"]
        stale = RunWarning(
            code="stale",
            message=f"retrieval failed, so the frozen set {previous.id} from "
            f"{_aware(previous.created_at):%Y-%m-%d %H:%M} UTC was kept instead of an incomplete one",
        )
        curated = curated_now(store, loaded_memo, previous, rejections, global_name_rejects, sets)
        if curated is not None:
            previous = store.save_source_set(curated)
        kept = previous.model_copy(update={"warnings": [*previous.warnings, stale, *causes], "degraded": True})
        return RetrievalOutcome(
            source_set=kept, requests=fresh.requests, requests_by_provider=by_provider, kept_previous=True
        )

    if fresh.degraded:
        latest = store.latest_source_set(section_id)
        if (
            latest is not None
            and latest.degraded
            and latest.fingerprint == fresh.fingerprint
            and _same_outcome(latest, fresh)
        ):
            # The same failure again: don't pile up identical empty versions.
            return RetrievalOutcome(source_set=latest, requests=fresh.requests, requests_by_provider=by_provider)
    saved = store.save_source_set(fresh)
    _learn_namesakes(store, loaded_memo, saved)
    return RetrievalOutcome(source_set=saved, requests=fresh.requests, requests_by_provider=by_provider)


async def retrieve_section(
    loaded_memo: LoadedMemo,
    section_id: str,
    *,
    store: MemoStorage,
    settings: Settings,
    global_rejects: Sequence[str] = (),
    refresh: bool = False,
    clients: ProviderClients | None = None,
    now: datetime | None = None,
    global_name_rejects: Sequence[str] = (),
) -> SourceSet:
    """The section's source set: reused when fresh, retrieved (and saved as a new version) when not."""
    outcome = await retrieve_section_outcome(
        loaded_memo,
        section_id,
        store=store,
        settings=settings,
        global_rejects=global_rejects,
        refresh=refresh,
        clients=clients,
        now=now,
        global_name_rejects=global_name_rejects,
    )
    return outcome.source_set


def reapply_rejections(
    loaded_memo: LoadedMemo,
    section_id: str,
    *,
    store: MemoStorage,
    settings: Settings,
    global_rejects: Sequence[str] = (),
    global_name_rejects: Sequence[str] = (),
    now: datetime | None = None,
) -> SourceSet | None:
    """Apply the current rejections to the section's newest good set now (no network) and
    save the result as a new version; None when there is no set or nothing to remove."""
    plan = plan_section(
        loaded_memo,
        section_id,
        settings=settings,
        memo_rejects=store.rejects(),
        global_rejects=list(global_rejects),
        memo_name_rejects=store.reject_names(),
        global_name_rejects=global_name_rejects,
        now=now,
    )
    versions = [v for v in reversed(store.source_set_versions(section_id)) if not v.degraded]
    if not versions:
        return None
    curated = enforce_rejections(versions[0], rejections_of(plan))
    return store.save_source_set(curated) if curated is not None else None


def check_section_ids(loaded: LoadedMemo, section_ids: list[str] | None) -> list[str]:
    valid = [s.id for s in loaded.memo.sections]
    if not section_ids:
        return valid
    unknown = [s for s in section_ids if s not in valid]
    if unknown:
        raise UserError(
            f"{loaded.path}: no section with id {', '.join(repr(u) for u in unknown)}",
            hint=f"valid section ids: {', '.join(valid)}",
        )
    return list(dict.fromkeys(section_ids))


def _failed_outcome(section_id: str, exc: BaseException) -> RetrievalOutcome:
    message = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
    return RetrievalOutcome(
        source_set=SourceSet(
            section=section_id,
            fingerprint="",
            degraded=True,
            warnings=[RunWarning(code="degraded", message=f"retrieval failed ({message}); {WRITER_ONLY}")],
        )
    )


async def retrieve_memo_outcomes(
    loaded: LoadedMemo,
    section_ids: list[str] | None = None,
    *,
    store: MemoStorage,
    global_lists: RejectLists,
    refresh: bool = False,
    settings: Settings,
    clients: ProviderClients | None = None,
    now: datetime | None = None,
) -> list[RetrievalOutcome]:
    """Every requested section, concurrently (bounded); one section's failure stays its own.
    ``store`` is the memo's open store and ``global_lists`` the analyst's global rejections."""
    ids = check_section_ids(loaded, section_ids)
    global_rejects = global_lists.rejects()
    global_names = global_lists.reject_names()
    owned = clients is None
    shared = clients if clients is not None else ProviderClients(settings)
    semaphore = asyncio.Semaphore(max(1, settings.max_concurrent_sections))

    from sourcedesk.core.sources.judge import RunSets  # the judge reads retrieval's sets

    sets = RunSets(loaded.memo, store)  # every section's judge reads every section's set: once

    async def one(section_id: str) -> RetrievalOutcome:
        async with semaphore:
            try:
                outcome = await retrieve_section_outcome(
                    loaded,
                    section_id,
                    store=store,
                    settings=settings,
                    global_rejects=global_rejects,
                    refresh=refresh,
                    clients=shared,
                    now=now,
                    global_name_rejects=global_names,
                    sets=sets,
                )
                if outcome.source_set.id:
                    sets.note(outcome.source_set)
                return outcome
            except Exception as exc:
                log.exception("retrieval of section %s failed", section_id)
                return _failed_outcome(section_id, exc)

    try:
        return list(await asyncio.gather(*(one(s) for s in ids)))
    finally:
        if owned:
            await shared.aclose()


__all__ = [
    "RetrievalOutcome",
    "SectionPlan",
    "check_section_ids",
    "enforce_rejections",
    "fingerprint_of",
    "plan_section",
    "reapply_rejections",
    "rejections_of",
    "retrieve_memo_outcomes",
    "retrieve_section",
    "retrieve_section_outcome",
]
