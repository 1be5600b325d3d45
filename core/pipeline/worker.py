"""CPU-bound work of a run, on its own thread, so Ctrl-C and deadlines stay in charge.

Reconciling a long hostile answer is pure Python for seconds. Run on the event loop it
blocked everything: Ctrl-C (which asyncio turns into cancelling the run) waited for it
to finish — 119 s once — and the cancellation then landed *after* it, just in time for
the note to be saved as if nothing had happened. ``in_worker`` runs such a job on a
daemon thread and awaits it: cancelling the awaiting task returns at once, the note is
never written, and the job is told to stop (an exception raised in its thread at its
next Python instruction); a daemon thread never holds the process's exit up either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

HEARTBEAT_S = 0.2  # how long a signal meant for the run may wait for the loop to notice it


class Abandoned(BaseException):
    """Raised inside a worker whose result nobody waits for any more (not an ``Exception``:
    no ``except Exception`` in the job may swallow it)."""


def _stop(thread: threading.Thread) -> None:
    """Ask ``thread`` to stop: CPython raises ``Abandoned`` in it at its next Python instruction."""
    ident = thread.ident
    if ident is None or not thread.is_alive():
        return
    with contextlib.suppress(AttributeError, TypeError):  # not CPython: the daemon thread is simply left behind
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(Abandoned))


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


async def in_worker(job: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``job(*args, **kwargs)`` on a daemon thread; cancelling the caller abandons (and stops) it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def target() -> None:
        try:
            try:
                value, error = job(*args, **kwargs), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task, which re-raises it
                if isinstance(exc, Abandoned):
                    return
                value, error = None, exc
            with contextlib.suppress(RuntimeError):  # a closed loop: the run is over, nobody is waiting
                loop.call_soon_threadsafe(_settle, future, value, error)
        except Abandoned:  # told to stop after the job had ended: nobody is waiting for its result
            return

    thread = threading.Thread(target=target, name=f"sourcedesk-{getattr(job, '__name__', 'job')}", daemon=True)
    thread.start()
    stop_beating = _heartbeat(loop, future)
    try:
        return await future
    except asyncio.CancelledError:
        _stop(thread)
        raise
    finally:
        stop_beating()


def _heartbeat(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]) -> Callable[[], None]:
    """Wake the event loop every ``HEARTBEAT_S`` while ``future`` is pending.

    A SIGINT that the kernel hands to another thread (the worker's, say) sets Python's flag
    but does not interrupt the main thread's ``select``, and with nothing else scheduled the
    loop would sleep until the job ends: Python runs the handler (asyncio's, which cancels
    the run) only once the main thread wakes. A beat bounds that wait; the function returned
    stops it."""
    holder: list[asyncio.TimerHandle] = []

    def tick() -> None:
        if not future.done():
            holder[0] = loop.call_later(HEARTBEAT_S, tick)

    holder.append(loop.call_later(HEARTBEAT_S, tick))
    return lambda: holder[0].cancel()


__all__ = ["Abandoned", "in_worker"]
