"""One browser tab's workbench: its own process, started by argv and always ended.

textual-serve's ``AppService`` speaks the protocol between the websocket and the app
process (Textual's web driver on stdin/stdout); this subclass changes how the process starts
and how it ends:

- It is started from an argument list (no shell between us and it) in a session of its own,
  so Ctrl-C in the server's terminal reaches the server only, and the server ends each
  session in order.
- Ending is bounded: the app is asked to quit (it cancels its runs and closes its store as
  when ``q`` is pressed); if it has not exited after ``quit_grace_s`` its process group gets
  SIGTERM, then SIGKILL after ``term_grace_s``. The defaults end a session within 5 s of the
  tab closing, whatever the app was doing, and the process is always reaped: no orphan.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

log = logging.getLogger("sourcedesk.tui.web")

QUIT_GRACE_S = 3.0
TERM_GRACE_S = 1.0
READER_GRACE_S = 1.0  # after the process is gone, for its output reader to see the end of the pipe


class DeskSession(AppService):
    def __init__(
        self,
        argv: Sequence[str],
        *,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[Any]],
        download_manager: DownloadManager,
        hidden_env: Sequence[str] = (),
        quit_grace_s: float = QUIT_GRACE_S,
        term_grace_s: float = TERM_GRACE_S,
    ) -> None:
        super().__init__(
            " ".join(argv), write_bytes=write_bytes, write_str=write_str, close=close, download_manager=download_manager
        )
        self.argv = list(argv)
        self.hidden_env = tuple(hidden_env)
        self.quit_grace_s = quit_grace_s
        self.term_grace_s = term_grace_s
        self.how_it_ended = ""
        self._stop_lock = asyncio.Lock()
        self._stopped = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width=width, height=height)
        for name in self.hidden_env:  # the desk's token is the server's, never the app's
            environment.pop(name, None)
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def stop(self) -> None:
        """End the app process (asked, then signalled) and wait until it is reaped. Idempotent."""
        async with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
            process = self._process
            if process is not None:
                await self._end(process)
            if self._task is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._task), READER_GRACE_S)
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
                self._task = None
            with contextlib.suppress(Exception):  # nothing to download from a session that is gone
                await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)

    async def _end(self, process: asyncio.subprocess.Process) -> None:
        if process.returncode is not None:
            self.how_it_ended = "the app had quit"
            return
        with contextlib.suppress(Exception):  # stdin may be closed already
            await self.send_meta({"type": "quit"})
        if await _exited(process, self.quit_grace_s):
            self.how_it_ended = "the app quit"
            return
        log.warning("a browser session's app did not quit within %.0f s; terminating it", self.quit_grace_s)
        _signal_group(process.pid, signal.SIGTERM)
        if await _exited(process, self.term_grace_s):
            self.how_it_ended = "terminated"
            return
        _signal_group(process.pid, signal.SIGKILL)
        await process.wait()
        self.how_it_ended = "killed"


async def _exited(process: asyncio.subprocess.Process, within_s: float) -> bool:
    try:
        await asyncio.wait_for(asyncio.shield(process.wait()), within_s)
    except TimeoutError:
        return False
    return True


def _signal_group(pid: int, sig: signal.Signals) -> None:
    """The session's whole process group (anything the app started goes with it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
