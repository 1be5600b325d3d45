"""A thin async client for Exa's ``POST /search`` — the API and nothing else.

It knows Exa's wire shapes (the request in ``request``, the tolerant reading of the answer
in ``response``)
and turns every failure into one ``ExaError`` with a plain-language message the
analyst can act on. Pins, exclusions, facts and budgets live in the provider
(``sourcedesk.core.sources.providers.exa.provider``): keeping this layer dumb is what lets the sandbox and the
real service be swapped by one base-URL setting.

The API key travels only in the ``Authorization`` header of each request: it is
never stored on a shared ``httpx`` client, logged, or included in an error.

Exa's answer is untrusted text. Each request has a total deadline (not per read)
and a size cap, both read as one bounded job (``sourcedesk.core.net.bounded``), and every
string of every result — titles, URLs, text, highlights, summaries, facts — and
every error sentence is cleaned here, where it enters the product
(``sourcedesk.core.text.safety``: no terminal control sequences, no bidi overrides, no API
key a server echoed back).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from pydantic import SecretStr

from sourcedesk.core.net.bounded import ResponseTooLarge, describe_seconds, fetch_bounded
from sourcedesk.core.net.deadline import DeadlineExceeded, budget, current_deadline
from sourcedesk.core.net.decoding import UndecodableBody
from sourcedesk.core.net.policy import EXA_RETRY, RetryOutcome, RetryPolicy, send_with_retries, shared_limiter
from sourcedesk.core.sources.providers.exa.errors import ExaError, display_url, status_error, transport_error
from sourcedesk.core.sources.providers.exa.response import ExaSearchResult, parse_search_response
from sourcedesk.core.text.secrets import MIN_SECRET_LEN, secret_values

log = logging.getLogger("sourcedesk.exa")

# Exa counts requests on *arrival*, our limiter on *send*; two of the ten tokens are
# held back so arrivals bunched by up to 200 ms (connection set-up, a loaded machine)
# still fit the service's bucket. Twelve concurrent sections: eight searches at once,
# then one every 100 ms.
RESERVED_TOKENS = 2
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class ExaClient:
    """Async ``/search`` client with retries, a shared 10/s limiter and a request counter.

    ``requests_sent`` counts HTTP requests that actually went out (an httpx event
    hook), so callers and tests can prove that a reused source set cost nothing.
    """

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr | str | None,
        *,
        http: httpx.AsyncClient | None = None,
        timeout: float = 30,
        retry: RetryPolicy = EXA_RETRY,
        rate_per_s: float = 10,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ):
        self.base_url = base_url.rstrip("/")
        self._key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self._key = (self._key or "").strip() or None
        self.timeout = float(timeout)  # one request in all (connect, wait, whole body), not per read
        self.max_response_bytes = int(max_response_bytes)
        self.retry = retry
        self.rate_per_s = rate_per_s
        self._sleep = sleep
        self._rng = rng
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(timeout=httpx.Timeout(self.timeout))
        self._http.event_hooks.setdefault("request", []).append(self._count_request)
        self.requests_sent = 0
        self.cost_total = 0.0

    def __repr__(self) -> str:  # never the key
        return f"ExaClient(base_url={display_url(self.base_url)!r}, key={'set' if self._key else 'missing'})"

    @property
    def has_key(self) -> bool:
        return self._key is not None

    async def _count_request(self, request: httpx.Request) -> None:
        if request.url.path.endswith("/search"):
            self.requests_sent += 1

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> ExaClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def search(self, body: dict[str, Any]) -> ExaSearchResult:
        """One search (with retries). Raises ExaError; never returns a partial answer."""
        if not self._key:
            raise ExaError("auth", None, "no Exa API key is set — set EXA_API_KEY to retrieve sources")
        outcome = await self._exchange(body)
        attempts = outcome.requests
        response = outcome.response
        if response is None:
            where = display_url(self.base_url)
            raise transport_error(outcome.error or RuntimeError("no response"), attempts, self.timeout, where, outcome)
        if not 200 <= response.status_code < 300:
            raise status_error(response, attempts, self._key, outcome, self.retry)
        data = _search_json(response, attempts)
        try:
            own = [self._key] if len(self._key) >= MIN_SECRET_LEN else []  # "sandbox" is a word
            result = parse_search_response(data, secrets=[*own, *secret_values()])
        except ExaError as err:
            err.requests = attempts
            raise
        result.requests = attempts
        self.cost_total += result.cost_total
        log.info(
            "exa search: %d results, cost $%.4f, %s ms, request %s, %d HTTP request(s)",
            len(result.results),
            result.cost_total,
            f"{result.search_time_ms:.0f}" if result.search_time_ms is not None else "?",
            result.request_id or "?",
            attempts,
        )
        return result

    async def _exchange(self, body: dict[str, Any]) -> RetryOutcome:
        """The request sent (retried as the policy says) until an answer or the last failure."""
        url = f"{self.base_url}/search"
        headers = {"Authorization": f"Bearer {self._key}", "Content-Type": "application/json"}
        limiter = shared_limiter(
            self.base_url, self.rate_per_s, 1.0, burst=max(int(self.rate_per_s) - RESERVED_TOKENS, 1)
        )
        spent_on: list[DeadlineExceeded] = []  # what the section's time went on, for the warning
        tried = 0

        async def send() -> httpx.Response:
            nonlocal tried
            tried += 1
            return await self._send_once(url, body, headers, spent_on)

        try:
            return await send_with_retries(send, self.retry, limiter=limiter, rng=self._rng, sleep=self._sleep)
        except ResponseTooLarge as exc:  # an answer, not an accident: no retry
            raise ExaError("too_large", 200, str(exc), requests=tried) from None
        except UndecodableBody as exc:  # an answer too: no retry
            raise ExaError("malformed", 200, f"Exa's answer could not be read: {exc}", requests=tried) from None
        except httpx.HTTPError as exc:  # not transient (bad URL, unsupported scheme): no retry
            raise transport_error(exc, max(tried, 1), self.timeout, display_url(self.base_url)) from None

    async def _send_once(
        self, url: str, body: dict[str, Any], headers: dict[str, str], spent_on: list[DeadlineExceeded]
    ) -> httpx.Response:
        seconds = budget(self.timeout)
        section = current_deadline() if seconds < self.timeout else None
        if section is not None and seconds <= 0:
            # A retry with no time left: the cause is the try that used the time up.
            raise spent_on[-1] if spent_on else section.exceeded()
        request = self._http.build_request("POST", url, json=body, headers=headers, timeout=self.timeout)
        try:
            return await fetch_bounded(
                self._http,
                request,
                seconds=seconds,
                max_bytes=self.max_response_bytes,
                what="Exa",
                setting="exa_max_response_bytes",
            )
        except DeadlineExceeded as exc:
            if section is None:
                spent_on.append(exc)
                raise
            spent_on.append(
                DeadlineExceeded(
                    f"{exc}; {section.what} ran out ({describe_seconds(section.seconds)})",
                    seconds=section.seconds,
                    what=section.what,
                    received=exc.received,
                )
            )
            raise spent_on[-1] from None


def _search_json(response: httpx.Response, attempts: int) -> Any:
    """A 2xx answer's JSON, or a ``malformed`` ExaError naming what the body really is."""
    try:
        return response.json()
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            kind = "a body nested too deeply to read"
        elif not response.content.strip():
            kind = "an empty body"
        elif "html" in response.headers.get("content-type", ""):
            kind = "an HTML page"
        elif isinstance(exc, UnicodeDecodeError):
            kind = "a body that is not UTF-8 text"
        else:
            kind = "a body that is not JSON (truncated or not JSON at all)"
        raise ExaError(
            "malformed", response.status_code, f"Exa answered with {kind} instead of search results", requests=attempts
        ) from None
