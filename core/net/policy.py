"""Retry and rate-limit policy shared by every outbound HTTP client.

Exa and the writer get the same mechanism with different numbers, so a fix to
backoff or ``Retry-After`` handling lands in one place. Only transient failures
are retried (429, 408/409 where the service says so, 5xx, connection errors,
timeouts); 400/401/402/403/404/422 are answers, not accidents.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

import httpx
from aiolimiter import AsyncLimiter

from sourcedesk.core.domain import clock
from sourcedesk.core.net.deadline import current_deadline


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 60.0
    retry_statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504})

    def should_retry_status(self, status: int) -> bool:
        return status in self.retry_statuses or (status >= 500 and 500 in self.retry_statuses)

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after is not None and 0 < retry_after <= self.max_retry_after_s:
            return retry_after
        # Absent, zero or absurd Retry-After: fall back to our own backoff rather than
        # hammering the service or stalling a section for minutes.
        backoff = min(self.base_delay_s * (2.0**attempt), self.max_delay_s)
        return backoff * (0.5 + rng.random() / 2)  # "equal jitter": never zero, never above the cap


EXA_RETRY = RetryPolicy(max_retries=4, base_delay_s=0.5, max_delay_s=8.0)
# Perplexity's own client retries 408/409/429/5xx, honouring retry-after up to 60 s,
# otherwise 0.5 s doubling to 8 s with jitter.
WRITER_RETRY = RetryPolicy(
    max_retries=3, base_delay_s=0.5, max_delay_s=8.0, retry_statuses=frozenset({408, 409, 429, 500, 502, 503, 504})
)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; None when absent or junk."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - (now if now is not None else clock.timestamp()), 0.0)


class RateLimiter:
    """A token bucket: ``rate`` requests per ``per`` seconds sustained, bursts up to ``burst``.

    A published "10 requests/s" is a rate, and gateways enforce rates as buckets (the
    sandbox does exactly this): a full bucket of ten, refilled at ten a second. A strict
    rolling-second count would make the 11th of twelve concurrent sections wait a whole
    second for no reason. ``burst`` below ``rate`` keeps tokens in reserve because the
    service counts *arrivals* and we count *sends*: requests that leave together can
    arrive bunched (connection set-up, a busy loop), and each reserved token absorbs
    ``per / rate`` seconds of that. A stricter server answers 429, which is retried.

    The bucket is aiolimiter's: its leaky bucket of capacity ``burst`` draining ``rate``
    per ``per`` seconds admits exactly what this token bucket does (the pacing tests hold
    for both); this class only keeps the count of tokens handed out.
    """

    def __init__(self, rate: float, per: float = 1.0, burst: int | None = None):
        self.rate = max(int(rate), 1)
        self.per = per
        self.burst = self.rate if burst is None else min(max(int(burst), 1), self.rate)
        self.acquired = 0  # every token handed out, retries included
        self._bucket = AsyncLimiter(self.burst, self.burst * per / self.rate)

    async def acquire(self) -> None:
        await self._bucket.acquire()
        self.acquired += 1


_limiters: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, float, float, int | None], RateLimiter]
] = weakref.WeakKeyDictionary()


def shared_limiter(key: str, rate: float, per: float = 1.0, burst: int | None = None) -> RateLimiter:
    """One limiter per (service base URL, rate) in this event loop's process, so
    concurrent sections share the service's budget instead of each taking its own."""
    per_loop = _limiters.setdefault(asyncio.get_running_loop(), {})
    k = (key, rate, per, burst)
    lim = per_loop.get(k)
    if lim is None:
        lim = per_loop[k] = RateLimiter(rate, per, burst)
    return lim


@dataclass
class Attempt:
    """What happened on one try, for logs and warnings (never contains headers)."""

    status: int | None
    error: str | None
    waited_s: float
    retry_after_s: float | None = None  # what the server asked for (Retry-After), honoured or not


@dataclass
class RetryOutcome:
    response: httpx.Response | None
    error: Exception | None
    attempts: list[Attempt] = field(default_factory=list)
    # Why retrying stopped before the retries ran out: the next wait would not have
    # ended before the deadline in force (``sourcedesk.core.net.deadline``). None otherwise.
    stopped: str | None = None

    @property
    def requests(self) -> int:
        return len(self.attempts)


def retry_after_note(outcome: RetryOutcome | None, policy: RetryPolicy) -> str:
    """What the server asked for in ``Retry-After`` and why we did not (or could not) wait,
    as a parenthesis for an error message ("" when there is nothing to say)."""
    if outcome is None or not outcome.attempts:
        return ""
    asked = max((a.retry_after_s or 0.0 for a in outcome.attempts), default=0.0)
    if outcome.stopped:
        said = f"it asked to retry after {asked:g} s; " if asked else ""
        return f" ({said}{outcome.stopped})"
    if asked > policy.max_retry_after_s:
        return f" (it asked to retry after {asked:g} s, longer than the {policy.max_retry_after_s:g} s we wait)"
    return ""


TRANSIENT_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


async def send_with_retries(
    send: Callable[[], Awaitable[httpx.Response]],
    policy: RetryPolicy,
    *,
    limiter: RateLimiter | None = None,
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> RetryOutcome:
    """Call ``send`` until it yields a non-retryable answer or retries run out.

    Returns the last response (which may be an error status) or the last
    transport error; never raises for HTTP-level failures. Under a deadline
    (``sourcedesk.core.net.deadline``), a retry whose wait would outlast it is not made.
    """
    rng = rng or random.Random()
    outcome = RetryOutcome(response=None, error=None)
    waited = 0.0
    deadline = current_deadline()

    def out_of_time(wait: float) -> bool:
        if deadline is None or wait < deadline.remaining:
            return False
        outcome.stopped = f"{deadline.what} would have run out before the next try ({deadline.seconds:g} s deadline)"
        return True

    for attempt in range(policy.max_retries + 1):
        if limiter is not None:
            await limiter.acquire()
        try:
            response = await send()
        except TRANSIENT_ERRORS as exc:
            outcome.attempts.append(Attempt(None, type(exc).__name__, waited))
            outcome.response, outcome.error = None, exc
            if attempt == policy.max_retries:
                return outcome
            waited = policy.delay(attempt, None, rng)
            if out_of_time(waited):
                return outcome
            await sleep(waited)
            continue
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        ms = response.headers.get("retry-after-ms")
        if ms:
            with contextlib.suppress(ValueError):
                retry_after = max(float(ms) / 1000.0, 0.0)
        outcome.attempts.append(Attempt(response.status_code, None, waited, retry_after))
        outcome.response, outcome.error = response, None
        if not policy.should_retry_status(response.status_code) or attempt == policy.max_retries:
            return outcome
        waited = policy.delay(attempt, retry_after, rng)
        if out_of_time(waited):
            return outcome
        await response.aclose()
        await sleep(waited)
    return outcome
