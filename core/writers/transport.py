"""HTTP for writer backends: one POST with retries, errors worded for the analyst, SSE framing.

Retries, backoff and ``Retry-After`` come from ``core.http_policy.WRITER_RETRY``;
one rate limiter per writer URL is shared by every concurrent section. Error
messages never contain the key, request headers or the prompt. A backend
supplies its path, its request body and how to read a JSON answer or an event
stream; everything else lives here.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

import httpx
from httpx_sse import EventSource, ServerSentEvent
from pydantic import SecretStr

from core.http_policy import WRITER_RETRY, RetryOutcome, RetryPolicy, send_with_retries, shared_limiter
from core.writers.base import ErrorKind, TextCallback, WriteRequest, WriterError, WriterResponse

_MAX_MESSAGE = 300
_HTML_RE = re.compile(r"^\s*(<!doctype\s+html|<html|<head|<body)", re.IGNORECASE)
_BEARER_RE = re.compile(r"Bearer\s+\S+", re.IGNORECASE)


class Scrubber:
    """Removes the key (and anything bearer-shaped) from text that came from a server; one line, bounded."""

    def __init__(self, key: str | None):
        self.key = key

    def __call__(self, text: str) -> str:
        if self.key:
            text = text.replace(self.key, "***")
        text = _BEARER_RE.sub("Bearer ***", text)
        text = " ".join(text.split())
        return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def is_html(response: httpx.Response, body: str) -> bool:
    ctype = response.headers.get("content-type", "").lower()
    return "text/html" in ctype or bool(_HTML_RE.match(body))


def error_message(data: Any) -> str | None:
    """The server's own sentence from an ``{"error": {message, param}}``-style body, if any."""
    if not isinstance(data, dict):
        return None
    err = data.get("error", data)
    if isinstance(err, str):
        return err
    if isinstance(err, dict):
        for key in ("message", "detail", "error", "type"):
            if isinstance(err.get(key), str) and err[key].strip():
                text: str = err[key]
                param = err.get("param")
                if isinstance(param, str) and param.strip() and param not in text:
                    text += f" (field: {param})"
                return text
    detail = data.get("detail")
    return detail if isinstance(detail, str) else None


def _json_error_message(body: str) -> str | None:
    try:
        return error_message(json.loads(body))
    except (json.JSONDecodeError, ValueError):
        return None


# status → (kind, what the analyst reads); "{d}" is the server's own message, if any.
_CLIENT_ERRORS: dict[int, tuple[ErrorKind, str]] = {
    401: ("auth", "the writer rejected the API key (HTTP 401){d}"),
    402: ("payment", "the writer refused for billing reasons (HTTP 402){d}"),
    403: ("forbidden", "the writer refused the request (HTTP 403){d}"),
    404: ("not_found", "the writer URL answered HTTP 404{d} — check SOURCEDESK_WRITER_URL"),
    408: ("timeout", "the writer timed out the request (HTTP 408){d}"),
    413: ("bad_request", "the request was too large for the writer (HTTP 413){d}"),
    429: ("rate_limited", "the writer is rate limiting requests (HTTP 429){d}"),
}


def error_for(response: httpx.Response, body: str, attempts: int, scrub: Scrubber) -> WriterError:
    status = response.status_code
    html = is_html(response, body)
    detail = None if html else (_json_error_message(body) or body.strip() or None)
    d = f": {scrub(detail)}" if detail else ""
    after = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
    if status in _CLIENT_ERRORS:
        kind, text = _CLIENT_ERRORS[status]
        return WriterError(kind, status, text.format(d=d) + after, requests=attempts)
    if status >= 500 or status == 409:
        text = f"HTTP {status} from writer gateway (HTML page)" if html else f"HTTP {status} from writer{d}"
        return WriterError("server", status, text + after, requests=attempts)
    if 400 <= status < 500:
        what = "an HTML page" if html else (d[2:] or "no details")
        return WriterError(
            "bad_request", status, f"the writer rejected the request (HTTP {status}): {what}", requests=attempts
        )
    return WriterError("malformed", status, f"unexpected HTTP {status} from the writer", requests=attempts)


def transport_error(exc: Exception, attempts: int, timeout: float, url: str) -> WriterError:
    after = f" (after {attempts} attempts)" if attempts > 1 else ""
    if isinstance(exc, httpx.TimeoutException):
        return WriterError("timeout", None, f"the writer did not answer within {timeout:g} s{after}", requests=attempts)
    return WriterError(
        "network", None, f"could not reach the writer at {url}: {type(exc).__name__}{after}", requests=attempts
    )


class _Terminated(httpx.AsyncByteStream):
    """The response body followed by one blank line, so an event the server ended
    without its closing blank line is still dispatched (the data line is complete)."""

    def __init__(self, response: httpx.Response):
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._response.aiter_bytes():
            yield chunk
        yield b"\n\n"

    async def aclose(self) -> None:
        await self._response.aclose()


def sse_events(response: httpx.Response) -> AsyncIterator[ServerSentEvent]:
    """The stream's events (httpx-sse): blank keep-alive lines and ``:`` comments yield nothing."""
    charset = response.charset_encoding or "utf-8"
    framed = httpx.Response(
        response.status_code,
        headers={"content-type": f"text/event-stream; charset={charset}"},
        stream=_Terminated(response),
        request=response.request,
    )
    return EventSource(framed).aiter_sse()


def is_event_stream(response: httpx.Response) -> bool:
    """A server asked to stream may still answer with plain JSON (or an HTML page)."""
    ctype = response.headers.get("content-type", "").lower()
    return "application/json" not in ctype and "text/html" not in ctype


class StreamProgress:
    """How much text a stream delivered, for the message when it breaks off."""

    chars: int = 0


class HttpWriter:
    """A writer backend over HTTP POST; subclasses say where, what to send and how to read."""

    api: ClassVar[str]
    label: ClassVar[str]
    key_name: ClassVar[str] = "PERPLEXITY_API_KEY"
    searches_web: ClassVar[bool] = False
    has_presets: ClassVar[bool] = False
    needs_key: ClassVar[bool] = True
    default_model: ClassVar[str | None] = None
    path: ClassVar[str]

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr | str | None,
        *,
        model: str | None = None,
        http: httpx.AsyncClient | None = None,
        timeout: float = 120,
        retry: RetryPolicy = WRITER_RETRY,
        requests_per_minute: float | None = 50,
        stream: bool = False,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + self.path
        if isinstance(api_key, str):
            api_key = SecretStr(api_key)
        if api_key is not None and not api_key.get_secret_value().strip():
            api_key = None  # KEY= (set but blank) is a missing key, not a key
        self._key = api_key
        chosen = model or self.default_model
        if not chosen:
            raise ValueError(f"{self.label} needs a model: set writer.model in memo.yaml or the writer_model setting")
        self.model: str = chosen
        self.timeout = float(timeout)
        self.retry = retry
        self.requests_per_minute = requests_per_minute
        self.stream = stream
        self._http = http
        self._sleep = sleep
        self._rng = rng

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}(url={self.url!r}, model={self.model!r}, stream={self.stream})"

    def describe(self, request: WriteRequest | None = None) -> str:
        return f"{self.label} ({self.model})"

    # -- what a backend supplies

    def request_body(self, request: WriteRequest) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, data: Any, *, requests: int, request: WriteRequest) -> WriterResponse:
        raise NotImplementedError

    async def fold_stream(
        self,
        events: AsyncIterator[ServerSentEvent],
        *,
        requests: int,
        request: WriteRequest,
        on_text: TextCallback | None,
        progress: StreamProgress,
        scrub: Scrubber,
    ) -> WriterResponse:
        raise NotImplementedError

    # -- the call

    def _headers(self, streaming: bool) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream" if streaming else "application/json",
        }
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        return headers

    async def write(self, request: WriteRequest, *, on_text: TextCallback | None = None) -> WriterResponse:
        """One section's answer. ``on_text`` (streaming only) sees the text so far."""
        if self._key is None and self.needs_key:
            raise WriterError("auth", None, f"no API key for the writer — set {self.key_name}", requests=0)
        body = self.request_body(request)
        if self._http is not None:
            return await self._write(self._http, body, request, on_text)
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            return await self._write(client, body, request, on_text)

    async def _write(
        self, client: httpx.AsyncClient, body: dict[str, Any], request: WriteRequest, on_text: TextCallback | None
    ) -> WriterResponse:
        scrub = Scrubber(self._key.get_secret_value() if self._key else None)
        rpm = self.requests_per_minute
        limiter = shared_limiter(self.url, rpm, 60.0, burst=max(int(rpm) - 1, 1)) if rpm else None
        streaming = bool(body.get("stream"))
        headers = self._headers(streaming)
        timeout = httpx.Timeout(self.timeout)

        async def send() -> httpx.Response:
            built = client.build_request("POST", self.url, json=body, headers=headers, timeout=timeout)
            return await client.send(built, stream=streaming)

        try:
            outcome: RetryOutcome = await send_with_retries(
                send, self.retry, limiter=limiter, rng=self._rng, sleep=self._sleep
            )
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # not transient: bad URL, unsupported protocol, ...
            raise transport_error(exc, 1, self.timeout, self.url) from None
        attempts = outcome.requests
        response = outcome.response
        if response is None:
            raise transport_error(outcome.error or httpx.NetworkError("no response"), attempts, self.timeout, self.url)
        try:
            if response.status_code != 200 or not streaming or not is_event_stream(response):
                text = await _read_text(response, attempts, self.timeout, self.url)
                if response.status_code != 200:
                    raise error_for(response, text, attempts, scrub)
                return self._parse_text(response, text, attempts, request, scrub)
            progress = StreamProgress()
            try:
                return await self.fold_stream(
                    sse_events(response),
                    requests=attempts,
                    request=request,
                    on_text=on_text,
                    progress=progress,
                    scrub=scrub,
                )
            except httpx.TimeoutException:
                message = f"the writer's stream stalled after {progress.chars} characters"
                raise WriterError("timeout", None, message, requests=attempts) from None
            except httpx.HTTPError as exc:
                message = f"the writer's stream broke off after {progress.chars} characters: {type(exc).__name__}"
                raise WriterError("network", None, message, requests=attempts) from None
        finally:
            await response.aclose()

    def _parse_text(
        self, response: httpx.Response, text: str, attempts: int, request: WriteRequest, scrub: Scrubber
    ) -> WriterResponse:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, ValueError):
            what = "an HTML page" if is_html(response, text) else "not JSON"
            raise WriterError(
                "malformed", 200, f"the writer's answer (HTTP 200) is {what}", requests=attempts
            ) from None
        try:
            return self.parse(data, requests=attempts, request=request)
        except WriterError as exc:
            exc.message = scrub(exc.message)
            exc.args = (exc.message,)
            raise


async def _read_text(response: httpx.Response, attempts: int, timeout: float, url: str) -> str:
    try:
        raw = await response.aread()
    except httpx.HTTPError as exc:
        raise transport_error(exc, attempts, timeout, url) from None
    return raw.decode(response.encoding or "utf-8", errors="replace")
