"""The writer client: Perplexity chat completions or any OpenAI-compatible endpoint.

It reads *everything* the response carries, not just the text: the field
pipelines threw away ``search_results`` — the documents the writer actually
retrieved — and were left reconciling citations against nothing. Those, the
``citations`` list (synthesised into minimal search results when it is all a
server sends), ``usage`` and its cost, and the full raw body (for the store)
all come back in :class:`WriterResponse`.

Flavours:

- ``perplexity`` sends ``search_domain_filter`` (see :func:`domain_filter_for`)
  and ``disable_search: true`` for strict sections;
- ``openai`` sends neither. An OpenAI-compatible model has no web search of its
  own, so its only citable material is the retrieved set: build its prompt
  with ``web_search=False`` and expect ``search_results`` to be empty.

Failures become :class:`WriterError` with a ``kind`` the pipeline can act on
and a message an analyst can read; messages never contain the key, request
headers or the prompt. Retries, backoff and ``Retry-After`` come from
``core.http_policy.WRITER_RETRY``; one rate limiter per writer URL is shared by
every concurrent section.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import httpx
from pydantic import SecretStr

from core.http_policy import WRITER_RETRY, RetryOutcome, RetryPolicy, send_with_retries, shared_limiter
from core.prompt import Prompt
from core.urls import host_of, strip_www
from core.writer_stream import (  # noqa: F401 - WriterResponse and SEARCH_RESULT_FIELDS are re-exported
    SEARCH_RESULT_FIELDS,
    AnswerError,
    SSEDecoder,
    StreamAccumulator,
    WriterResponse,
    read_completion,
)

Flavor = Literal["perplexity", "openai"]
ErrorKind = Literal[
    "auth",
    "bad_request",
    "payment",
    "forbidden",
    "not_found",
    "rate_limited",
    "server",
    "timeout",
    "network",
    "malformed",
]
DOMAIN_FILTER_CAP = 20  # Perplexity's documented maximum; the product setting is writer_domain_filter_cap
_MAX_MESSAGE = 300


class WriterError(Exception):
    """The writer call failed; ``str()`` is a message fit for the analyst."""

    def __init__(self, kind: ErrorKind, status: int | None, message: str, *, requests: int = 0):
        self.kind = kind
        self.status = status
        self.message = message
        self.requests = requests
        super().__init__(message)

    def __repr__(self) -> str:
        return f"WriterError(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"


# ---------------------------------------------------------------- search_domain_filter


def _filter_domain(entry: str) -> str | None:
    """``https://www.Nats.io/x`` → ``nats.io``; None when there is no usable host."""
    raw = entry.strip().lstrip("-").strip()
    host = host_of(raw) if raw else None
    if not host or "." not in host:
        return None
    return strip_www(host)


def domain_filter_for(pins: list[str], rejects: list[str], *, cap: int = DOMAIN_FILTER_CAP) -> list[str]:
    """The writer's ``search_domain_filter``: all allow or all ``-``deny, never mixed.

    - Pinned to an entity: the pinned domains, as an allow-list (first ``cap``).
    - Otherwise: the rejected domains as a deny-list. Pass ``rejects`` most
      relevant first (the memo's rejections newest first, then the global
      ones newest first): entries past ``cap`` are dropped from the end, i.e.
      the oldest global rejections go first. The writer's filter is only the
      first line of defence; every rejection is still enforced on retrieval
      results and should be on the writer's ``search_results``.
    - ``[]`` when nothing applies (no filter is sent).

    Mixing is refused by the API (HTTP 400), so pins win outright.
    """
    cap = max(int(cap), 0)

    def unique(entries: list[str]) -> list[str]:
        out: list[str] = []
        for e in entries:
            d = _filter_domain(e)
            if d and d not in out:
                out.append(d)
        return out[:cap]

    allowed = unique(pins)
    if allowed:
        return allowed
    return ["-" + d for d in unique(rejects)]


# ---------------------------------------------------------------- response parsing


def parse_completion(data: Any, *, model: str = "", requests: int = 1) -> WriterResponse:
    """A chat-completions body as a :class:`WriterResponse`; WriterError("malformed") if unusable."""
    try:
        return read_completion(data, model=model, requests=requests)
    except AnswerError as exc:
        kind: ErrorKind = "server" if exc.kind == "server" else "malformed"
        raise WriterError(kind, 200, str(exc), requests=requests) from None


# ---------------------------------------------------------------- error classification

_HTML_RE = re.compile(r"^\s*(<!doctype\s+html|<html|<head|<body)", re.IGNORECASE)
_BEARER_RE = re.compile(r"Bearer\s+\S+", re.IGNORECASE)


def _is_html(response: httpx.Response, body: str) -> bool:
    ctype = response.headers.get("content-type", "").lower()
    return "text/html" in ctype or bool(_HTML_RE.match(body))


def _json_error_message(body: str) -> str | None:
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    err = data.get("error", data)
    if isinstance(err, str):
        return err
    if isinstance(err, dict):
        for key in ("message", "detail", "error", "type"):
            if isinstance(err.get(key), str) and err[key].strip():
                return err[key]
    if isinstance(data.get("detail"), str):
        return data["detail"]
    return None


class _Scrubber:
    """Removes the key (and anything bearer-shaped) from text that came from a server."""

    def __init__(self, key: str | None):
        self.key = key

    def __call__(self, text: str) -> str:
        if self.key:
            text = text.replace(self.key, "***")
        text = _BEARER_RE.sub("Bearer ***", text)
        text = " ".join(text.split())
        return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


# status → (kind, what the analyst reads); "{d}" is the server's own message, if any.
_CLIENT_ERRORS: dict[int, tuple[ErrorKind, str]] = {
    401: ("auth", "the writer rejected the API key (HTTP 401){d}"),
    402: ("payment", "the writer refused for billing reasons (HTTP 402){d}"),
    403: ("forbidden", "the writer refused the request (HTTP 403){d}"),
    404: ("not_found", "the writer URL answered HTTP 404{d} — check SOURCEDESK_WRITER_URL"),
    408: ("timeout", "the writer timed out the request (HTTP 408){d}"),
    429: ("rate_limited", "the writer is rate limiting requests (HTTP 429){d}"),
}


def _error_for(response: httpx.Response, body: str, attempts: int, scrub: _Scrubber) -> WriterError:
    status = response.status_code
    html = _is_html(response, body)
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
        text = f"the writer rejected the request (HTTP {status}): {what}"
        return WriterError("bad_request", status, text, requests=attempts)
    return WriterError("malformed", status, f"unexpected HTTP {status} from the writer", requests=attempts)


def _transport_error(exc: Exception, attempts: int, timeout: float, url: str) -> WriterError:
    after = f" (after {attempts} attempts)" if attempts > 1 else ""
    if isinstance(exc, httpx.TimeoutException):
        text = f"the writer did not answer within {timeout:g} s{after}"
        return WriterError("timeout", None, text, requests=attempts)
    return WriterError(
        "network", None, f"could not reach the writer at {url}: {type(exc).__name__}{after}", requests=attempts
    )


# ---------------------------------------------------------------- the client


class WriterClient:
    """One writer endpoint. Safe to share between concurrent sections."""

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr | str | None,
        *,
        model: str = "sonar-pro",
        flavor: Flavor = "perplexity",
        http: httpx.AsyncClient | None = None,
        timeout: float = 120,
        retry: RetryPolicy = WRITER_RETRY,
        requests_per_minute: float | None = 50,
        stream: bool = False,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ):
        if flavor not in ("perplexity", "openai"):
            raise ValueError(f"unknown writer flavour {flavor!r}; expected 'perplexity' or 'openai'")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        if isinstance(api_key, str):
            api_key = SecretStr(api_key)
        if api_key is not None and not api_key.get_secret_value().strip():
            api_key = None  # PERPLEXITY_API_KEY= (set but blank) is a missing key, not a key
        self._key = api_key
        self.model = model
        self.flavor: Flavor = flavor
        self.timeout = float(timeout)
        self.retry = retry
        self.requests_per_minute = requests_per_minute
        self.stream = stream
        self._http = http
        self._sleep = sleep
        self._rng = rng

    def __repr__(self) -> str:  # never the key
        return f"WriterClient(url={self.url!r}, model={self.model!r}, flavor={self.flavor!r}, stream={self.stream})"

    # -- request

    def request_body(
        self,
        prompt: Prompt,
        *,
        web_search: bool = True,
        domain_filter: list[str] | None = None,
        temperature: float | None = None,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
        }
        if temperature is not None:
            body["temperature"] = temperature
        if self.flavor == "perplexity":
            if not web_search:
                body["disable_search"] = True
            elif domain_filter:
                body["search_domain_filter"] = list(domain_filter)
        if self.stream:
            body["stream"] = True
            if self.flavor == "openai":
                body["stream_options"] = {"include_usage": True}
        if extra:
            body.update(extra)
        return body

    def _headers(self, streaming: bool) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream" if streaming else "application/json",
        }
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        return headers

    # -- call

    async def complete(
        self,
        prompt: Prompt,
        *,
        web_search: bool = True,
        domain_filter: list[str] | None = None,
        temperature: float | None = None,
        extra: dict[str, Any] | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> WriterResponse:
        """One section's completion. ``on_text`` (streaming only) sees the text so far."""
        if self._key is None and self.flavor == "perplexity":
            raise WriterError("auth", None, "no API key for the writer — set PERPLEXITY_API_KEY", requests=0)
        body = self.request_body(
            prompt, web_search=web_search, domain_filter=domain_filter, temperature=temperature, extra=extra
        )
        if self._http is not None:
            return await self._complete(self._http, body, on_text)
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            return await self._complete(client, body, on_text)

    async def _complete(
        self, client: httpx.AsyncClient, body: dict[str, Any], on_text: Callable[[str], None] | None
    ) -> WriterResponse:
        scrub = _Scrubber(self._key.get_secret_value() if self._key else None)
        limiter = (
            shared_limiter(self.url, self.requests_per_minute, 60.0, burst=max(int(self.requests_per_minute) - 1, 1))
            if self.requests_per_minute
            else None
        )
        streaming = bool(body.get("stream"))
        headers = self._headers(streaming)
        timeout = httpx.Timeout(self.timeout)

        async def send() -> httpx.Response:
            request = client.build_request("POST", self.url, json=body, headers=headers, timeout=timeout)
            return await client.send(request, stream=streaming)

        try:
            outcome: RetryOutcome = await send_with_retries(
                send, self.retry, limiter=limiter, rng=self._rng, sleep=self._sleep
            )
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # not transient: bad URL, unsupported protocol, ...
            raise _transport_error(exc, 1, self.timeout, self.url) from None
        attempts = outcome.requests
        response = outcome.response
        if response is None:
            error = outcome.error or httpx.NetworkError("no response")
            raise _transport_error(error, attempts, self.timeout, self.url)
        try:
            if response.status_code != 200 or not streaming or not _is_event_stream(response):
                body_text = await _read_text(response, attempts, self.timeout, self.url)
                if response.status_code != 200:
                    raise _error_for(response, body_text, attempts, scrub)
                return self._parse_json(response, body_text, attempts)
            return await self._read_stream(response, attempts, on_text, scrub)
        finally:
            await response.aclose()

    def _parse_json(self, response: httpx.Response, text: str, attempts: int) -> WriterResponse:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, ValueError):
            what = "an HTML page" if _is_html(response, text) else "not JSON"
            message = f"the writer's answer (HTTP 200) is {what}"
            raise WriterError("malformed", 200, message, requests=attempts) from None
        return parse_completion(data, model=self.model, requests=attempts)

    async def _read_stream(
        self,
        response: httpx.Response,
        attempts: int,
        on_text: Callable[[str], None] | None,
        scrub: _Scrubber,
    ) -> WriterResponse:
        decoder, acc = SSEDecoder(), StreamAccumulator()
        try:
            async for line in response.aiter_lines():
                data = decoder.feed(line)
                if data is not None:
                    acc.feed_data(data)
                    if on_text is not None:
                        on_text(acc.text)
                if acc.done:
                    break
            else:
                data = decoder.flush()
                if data is not None:
                    acc.feed_data(data)
            completion = acc.completion()
        except AnswerError as exc:
            kind: ErrorKind = "server" if exc.kind == "server" else "malformed"
            raise WriterError(kind, 200, scrub(str(exc)), requests=attempts) from None
        except httpx.TimeoutException:
            message = f"the writer's stream stalled after {len(acc.text)} characters"
            raise WriterError("timeout", None, message, requests=attempts) from None
        except httpx.HTTPError as exc:
            raise WriterError(
                "network",
                None,
                f"the writer's stream broke off after {len(acc.text)} characters: {type(exc).__name__}",
                requests=attempts,
            ) from None
        return parse_completion(completion, model=self.model, requests=attempts)


def _is_event_stream(response: httpx.Response) -> bool:
    """A server asked to stream may still answer with plain JSON (or an HTML page)."""
    ctype = response.headers.get("content-type", "").lower()
    return "application/json" not in ctype and "text/html" not in ctype


async def _read_text(response: httpx.Response, attempts: int, timeout: float, url: str) -> str:
    try:
        raw = await response.aread()
    except httpx.HTTPError as exc:
        raise _transport_error(exc, attempts, timeout, url) from None
    return raw.decode(response.encoding or "utf-8", errors="replace")
