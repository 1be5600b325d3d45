"""Total deadlines: how long a request, a section's retrieval or a writer call may take in all.

httpx's timeouts apply to each read: a server that sends one byte a second never
trips them, and a section could wait forever on it. A ``Deadline`` counts the
whole job instead — connecting, waiting, every byte of the body, retries and the
pauses between them. The innermost job sees the tightest deadline in force
(``current_deadline``): an Exa request inside a section's retrieval gets whatever
is left of the section's time if that is less than its own, and a retry that
could not finish in time is not started.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

import httpx

T = TypeVar("T")


class DeadlineExceeded(httpx.TimeoutException):
    """A total deadline ran out. ``str()`` names what ran out of time and why."""

    def __init__(self, message: str, *, seconds: float, what: str, received: int | None = None) -> None:
        super().__init__(message)
        self.seconds = seconds
        self.what = what
        self.received = received  # body bytes that had arrived (None: no answer had started)


@dataclass
class Deadline:
    """``seconds`` from now for ``what`` (a phrase: "the section's retrieval (retrieval_deadline_s)")."""

    seconds: float
    what: str
    started: float = field(default_factory=time.monotonic)

    @property
    def remaining(self) -> float:
        return max(0.0, self.started + self.seconds - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.remaining <= 0.0

    def exceeded(self) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"{self.what} did not finish within its {self.seconds:g} s deadline", seconds=self.seconds, what=self.what
        )


_current: ContextVar[Deadline | None] = ContextVar("sourcedesk_deadline", default=None)


def current_deadline() -> Deadline | None:
    """The tightest deadline in force for the running task, if any."""
    return _current.get()


@contextlib.contextmanager
def deadline_scope(deadline: Deadline) -> Iterator[Deadline]:
    """Make ``deadline`` the one in force, unless an enclosing one ends sooner."""
    outer = _current.get()
    tighter = outer if outer is not None and outer.remaining < deadline.remaining else deadline
    token = _current.set(tighter)
    try:
        yield tighter
    finally:
        _current.reset(token)


#: An inner job under a deadline ends this much before it, so that it can still say why it
#: stopped (a stalled server, a trickle) before the deadline's own cancellation cuts it off.
INNER_MARGIN_S = 0.05


def budget(limit_s: float) -> float:
    """Seconds a job limited to ``limit_s`` may take, given the deadline in force."""
    deadline = current_deadline()
    return limit_s if deadline is None else min(limit_s, max(0.0, deadline.remaining - INNER_MARGIN_S))


async def within(awaitable: Awaitable[T], seconds: float, *, what: str) -> T:
    """Await ``awaitable`` for at most ``seconds`` in all, then cancel it and raise
    ``DeadlineExceeded`` naming ``what``. Inner jobs see this deadline in force."""
    return await until(awaitable, Deadline(seconds, what))


async def until(awaitable: Awaitable[T], deadline: Deadline) -> T:
    """``within`` for a deadline that is already running (one section, several jobs)."""
    with deadline_scope(deadline) as in_force:
        timeout = asyncio.timeout(in_force.remaining)
        try:
            async with timeout:
                return await awaitable
        except TimeoutError:
            if not timeout.expired():
                raise  # some inner code's own TimeoutError, not ours
            raise in_force.exceeded() from None


__all__ = ["Deadline", "DeadlineExceeded", "budget", "current_deadline", "deadline_scope", "until", "within"]
