"""An asyncio event loop on a virtual clock, for tests of pacing and timers. No tests here.

``loop.time()`` starts at 0 and moves 1 µs per turn of the loop (as a real clock would move
a little, so code that waits for "a bit more time" cannot spin forever), and when every task
is waiting on a timer it jumps straight to the next one. A rate limiter's pacing (aiolimiter
reads ``loop.time()``), ``asyncio.sleep`` and ``asyncio.timeout`` are so measured to within
a millisecond and at once, whatever the load on the machine. Only for code that does no real I/O (respx, in-memory transports):
a socket's bytes arrive in real time, which this clock does not see.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
TURN_S = 1e-6  # virtual time one turn of the loop takes


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self._virtual_now = 0.0
        real_select = self._selector.select  # type: ignore[attr-defined]

        def select(timeout: float | None = None) -> Any:
            if timeout is None:  # nothing scheduled: only another thread can wake the loop
                return real_select(None)
            ready = real_select(0)
            self._virtual_now += TURN_S
            if not ready and timeout > TURN_S:
                self._virtual_now += timeout - TURN_S  # idle until the next timer: go there at once
            return ready

        self._selector.select = select  # type: ignore[attr-defined]

    def time(self) -> float:
        return self._virtual_now


def run_virtual(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)`` on a ``VirtualTimeLoop``."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(coro)
