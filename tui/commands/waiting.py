"""A CLI write's wait for the memo's lock: visible, bounded by ``--wait``, and naming the holder.

The workbench holds its memo's lock for the whole session. A command that writes to the
memo (``reject``, ``unreject``, ``run``) waits for it up to ``--wait`` seconds, saying on
stderr who holds it while it waits; when the time is up it stops with the holder named
(pid, command, since when). Read-only commands never wait: they open the store read-only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sourcedesk.store.memo_store import MemoStore

DEFAULT_WAIT_S = 2.0


def add_wait_option(parser: Any) -> None:
    parser.add_argument(
        "--wait",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"when the memo is open elsewhere (the workbench), wait up to SECONDS for it (default {DEFAULT_WAIT_S:g})",
    )


def wait_of(args: Any, default: float = DEFAULT_WAIT_S) -> float:
    """``--wait`` as given, else ``default``."""
    wait = getattr(args, "wait", None)
    return default if wait is None else max(0.0, float(wait))


def say_waiting(wait_s: float) -> Any:
    """The ``on_wait`` callback: one line on stderr when the wait begins."""

    def said(holder: str) -> None:
        print(f"sourcedesk: {holder}; waiting up to {wait_s:g} s for it…", file=sys.stderr, flush=True)

    return said


def store_for_writing(memo_dir: Path, wait_s: float) -> MemoStore:
    """The memo's store with its lock, waited for visibly (at most ``wait_s`` seconds)."""
    return MemoStore(memo_dir, wait_s=wait_s, on_wait=say_waiting(wait_s))
