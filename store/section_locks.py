"""Per-section locks beside a TinyDB store: ``.sourcedesk/locks/<section>.lock``.

Two windows (or a window and a command) may work on different sections of one memo at
once; on the same section the second is told who holds it. Each lock is an OS file lock
(released by the kernel when its holder dies, so a crash never leaves a section locked)
with a note beside it saying who took it, when and what for. The PostgreSQL backend gives
the same behaviour with advisory locks (``sourcedesk.store.postgres.locks``).
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from filelock import FileLock, Timeout

from sourcedesk.core.domain.errors import StoreLocked
from sourcedesk.store.holders import LockHolder, OnWait, SectionLocked, take_waiting
from sourcedesk.store.process_lock import ProcessLock

LOCKS_DIRNAME = "locks"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class SectionHold:
    """A section held by this process until ``release`` (or the end of a ``with`` block)."""

    def __init__(self, section: str, release: object) -> None:
        self.section = section
        self._release = release
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            if callable(self._release):
                self._release()

    @property
    def held(self) -> bool:
        return not self._released

    def __enter__(self) -> SectionHold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class FileSectionLocks:
    """The section locks of one memo's TinyDB store."""

    def __init__(self, store_dir: Path, memo: str) -> None:
        self.dir = Path(store_dir) / LOCKS_DIRNAME
        self.memo = memo

    def _paths(self, section: str) -> tuple[Path, Path]:
        name = _UNSAFE.sub("_", section)[:80] or "_"
        return self.dir / f"{name}.lock", self.dir / f"{name}.owner.json"

    def _holder(self, owner: Path) -> LockHolder | None:
        try:
            return LockHolder.from_json(json.loads(owner.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def hold(
        self, section: str, *, purpose: str = "running it", wait_s: float = 0.0, on_wait: OnWait | None = None
    ) -> SectionHold:
        """Hold ``section`` (waiting up to ``wait_s``); ``SectionLocked`` names who has it."""
        self.dir.mkdir(parents=True, exist_ok=True)
        lock_path, owner = self._paths(section)
        me = LockHolder.me(purpose)
        lock = ProcessLock(lock_path, what=f"section {section}", hint="", owner_path=owner, info=dict(me.to_json()))

        def try_once() -> bool:
            try:
                lock.acquire(0)
            except StoreLocked:
                return False
            return True

        take_waiting(
            try_once,
            lambda: self._holder(owner),
            lambda holder, waited: SectionLocked(self.memo, section, holder, waited),
            wait_s=wait_s,
            on_wait=on_wait,
        )
        return SectionHold(section, lock.release)

    def holders(self) -> dict[str, LockHolder]:
        """Who holds which section now (a lock file nobody holds is skipped)."""
        found: dict[str, LockHolder] = {}
        if not self.dir.is_dir():
            return found
        for owner in sorted(self.dir.glob("*.owner.json")):
            lock_path = owner.with_name(owner.name.removesuffix(".owner.json") + ".lock")
            probe = FileLock(str(lock_path), thread_local=False)
            try:
                probe.acquire(timeout=0)
            except Timeout:
                holder = self._holder(owner)
                if holder is not None:
                    found[owner.name.removesuffix(".owner.json")] = holder
                continue
            except OSError:
                continue
            with contextlib.suppress(OSError):
                probe.release(force=True)
        return found


__all__ = ["LOCKS_DIRNAME", "FileSectionLocks", "SectionHold"]
