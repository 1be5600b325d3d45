"""HTTP for writer backends: one POST with retries, a total deadline and a size cap, errors worded for the analyst.

Retries, backoff and ``Retry-After`` come from ``sourcedesk.core.net.policy.WRITER_RETRY``;
one rate limiter per writer URL is shared by every concurrent section. A backend
supplies its path, its request body and how to read a JSON answer or an event
stream; everything else lives here:

- **A total deadline** (``writer_deadline_s``) for the whole call, retries and the
  pauses between them included. A JSON answer is read as one bounded job
  (``sourcedesk.core.net.bounded``); an event stream is read as it arrives, and the same
  deadline covers the whole stream. A server that stalls or trickles ends inside
  it, with a message saying which (``writer_timeout_s`` still bounds each read).
- **A size cap** (``writer_max_response_bytes``): reading stops at the cap, and an
  announced length over it is refused before any of the body is read; a
  backend's parser also refuses an answer whose text is longer than a note may
  hold (``writer_max_answer_chars``). Either is an answer, not an accident: the
  section fails (kind ``too_large``) without a retry and keeps its note.
- **Malformed bodies** (empty, an HTML page, not UTF-8, truncated JSON, not JSON)
  are named as such; nothing is decoded with replacement characters and passed
  on as content.
- **Error messages** never contain the key, request headers or the prompt; a
  server's own words in them are cleaned like every other outside text.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx
import orjson
from httpx_sse import EventSource, ServerSentEvent
from pydantic import SecretStr

from sourcedesk.core.net.bounded import (
    ResponseTooLarge,
    declared_length,
    describe_seconds,
    fetch_bounded,
    open_bounded,
    read_bounded,
    too_large,
)
from sourcedesk.core.net.deadline import Deadline, DeadlineExceeded, current_deadline, until
from sourcedesk.core.net.policy import (
    WRITER_RETRY,
    RetryOutcome,
    RetryPolicy,
    retry_after_note,
    send_with_retries,
    shared_limiter,
)
from sourcedesk.core.text.safety import clean_text
from sourcedesk.core.text.secrets import MIN_SECRET_LEN, secret_values
from sourcedesk.core.writing.base import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_ANSWER_CHARS,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT_S,
    ErrorKind,
    TextCallback,
    WriteRequest,
    WriterError,
    WriterResponse,
)

_MAX_MESSAGE = 300
_HTML_RE = re.compile(rb"^\s*(<!doctype\s+html|<html|<head|<body)", re.IGNORECASE)
_BEARER_RE = re.compile(r"Bearer\s+\S+", re.IGNORECASE)

WHAT = "the writer"  # how bounded reads name the server in their messages
CAP_SETTING = "writer_max_response_bytes"
CHARS_SETTING = "writer_max_answer_chars"
CALL_DEADLINE = "the writer call (writer_deadline_s)"
# The reads inside a call end this long before the call's deadline, so that the
# message can still say why (stalled, trickling, how much arrived) before the
# deadline itself cuts everything off.
_MARGIN_S = 0.2


class _OutOfTime(Exception):
    """A read used up what was left of the call's deadline (not retried: no time is left)."""


class Scrubber:
    """Outside text for a message: cleaned (no control sequence, no key), one line, bounded."""

    def __init__(self, key: str | None):
        self.key = key
        self.secrets = [*([key] if key and len(key) >= MIN_SECRET_LEN else []), *secret_values()]

    def __call__(self, text: str) -> str:
        text = clean_text(text, secrets=self.secrets)
        text = _BEARER_RE.sub("Bearer [redacted]", text)
        text = " ".join(text.split())
        return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def is_html(response: httpx.Response, body: bytes | str) -> bool:
    ctype = response.headers.get("content-type", "").lower()
    start = body[:512].encode("utf-8", "replace") if isinstance(body, str) else body[:512]
    return "text/html" in ctype or bool(_HTML_RE.match(start))


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


def _detail(body: str) -> str | None:
    """The server's own words in an error body: its JSON error message, else its text
    (a JSON body without a message says nothing)."""
    try:
        return error_message(json.loads(body))
    except (ValueError, RecursionError):  # not JSON, or nested past what Python can read
        return body.strip() or None


def _charset(response: httpx.Response) -> str:
    """The declared charset if Python knows it, else UTF-8 (what JSON and SSE must be)."""
    declared = response.charset_encoding
    if declared:
        try:
            return codecs.lookup(declared).name
        except LookupError:
            pass
    return "utf-8"


def _shown(charset: str) -> str:
    return "UTF-8" if charset == "utf-8" else charset


def _error_body(response: httpx.Response) -> str | None:
    """An error answer's body as text; None when it is not text in its charset."""
    try:
        return response.content.decode(_charset(response))
    except UnicodeDecodeError:
        return None


def display_url(url: str) -> str:
    """A URL without credentials or query (someone may paste a key into a base URL)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


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


def error_for(
    response: httpx.Response,
    attempts: int,
    scrub: Scrubber,
    outcome: RetryOutcome | None = None,
    policy: RetryPolicy = WRITER_RETRY,
) -> WriterError:
    """The failure a non-200 answer means, in the analyst's words."""
    status = response.status_code
    body = _error_body(response)
    html = is_html(response, response.content)
    if body is None:
        detail: str | None = "a body that is not UTF-8 text"
    else:
        detail = None if html else _detail(body)
    d = f": {scrub(detail)}" if detail else ""
    after = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
    after += retry_after_note(outcome, policy)
    if 300 <= status < 400:
        location = response.headers.get("location", "")
        with contextlib.suppress(httpx.InvalidURL, ValueError):  # shown as sent when it does not resolve
            location = str(response.url.join(location)) if location else ""
        to = f" to {display_url(scrub(location))}" if location else ""
        return WriterError(
            "bad_request",
            status,
            f"the writer answered with a redirect (HTTP {status}{to}) instead of an answer — "
            "check SOURCEDESK_WRITER_URL",
            requests=attempts,
        )
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


def transport_error(
    exc: BaseException, attempts: int, timeout: float, url: str, outcome: RetryOutcome | None = None
) -> WriterError:
    after = f" (after {attempts} attempts)" if attempts > 1 else ""
    stopped = f"; {outcome.stopped}" if outcome is not None and outcome.stopped else ""
    if isinstance(exc, DeadlineExceeded):  # it already says which deadline ran out
        return WriterError("timeout", None, f"{exc}{after}", requests=attempts)
    if isinstance(exc, httpx.TimeoutException):
        return WriterError(
            "timeout",
            None,
            f"the writer did not answer within {timeout:g} s (writer_timeout_s){after}{stopped}",
            requests=attempts,
        )
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return WriterError(
            "network",
            None,
            f"the connection to the writer at {display_url(url)} broke off before the answer was complete "
            f"({type(exc).__name__}){after}{stopped}",
            requests=attempts,
        )
    return WriterError(
        "network",
        None,
        f"could not reach the writer at {display_url(url)}: {type(exc).__name__}{after}{stopped}",
        requests=attempts,
    )


def decode_answer(response: httpx.Response, attempts: int) -> Any:
    """A 200 answer's JSON, or a ``malformed`` WriterError naming what the body really is."""
    body = response.content
    status = response.status_code

    def malformed(what: str) -> WriterError:
        return WriterError(
            "malformed",
            status,
            f"the writer answered HTTP {status} with {what} instead of an answer",
            requests=attempts,
        )

    if not body.strip():
        raise malformed("an empty body")
    if is_html(response, body):
        raise malformed("an HTML page")
    charset = _charset(response)
    try:
        return orjson.loads(body if charset == "utf-8" else body.decode(charset))
    except UnicodeDecodeError:
        raise malformed(f"a body that is not {_shown(charset)} text") from None
    except orjson.JSONDecodeError:
        pass
    # Only a broken body gets here: find out how it is broken (the cost is no longer a concern).
    try:
        text = body.decode(charset)
    except UnicodeDecodeError as exc:
        raise malformed(f"a body that is not {_shown(charset)} text (byte {exc.start:,})") from None
    try:
        json.loads(text)
    except RecursionError:
        raise malformed("a JSON body nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise malformed(f"a truncated JSON body (it breaks off after {len(body):,} bytes)") from None
        raise malformed(f"a body that is not JSON ({exc.msg} at byte {exc.pos:,})") from None
    raise malformed("a body that is not JSON")  # orjson refused what json accepts (NaN, a lone surrogate)


# ---------------------------------------------------------------- server-sent events


class StreamProgress:
    """What a stream delivered so far, for the message when it breaks off or runs out of time."""

    def __init__(self) -> None:
        self.chars = 0  # answer text folded so far (set by the backend's fold)
        self.bytes = 0
        self.started = time.monotonic()
        self.last_at = self.started  # when the last bytes arrived

    def too_slow(self, seconds: float) -> str:
        """Why a stream did not finish within ``seconds``: stalled, or trickling in."""
        took = describe_seconds(seconds)
        now = time.monotonic()
        gap = now - self.last_at
        if self.bytes == 0:
            said = f"the writer's stream sent headers but no events within {took} (the stream stalled)"
        elif gap >= min(10.0, 0.6 * (now - self.started)):  # silent for most of the time, or for long
            said = (
                f"the writer's stream stalled after {self.chars:,} characters: "
                f"nothing arrived for the last {describe_seconds(gap)}"
            )
        else:
            said = (
                f"the writer's stream was still trickling in after {took} ({self.bytes:,} bytes, "
                f"{self.chars:,} characters so far): the server sends too slowly"
            )
        return said + _deadline_note()


def _deadline_note() -> str:
    deadline = current_deadline()
    return f"; {deadline.what} ran out ({describe_seconds(deadline.seconds)})" if deadline is not None else ""


class _BoundedEventBytes(httpx.AsyncByteStream):
    """The response body, counted against the cap and checked to be text in its charset,
    followed by one blank line so an event the server ended without its closing blank
    line is still dispatched (the data line is complete)."""

    def __init__(self, response: httpx.Response, max_bytes: int, progress: StreamProgress):
        self._response = response
        self._max_bytes = max_bytes
        self._progress = progress

    async def __aiter__(self) -> AsyncIterator[bytes]:
        declared = declared_length(self._response)
        if declared is not None and declared > self._max_bytes:
            raise too_large(WHAT, self._max_bytes, declared, CAP_SETTING)
        charset = _charset(self._response)
        decoder = codecs.getincrementaldecoder(charset)("strict")
        progress = self._progress
        async for chunk in self._response.aiter_bytes():
            progress.bytes += len(chunk)
            progress.last_at = time.monotonic()
            if progress.bytes > self._max_bytes:
                raise too_large(WHAT, self._max_bytes, declared, CAP_SETTING)
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                raise WriterError("malformed", 200, f"the writer's stream is not {_shown(charset)} text") from None
            yield chunk
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise WriterError(
                "malformed", 200, f"the writer's stream ended inside a {_shown(charset)} character"
            ) from None
        yield b"\n\n"

    async def aclose(self) -> None:
        await self._response.aclose()


def sse_events(
    response: httpx.Response,
    *,
    max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    progress: StreamProgress | None = None,
) -> AsyncIterator[ServerSentEvent]:
    """The stream's events (httpx-sse), read under the size cap: blank keep-alive lines
    and ``:`` comments yield nothing."""
    framed = httpx.Response(
        response.status_code,
        headers={"content-type": f"text/event-stream; charset={_charset(response)}"},
        stream=_BoundedEventBytes(response, max_bytes, progress or StreamProgress()),
        request=response.request,
    )
    return EventSource(framed).aiter_sse()


def is_event_stream(response: httpx.Response) -> bool:
    """A server asked to stream may still answer with plain JSON (or an HTML page)."""
    ctype = response.headers.get("content-type", "").lower()
    return "application/json" not in ctype and "text/html" not in ctype


def answer_too_long(chars: int, limit: int, requests: int = 0, *, streaming: bool = False) -> WriterError:
    """An answer whose text is longer than a note may hold (``streaming``: it was still arriving)."""
    held = f"{chars:,} characters had arrived" if streaming else f"it holds {chars:,}"
    return WriterError(
        "too_large",
        200,
        f"the writer's answer is longer than the {limit:,} characters a note may hold ({CHARS_SETTING}; "
        f"{held}); it was not written",
        requests=requests,
    )


# ---------------------------------------------------------------- the backend base class


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
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy = WRITER_RETRY,
        requests_per_minute: float | None = 50,
        stream: bool = False,
        deadline_s: float = DEFAULT_DEADLINE_S,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
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
        self.timeout = float(timeout)  # per read
        self.deadline_s = float(deadline_s)  # the whole call
        self.max_response_bytes = int(max_response_bytes)
        self.max_answer_chars = int(max_answer_chars)
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

    def secrets(self) -> list[str]:
        """Every key a server might echo back: this writer's own and every known one
        (one shorter than a real key is left alone: it would redact ordinary words)."""
        own = self._key.get_secret_value() if self._key is not None else None
        return [*([own] if own and len(own) >= MIN_SECRET_LEN else []), *secret_values()]

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

    def _time_left(self) -> float:
        """Seconds the next read may take: what is left of the deadline in force, less a margin."""
        deadline = current_deadline()
        left = self.deadline_s if deadline is None else deadline.remaining - _MARGIN_S
        return max(0.0, left)

    async def write(self, request: WriteRequest, *, on_text: TextCallback | None = None) -> WriterResponse:
        """One section's answer. ``on_text`` (streaming only) sees the cleaned text so far."""
        if self._key is None and self.needs_key:
            raise WriterError("auth", None, f"no API key for the writer — set {self.key_name}", requests=0)
        body = self.request_body(request)
        deadline = Deadline(self.deadline_s, CALL_DEADLINE)
        try:
            if self._http is not None:
                return await until(self._write(self._http, body, request, on_text), deadline)
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                return await until(self._write(client, body, request, on_text), deadline)
        except DeadlineExceeded as exc:  # only if no read explained itself first
            raise WriterError("timeout", None, f"{exc}: the writer stalled or sent too slowly") from None

    async def _write(
        self, client: httpx.AsyncClient, body: dict[str, Any], request: WriteRequest, on_text: TextCallback | None
    ) -> WriterResponse:
        scrub = Scrubber(self._key.get_secret_value() if self._key else None)
        rpm = self.requests_per_minute
        limiter = shared_limiter(self.url, rpm, 60.0, burst=max(int(rpm) - 1, 1)) if rpm else None
        streaming = bool(body.get("stream"))
        headers = self._headers(streaming)
        timeout = httpx.Timeout(self.timeout)
        tried = 0

        async def send() -> httpx.Response:
            nonlocal tried
            tried += 1
            built = client.build_request("POST", self.url, json=body, headers=headers, timeout=timeout)
            try:
                if not streaming:
                    return await fetch_bounded(
                        client,
                        built,
                        seconds=self._time_left(),
                        max_bytes=self.max_response_bytes,
                        what=WHAT,
                        setting=CAP_SETTING,
                    )
                response = await open_bounded(client, built, seconds=self._time_left(), what=WHAT)
                if response.status_code == 200 and is_event_stream(response):
                    return response  # read event by event below
                return await read_bounded(
                    response,
                    seconds=self._time_left(),
                    max_bytes=self.max_response_bytes,
                    what=WHAT,
                    setting=CAP_SETTING,
                )
            except DeadlineExceeded as exc:
                # This read had all the time the call had left: there is none for a retry.
                raise _OutOfTime(f"{exc}{_deadline_note()}") from None

        try:
            outcome: RetryOutcome = await send_with_retries(
                send, self.retry, limiter=limiter, rng=self._rng, sleep=self._sleep
            )
        except ResponseTooLarge as exc:  # an answer, not an accident: no retry
            raise WriterError("too_large", None, str(exc), requests=tried) from None
        except _OutOfTime as exc:
            after = f" (after {tried} attempts)" if tried > 1 else ""
            raise WriterError("timeout", None, f"{exc}{after}", requests=tried) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # not transient: bad URL, unsupported protocol, ...
            raise transport_error(exc, max(tried, 1), self.timeout, self.url) from None
        attempts = outcome.requests
        response = outcome.response
        if response is None:
            error = outcome.error or httpx.NetworkError("no response")
            raise transport_error(error, attempts, self.timeout, self.url, outcome)
        try:
            if response.status_code != 200:
                raise error_for(response, attempts, scrub, outcome, self.retry)
            if not (streaming and is_event_stream(response)):
                return self._parse_answer(decode_answer(response, attempts), attempts, request, scrub)
            return await self._read_stream(response, attempts, request, on_text, scrub)
        finally:
            await response.aclose()

    async def _read_stream(
        self,
        response: httpx.Response,
        attempts: int,
        request: WriteRequest,
        on_text: TextCallback | None,
        scrub: Scrubber,
    ) -> WriterResponse:
        progress = StreamProgress()
        events = sse_events(response, max_bytes=self.max_response_bytes, progress=progress)
        seconds = self._time_left()
        timeout = asyncio.timeout(seconds)
        try:
            async with timeout:
                return await self.fold_stream(
                    events, requests=attempts, request=request, on_text=on_text, progress=progress, scrub=scrub
                )
        except TimeoutError:
            if not timeout.expired():
                raise
            raise WriterError("timeout", None, progress.too_slow(seconds), requests=attempts) from None
        except WriterError as exc:
            raise WriterError(exc.kind, exc.status, scrub(exc.message), requests=attempts) from None
        except ResponseTooLarge as exc:
            raise WriterError("too_large", 200, str(exc), requests=attempts) from None
        except httpx.TimeoutException:
            message = (
                f"the writer's stream stalled after {progress.chars:,} characters: "
                f"nothing arrived for {self.timeout:g} s (writer_timeout_s)"
            )
            raise WriterError("timeout", None, message, requests=attempts) from None
        except httpx.HTTPError as exc:
            message = f"the writer's stream broke off after {progress.chars:,} characters: {type(exc).__name__}"
            raise WriterError("network", None, message, requests=attempts) from None

    def _parse_answer(self, data: Any, attempts: int, request: WriteRequest, scrub: Scrubber) -> WriterResponse:
        try:
            return self.parse(data, requests=attempts, request=request)
        except WriterError as exc:
            exc.message = scrub(exc.message)
            exc.args = (exc.message,)
            raise
