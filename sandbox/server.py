"""The offline sandbox: a real loopback HTTP server speaking Exa's and Perplexity's shapes.

The server owns everything that is not an API's own logic, applied the same way to
both services: request counters, injected latency, injected faults and rate limits.
Routes: ``POST /search`` → ``sourcedesk.sandbox.exa_api``; ``POST /v1/agent`` (and
``/v1/responses``) → ``sourcedesk.sandbox.writer_agent``; ``POST /chat/completions`` →
``sourcedesk.sandbox.writer_api`` (writer halves imported per request, so the Exa half works
on its own).
Test controls live under ``/_sandbox/`` (stats, faults, latency, reset).

Standard library only (``ThreadingHTTPServer``), bound to loopback only.
"""

from __future__ import annotations

import importlib
import ipaddress
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from sourcedesk.sandbox import exa_api, search
from sourcedesk.sandbox.corpus import Page, load_corpus
from sourcedesk.sandbox.faults import DEFAULT_HOLD_S, JUDGE, OUTCOME_FAULTS, FaultPlan, fault_reply
from sourcedesk.sandbox.http import (
    SERVICES,
    RateLimit,
    Reply,
    Request,
    SandboxContext,
    Stats,
    json_reply,
    service_error,
)
from sourcedesk.sandbox.writer_judge import is_judge_request

DEFAULT_PORT = 8765
EXA_REQUESTS_PER_SECOND = 10
WRITER_REQUESTS_PER_MINUTE = 50  # sonar-pro at the entry tier
IDLE_CONNECTION_TIMEOUT_S = 60

SERVICE_ROUTES = {
    "/search": "exa",
    "/v1/agent": "writer",  # Perplexity's Agent API
    "/v1/responses": "writer",  # the same API under its OpenAI Responses name
    "/chat/completions": "writer",  # Sonar chat completions (legacy) and OpenAI-compatible clients
    "/v1/chat/completions": "writer",  # OpenAI-style base URLs ending in /v1
}
AGENT_ROUTES = ("/v1/agent", "/v1/responses")
_QUIET_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


def _writer_handler(path: str = "") -> Callable[..., Reply] | None:
    name = "sourcedesk.sandbox.writer_agent" if path in AGENT_ROUTES else "sourcedesk.sandbox.writer_api"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name in (name, "sourcedesk.sandbox.writer_api"):
            return None
        raise
    handler: Callable[..., Reply] = module.handle
    return handler


def _service_handler(service: str, path: str = "") -> Callable[..., Reply] | None:
    return exa_api.handle if service == "exa" else _writer_handler(path)


def _latency_dict(latency_ms: int | dict[str, int] | None) -> dict[str, int]:
    if isinstance(latency_ms, dict):
        unknown = set(latency_ms) - set(SERVICES)
        if unknown:
            raise ValueError(f"latency for unknown service(s): {', '.join(sorted(unknown))}")
        return {s: max(0, int(latency_ms.get(s, 0) or 0)) for s in SERVICES}
    return {s: max(0, int(latency_ms or 0)) for s in SERVICES}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the real APIs
    server_version = "sourcedesk-sandbox"
    timeout = IDLE_CONNECTION_TIMEOUT_S  # idle keep-alive connections end eventually
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms stalls
    server: _SandboxHTTPServer

    # ------------------------------------------------------------------ plumbing

    def version_string(self) -> str:
        return self.server_version

    def handle(self) -> None:
        try:
            super().handle()
        except _QUIET_ERRORS:
            self.close_connection = True  # the client went away; nothing to tell anyone

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.ctx.verbose:
            sys.stderr.write(f"sandbox: {format % args}\n")

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # one line per request is written by _dispatch when verbose

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.stream is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            for chunk in reply.stream:
                if self.server.ctx.stopping.is_set():
                    break
                self.wfile.write(chunk)
                self.wfile.flush()
            return
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)
        self.wfile.flush()

    def _dispatch(self) -> None:
        started = time.perf_counter()
        arrived = time.monotonic()  # the rate limit counts arrivals, not the end of injected latency
        path, _, qs = self.path.partition("?")
        path = path.rstrip("/") or "/"
        try:
            body = self._read_body()
        except ValueError:  # a Content-Length or chunk size that is not a number
            self.close_connection = True
            self._send(json_reply(400, {"error": "unreadable request body framing"}))
            return
        req = Request(
            method=self.command,
            path=path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            query=dict(parse_qsl(qs, keep_blank_values=True)),
        )
        service = SERVICE_ROUTES.get(path)
        if service is not None and self.command == "POST":
            reply = _serve_service(service, req, self.server.ctx, arrived)
        elif service is not None:
            reply = json_reply(405, {"error": f"{self.command} not allowed on {path}; use POST"}, {"Allow": "POST"})
        else:
            reply = _control(req, self.server)
        if self.server.ctx.verbose:
            took = (time.perf_counter() - started) * 1000
            sys.stderr.write(f"sandbox: {self.command} {path} {service or '-'} {reply.status} {took:.0f}ms\n")
        self._send(reply)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _dispatch


class _SandboxHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # keep-alive connections must not hold up stop()
    # socketserver's default listen backlog is 5: a memo opening a dozen connections at
    # once overflows it, the kernel drops SYNs and clients stall a full second on retry.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], ctx: SandboxContext, initial_latency: dict[str, int]) -> None:
        self.ctx = ctx
        self.initial_latency = dict(initial_latency)
        self.connections_done = 0  # connections whose handling has ended, errors reported and all
        self._done = threading.Condition()
        super().__init__(address, _Handler)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._done:
                self.connections_done += 1
                self._done.notify_all()

    def wait_connections_done(self, count: int, timeout: float) -> bool:
        """Whether ``count`` connections have ended within ``timeout`` seconds."""
        with self._done:
            return self._done.wait_for(lambda: self.connections_done >= count, timeout)

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, _QUIET_ERRORS):
            return
        super().handle_error(request, client_address)


class _SandboxHTTPServer6(_SandboxHTTPServer):
    address_family = socket.AF_INET6


def _serve_service(service: str, req: Request, ctx: SandboxContext, arrived: float | None = None) -> Reply:
    """Counters, latency, faults and rate limits around a service handler.

    Injected latency is the time from arrival to answer, whatever the handler's own
    work took: a real service answers concurrent requests in parallel, so the
    sandbox's CPU time (one interpreter) must not queue up behind the delay."""
    ctx.stats.begin(service)
    started = arrived if arrived is not None else time.monotonic()
    reply: Reply | None = None
    try:
        reply = _answer(service, req, ctx, arrived)
        remaining = ctx.latency_ms.get(service, 0) / 1000 - (time.monotonic() - started)
        if remaining > 0:
            ctx.wait(remaining)
        return reply
    finally:
        ctx.stats.finish(service, reply.status if reply is not None else 500)


def _answer(service: str, req: Request, ctx: SandboxContext, arrived: float | None) -> Reply:
    judged = service == "writer" and is_judge_request(req)  # judge rules first, then the writer's own
    kind = (ctx.faults.next_fault(JUDGE) if judged else None) or ctx.faults.next_fault(service)
    if kind and kind in OUTCOME_FAULTS and service == "writer" and req.path in AGENT_ROUTES:
        handler = _service_handler(service, req.path)
        if handler is not None:
            return handler(req, ctx, fault=kind)  # an answer whose status says what went wrong
    if kind:
        return fault_reply(kind, service, ctx, path=req.path)
    limit = ctx.rate_limits.get(service)
    if limit is not None and not limit.allow(arrived):
        return service_error(
            service,
            429,
            "Rate limit exceeded: too many requests per second",
            tag="RATE_LIMIT_EXCEEDED",
            kind="rate_limit_exceeded",
            headers={"Retry-After": "1"},
        )
    handler = _service_handler(service, req.path)
    if handler is None:
        return json_reply(501, {"error": f"the sandbox has no {service} half yet"})
    try:
        return handler(req, ctx)
    except Exception:  # noqa: BLE001 - a sandbox bug: say so loudly, answer like a server would
        traceback.print_exc(file=sys.stderr)
        return service_error(service, 500, "sandbox handler failed", tag="INTERNAL_ERROR")


def _control(req: Request, server: _SandboxHTTPServer) -> Reply:
    ctx = server.ctx
    route = (req.method, req.path)
    if route == ("GET", "/_sandbox/stats"):
        return json_reply(200, ctx.stats.snapshot())
    if route == ("GET", "/_sandbox/faults"):
        return json_reply(200, {"faults": ctx.faults.describe(), "hold_s": ctx.faults.hold_s})
    if route == ("POST", "/_sandbox/faults"):
        try:
            data = req.json() if req.body.strip() else []
            if isinstance(data, dict):
                specs, hold_s = data.get("faults") or [], float(data.get("hold_s", ctx.faults.hold_s))
            else:
                specs, hold_s = data, ctx.faults.hold_s
            if isinstance(specs, str):
                specs = [specs]
            if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
                raise ValueError("faults must be a list of spec strings like 'exa:429*2'")
            ctx.faults = FaultPlan.parse(specs, hold_s=hold_s)
        except (TypeError, ValueError) as exc:
            return json_reply(400, {"error": str(exc)})
        return json_reply(200, {"faults": ctx.faults.describe(), "hold_s": ctx.faults.hold_s})
    if route == ("POST", "/_sandbox/latency"):
        try:
            data = req.json()
            if not isinstance(data, dict):
                raise ValueError('latency must be an object like {"exa": 200, "writer": 0}')
            ctx.latency_ms.update(_latency_dict({**ctx.latency_ms, **data}))
        except (TypeError, ValueError) as exc:
            return json_reply(400, {"error": str(exc)})
        return json_reply(200, {"latency_ms": ctx.latency_ms})
    if route == ("POST", "/_sandbox/reset"):
        ctx.stats.reset()
        ctx.faults = FaultPlan(hold_s=ctx.faults.hold_s)
        for limit in ctx.rate_limits.values():
            limit.reset()
        ctx.latency_ms.update(server.initial_latency)
        return json_reply(200, {"reset": True})
    if route in (("GET", "/_sandbox/health"), ("GET", "/")):
        return json_reply(
            200,
            {
                "service": "sourcedesk sandbox",
                "pages": len(ctx.pages),
                "routes": ["POST /search", "POST /v1/agent", "POST /v1/responses", "POST /chat/completions"],
                "controls": [
                    "GET /_sandbox/stats",
                    "POST /_sandbox/faults",
                    "POST /_sandbox/latency",
                    "POST /_sandbox/reset",
                ],
            },
        )
    return json_reply(404, {"error": f"no route for {req.method} {req.path}"})


def _loopback(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ValueError(f"the sandbox binds loopback only (127.0.0.1 or ::1), not {host!r}")


class SandboxServer:
    """The sandbox on a background daemon thread: ``with SandboxServer() as sb: sb.url``."""

    def __init__(
        self,
        port: int = 0,
        host: str = "127.0.0.1",
        latency_ms: int | dict[str, int] | None = None,
        faults: Iterable[str] | FaultPlan = (),
        seed: int = 0,
        exa_key: str | None = None,
        writer_key: str | None = None,
        *,
        exa_rps: int | None = EXA_REQUESTS_PER_SECOND,
        writer_rpm: int | None = None,
        fault_hold_s: float = DEFAULT_HOLD_S,
        pages: Iterable[Page] | None = None,
        verbose: bool = False,
    ) -> None:
        self.host = _loopback(host)
        plan = faults if isinstance(faults, FaultPlan) else FaultPlan.parse(list(faults), hold_s=fault_hold_s)
        latency = _latency_dict(latency_ms)
        limits: dict[str, RateLimit] = {}
        if exa_rps:
            limits["exa"] = RateLimit(exa_rps, 1.0)
        if writer_rpm:
            limits["writer"] = RateLimit(writer_rpm, 60.0)
        self.ctx = SandboxContext(
            pages=tuple(pages) if pages is not None else load_corpus(),
            seed=seed,
            faults=plan,
            latency_ms=dict(latency),
            stats=Stats(),
            api_keys={"exa": exa_key, "writer": writer_key},
            rate_limits=limits,
            verbose=verbose,
        )
        search.warm(self.ctx.pages)
        cls = _SandboxHTTPServer6 if ":" in self.host else _SandboxHTTPServer
        self._httpd = cls((self.host, port), self.ctx, latency)  # binds now: port errors surface here
        self.port = self._httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def wait_connections_done(self, count: int, timeout: float = 30.0) -> bool:
        """Whether ``count`` client connections have ended (their handling done, any error
        reported) within ``timeout`` seconds: a test awaits this instead of sleeping."""
        return self._httpd.wait_connections_done(count, timeout)

    def start(self) -> SandboxServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name="sandbox", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests held by latency or a timeout fault are released at once."""
        self.ctx.stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(
    port: int = DEFAULT_PORT,
    host: str = "127.0.0.1",
    *,
    on_ready: Callable[[SandboxServer], None] | None = None,
    **options: Any,
) -> None:
    """Run the sandbox until Ctrl-C (used by ``sourcedesk sandbox``); returns cleanly."""
    server = SandboxServer(port=port, host=host, **options)
    server.start()
    try:
        if on_ready is not None:
            on_ready(server)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
