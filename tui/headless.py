"""The headless pipeline on a memo folder: open its stores, hand them to core.

core never opens a store (it receives one through ``sourcedesk.core.domain.storage``'s protocols);
the commands, the bench and scripts that start from a folder on disk come here.
Each section to run is held for the duration (``hold_section``: a colleague or another
window on the same memo is told who has it, and works on the other sections meanwhile); a
section someone else holds is waited for up to ``wait_s`` seconds, then reported as failed
with its holder named, while the others run. The store (TinyDB or the team's PostgreSQL
server) and the global rejection lists come from the settings.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.pipeline.run import Progress, RunOutcome, run_memo
from sourcedesk.core.sources.providers import ProviderClients
from sourcedesk.core.sources.retrieve import RetrievalOutcome, check_section_ids, retrieve_memo_outcomes
from sourcedesk.store.api import MemoStoreAPI, SectionHoldAPI
from sourcedesk.store.holders import OnWait, SectionLocked
from sourcedesk.tui.stores import global_store, memo_store

WaitNotice = Callable[[str], OnWait]  # a section's id -> what to say when waiting for it


@contextlib.contextmanager
def held_sections(
    store: MemoStoreAPI,
    section_ids: list[str],
    *,
    purpose: str,
    wait_s: float = 0.0,
    on_wait: WaitNotice | None = None,
) -> Iterator[tuple[list[str], dict[str, SectionLocked]]]:
    """Hold every section it can of ``section_ids`` (waiting up to ``wait_s`` in all); yields
    ``(held, refused)`` and lets go of them at the end."""
    import time

    holds: list[SectionHoldAPI] = []
    refused: dict[str, SectionLocked] = {}
    deadline = time.monotonic() + max(0.0, wait_s)
    try:
        for sid in section_ids:
            try:
                left = max(0.0, deadline - time.monotonic())
                holds.append(
                    store.hold_section(sid, purpose=purpose, wait_s=left, on_wait=on_wait(sid) if on_wait else None)
                )
            except SectionLocked as exc:
                refused[sid] = exc
        yield [h.section for h in holds], refused
    finally:
        for hold in holds:
            hold.release()


def locked_outcome(section_id: str, exc: SectionLocked) -> RunOutcome:
    """A section someone else holds: not run, its note untouched, the holder named."""
    return RunOutcome(
        section=section_id,
        status="failed",
        message=f"{exc.message}; not run, the previous note is unchanged",
        error_kind="locked",
    )


async def run_memo_folder(
    memo_dir: Path | str,
    section_ids: list[str] | None = None,
    *,
    settings: Settings | None = None,
    refresh: bool = False,
    progress: Progress | None = None,
    now: datetime | None = None,
    cancel: asyncio.Event | None = None,
    on_outcome: Callable[[RunOutcome], Any] | None = None,
    wait_s: float = 0.0,
    on_wait: WaitNotice | None = None,
) -> list[RunOutcome]:
    """``sourcedesk.core.pipeline.run.run_memo`` on the memo in ``memo_dir``, with its store and
    the global lists, on the sections it could hold (the others fail, naming who holds them)."""
    settings = settings or Settings()
    loaded = load_memo(Path(memo_dir), writer_api=settings.writer_api)
    ids = check_section_ids(loaded, section_ids)  # a bad id is an error before the store is touched
    global_lists = global_store(settings)
    try:
        with (
            memo_store(loaded.dir, settings) as store,
            held_sections(store, ids, purpose="running it", wait_s=wait_s, on_wait=on_wait) as (held, refused),
        ):
            outcomes = {sid: locked_outcome(sid, exc) for sid, exc in refused.items()}
            for outcome in outcomes.values():
                if on_outcome is not None:
                    on_outcome(outcome)
            if held:
                ran = await run_memo(
                    loaded,
                    held,
                    store=store,
                    global_lists=global_lists,
                    settings=settings,
                    refresh=refresh,
                    progress=progress,
                    now=now,
                    cancel=cancel,
                    on_outcome=on_outcome,
                )
                outcomes.update((o.section, o) for o in ran)
            return [outcomes[sid] for sid in ids]
    finally:
        global_lists.close()


async def retrieve_memo_folder(
    memo_dir: Path | str,
    section_ids: list[str] | None = None,
    *,
    settings: Settings | None = None,
    refresh: bool = False,
    clients: ProviderClients | None = None,
    now: datetime | None = None,
    wait_s: float = 0.0,
) -> list[RetrievalOutcome]:
    """``sourcedesk.core.sources.retrieve.retrieve_memo_outcomes`` on the memo in ``memo_dir``."""
    settings = settings or Settings()
    loaded = load_memo(Path(memo_dir))
    ids = check_section_ids(loaded, section_ids)
    global_lists = global_store(settings)
    try:
        with (
            memo_store(loaded.dir, settings) as store,
            held_sections(store, ids, purpose="retrieving its sources", wait_s=wait_s) as (_held, refused),
        ):
            if refused:  # retrieve reports sets, not failures: a held section is an error naming its holder
                raise next(iter(refused.values()))
            return await retrieve_memo_outcomes(
                loaded,
                ids,
                store=store,
                global_lists=global_lists,
                refresh=refresh,
                settings=settings,
                clients=clients,
                now=now,
            )
    finally:
        global_lists.close()


async def retrieve_memo_sets(
    memo_dir: Path | str,
    section_ids: list[str] | None = None,
    *,
    refresh: bool = False,
    settings: Settings | None = None,
) -> list[SourceSet]:
    """Each requested section's frozen source set."""
    outcomes = await retrieve_memo_folder(memo_dir, section_ids, refresh=refresh, settings=settings)
    return [o.source_set for o in outcomes]


__all__ = ["held_sections", "locked_outcome", "retrieve_memo_folder", "retrieve_memo_sets", "run_memo_folder"]
