"""Who holds a section, and the message that names them.

A team shares one store, so "locked" alone is no help: the analyst who is refused needs
to know whom to ask. Every lock records who took it (``user@host``), their process, since
when and what for, and ``SectionLocked`` says all of it in one line. Both backends (lock
files beside a TinyDB store, advisory locks on PostgreSQL) use these.
"""

from __future__ import annotations

import functools
import getpass
import os
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import StoreLocked


@functools.cache
def whoami() -> str:
    """``user@host`` of this process: what a colleague reads in a lock message or a toast."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry for the uid (containers)
        user = f"uid{os.getuid()}"
    return f"{user}@{socket.gethostname()}"


def now_iso() -> str:
    return clock.now().isoformat(timespec="seconds")


@dataclass(frozen=True)
class LockHolder:
    """Who holds a section: written when the lock is taken, read by whoever is refused."""

    who: str
    pid: int
    since: str
    purpose: str = ""  # "running it", "curating its sources", …

    @classmethod
    def me(cls, purpose: str = "") -> LockHolder:
        return cls(who=whoami(), pid=os.getpid(), since=now_iso(), purpose=purpose)

    @classmethod
    def from_json(cls, data: Any) -> LockHolder | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                who=str(data.get("who") or "someone"),
                pid=int(data.get("pid") or 0),
                since=str(data.get("since") or "?"),
                purpose=str(data.get("purpose") or ""),
            )
        except (TypeError, ValueError):
            return None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """ "alice@laptop (pid 4242) since 2026-12-02T13:55:01+00:00, running it"."""
        doing = f", {self.purpose}" if self.purpose else ""
        return f"{self.who} (pid {self.pid}) since {self.since}{doing}"


class SectionLocked(StoreLocked):
    """A section is held by someone else (another analyst, window or command)."""

    def __init__(self, memo: str, section: str, holder: LockHolder | None, waited_s: float = 0.0) -> None:
        self.memo = memo
        self.section = section
        self.holder = holder
        who = holder.describe() if holder is not None else "another sourcedesk (who, is not recorded)"
        waited = f" (waited {waited_s:g} s)" if waited_s > 0 else ""
        super().__init__(
            f"section {section} of memo {memo} is held by {who}{waited}",
            hint="wait until they finish, or give a command --wait SECONDS to wait for it",
        )


# Told once when a lock is busy and the caller waits: the CLI prints "waiting for …".
OnWait = Callable[[LockHolder | None], object]
POLL_S = 0.1


def take_waiting(
    try_once: Callable[[], bool],
    holder: Callable[[], LockHolder | None],
    refuse: Callable[[LockHolder | None, float], Exception],
    *,
    wait_s: float = 0.0,
    on_wait: OnWait | None = None,
) -> None:
    """Try ``try_once`` until it succeeds or ``wait_s`` has passed (then raise what ``refuse``
    makes of the holder). ``on_wait`` hears, once, whom the caller waits for."""
    if try_once():
        return
    deadline = time.monotonic() + max(0.0, wait_s)
    started = time.monotonic()
    told = False
    while time.monotonic() < deadline:
        if not told and on_wait is not None:
            on_wait(holder())
            told = True
        time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))
        if try_once():
            return
    raise refuse(holder(), round(time.monotonic() - started, 1) if wait_s > 0 else 0.0)


__all__ = ["LockHolder", "OnWait", "SectionLocked", "now_iso", "take_waiting", "whoami"]
