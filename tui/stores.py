"""Opening the stores a command or the workbench needs, from the settings.

The settings say which backend (``store_url``: TinyDB by default, a team's PostgreSQL
server when set); ``sourcedesk.store.backend`` opens it. Commands that write wait for a
held section with a visible line (``waiting_line``) for at most ``--wait`` seconds.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.text.safety import clean_text
from sourcedesk.store.api import GlobalStoreAPI, MemoStoreAPI
from sourcedesk.store.backend import open_global_store, open_memo_store
from sourcedesk.store.holders import LockHolder


def memo_store(memo_dir: Path, settings: Settings) -> MemoStoreAPI:
    return open_memo_store(memo_dir, url=settings.store_url)


def global_store(settings: Settings, path: Path | None = None) -> GlobalStoreAPI:
    return open_global_store(url=settings.store_url, path=path)


def waiting_line(section: str, wait_s: float, out: TextIO | None = None) -> Callable[[LockHolder | None], None]:
    """What a command prints, once, when it starts waiting for a held section."""

    def say(holder: LockHolder | None) -> None:
        who = holder.describe() if holder is not None else "another sourcedesk"
        line = f"sourcedesk: waiting up to {wait_s:g} s for section {section}, held by {who}"
        with contextlib.suppress(OSError, ValueError):
            print(clean_text(line), file=out or sys.stderr, flush=True)

    return say


__all__ = ["global_store", "memo_store", "waiting_line"]
