"""The sandbox's request/response vocabulary, shared by the server and both API halves.

Handlers are plain functions ``handle(req, ctx) -> Reply`` so that each API half can
be written (and tested) without knowing anything about sockets; the server owns the
wire, latency, faults, rate limits and the request counters.
"""

from __future__ import annotations

import hmac
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.sandbox.corpus import Page
    from sourcedesk.sandbox.faults import FaultPlan

SERVICES = ("exa", "writer")


@dataclass
class Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    # When set, chunks are written and flushed one by one (SSE); ``body`` is ignored and
    # the response goes out without Content-Length, closing the connection at the end.
    stream: Iterable[bytes] | None = None


def json_reply(status: int, obj: Any, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps(obj, ensure_ascii=False).encode("utf-8")
    return Reply(status, body, {"Content-Type": "application/json", **(headers or {})})


def html_reply(status: int, html: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, html.encode("utf-8"), {"Content-Type": "text/html; charset=utf-8", **(headers or {})})


def request_id() -> str:
    """An Exa-style request id (32 hex digits)."""
    return uuid.uuid4().hex


def service_error(
    service: str,
    status: int,
    message: str,
    *,
    tag: str | None = None,
    kind: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An error body in the shape the named service really uses.

    Exa: ``{"requestId", "error", "tag"}``; Perplexity (writer):
    ``{"error": {"message", "type", "code"}}``.
    """
    body: dict[str, object]
    if service == "exa":
        body = {"requestId": request_id(), "error": message, "tag": tag or "INTERNAL_ERROR"}
    else:
        body = {"error": {"message": message, "type": kind or (tag or "error").lower(), "code": status}}
    return json_reply(status, body, headers)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]  # lower-case keys
    body: bytes
    query: dict[str, str]

    def json(self) -> Any:
        """The body as JSON; ValueError (with a short reason) when it is not."""
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"request body is not valid JSON ({exc})") from None


class Stats:
    """Thread-safe request counters per service: total requests and replies by status."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[str, int] = {}
        self._by_status: dict[str, dict[int, int]] = {}

    def begin(self, service: str) -> None:
        """Count a request on arrival (so a request held by a timeout fault is already counted)."""
        with self._lock:
            self._requests[service] = self._requests.get(service, 0) + 1

    def finish(self, service: str, status: int) -> None:
        with self._lock:
            statuses = self._by_status.setdefault(service, {})
            statuses[status] = statuses.get(status, 0) + 1

    def count(self, service: str, status: int | None = None) -> int:
        with self._lock:
            if status is None:
                return self._requests.get(service, 0)
            return self._by_status.get(service, {}).get(status, 0)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            names = sorted(set(SERVICES) | set(self._requests) | set(self._by_status))
            return {
                name: {
                    "requests": self._requests.get(name, 0),
                    "by_status": {str(k): v for k, v in sorted(self._by_status.get(name, {}).items())},
                }
                for name in names
            }

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._by_status.clear()


class RateLimit:
    """A token bucket of ``limit`` requests refilled at ``limit`` per ``window_s``, counted
    on arrival: "10 requests/s" admits a burst of ten, then one every 100 ms. Refused
    requests take no token. Arrivals may be stamped slightly out of order by concurrent
    handler threads; an earlier stamp than the last one counts as arriving at the last.
    """

    def __init__(self, limit: int, window_s: float = 1.0) -> None:
        if limit < 1:
            raise ValueError("a rate limit must allow at least one request per window")
        self.limit = limit
        self.window_s = window_s
        self._tokens = float(limit)
        self._updated: float | None = None
        self._lock = threading.Lock()

    def allow(self, now: float | None = None) -> bool:
        """Admit (and count) a request that arrived at ``now`` (``time.monotonic()``), or refuse it."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if self._updated is not None and now > self._updated:
                self._tokens = min(float(self.limit), self._tokens + (now - self._updated) * self.limit / self.window_s)
            if self._updated is None or now > self._updated:
                self._updated = now
            if self._tokens < 1.0 - 1e-9:
                return False
            self._tokens -= 1.0
            return True

    def reset(self) -> None:
        with self._lock:
            self._tokens = float(self.limit)
            self._updated = None


@dataclass
class SandboxContext:
    pages: tuple[Page, ...]
    seed: int
    faults: FaultPlan
    latency_ms: dict[str, int]  # keys "exa", "writer"
    stats: Stats
    api_keys: dict[str, str | None]  # expected key per service; None = any non-empty key
    rate_limits: dict[str, RateLimit] = field(default_factory=dict)  # per service, enforced by the server
    stopping: threading.Event = field(default_factory=threading.Event)  # set when the server stops
    verbose: bool = False
    # How the server waits out injected latency and a held fault; None: real time, cut short when
    # the server stops. A test hands in its own to see each wait, hold it, or skip it.
    waiter: Callable[[float], object] | None = None

    def wait(self, seconds: float) -> None:
        """Wait ``seconds`` (latency to inject, a fault to hold) the way ``waiter`` says."""
        if self.waiter is not None:
            self.waiter(seconds)
        else:
            self.stopping.wait(seconds)


def bearer_or_api_key(req: Request) -> str | None:
    """The key a client sent, from ``Authorization: Bearer K`` or ``x-api-key: K``."""
    auth = req.headers.get("authorization", "").strip()
    if auth[:7].lower() == "bearer ":
        key = auth[7:].strip()
        if key:
            return key
    key = req.headers.get("x-api-key", "").strip()
    return key or None


def key_accepted(sent: str | None, expected: str | None) -> bool:
    if not sent:
        return False
    return expected is None or hmac.compare_digest(sent.encode(), expected.encode())
