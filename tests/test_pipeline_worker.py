"""A run's CPU-bound work on a worker thread: Ctrl-C still ends the run at once.

``in_worker`` runs reconciling off the event loop so a cancel never waits for it. These
tests hold it to that when the signal lands on another thread than the loop's (the kernel
may hand a process's SIGINT to any thread; ``signal.raise_signal`` from a thread is that case).
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

from sourcedesk.core.pipeline.worker import in_worker

SPIN_S = 60.0  # what the job would take if nobody stopped it


def _spin(started: threading.Event, stopped: list[str], done: threading.Event) -> str:
    started.set()
    deadline = time.monotonic() + SPIN_S
    try:
        while time.monotonic() < deadline:
            pass
    except BaseException as exc:
        stopped.append(type(exc).__name__)
        done.set()
        raise
    return "finished on its own"


def test_a_sigint_delivered_to_another_thread_cancels_the_awaiting_run_and_stops_the_job():
    started = threading.Event()
    stopped: list[str] = []
    done = threading.Event()

    def interrupt() -> None:
        if started.wait(30):
            signal.raise_signal(signal.SIGINT)  # delivered to this thread, not the loop's

    threading.Thread(target=interrupt, daemon=True).start()
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(in_worker(_spin, started, stopped, done))
    took = time.monotonic() - began
    # Hang guard: a loop that slept until the job ended would take SPIN_S (60 s).
    assert took < SPIN_S / 2, f"the run noticed Ctrl-C only after {took:.1f} s"
    assert done.wait(SPIN_S / 2), "the job was never told to stop"  # it lands at its next instruction
    assert stopped == ["Abandoned"]


def test_a_job_result_and_its_error_reach_the_caller_and_the_heartbeat_stops():
    async def both() -> tuple[int, str, int]:
        value = await in_worker(sum, [1, 2, 3])
        try:
            await in_worker(int, "not a number")
        except ValueError as exc:
            error = str(exc)
        timers = asyncio.get_running_loop()._scheduled  # type: ignore[attr-defined]
        return value, error, sum(1 for t in timers if not t.cancelled())  # a beat left running shows here

    value, error, scheduled = asyncio.run(both())
    assert value == 6 and "not a number" in error and scheduled == 0
