"""The ``about`` judge for one memo, from what the memo and its store hold.

``core.about`` is pure; this module gathers its inputs: the subject and the namesakes
declared in memo.yaml, the namesakes learned so far (the memo store), and what the
subject's own pages say — the titles and summaries of every stored source on the
subject's hosts, across the memo's sections — so that a memo without a description
still has words that tell its subject apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from core.about import AboutJudge, SourceText
from core.hosts import host_matches_any
from core.memo import Memo
from core.models import Source, SourceSet
from core.namesakes import LearnedNamesake


class JudgeStore(Protocol):
    """What the judge reads from a memo store."""

    def latest_source_set(self, section: str) -> SourceSet | None: ...

    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]: ...


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


def memo_judge(memo: Memo, store: JudgeStore | None = None, *, extra: Iterable[SourceSet] = ()) -> AboutJudge:
    """The judge for ``memo``: declared and learned namesakes, the subject's stored pages as context."""
    learned = [n.ref() for n in store.learned_namesakes()] if store is not None else []
    bare = AboutJudge.for_memo(memo.subject)
    sets: list[SourceSet | None] = list(extra)
    if store is not None:
        sets += [store.latest_source_set(s.id) for s in memo.sections]
    context = subject_pages(bare.hosts, sets)
    return AboutJudge.for_memo(memo.subject, learned, context)


def annotate(judge: AboutJudge, sources: Iterable[Source]) -> list[Source]:
    """Copies of ``sources`` carrying their verdict (``Source.about``, never persisted)."""
    return [s.model_copy(update={"about": judge.judge(SourceText.of(s)).to_json()}) for s in sources]


def annotate_results(judge: AboutJudge, results: Iterable[Mapping[str, object]]) -> list[dict[str, object]]:
    """Copies of the writer's search results with an ``about`` key."""
    return [{**r, "about": judge.judge(SourceText.of(r)).to_json()} for r in results]


__all__ = ["JudgeStore", "annotate", "annotate_results", "memo_judge", "subject_pages"]
