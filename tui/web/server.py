"""The desk's web server: textual-serve's ``Server``, with the door checked and every session ended.

textual-serve serves the page (xterm.js) and, for each websocket, runs one app process and
relays its terminal. This subclass keeps that and adds what serving the workbench needs:

- the checks of ``access`` before anything starts (403, with no process started);
- a limit on concurrent sessions: past it the page says the desk is busy (503);
- sessions started from an argument list and ended within seconds (``session.DeskSession``);
- its own run loop: the port may be 0 (a free one, printed once bound), there is no access
  log (the page's address holds the token), and Ctrl-C or SIGTERM end every session before
  the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import aiohttp_jinja2
import jinja2
from aiohttp import WSCloseCode, web
from textual_serve.server import Server, to_int

from sourcedesk.tui.web.access import AccessPolicy
from sourcedesk.tui.web.session import QUIT_GRACE_S, TERM_GRACE_S, DeskSession

log = logging.getLogger("sourcedesk.tui.web")

TEMPLATES = Path(__file__).resolve().with_name("templates")
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 2
HEARTBEAT_S = 10.0  # a browser that vanished without closing its websocket is noticed within ~2 beats
SHUTDOWN_S = 5.0
TOKEN_ENV = "SOURCEDESK_SERVE_TOKEN"

# The page's address holds the token: it must not travel on as a Referer to a link the
# desk opens, and no other site may frame the desk to steer its keys.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
}

BUSY_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>sourcedesk · the desk is busy</title>
<style>body{{background:#0c181f;color:#eee;font-family:monospace;display:flex;align-items:center;
justify-content:center;height:100vh;margin:0}}main{{max-width:40em;padding:2em;background:#12232d}}
a{{color:#ac5af4}}</style></head>
<body><main><h1>The desk is busy</h1>
<p>{open} of {limit} sessions are open, the most this desk allows at once.</p>
<p>Close the desk in another tab, or wait for a colleague to finish, then
<a href="">reload this page</a>.</p></main></body></html>
"""


@dataclass
class LiveSession:
    number: int
    session: DeskSession
    websocket: web.WebSocketResponse
    remote: str


class DeskServer(Server):
    """Serve ``argv`` (one process per browser session) on ``host``:``port``."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        host: str,
        port: int,
        token: str | None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        title: str = "sourcedesk",
        say: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        quit_grace_s: float = QUIT_GRACE_S,
        term_grace_s: float = TERM_GRACE_S,
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        super().__init__(" ".join(argv), host=host, port=port, title=title, templates_path=TEMPLATES)
        self.argv = list(argv)
        self.access = AccessPolicy(host=host, port=port, token=token, clock=clock)
        self.max_sessions = max_sessions
        self.say = say or _print
        self.quit_grace_s = quit_grace_s
        self.term_grace_s = term_grace_s
        self.sessions: dict[int, LiveSession] = {}
        self.started = 0  # app processes started since the server began (the tests count them)
        # Notified when a session's app has started and when a session has ended (its process
        # reaped): what the tests await instead of polling.
        self.sessions_changed = asyncio.Condition()
        self._numbers = itertools.count(1)

    # ------------------------------------------------------------------ the web application

    async def _make_app(self) -> web.Application:
        app = web.Application()
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws/{ticket}", self.handle_websocket, name="websocket"),
                # textual-serve's script, stylesheet and fonts: public, nothing of the memo's.
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ]
        )
        return app

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        refusal = self.access.page_refusal(token=request.query.get("token"), host_header=request.host)
        if refusal:
            return _refused(refusal)
        if len(self.sessions) >= self.max_sessions:
            return self._busy()
        ws_scheme = "wss" if request.scheme == "https" else "ws"
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{ws_scheme}://{request.host}/ws/{self.access.issue_ticket()}",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        response.headers.update(PAGE_HEADERS)
        return response

    def _busy(self) -> web.Response:
        page = BUSY_PAGE.format(open=len(self.sessions), limit=self.max_sessions)
        headers = {**PAGE_HEADERS, "Retry-After": "10"}
        return web.Response(status=503, text=page, content_type="text/html", headers=headers)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        refusal = self.access.socket_refusal(
            ticket=request.match_info["ticket"], origin=request.headers.get("Origin"), host_header=request.host
        )
        if refusal:
            return _refused(refusal)
        if len(self.sessions) >= self.max_sessions:
            return self._busy()
        websocket = web.WebSocketResponse(heartbeat=HEARTBEAT_S)
        if not websocket.can_prepare(request).ok:
            return web.Response(status=400, text="This address takes a websocket only.\n", headers=PAGE_HEADERS)
        session = DeskSession(
            self.argv,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
            hidden_env=(TOKEN_ENV,),
            quit_grace_s=self.quit_grace_s,
            term_grace_s=self.term_grace_s,
        )
        live = LiveSession(next(self._numbers), session, websocket, request.remote or "?")
        self.sessions[live.number] = live  # counted before the first await: the limit holds under a rush
        try:
            await websocket.prepare(request)
            await self._run_session(live, request)
        except asyncio.CancelledError:
            pass  # the server is stopping; the session ends below
        except Exception:
            log.exception("a browser session failed")
        finally:
            await asyncio.shield(self._end_session(live))
        return websocket

    async def _run_session(self, live: LiveSession, request: web.Request) -> None:
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        await live.session.start(width, height)
        self.started += 1
        await self._tell_sessions_changed()
        self.say(
            f"session {live.number} opened from {live.remote} (pid {live.session.pid}; "
            f"{len(self.sessions)} of {self.max_sessions})"
        )
        await self._process_messages(live.websocket, live.session)

    async def _end_session(self, live: LiveSession) -> None:
        try:
            await live.session.stop()
            with contextlib.suppress(Exception):
                await live.websocket.close(code=WSCloseCode.GOING_AWAY, message=b"session ended")
        finally:
            if self.sessions.pop(live.number, None) is not None and live.session.pid is not None:
                self.say(f"session {live.number} ended: {live.session.how_it_ended} (pid {live.session.pid})")
            await self._tell_sessions_changed()

    async def _tell_sessions_changed(self) -> None:
        async with self.sessions_changed:
            self.sessions_changed.notify_all()

    async def wait_sessions(self, condition: Callable[[], bool], timeout_s: float) -> None:
        """Until ``condition()`` holds, checked each time a session starts or ends (TimeoutError
        after ``timeout_s``)."""
        async with self.sessions_changed:
            await asyncio.wait_for(self.sessions_changed.wait_for(condition), timeout_s)

    # ------------------------------------------------------------------ running and stopping

    async def stop_all(self) -> None:
        """End every session (each within its grace periods, all at once)."""
        await asyncio.gather(*(self._end_session(live) for live in list(self.sessions.values())))

    async def run(self, on_ready: Callable[[str], None], stop: asyncio.Event | None = None) -> None:
        """Serve until ``stop`` is set, or Ctrl-C / SIGTERM; then end every session and close.

        ``on_ready`` gets the page's base URL once the socket is bound (``port`` 0: a free one)."""
        stop = stop or asyncio.Event()
        app = await self._make_app()
        runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=SHUTDOWN_S)
        await runner.setup()
        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
            self.port = self.access.port = runner.addresses[0][1]
            for sig in signals:
                loop.add_signal_handler(sig, stop.set)
            on_ready(self.base_url())
            await stop.wait()
            if self.sessions:
                self.say(f"stopping: ending {len(self.sessions)} session(s)")
        finally:
            for sig in signals:
                loop.remove_signal_handler(sig)
            await self.stop_all()
            await runner.cleanup()

    def base_url(self) -> str:
        from sourcedesk.tui.web.access import is_wildcard, url_host

        host = "127.0.0.1" if is_wildcard(self.host) else url_host(self.host)
        return f"http://{host}:{self.port}/"


def _refused(why: str) -> web.Response:
    return web.Response(status=403, text=why + "\n", content_type="text/plain", headers=PAGE_HEADERS)


def _print(line: str) -> None:
    print(line, flush=True)
