"""HTTP for writer backends: one POST with retries, a total deadline and a size cap.

Retries, backoff and ``Retry-After`` come from ``sourcedesk.core.net.policy.WRITER_RETRY``;
one rate limiter per writer URL is shared by every concurrent section. A backend
supplies its path, its request body and how to read a JSON answer or an event
stream; everything else lives here:

- **A total deadline** (``writer_deadline_s``) for the whole call, retries and the
  pauses between them included. A JSON answer is read as one bounded job
  (``sourcedesk.core.net.bounded``); an event stream is read as it arrives
  (``sourcedesk.core.writing.events``), and the same deadline covers the whole stream.
  A server that stalls or trickles ends inside it, with a message saying which
  (``writer_timeout_s`` still bounds each read).
- **A size cap** (``writer_max_response_bytes``), counted on the body decoded: reading
  stops at the cap, and an announced length over it is refused before any of the body
  is read; a backend's parser also refuses an answer whose text is longer than a note
  may hold (``writer_max_answer_chars``). Either is an answer, not an accident: the
  section fails (kind ``too_large``) without a retry and keeps its note.
- **What an answer means** — its error in the analyst's words, its JSON — is
  ``sourcedesk.core.writing.replies``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

import httpx
from httpx_sse import ServerSentEvent
from pydantic import SecretStr

from sourcedesk.core.net.bounded import ResponseTooLarge, fetch_bounded, open_bounded, read_bounded
from sourcedesk.core.net.deadline import Deadline, DeadlineExceeded, current_deadline, until
from sourcedesk.core.net.decoding import UndecodableBody
from sourcedesk.core.net.policy import WRITER_RETRY, RetryOutcome, RetryPolicy, send_with_retries, shared_limiter
from sourcedesk.core.text.secrets import MIN_SECRET_LEN, secret_values
from sourcedesk.core.writing.base import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_ANSWER_CHARS,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT_S,
    TextCallback,
    WriteRequest,
    WriterError,
    WriterResponse,
)
from sourcedesk.core.writing.events import StreamProgress, deadline_note, is_event_stream, sse_events
from sourcedesk.core.writing.replies import (
    CAP_SETTING,
    WHAT,
    Scrubber,
    decode_answer,
    error_for,
    transport_error,
)

__all__ = ["HttpWriter"]

CALL_DEADLINE = "the writer call (writer_deadline_s)"
# The reads inside a call end this long before the call's deadline, so that the
# message can still say why (stalled, trickling, how much arrived) before the
# deadline itself cuts everything off.
_MARGIN_S = 0.2


class _OutOfTime(Exception):
    """A read used up what was left of the call's deadline (not retried: no time is left)."""


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
                raise _OutOfTime(f"{exc}{deadline_note()}") from None

        try:
            outcome: RetryOutcome = await send_with_retries(
                send, self.retry, limiter=limiter, rng=self._rng, sleep=self._sleep
            )
        except ResponseTooLarge as exc:  # an answer, not an accident: no retry
            raise WriterError("too_large", None, str(exc), requests=tried) from None
        except _OutOfTime as exc:
            after = f" (after {tried} attempts)" if tried > 1 else ""
            raise WriterError("timeout", None, f"{exc}{after}", requests=tried) from None
        except UndecodableBody as exc:  # an answer, not an accident: no retry
            raise WriterError(
                "malformed", None, f"the writer's answer could not be read: {exc}", requests=tried
            ) from None
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
        except UndecodableBody as exc:
            raise WriterError(
                "malformed", 200, f"the writer's stream could not be read: {exc}", requests=attempts
            ) from None
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
