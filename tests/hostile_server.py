"""A hostile HTTP server on loopback: it answers the way broken and malicious servers do.

The offline sandbox imitates the real services, faults included; this one is a
stand-in for what they must survive: a body dripped one byte at a time, a stall
before or after the headers, a connection reset halfway through the body, a
``Content-Length`` that lies, an endless redirect, a body of the wrong shape or
encoding, escape sequences in every string, and the caller's own API key echoed
back wherever it could land.

Everything a case does is data (``Reply``), so a new case — or a new service's
cases — is a new row, not new code. ``{key}`` anywhere in a reply's body or headers is replaced by
the bearer token the request carried (a server reflecting the key).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Where each service's client sends its requests.
SERVICE_PATHS: dict[str, tuple[str, ...]] = {
    "exa": ("/search",),
    "writer": ("/chat/completions", "/v1/chat/completions", "/v1/agent", "/v1/responses"),
}


@dataclass(frozen=True)
class Reply:
    """One way to answer a request."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    stall_s: float = 0.0  # wait this long before the status line (a server that never answers)
    stall_after_headers_s: float = 0.0  # headers go out, then nothing for this long
    drip_s: float = 0.0  # send the body one byte per drip_s seconds
    pause_after: int | None = None  # send this many body bytes, then nothing for pause_s (a stream stalled mid-way)
    pause_s: float = 0.0
    reset_after: int | None = None  # send this many body bytes, then reset the connection (RST)
    content_length: int | None = None  # announce this length instead of the real one (a lie)
    chunked: bool = False  # no Content-Length: the body streams until the connection closes
    when_body_contains: bytes | None = None  # only for requests whose body contains this (else next reply)


@dataclass
class _State:
    routes: dict[str, list[Reply]] = field(default_factory=dict)  # path -> replies tried in order
    hits: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server stops; False when it is stopping."""
        return not self.server.stopping.wait(seconds)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _key(self) -> str:
        auth = self.headers.get("Authorization", "")
        return auth[7:].strip() if auth[:7].lower() == "bearer " else ""

    def _route(self, body: bytes) -> Reply | None:
        path = self.path.split("?", 1)[0]
        state = self.server.state
        with state.lock:
            state.hits[path] = state.hits.get(path, 0) + 1
            replies = state.routes.get(path) or []
        for reply in replies:
            if reply.when_body_contains is None or reply.when_body_contains in body:
                return reply
        return None

    def _answer(self) -> None:
        body = self._body()
        reply = self._route(body)
        if reply is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        key = self._key()
        payload = reply.body.replace(b"{key}", key.encode()) if key else reply.body
        if reply.stall_s and not self._wait(reply.stall_s):
            return
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value.replace("{key}", key) if key else value)
        if reply.chunked:
            self.send_header("Connection", "close")
        else:
            length = reply.content_length if reply.content_length is not None else len(payload)
            self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.flush()
        if reply.stall_after_headers_s and not self._wait(reply.stall_after_headers_s):
            return
        if reply.reset_after is not None:
            self.wfile.write(payload[: reply.reset_after])
            self.wfile.flush()
            if not self._wait(0.1):  # let the client take what was sent before the reset discards it
                return
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        if reply.pause_after is not None:
            self.wfile.write(payload[: reply.pause_after])
            self.wfile.flush()
            if not self._wait(reply.pause_s):
                return
            payload = payload[reply.pause_after :]
        if reply.drip_s:
            for i in range(len(payload)):
                self.wfile.write(payload[i : i + 1])
                self.wfile.flush()
                if not self._wait(reply.drip_s):
                    return
        else:
            for start in range(0, len(payload), 64 * 1024):
                self.wfile.write(payload[start : start + 64 * 1024])
        self.wfile.flush()
        if reply.chunked or reply.content_length is not None:
            self.close_connection = True

    def do_GET(self) -> None:
        try:
            self._answer()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    do_POST = do_GET


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = _State()
        self.stopping = threading.Event()


class HostileServer:
    """``with HostileServer() as hs: hs.serve("exa", Reply(...))`` — a real loopback socket."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, name="hostile-server", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def serve(self, service: str, *replies: Reply) -> None:
        """Answer every path of ``service`` with ``replies`` (the first that matches the request)."""
        for path in SERVICE_PATHS[service]:
            self.route(path, *replies)

    def route(self, path: str, *replies: Reply) -> None:
        with self._server.state.lock:
            self._server.state.routes[path] = list(replies)

    def reset(self) -> None:
        with self._server.state.lock:
            self._server.state.routes.clear()
            self._server.state.hits.clear()

    def hits(self, path: str) -> int:
        with self._server.state.lock:
            return self._server.state.hits.get(path, 0)


def wait_until(condition: Any, timeout_s: float = 10.0, step_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step_s)
    return bool(condition())
