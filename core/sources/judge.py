"""The ``about`` judge for one memo, from what the memo and its store hold.

``sourcedesk.core.sources.about`` is pure; this module gathers its inputs: the subject and the namesakes
declared in memo.yaml, the namesakes learned so far (the memo store), and what the
subject's own pages say — the titles and summaries of every stored source on the
subject's hosts, across the memo's sections — so that a memo without a description
still has words that tell its subject apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.memo.spec import Memo
from sourcedesk.core.net.hosts import host_matches_any, registrable_domain
from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.sources.about import About, AboutJudge, NamesakeRef, SourceText
from sourcedesk.core.sources.cold_namesakes import FoundNamesake, find_namesakes, with_terms
from sourcedesk.core.sources.name_rejects import assemble as assemble_names
from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.core.sources.subject_profile import learn_profile


class JudgeStore(Protocol):
    """What the judge reads from a memo store."""

    def latest_source_set(self, section: str) -> SourceSet | None: ...

    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]: ...

    def reject_names(self) -> list[str]: ...


def memo_sources(sets: Iterable[SourceSet | None]) -> list[Source]:
    """Every stored source of ``sets`` — kept, omitted and held out — each page once (first seen wins)."""
    seen: set[str] = set()
    out: list[Source] = []
    for source_set in sets:
        if source_set is None:
            continue
        pool = [*source_set.sources, *(o.source for o in source_set.omitted), *(h.source for h in source_set.held_out)]
        for source in pool:
            key = normalise_url(source.url) if source.url.lower().startswith(("http://", "https://")) else source.url
            if key not in seen:
                seen.add(key)
                out.append(source)
    return out


def subject_pages(judge_hosts: list[str], sets: Iterable[SourceSet | None]) -> list[tuple[str, str]]:
    """``(title, text)`` of every stored source on the subject's own hosts (each page once):
    what its profile (names, founders, city, products, words) is learned from."""
    return [
        (text.title, text.body)
        for source in memo_sources(sets)
        if host_matches_any(source.url, judge_hosts)
        for text in [SourceText.of(source)]
    ]


class RunSets:
    """The newest frozen set of each of a memo's sections, as one run sees them.

    Every section's judge reads every section's set (the subject's own pages are its
    context); reading them from the store for each section made a 20-section run read 420
    sets. A stored version never changes, so a run reads each section's newest set once, on
    first use, and after that only the run itself makes one newer: ``note`` takes the set a
    section of the run has just resolved."""

    def __init__(self, memo: Memo, store: JudgeStore) -> None:
        self._sections = [s.id for s in memo.sections]
        self._store = store
        self._sets: dict[str, SourceSet | None] | None = None
        self._noted: dict[str, SourceSet] = {}

    def note(self, source_set: SourceSet) -> None:
        self._noted[source_set.section] = source_set
        if self._sets is not None:
            self._sets[source_set.section] = source_set

    def all(self) -> list[SourceSet | None]:
        if self._sets is None:
            self._sets = {
                sid: self._noted[sid] if sid in self._noted else self._store.latest_source_set(sid)
                for sid in self._sections
            }
        return list(self._sets.values())


def memo_judge(
    memo: Memo,
    store: JudgeStore | None = None,
    *,
    extra: Iterable[SourceSet] = (),
    global_name_rejects: Iterable[str] = (),
    sets: RunSets | None = None,
    cold: bool = True,
) -> MemoJudge:
    """The judge for ``memo``: declared and learned namesakes — and the names the analyst
    rejected, which are names the subject is not — with the subject's profile learned from its
    stored pages, every namesake given the words of its pages, and (``cold``) the namesakes the
    memo's results show that nothing names yet (``found``; none the analyst removed). The
    memo's sets: each section's newest, from ``sets`` when a run keeps them, else read now."""
    known = store.learned_namesakes(include_removed=True) if store is not None else []
    learned = [n.ref() for n in known if not n.removed]
    removed = [n for n in known if n.removed]
    rejected = [*(store.reject_names() if store is not None else []), *global_name_rejects]
    refs = [*learned, *(NamesakeRef(name, exact=True) for name in rejected)]
    stored: list[SourceSet | None] = list(extra)
    if sets is not None:
        stored += sets.all()
    elif store is not None:
        stored += [store.latest_source_set(s.id) for s in memo.sections]
    subject = memo.subject
    bare = AboutJudge.for_memo(subject)
    aliases = {w for a in bare.aliases for w in a.split()}
    profile = learn_profile(subject.name, subject_pages(bare.hosts, stored), aliases)
    base = AboutJudge.for_memo(subject, refs, profile=profile)
    texts = [SourceText.of(s) for s in memo_sources(stored)]
    pages = [t.words() for t in texts]
    judge = MemoJudge.of(base, with_terms(base, base.namesake_refs, texts, pages))
    if cold:
        gone = [n.name for n in removed] + rejected
        gone_sites = [d for d in (registrable_domain(n.host) for n in removed if n.own_site) if d]
        found = find_namesakes(judge, texts, known=gone, known_sites=gone_sites, pages=pages)
        if found:
            judge = MemoJudge.of(judge, _with_found(judge.namesake_refs, found))
            judge.found = [f for f in found if not f.known]
    return judge


def _with_found(refs: Sequence[NamesakeRef], found: Sequence[FoundNamesake]) -> list[NamesakeRef]:
    """``refs`` and the namesakes found; a known one found on its own site gets that site."""
    sites = {f.name: f for f in found if f.known and f.host}
    out = [
        dataclasses.replace(r, host=sites[r.name].host, terms=(*r.terms, *sites[r.name].terms))
        if r.name in sites
        else r
        for r in refs
    ]
    return out + [f.ref() for f in found if not f.known]


class MemoJudge(AboutJudge):
    """A memo's judge, and the namesakes it found cold in the memo's results (to be stored as learned)."""

    found: list[FoundNamesake]

    @classmethod
    def of(cls, judge: AboutJudge, refs: Sequence[NamesakeRef]) -> MemoJudge:
        made = cls(
            judge.name,
            domains=judge.hosts,
            aliases=judge.aliases,
            description=judge.description,
            namesakes=refs,
            profile=judge.profile,
        )
        made.found = []
        return made


def name_to_offer(
    judge: AboutJudge, about: About, sets: Iterable[SourceSet | None], source: object | None = None
) -> str:
    """What "reject this name" offers for a ``source`` ``about`` a namesake: of the forms of the
    namesake's name (as the page writes it, its own name, the other names seen beside it) that
    take out this source, the one that takes out the most of the memo's sources about the
    namesake and none about the subject."""
    phrase = about.phrase or ""
    ns = next((n for n in judge.namesakes if about.namesake and n.name == about.namesake), None)
    if ns is None:
        return phrase
    shown = judge.offer(ns) or ""
    forms = [f for f in dict.fromkeys([phrase, shown, *ns.ref.aka, *_cased(ns.phrases, shown)]) if f]
    if source is not None:
        forms = [f for f in forms if assemble_names(memo_names=[f]).match(source) is not None] or forms
    judged: list[tuple[Source, About]] = []
    for source_set in sets:
        if source_set is not None:
            pool = [
                *source_set.sources,
                *(o.source for o in source_set.omitted),
                *(h.source for h in source_set.held_out),
            ]
            judged += list(zip(pool, judge.judge_section(pool), strict=True))

    def reach(form: str) -> tuple[int, int]:
        names = assemble_names(memo_names=[form])
        hit = [a for s, a in judged if names.match(s) is not None]
        if not names or any(a.verdict == "subject" for a in hit):
            return (-1, 0)
        return (sum(1 for a in hit if a.namesake == ns.name), -len(form))

    return max(forms, key=reach)


def _cased(phrases: Iterable[str], shown: str) -> list[str]:
    """Normalised phrases written with the capitals of the namesake's shown name."""
    by_word = {w.lower(): w for w in shown.split()}
    return [" ".join(by_word.get(w, w) for w in p.split()) for p in phrases]


def learned_from(found: Iterable[FoundNamesake]) -> list[LearnedNamesake]:
    """What the store keeps of namesakes found cold: the name, where, and whether it is its site."""
    out: list[LearnedNamesake] = []
    for item in found:
        host = item.host or (host_of(item.urls[0]) if item.urls else None) or ""
        out.append(LearnedNamesake(name=item.name, origin="found", host=host, own_site=bool(item.site)))
    return out


def annotate(judge: AboutJudge, sources: Iterable[Source]) -> list[Source]:
    """Copies of ``sources`` carrying their verdict (``Source.about``, never persisted), judged
    as one section (a namesake's site passes its verdict to its other pages)."""
    items = list(sources)
    verdicts = judge.judge_section(items)
    return [s.model_copy(update={"about": v.to_json()}) for s, v in zip(items, verdicts, strict=True)]


def annotate_results(
    judge: AboutJudge, results: Iterable[Mapping[str, object]], sources: Sequence[Source] = ()
) -> list[dict[str, object]]:
    """Copies of the writer's search results with an ``about`` key, judged with the section's
    ``sources`` (a result on a namesake's site the set shows is that namesake's too)."""
    items = list(results)
    verdicts = judge.judge_section([*sources, *items])[len(sources) :]
    return [{**r, "about": v.to_json()} for r, v in zip(items, verdicts, strict=True)]


def cited_namesakes(
    citations: Iterable[Mapping[str, object] | object],
    sources: Iterable[Source],
    web_results: Iterable[Mapping[str, object]],
    judge: AboutJudge,
) -> list[tuple[str, About]]:
    """``(key, verdict)`` for every kept citation (verified or substituted) whose resolved source
    is about a namesake, judged now — a namesake declared after the run counts too."""
    by_url: dict[str, object] = {}
    for result in web_results:
        url = result.get("url")
        if isinstance(url, str) and url:
            by_url.setdefault(normalise_url(url), result)
    for source in sources:
        by_url[normalise_url(source.url)] = source  # the frozen set's copy holds the most text
    found: list[tuple[str, About]] = []
    for cite in citations:

        def get(name: str, cite: object = cite) -> object:
            return cite.get(name) if isinstance(cite, Mapping) else getattr(cite, name, None)

        url = get("resolved_url")
        if get("status") not in ("verified", "substituted") or not isinstance(url, str):
            continue
        item = by_url.get(normalise_url(url))
        if item is None:
            continue
        about = judge.judge(SourceText.of(item))
        if about.verdict == "namesake":
            found.append((str(get("key")), about))
    return found


def verdict_of(item: Mapping[str, object]) -> object:
    """The ``about`` verdict a result or source dict carries, if any."""
    about = item.get("about")
    return about.get("verdict") if isinstance(about, Mapping) else None


def cited_namesake_keys(report: Mapping[str, Any]) -> list[str]:
    """The keys of the kept citations (verified or substituted) whose source is about a namesake."""
    return [
        str(c.get("key"))
        for c in report.get("citations", [])
        if isinstance(c, Mapping)
        and c.get("status") in ("verified", "substituted")
        and isinstance(c.get("about"), Mapping)
        and c["about"].get("verdict") == "namesake"
    ]


__all__ = [
    "JudgeStore",
    "MemoJudge",
    "RunSets",
    "annotate",
    "annotate_results",
    "cited_namesake_keys",
    "cited_namesakes",
    "learned_from",
    "memo_judge",
    "memo_sources",
    "name_to_offer",
    "subject_pages",
    "verdict_of",
]
