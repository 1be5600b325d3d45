"""Sources about a namesake are held out of the writer's set, before the set is numbered.

A namesake's page in the writer's set is an invitation to cite it ("Kestra Medical's USD
59.8M revenue" in a note on Kestra the orchestration platform). So a frozen set keeps every
source the ``about`` verdict calls ``namesake`` in ``held_out`` — shown greyed to the analyst
as "held out: about Kestra Medical" — and re-packs and renumbers the rest (E1…En, no holes).
The analyst can keep one in (``keep_in``); a source no longer judged a namesake (its name
removed, say) comes back. The verdicts are recomputed whenever a set is handed out, so a
namesake learned later holds its pages out of sets retrieved before.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import HeldOutSource, RunWarning, Source, SourceSet
from sourcedesk.core.domain.storage import MemoStorage, SourceSetStore
from sourcedesk.core.memo.loader import LoadedMemo
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.sources.about import About, AboutJudge
from sourcedesk.core.sources.judge import learned_from, memo_judge
from sourcedesk.core.sources.namesakes import remember
from sourcedesk.core.sources.rejected import Rejections

log = logging.getLogger("sourcedesk.retrieval")


def _key(url: str) -> str:
    return normalise_url(url) if url.lower().startswith(("http://", "https://")) else url


def hold_out(source_set: SourceSet, judge: AboutJudge) -> SourceSet | None:
    """``source_set`` with its namesake sources held out and its former ones that are no longer
    namesakes put back (re-packed, renumbered, not saved); None when nothing changes."""
    from sourcedesk.core.sources.curation import rebuild  # curation builds on the retrieval modules

    pool: list[Source] = [
        *source_set.sources,
        *(o.source for o in source_set.omitted),
        *(h.source for h in source_set.held_out),
    ]
    if not pool:
        return None
    kept_in = set(source_set.kept_in)
    verdicts = judge.judge_section(pool)
    holding: dict[str, tuple[Source, About]] = {}
    for source, about in zip(pool, verdicts, strict=True):
        if about.verdict == "namesake" and _key(source.url) not in kept_in:
            holding.setdefault(_key(source.url), (source, about))
    held_before = {_key(h.source.url) for h in source_set.held_out}
    if set(holding) == held_before:
        return None
    back = [h.source for h in source_set.held_out if _key(h.source.url) not in holding]
    rebuilt = rebuild(source_set, drop_urls={s.url for s, _ in holding.values()}, add=back)
    held = [
        HeldOutSource(source=s.model_copy(update={"marker": None}), namesake=a.namesake or "", reason=a.reason)
        for s, a in sorted(holding.values(), key=lambda sa: (sa[0].provider == "writer", sa[0].entry, sa[0].rank))
    ]
    return rebuilt.model_copy(update={"held_out": held, "warnings": _warnings(rebuilt.warnings, held)})


def _warnings(warnings: list[RunWarning], held: list[HeldOutSource]) -> list[RunWarning]:
    """``warnings`` with the one that says what is held out, as it is now."""
    out = [w for w in warnings if w.code != "held_out"]
    if held:
        names = ", ".join(dict.fromkeys(h.namesake or "a namesake" for h in held))
        message = f"{len(held)} source(s) about a namesake held out of the writer's set ({names}); k keeps one in"
        out.append(RunWarning(code="held_out", message=message))
    return out


def keep_in(store: SourceSetStore, section_id: str, url: str) -> SourceSet:
    """Put a held-out source back into the section's set, and keep it there (saved as a new version)."""
    from sourcedesk.core.sources.curation import rebuild

    latest = store.latest_source_set(section_id)
    key = _key(url)
    held = next((h for h in (latest.held_out if latest else []) if _key(h.source.url) == key), None)
    if latest is None or held is None:
        raise UserError(f"{url} is not held out of the section's set", hint="k keeps in a greyed 'held out' row")
    rebuilt = rebuild(latest, force_keep=[held.source])
    remaining = [h for h in latest.held_out if h is not held]
    update = {
        "held_out": remaining,
        "kept_in": [*latest.kept_in, key],
        "warnings": _warnings(rebuilt.warnings, remaining),
    }
    return store.save_source_set(rebuilt.model_copy(update=update))


def hold_out_namesakes(
    store: MemoStorage,
    loaded: LoadedMemo,
    source_set: SourceSet,
    global_name_rejects: Sequence[str],
    sets: Any = None,
) -> SourceSet | None:
    """The set with its sources about a namesake held out of the writer's set (``holdout``), or
    None when that changes nothing; the namesakes the memo's results show cold are stored as
    learned on the way (marked so, removable)."""
    try:
        judge = memo_judge(loaded.memo, store, extra=[source_set], global_name_rejects=global_name_rejects, sets=sets)
    except Exception:  # the verdict is a safeguard: never fail a retrieval over it
        log.exception("could not judge section %s", source_set.section)
        return None
    if judge.found:
        try:
            remember(store, learned_from(judge.found))
        except Exception:
            log.exception("could not store the namesakes found")
    return hold_out(source_set, judge)


def curated_now(
    store: MemoStorage,
    loaded: LoadedMemo,
    source_set: SourceSet,
    rejections: Rejections,
    global_name_rejects: Sequence[str],
    sets: Any = None,
) -> SourceSet | None:
    """``source_set`` under the rejections and hold-out in force now, or None when it already is."""
    from sourcedesk.core.sources.retrieve import enforce_rejections  # retrieval builds on this module

    rejected = enforce_rejections(source_set, rejections)
    base = rejected or source_set
    held = hold_out_namesakes(store, loaded, base, global_name_rejects, sets)
    return held or rejected


__all__ = ["curated_now", "hold_out", "hold_out_namesakes", "keep_in"]
