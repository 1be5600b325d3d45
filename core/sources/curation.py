"""The analyst's edits to frozen source sets: reject a domain or a name, un-reject it,
drop or restore one source, promote a web result.

No Textual here (the section screen and the CLI call these; tests call them directly).

An edit saves a **new version** of each set it changes (old versions stay in the
store) with markers re-assigned after packing, so they stay contiguous (E1…En): a set
that lost E2 does not keep E1, E3. A set the edit does not change keeps its version:
rejections are not part of a set's request fingerprint (``sourcedesk.core.sources.retrieve`` enforces
them on every set it hands out), so rejecting a domain in one section leaves every
other section's frozen set — and its reuse — exactly as it was.

Re-packing after a removal keeps every source that was already in the set and only
*adds* omitted sources that now fit the budget, in rank order; it never pushes out
a source the analyst has been looking at.

Rejecting a domain also teaches namesakes: the organisation names in the titles of
that domain's pages (``sourcedesk.core.sources.namesakes``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import HeldOutSource, OmittedSource, RemovedSource, RunWarning, Source, SourceSet
from sourcedesk.core.domain.storage import MemoStorage, RejectLists
from sourcedesk.core.memo.loader import LoadedMemo
from sourcedesk.core.memo.spec import Memo
from sourcedesk.core.net.hosts import PinRefused, excluded_by, registrable_domain, validate_pin
from sourcedesk.core.net.urls import host_of, normalise_url, strip_www
from sourcedesk.core.sources.budget import MARKER_PREFIXES, assign_markers
from sourcedesk.core.sources.extraction import with_facts
from sourcedesk.core.sources.name_rejects import NameReject, canonical_name, is_name_rule, name_of_rule
from sourcedesk.core.sources.name_rejects import assemble as assemble_names
from sourcedesk.core.sources.namesakes import NamesakeStore, TitleSeen, learn, remember
from sourcedesk.core.sources.providers import marker_prefixes
from sourcedesk.core.sources.providers.exa.request import refused_with
from sourcedesk.core.sources.reject_domains import canonical_domain
from sourcedesk.core.sources.rejected import Rejections
from sourcedesk.core.text.phrases import normalise_phrase

Scope = Literal["memo", "global"]


@dataclass
class CurationResult:
    domain: str  # the (first) domain, "" for a name
    scope: str = ""
    added: bool = False  # the rejection is new (False: it was already there)
    saved: dict[str, SourceSet] = field(default_factory=dict)  # section -> new version
    removed: dict[str, list[Source]] = field(default_factory=dict)  # section -> kept sources taken out
    removed_omitted: dict[str, list[Source]] = field(default_factory=dict)  # section -> omitted ones taken out
    restored: dict[str, list[Source]] = field(default_factory=dict)  # section -> sources put back
    refetch: dict[str, int] = field(default_factory=dict)  # section -> results only a refresh can bring back
    refresh: list[str] = field(default_factory=list)  # sections whose search was sent the lifted rejection
    name: str = ""  # the rejected name, for a name reject
    domains: list[str] = field(default_factory=list)  # every domain of a many-domain reject
    added_domains: list[str] = field(default_factory=list)  # the ones that were new
    learned: list[str] = field(default_factory=list)  # namesakes learned from the rejected domains' titles

    @property
    def removed_count(self) -> int:
        return sum(len(v) for v in self.removed.values())

    @property
    def restored_count(self) -> int:
        return sum(len(v) for v in self.restored.values())


def subject_hosts(memo: Memo) -> list[str]:
    """The subject's own hosts (what ``pin: entity`` pins to)."""
    hosts: list[str] = []
    for raw in ([memo.subject.url] if memo.subject.url else []) + list(memo.subject.domains):
        try:
            host = validate_pin(raw)
        except PinRefused:
            continue
        if host not in hosts:
            hosts.append(host)
    return hosts


def domain_for(url_or_host: str) -> str | None:
    """The domain a reject of this URL proposes: its registrable domain (``www.nats.aero`` →
    ``nats.aero``), or the host itself when it has none (an IP, a private suffix)."""
    host = host_of(url_or_host) if url_or_host else None
    if not host:
        return None
    return registrable_domain(host) or strip_www(host)


def on_domain(url: str, domain: str) -> bool:
    return excluded_by(url, [domain]) is not None


def _everything(source_set: SourceSet) -> list[Source]:
    """A set's sources: the writer's, those the budget left out, those held out as a namesake's."""
    return [*source_set.sources, *(o.source for o in source_set.omitted), *(h.source for h in source_set.held_out)]


def preview_reject(store: MemoStorage, section_ids: Iterable[str], domain: str) -> dict[str, list[Source]]:
    """Every source a rejection of ``domain`` takes out of each section's frozen set (the
    writer's first, then those outside it)."""
    hits: dict[str, list[Source]] = {}
    for sid in section_ids:
        latest = store.latest_source_set(sid)
        if latest is None:
            continue
        found = [s for s in _everything(latest) if on_domain(s.url, domain)]
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
    drop_urls: Collection[str] = frozenset(),
    add: Sequence[Source] = (),
    force_keep: Sequence[Source] = (),
    excluded_add: Sequence[RemovedSource] = (),
    excluded_drop: Collection[str] = frozenset(),
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
    held = [h for h in base.held_out if normalise_url(h.source.url) not in drop]  # a rejection takes those too
    rebuilt = base.model_copy(
        update={
            "id": "",
            "version": 0,
            "sources": kept,
            "omitted": omitted,
            "excluded": excluded,
            "held_out": held,
            "warnings": warnings,
        },
        deep=True,
    )
    return with_facts(rebuilt)  # a source kept in or promoted gets its facts; the others keep theirs


# ---------------------------------------------------------------- reject / un-reject

Covers = Callable[[Source], RemovedSource | None]


def _web(source: Source) -> bool:
    return source.url.lower().startswith(("http://", "https://"))


def _remove_everywhere(loaded: LoadedMemo, store: MemoStorage, covers: Covers, result: CurationResult) -> None:
    """Take what ``covers`` matches out of every section's latest set; untouched sets keep their version."""
    for section in loaded.memo.sections:
        sid = section.id
        latest = store.latest_source_set(sid)
        if latest is None:
            continue
        hit = [(s, r) for s in latest.sources if _web(s) and (r := covers(s)) is not None]
        hit_omitted = [(o.source, r) for o in latest.omitted if _web(o.source) and (r := covers(o.source)) is not None]
        hit_omitted += [
            (h.source, r) for h in latest.held_out if _web(h.source) and (r := covers(h.source)) is not None
        ]
        if not hit and not hit_omitted:
            continue
        gone = hit + hit_omitted
        new = rebuild(latest, drop_urls={s.url for s, _ in gone}, excluded_add=[r for _, r in gone])
        result.saved[sid] = store.save_source_set(new)
        if hit:
            result.removed[sid] = [s for s, _ in hit]
        if hit_omitted:
            result.removed_omitted[sid] = [s for s, _ in hit_omitted]


def _removal(source: Source, rule: str) -> RemovedSource:
    return RemovedSource(url=source.url, host=source.host, title=source.title, reason="rejected", rule=rule)


def reject_domains(
    loaded: LoadedMemo,
    store: MemoStorage,
    domains: Sequence[str],
    *,
    scope: Scope,
    global_store: RejectLists,
    settings: Settings | None = None,
    note: str = "",
) -> CurationResult:
    """Reject every domain in ``domains`` (memo or global scope) in one go and take their
    sources out of the memo's frozen sets at once — each set saved at most once.
    Every domain is checked before anything is written (``UserError`` names a bad one)."""
    wanted = list(dict.fromkeys(canonical_domain(d) for d in domains))
    if not wanted:
        raise UserError("no domain was given", hint="e.g. sourcedesk reject nats.aero kestramedical.com")
    target = store if scope == "memo" else global_store
    had = set(target.rejects())
    target.add_rejects(wanted, note)
    result = CurationResult(domain=wanted[0], scope=scope, domains=wanted)
    result.added_domains = [d for d in wanted if d not in had]
    result.added = bool(result.added_domains)

    def covers(source: Source) -> RemovedSource | None:
        for domain in wanted:
            if on_domain(source.url, domain):
                return _removal(source, f"{scope}:{domain}")
        return None

    _learn_from_domains(loaded, store, wanted, result)
    _remove_everywhere(loaded, store, covers, result)
    return result


def reject_domain(
    loaded: LoadedMemo,
    store: MemoStorage,
    domain: str,
    *,
    scope: Scope,
    global_store: RejectLists,
    settings: Settings | None = None,
    note: str = "",
) -> CurationResult:
    """Reject ``domain`` (memo or global scope) and take its sources out of every section's
    frozen set at once. ``UserError`` for a public suffix or a non-domain."""
    return reject_domains(loaded, store, [domain], scope=scope, global_store=global_store, note=note)


def _learn_from_domains(loaded: LoadedMemo, store: MemoStorage, domains: Sequence[str], result: CurationResult) -> None:
    """Namesakes named in the titles of the rejected domains' pages, wherever the sets saw them."""
    seen: list[TitleSeen] = []
    for section in loaded.memo.sections:
        latest = store.latest_source_set(section.id)
        if latest is None:
            continue
        pages = [(s.url, s.title) for s in [*latest.sources, *(o.source for o in latest.omitted)]]
        pages += [(r.url, r.title) for r in [*latest.namesakes, *latest.excluded]]
        seen += [TitleSeen(url, title) for url, title in pages if title and any(on_domain(url, d) for d in domains)]
    subject = loaded.memo.subject
    learned = learn(
        seen,
        origin="reject",
        subject_name=subject.name,
        aliases=subject.aliases,
        subject_hosts=subject_hosts(loaded.memo),
        declared=[n.name for n in subject.namesakes],
    )
    if isinstance(store, NamesakeStore) and remember(store, learned):
        result.learned = [n.name for n in learned]


def rejected_scopes(store: MemoStorage, global_store: RejectLists, domain: str) -> list[str]:
    try:
        key = canonical_domain(domain)
    except UserError:
        key = domain.strip().lower()
    return [name for name, s in (("memo", store), ("global", global_store)) if key in s.rejects()]


def _current(store: MemoStorage, global_store: RejectLists) -> Rejections:
    return Rejections.of(
        memo_domains=store.rejects(),
        global_domains=global_store.rejects(),
        memo_names=store.reject_names(),
        global_names=global_store.reject_names(),
    )


def _put_back(
    loaded: LoadedMemo,
    store: MemoStorage,
    lifted: Callable[[RemovedSource], bool],
    still: Rejections,
    result: CurationResult,
) -> None:
    """Restore the sources a lifted rejection had removed, from the set versions they were in.
    One that another rejection still covers stays out, under that rule."""
    for section in loaded.memo.sections:
        sid = section.id
        versions = store.source_set_versions(sid)
        if not versions:
            continue
        latest = versions[-1]
        gone = [r for r in latest.excluded if r.reason == "rejected" and lifted(r)]
        if not gone:
            continue
        restored: list[Source] = []
        held: list[HeldOutSource] = []  # held out as a namesake's where it was: back there
        relabelled: list[RemovedSource] = []
        for removed in gone:
            full = _find_in_versions(versions[:-1], removed.url)
            was_held = None if full is not None else _find_held(versions[:-1], removed.url)
            if full is None and was_held is None:
                result.refetch[sid] = result.refetch.get(sid, 0) + 1
                continue
            other = still.removal(full or was_held.source)  # type: ignore[union-attr]
            if other is not None:
                relabelled.append(other)
            elif full is not None:
                restored.append(full)
            else:
                held.append(was_held)  # type: ignore[arg-type]
        new = rebuild(latest, add=restored, excluded_add=relabelled, excluded_drop={r.url for r in gone})
        if held:
            new = new.model_copy(update={"held_out": sorted([*new.held_out, *held], key=lambda h: _rank(h.source))})
        result.saved[sid] = store.save_source_set(new)
        if restored or held:
            result.restored[sid] = [*restored, *(h.source for h in held)]


def _sent_to_search(request: dict[str, Any], domain: str | None = None, name: str | None = None) -> bool:
    """Whether a set's search was sent the rejection (``excludeDomains``/``excludeText``): the results
    it kept out were never seen or stored, so lifting the rejection cannot put them back."""
    entries = request.get("entries")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("provider") != "exa":
            continue
        if name is not None:
            sent = entry.get("exclude_text")
            if isinstance(sent, str) and normalise_phrase(sent) == normalise_phrase(name):
                return True
        if domain is not None and entry.get("pin") != "entity":
            category = entry.get("category")
            if "excludeDomains" in refused_with(category if isinstance(category, str) else None):
                continue  # exclusions stayed on our side there: what they removed is recorded
            exclusions = entry.get("exclusions")
            if any(isinstance(x, list) and x[:1] == [domain] for x in exclusions or []):
                return True
    return False


def _needs_refresh(store: MemoStorage, loaded: LoadedMemo, result: CurationResult, **lifted: str) -> None:
    """The sections whose frozen set was searched with the lifted rejection sent along."""
    for section in loaded.memo.sections:
        latest = store.latest_source_set(section.id)
        if latest is not None and _sent_to_search(latest.request, **lifted):
            result.refresh.append(section.id)


def unreject_domain(
    loaded: LoadedMemo,
    store: MemoStorage,
    domain: str,
    *,
    global_store: RejectLists,
    settings: Settings | None = None,
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
    (store if lift == "memo" else global_store).remove_reject(domain)
    result = CurationResult(domain=domain, scope=lift, domains=[domain])
    if rejected_scopes(store, global_store, domain):
        return result  # still rejected in the other scope: the sets stay as they are
    _put_back(
        loaded,
        store,
        lambda r: not is_name_rule(r.rule) and on_domain(r.url, domain),
        _current(store, global_store),
        result,
    )
    _needs_refresh(store, loaded, result, domain=domain)
    return result


# ---------------------------------------------------------------- reject / un-reject a name


def _check_not_the_subject(loaded: LoadedMemo, key: str, shown: str) -> None:
    subject = loaded.memo.subject
    hint = f'reject what tells the namesake apart, e.g. "{subject.name} Medical" or "{subject.name} air traffic"'
    if key in {normalise_phrase(n) for n in [subject.name, *subject.aliases]}:
        raise UserError(
            f"{shown!r} is the subject's own name: rejecting it would remove every page about {subject.name}",
            hint=hint,
        )
    sites = {strip_www(h) for h in (host_of(d) for d in [subject.url, *subject.domains] if d) if h}
    if key in {normalise_phrase(s) for s in sites} or strip_www(host_of(shown) or "") in sites:
        raise UserError(
            f"{shown!r} is the subject's own site: rejecting the name would remove every page that links to it",
            hint=hint,
        )


def name_covers(name: str) -> Callable[[Source], bool]:
    """Whether a source's title or stored text contains ``name`` (whole words, any case)."""
    names = assemble_names(memo_names=[name])
    return lambda source: _web(source) and names.match(source) is not None


def preview_reject_name(store: MemoStorage, section_ids: Iterable[str], name: str) -> dict[str, list[Source]]:
    """Every source a rejection of ``name`` takes out of each section's frozen set."""
    try:
        canonical_name(name)
    except UserError:
        return {}
    covers = name_covers(name)
    hits: dict[str, list[Source]] = {}
    for sid in section_ids:
        latest = store.latest_source_set(sid)
        found = [s for s in (_everything(latest) if latest else []) if covers(s)]
        if found:
            hits[sid] = found
    return hits


def reject_name(
    loaded: LoadedMemo,
    store: MemoStorage,
    name: str,
    *,
    scope: Scope,
    global_store: RejectLists,
    note: str = "",
) -> CurationResult:
    """Reject a name ("Kestra Medical") in the memo or globally: every source whose title or
    text contains it leaves the frozen sets at once; retrieval and the writer's search results
    drop it from now on. ``UserError`` for a phrase with no words or the subject's own name."""
    shown, key = canonical_name(name)
    _check_not_the_subject(loaded, key, shown)
    target = store if scope == "memo" else global_store
    result = CurationResult(domain="", scope=scope, name=shown)
    result.added = target.add_reject_name(shown, note)
    rule = NameReject(shown, key, scope).rule
    names = assemble_names(memo_names=[shown])
    _remove_everywhere(loaded, store, lambda s: _removal(s, rule) if names.match(s) is not None else None, result)
    return result


def rejected_name_scopes(store: MemoStorage, global_store: RejectLists, name: str) -> list[str]:
    key = normalise_phrase(name)
    return [
        scope
        for scope, s in (("memo", store), ("global", global_store))
        if key and key in {normalise_phrase(n) for n in s.reject_names()}
    ]


def unreject_name(
    loaded: LoadedMemo,
    store: MemoStorage,
    name: str,
    *,
    global_store: RejectLists,
    scope: Scope | None = None,
) -> CurationResult:
    """Lift a name reject and put back what it removed (unless another rejection still covers it)."""
    scopes = rejected_name_scopes(store, global_store, name)
    shown = " ".join(name.split())
    if not scopes:
        raise UserError(f"the name {shown!r} is not rejected in this memo or globally")
    lift = scope or scopes[0]
    if lift not in scopes:
        raise UserError(f"the name {shown!r} is not rejected {'in this memo' if lift == 'memo' else 'globally'}")
    (store if lift == "memo" else global_store).remove_reject_name(name)
    result = CurationResult(domain="", scope=lift, name=shown)
    if rejected_name_scopes(store, global_store, name):
        return result
    key = normalise_phrase(name)
    _put_back(
        loaded,
        store,
        lambda r: is_name_rule(r.rule) and normalise_phrase(name_of_rule(r.rule)) == key,
        _current(store, global_store),
        result,
    )
    _needs_refresh(store, loaded, result, name=name)
    return result


def find_in_versions(versions: list[SourceSet], url: str) -> Source | None:
    """The newest stored copy of the source at ``url`` in ``versions`` (removed ones included)."""
    return _find_in_versions(versions, url)


def _find_held(versions: list[SourceSet], url: str) -> HeldOutSource | None:
    """The newest stored copy of a source ``versions`` held out as a namesake's."""
    key = normalise_url(url)
    for version in reversed(versions):
        for held in version.held_out:
            if normalise_url(held.source.url) == key:
                return held
    return None


def _find_in_versions(versions: list[SourceSet], url: str) -> Source | None:
    key = normalise_url(url)
    for version in reversed(versions):
        for source in [*version.sources, *(o.source for o in version.omitted)]:
            if normalise_url(source.url) == key:
                return source
    return None


# ---------------------------------------------------------------- drop / restore one source

DROPPED_RULE = "analyst:dropped"


def drop_source(store: MemoStorage, section_id: str, url: str) -> SourceSet:
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


def restore_source(store: MemoStorage, section_id: str, url: str) -> SourceSet:
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
    store: MemoStorage,
    section_id: str,
    result: dict[str, Any],
    *,
    rejects: Iterable[str] = (),
    names: Iterable[str] = (),
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
    named = assemble_names(memo_names=names).match(result)
    if named is not None:
        raise UserError(f"this result names {named.phrase!r}, a rejected name", hint="un-reject the name first")
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
    "find_in_versions",
    "name_covers",
    "on_domain",
    "preview_reject",
    "preview_reject_name",
    "promote_web_result",
    "rebuild",
    "reject_domain",
    "reject_domains",
    "reject_name",
    "rejected_name_scopes",
    "rejected_scopes",
    "restore_source",
    "subject_hosts",
    "unreject_domain",
    "unreject_name",
]
