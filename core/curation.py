"""The analyst's edits to frozen source sets: reject a domain, un-reject it, promote a web result.

No Textual here (the section screen calls these; tests call them directly).

Every edit saves a **new version** of the affected sets (old versions stay in the
store) with markers re-assigned after packing, so they stay contiguous (E1…En):
a set that lost E2 does not keep E1, E3.

Why edits also re-key the set: rejections are part of every section's request
fingerprint (they are sent to Exa as exclusions), so a rejection changes the
fingerprint of *every* section of the memo. Left alone, the next "re-run against
the frozen set" would find no set for the new fingerprint and retrieve again —
new network calls, possibly different sources — for sections the analyst never
touched. So a set that matched the request before the edit is saved with the
request after it: it is exactly the old set minus (or plus) that domain, which is
what the new request means. A set that was already out of date keeps its old
fingerprint, so the next run still retrieves for it.

Re-packing after a removal keeps every source that was already in the set and only
*adds* omitted sources that now fit the budget, in rank order; it never pushes out
a source the analyst has been looking at.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.budget import MARKER_PREFIXES, assign_markers
from core.errors import UserError
from core.hosts import excluded_by, registrable_domain
from core.memo_loader import LoadedMemo
from core.models import OmittedSource, RemovedSource, RunWarning, Source, SourceSet
from core.providers import marker_prefixes
from core.retrieval import SectionPlan, plan_section
from core.settings import Settings
from core.urls import host_of, normalise_url, strip_www
from store.rejections import canonical_domain

Scope = Literal["memo", "global"]


@dataclass
class CurationResult:
    domain: str
    scope: str = ""
    added: bool = False  # the rejection is new (False: it was already there)
    saved: dict[str, SourceSet] = field(default_factory=dict)  # section -> new version
    removed: dict[str, list[Source]] = field(default_factory=dict)  # section -> sources taken out
    restored: dict[str, list[Source]] = field(default_factory=dict)  # section -> sources put back
    refetch: dict[str, int] = field(default_factory=dict)  # section -> results only a refresh can bring back

    @property
    def removed_count(self) -> int:
        return sum(len(v) for v in self.removed.values())

    @property
    def restored_count(self) -> int:
        return sum(len(v) for v in self.restored.values())


def domain_for(url_or_host: str) -> str | None:
    """The domain a reject of this URL proposes: its registrable domain (``www.nats.aero`` →
    ``nats.aero``), or the host itself when it has none (an IP, a private suffix)."""
    host = host_of(url_or_host) if url_or_host else None
    if not host:
        return None
    return registrable_domain(host) or strip_www(host)


def on_domain(url: str, domain: str) -> bool:
    return excluded_by(url, [domain]) is not None


def preview_reject(store: Any, section_ids: Iterable[str], domain: str) -> dict[str, list[Source]]:
    """The kept sources a rejection of ``domain`` takes out of each section's frozen set."""
    hits: dict[str, list[Source]] = {}
    for sid in section_ids:
        latest = store.latest_source_set(sid)
        if latest is None:
            continue
        found = [s for s in latest.sources if on_domain(s.url, domain)]
        if found:
            hits[sid] = found
    return hits


# ---------------------------------------------------------------- rebuilding a set


def _rank(source: Source) -> tuple[int, int, int]:
    """Retrieval order: entry by entry, provider rank within; promoted web results last."""
    return (1 if source.provider == "writer" else 0, source.entry, source.rank)


def _prefixes() -> dict[str, str]:
    return {**MARKER_PREFIXES, **marker_prefixes()}


def _truncation_warning(kept: list[Source], omitted: list[OmittedSource], budget: int) -> RunWarning:
    used = sum(s.size for s in kept)
    names = ", ".join(f"{o.source.title or o.source.host or o.source.url} ({o.size:,} chars)" for o in omitted[:6])
    more = f" and {len(omitted) - 6} more" if len(omitted) > 6 else ""
    return RunWarning(
        code="truncated",
        message=f"{len(omitted)} source(s) omitted by the {budget:,}-character budget "
        f"({used:,} used by {len(kept)} kept): {names}{more}",
    )


def rebuild(
    base: SourceSet,
    *,
    drop_urls: set[str] = frozenset(),
    add: list[Source] = (),
    force_keep: list[Source] = (),
    excluded_add: list[RemovedSource] = (),
    excluded_drop: set[str] = frozenset(),
) -> SourceSet:
    """A copy of ``base`` with sources dropped/added, refilled to the budget and renumbered.
    URLs are compared normalised. The copy has no id or version (the store assigns them)."""
    drop = {normalise_url(u) for u in drop_urls}
    kept = [s for s in base.sources if normalise_url(s.url) not in drop] + list(force_keep)
    pool = [o.source for o in base.omitted if normalise_url(o.source.url) not in drop] + list(add)
    budget = base.budget_chars or 0
    used = sum(s.size for s in kept)
    omitted: list[OmittedSource] = []
    for candidate in sorted(pool, key=_rank):
        candidate = candidate.model_copy(update={"marker": None})
        if not kept or (budget and used + candidate.size <= budget) or not budget:
            kept.append(candidate)
            used += candidate.size
        else:
            omitted.append(OmittedSource(source=candidate, size=candidate.size))
    kept = assign_markers(sorted(kept, key=_rank), _prefixes())
    drop_excluded = {normalise_url(u) for u in excluded_drop}
    excluded = [r for r in base.excluded if normalise_url(r.url) not in drop_excluded] + list(excluded_add)
    warnings = [w for w in base.warnings if w.code != "truncated"]
    if omitted:
        warnings.append(_truncation_warning(kept, omitted, budget))
    return base.model_copy(
        update={
            "id": "",
            "version": 0,
            "sources": kept,
            "omitted": omitted,
            "excluded": excluded,
            "warnings": warnings,
        },
        deep=True,
    )


# ---------------------------------------------------------------- plans (fingerprints)


def _plans(
    loaded: LoadedMemo, settings: Settings, memo_rejects: list[str], global_rejects: list[str]
) -> dict[str, SectionPlan | None]:
    plans: dict[str, SectionPlan | None] = {}
    for section in loaded.memo.sections:
        try:
            plans[section.id] = plan_section(
                loaded, section.id, settings=settings, memo_rejects=memo_rejects, global_rejects=global_rejects
            )
        except (UserError, KeyError, ValueError):
            plans[section.id] = None
    return plans


def _rekeyed(new: SourceSet, latest: SourceSet, before: SectionPlan | None, after: SectionPlan | None) -> SourceSet:
    """Carry a set that matched the old request over to the new one (see the module docstring)."""
    current = (
        before is not None and after is not None and not latest.degraded and latest.fingerprint == before.fingerprint
    )
    if current:
        return new.model_copy(update={"fingerprint": after.fingerprint, "request": after.request})
    return new


def _needs_rekey(latest: SourceSet, before: SectionPlan | None, after: SectionPlan | None) -> bool:
    return (
        before is not None
        and after is not None
        and not latest.degraded
        and latest.fingerprint == before.fingerprint
        and before.fingerprint != after.fingerprint
    )


# ---------------------------------------------------------------- reject / un-reject


def reject_domain(
    loaded: LoadedMemo,
    store: Any,
    domain: str,
    *,
    scope: Scope,
    settings: Settings,
    global_store: Any,
    note: str = "",
) -> CurationResult:
    """Reject ``domain`` (memo or global scope) and take its sources out of every section's
    frozen set at once. ``UserError`` for a public suffix or a non-domain."""
    domain = canonical_domain(domain)
    before = _plans(loaded, settings, store.rejects(), global_store.rejects())
    target = store if scope == "memo" else global_store
    result = CurationResult(domain=domain, scope=scope)
    result.added = target.add_reject(domain, note)
    after = _plans(loaded, settings, store.rejects(), global_store.rejects())
    for section in loaded.memo.sections:
        sid = section.id
        latest = store.latest_source_set(sid)
        if latest is None:
            continue
        hit = [s for s in latest.sources if on_domain(s.url, domain)]
        hit_omitted = [o.source for o in latest.omitted if on_domain(o.source.url, domain)]
        if not hit and not hit_omitted and not _needs_rekey(latest, before[sid], after[sid]):
            continue
        gone = hit + hit_omitted
        new = rebuild(
            latest,
            drop_urls={s.url for s in gone},
            excluded_add=[
                RemovedSource(url=s.url, host=s.host, title=s.title, reason="rejected", rule=f"{scope}:{domain}")
                for s in gone
            ],
        )
        result.saved[sid] = store.save_source_set(_rekeyed(new, latest, before[sid], after[sid]))
        if hit:
            result.removed[sid] = hit
    return result


def rejected_scopes(store: Any, global_store: Any, domain: str) -> list[str]:
    try:
        key = canonical_domain(domain)
    except UserError:
        key = domain.strip().lower()
    return [name for name, s in (("memo", store), ("global", global_store)) if key in s.rejects()]


def unreject_domain(
    loaded: LoadedMemo,
    store: Any,
    domain: str,
    *,
    settings: Settings,
    global_store: Any,
    scope: Scope | None = None,
) -> CurationResult:
    """Lift the rejection of ``domain`` (the scope that has it, or ``scope``) and put back the
    sources the rejection took out of the frozen sets, taken from the set versions they were
    in. Results that were excluded when retrieved were never stored in full: only a refresh
    brings those back (counted in ``refetch``)."""
    scopes = rejected_scopes(store, global_store, domain)
    if not scopes:
        raise UserError(f"{domain} is not rejected in this memo or globally")
    try:
        domain = canonical_domain(domain)
    except UserError:
        domain = domain.strip().lower()  # junk that predates validation can still be lifted
    lift = scope or scopes[0]
    if lift not in scopes:
        raise UserError(f"{domain} is not rejected {'in this memo' if lift == 'memo' else 'globally'}")
    before = _plans(loaded, settings, store.rejects(), global_store.rejects())
    (store if lift == "memo" else global_store).remove_reject(domain)
    result = CurationResult(domain=domain, scope=lift)
    if rejected_scopes(store, global_store, domain):
        return result  # still rejected in the other scope: the sets stay as they are
    after = _plans(loaded, settings, store.rejects(), global_store.rejects())
    for section in loaded.memo.sections:
        sid = section.id
        versions = store.source_set_versions(sid)
        if not versions:
            continue
        latest = versions[-1]
        gone = [r for r in latest.excluded if r.reason == "rejected" and on_domain(r.url, domain)]
        if not gone and not _needs_rekey(latest, before[sid], after[sid]):
            continue
        restored: list[Source] = []
        for removed in gone:
            full = _find_in_versions(versions[:-1], removed.url)
            if full is not None:
                restored.append(full)
            else:
                result.refetch[sid] = result.refetch.get(sid, 0) + 1
        new = rebuild(latest, add=restored, excluded_drop={r.url for r in gone})
        result.saved[sid] = store.save_source_set(_rekeyed(new, latest, before[sid], after[sid]))
        if restored:
            result.restored[sid] = restored
    return result


def _find_in_versions(versions: list[SourceSet], url: str) -> Source | None:
    key = normalise_url(url)
    for version in reversed(versions):
        for source in [*version.sources, *(o.source for o in version.omitted)]:
            if normalise_url(source.url) == key:
                return source
    return None


# ---------------------------------------------------------------- drop / restore one source

DROPPED_RULE = "analyst:dropped"


def drop_source(store: Any, section_id: str, url: str) -> SourceSet:
    """Take one source out of the section's frozen set (only this set: a refresh may find it
    again — reject its domain to keep it out of later retrievals)."""
    latest = store.latest_source_set(section_id)
    key = normalise_url(url)
    found = [s for s in (latest.sources if latest else []) if normalise_url(s.url) == key] + [
        o.source for o in (latest.omitted if latest else []) if normalise_url(o.source.url) == key
    ]
    if latest is None or not found:
        raise UserError(f"{url} is not in the section's frozen set")
    gone = found[0]
    return store.save_source_set(
        rebuild(
            latest,
            drop_urls={url},
            excluded_add=[
                RemovedSource(url=gone.url, host=gone.host, title=gone.title, reason="excluded", rule=DROPPED_RULE)
            ],
        )
    )


def restore_source(store: Any, section_id: str, url: str) -> SourceSet:
    """Undo ``drop_source``: the source comes back from the set version it was in."""
    versions = store.source_set_versions(section_id)
    if not versions:
        raise UserError("the section has no source set")
    latest = versions[-1]
    full = _find_in_versions(versions[:-1], url)
    if full is None:
        raise UserError(f"{url} is not in an earlier version of the set", hint="refresh retrieval (R) to fetch it")
    return store.save_source_set(rebuild(latest, add=[full], excluded_drop={url}))


# ---------------------------------------------------------------- promote a web result


def promote_web_result(
    loaded: LoadedMemo,
    store: Any,
    section_id: str,
    result: dict[str, Any],
    *,
    rejects: Iterable[str] = (),
) -> Source:
    """Keep one of the writer's search results in the section's frozen set as a ``W`` source.

    The analyst's choice is honoured over the budget (a promoted result is always kept).
    Returns the new source with its marker."""
    url = str(result.get("url") or "").strip()
    if not url or not host_of(url):
        raise UserError("this web result has no usable URL")
    latest = store.latest_source_set(section_id)
    if latest is None:
        raise UserError("the section has no source set yet", hint="run it first (r)")
    key = normalise_url(url)
    for source in latest.sources:
        if normalise_url(source.url) == key:
            raise UserError(f"{url} is already in the set as {source.marker}")
    rule = excluded_by(url, list(rejects))
    if rule:
        raise UserError(f"{host_of(url)} is rejected ({rule})", hint="un-reject it first (u)")
    section = loaded.memo.section(section_id)
    existing = [s for s in latest.sources if s.provider == "writer"]
    source = Source(
        provider="writer",
        url=url,
        title=str(result.get("title") or ""),
        published_date=(str(result.get("date") or result.get("last_updated") or "") or None),
        summary=str(result.get("snippet") or ""),
        rank=len(existing),
        entry=len(section.include_sources),
        query="promoted from the writer's search results",
    )
    new = rebuild(latest, drop_urls={url}, force_keep=[source])
    saved = store.save_source_set(new)
    return next(s for s in saved.sources if normalise_url(s.url) == key)


__all__ = [
    "DROPPED_RULE",
    "CurationResult",
    "domain_for",
    "drop_source",
    "on_domain",
    "preview_reject",
    "promote_web_result",
    "rebuild",
    "reject_domain",
    "rejected_scopes",
    "restore_source",
    "unreject_domain",
]
