"""The ``about`` judge for one memo, from what the memo and its store hold.

``sourcedesk.core.sources.about`` is pure; this module gathers its inputs: the subject and the namesakes
declared in memo.yaml, the namesakes learned so far (the memo store), and what the
subject's own pages say — the titles and summaries of every stored source on the
subject's hosts, across the memo's sections — so that a memo without a description
still has words that tell its subject apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.memo.spec import Memo
from sourcedesk.core.net.hosts import host_matches_any
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.sources.about import About, AboutJudge, NamesakeRef, SourceText
from sourcedesk.core.sources.namesakes import LearnedNamesake


class JudgeStore(Protocol):
    """What the judge reads from a memo store."""

    def latest_source_set(self, section: str) -> SourceSet | None: ...

    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]: ...

    def reject_names(self) -> list[str]: ...


def subject_pages(judge_hosts: list[str], sets: Iterable[SourceSet | None]) -> list[str]:
    """Title and summary of every stored source on the subject's own hosts (each page once)."""
    seen: set[str] = set()
    texts: list[str] = []
    for source_set in sets:
        if source_set is None:
            continue
        for source in [*source_set.sources, *(o.source for o in source_set.omitted)]:
            if source.url in seen or not host_matches_any(source.url, judge_hosts):
                continue
            seen.add(source.url)
            texts.append(f"{source.title}\n{source.summary}")
    return texts


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
) -> AboutJudge:
    """The judge for ``memo``: declared and learned namesakes — and the names the analyst
    rejected, which are names the subject is not — with the subject's stored pages as context
    (each section's newest set: from ``sets`` when a run keeps them, else read now)."""
    learned = [n.ref() for n in store.learned_namesakes()] if store is not None else []
    rejected = [*(store.reject_names() if store is not None else []), *global_name_rejects]
    learned += [NamesakeRef(name, exact=True) for name in rejected]
    bare = AboutJudge.for_memo(memo.subject)
    stored: list[SourceSet | None] = list(extra)
    if sets is not None:
        stored += sets.all()
    elif store is not None:
        stored += [store.latest_source_set(s.id) for s in memo.sections]
    context = subject_pages(bare.hosts, stored)
    return AboutJudge.for_memo(memo.subject, learned, context)


def annotate(judge: AboutJudge, sources: Iterable[Source]) -> list[Source]:
    """Copies of ``sources`` carrying their verdict (``Source.about``, never persisted)."""
    return [s.model_copy(update={"about": judge.judge(SourceText.of(s)).to_json()}) for s in sources]


def annotate_results(judge: AboutJudge, results: Iterable[Mapping[str, object]]) -> list[dict[str, object]]:
    """Copies of the writer's search results with an ``about`` key."""
    return [{**r, "about": judge.judge(SourceText.of(r)).to_json()} for r in results]


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


__all__ = ["JudgeStore", "RunSets", "annotate", "annotate_results", "cited_namesakes", "memo_judge", "subject_pages"]
