"""Helpers for the tests of ``sourcedesk serve``: a desk in the test's event loop, a browser's
page and websocket as aiohttp sees them, and waits that await a condition. No tests here."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

from sourcedesk.tui.demo import prepare_demo
from sourcedesk.tui.web.server import DeskServer

TOKEN = "desk-test-token-0123456789abcdef"
BOUND_S = 60.0  # what a wait allows: >= 10x what it takes on a loaded 2-core machine
WS_URL = re.compile(r'data-session-websocket-url="([^"]+)"')
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[PX^_].*?\x1b\\|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.", re.S)


def demo_argv(tmp_path: Path, sandbox_url: str) -> list[str]:
    """What a session runs for the demo (as `sourcedesk serve --demo` has it), on a fresh copy."""
    root = tmp_path / "demo"
    memo = prepare_demo(root=root)
    return [
        sys.executable,
        "-m",
        "sourcedesk.tui.web.desk_app",
        str(memo),
        "--demo-sandbox",
        sandbox_url,
        "--demo-root",
        str(root),
    ]


def alive(pid: int) -> bool:
    """The process exists (a zombie counts: it was never reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


async def until(condition: Callable[[], bool | Awaitable[bool]], what: str, bound_s: float = BOUND_S) -> None:
    """Await ``condition`` (polled), failing with ``what`` after ``bound_s``: only for what
    another process shows (its output, a browser's page), which sends no event to await."""
    deadline = time.monotonic() + bound_s
    while True:
        result = condition()
        if isinstance(result, Awaitable):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {bound_s:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


class RecordingDesk(DeskServer):
    """The desk, with what it says to its terminal kept in ``lines``."""

    def __init__(self, argv: list[str], **options) -> None:
        self.lines: list[str] = []
        super().__init__(argv, say=self.lines.append, **options)


@asynccontextmanager
async def running_desk(argv: list[str], **options) -> AsyncIterator[tuple[RecordingDesk, str]]:
    """A ``DeskServer`` on a free loopback port in this event loop; stopped (every session
    ended) on the way out. Yields the server and its base URL."""
    options.setdefault("host", "127.0.0.1")
    options.setdefault("token", TOKEN)
    server = RecordingDesk(argv, port=0, **options)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()
    task = asyncio.create_task(server.run(ready.set_result, stop))
    try:
        url = await asyncio.wait_for(asyncio.shield(ready), BOUND_S)
        yield server, url
    finally:
        stop.set()
        await asyncio.wait_for(task, BOUND_S)


async def open_page(client: aiohttp.ClientSession, url: str, token: str | None = TOKEN) -> str:
    """The page's websocket URL (with its ticket), as the browser would read it."""
    async with client.get(url, params={"token": token} if token else None) as response:
        body = await response.text()
        assert response.status == 200, (response.status, body)
    found = WS_URL.search(body)
    assert found, body
    return found.group(1)


async def connect(client: aiohttp.ClientSession, ws_url: str, origin: str | None) -> aiohttp.ClientWebSocketResponse:
    """The websocket as xterm.js opens it (its size in the query, then said again), from ``origin``."""
    ws = await client.ws_connect(ws_url + "?width=120&height=36", origin=origin, autoping=True)
    await ws.send_str(json.dumps(["resize", {"width": 120, "height": 36}]))
    return ws


def origin_of(url: str) -> str:
    return url.rstrip("/")


async def read_screen(ws: aiohttp.ClientWebSocketResponse, into: bytearray, *until_text: bytes) -> None:
    """Collect the terminal stream until one of ``until_text`` shows up in it (escape codes removed)."""

    async def read() -> None:
        while True:
            message = await ws.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                into.extend(message.data)
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                raise AssertionError(f"the session closed before {until_text!r} appeared: {plain(into)[-400:]!r}")
            text = plain(into)
            if any(wanted in text for wanted in until_text):
                return

    try:
        await asyncio.wait_for(read(), BOUND_S)
    except TimeoutError:
        raise AssertionError(f"timed out after {BOUND_S:.0f} s waiting for one of {until_text!r} on the page") from None


async def sessions(server: DeskServer, condition: Callable[[], bool], what: str) -> None:
    """Await ``condition`` on the desk's sessions (checked as each starts or ends; no polling)."""
    try:
        await server.wait_sessions(condition, BOUND_S)
    except TimeoutError:
        raise AssertionError(f"timed out after {BOUND_S:.0f} s waiting for {what}") from None


async def closed(ws: aiohttp.ClientWebSocketResponse) -> None:
    """Until the server has closed the websocket (its close frame read, or its end gone)."""

    async def read() -> None:
        while not ws.closed:
            try:
                message = await ws.receive()
            except aiohttp.ClientConnectionResetError:  # answering the close found the connection gone
                return
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                return

    try:
        await asyncio.wait_for(read(), BOUND_S)
    except TimeoutError:
        raise AssertionError(f"timed out after {BOUND_S:.0f} s waiting for the websocket to be closed") from None


def plain(stream: bytes | bytearray) -> bytes:
    """The terminal stream without escape sequences (words in one run of text stay together)."""
    return ANSI.sub(b"", bytes(stream))
