"""The headless pipeline on a memo folder: open its stores, hand them to core.

core never opens a store (it receives one through ``sourcedesk.core.domain.storage``'s protocols);
the commands, the bench and scripts that start from a folder on disk come here.
The memo store is locked for the duration, as in the workbench, and the
analyst's global rejection list is read from the user's data directory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.pipeline.run import Progress, RunOutcome, run_memo
from sourcedesk.core.sources.providers import ProviderClients
from sourcedesk.core.sources.retrieve import RetrievalOutcome, check_section_ids, retrieve_memo_outcomes
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.memo_store import MemoStore


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
    on_wait: Callable[[str], object] | None = None,
) -> list[RunOutcome]:
    """``sourcedesk.core.pipeline.run.run_memo`` on the memo in ``memo_dir``, with its store and the global lists."""
    settings = settings or Settings()
    loaded = load_memo(Path(memo_dir), writer_api=settings.writer_api)
    check_section_ids(loaded, section_ids)  # a bad id is an error before the store is touched
    global_lists = GlobalStore()
    with MemoStore(loaded.dir, wait_s=wait_s, on_wait=on_wait) as store:  # the wait blocks: nothing else runs yet
        return await run_memo(
            loaded,
            section_ids,
            store=store,
            global_lists=global_lists,
            settings=settings,
            refresh=refresh,
            progress=progress,
            now=now,
            cancel=cancel,
            on_outcome=on_outcome,
        )


async def retrieve_memo_folder(
    memo_dir: Path | str,
    section_ids: list[str] | None = None,
    *,
    settings: Settings | None = None,
    refresh: bool = False,
    clients: ProviderClients | None = None,
    now: datetime | None = None,
) -> list[RetrievalOutcome]:
    """``sourcedesk.core.sources.retrieve.retrieve_memo_outcomes`` on the memo in ``memo_dir``."""
    settings = settings or Settings()
    loaded = load_memo(Path(memo_dir))
    check_section_ids(loaded, section_ids)
    global_lists = GlobalStore()
    with MemoStore(loaded.dir) as store:
        return await retrieve_memo_outcomes(
            loaded,
            section_ids,
            store=store,
            global_lists=global_lists,
            refresh=refresh,
            settings=settings,
            clients=clients,
            now=now,
        )


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


__all__ = ["retrieve_memo_folder", "retrieve_memo_sets", "run_memo_folder"]
