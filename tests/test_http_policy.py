"""The shared retry and rate-limit policy: what gets retried, how long we wait."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
import respx

from sourcedesk.core.domain import clock
from sourcedesk.core.net.policy import (
    EXA_RETRY,
    WRITER_RETRY,
    RateLimiter,
    RetryPolicy,
    parse_retry_after,
    send_with_retries,
)
from tests.virtual_time import run_virtual

URL = "http://api.test/search"


def _run(statuses, policy=EXA_RETRY, headers=None):
    """Serve ``statuses`` in order; return (outcome, recorded sleeps, calls)."""
    sleeps: list[float] = []

    async def fake_sleep(s: float) -> None:
        sleeps.append(s)

    async def go():
        with respx.mock(assert_all_called=False) as mock:
            route = mock.post(URL).mock(
                side_effect=[
                    httpx.Response(s, headers=(headers or {}).get(i, {}), json={}) for i, s in enumerate(statuses)
                ]
            )
            async with httpx.AsyncClient() as client:
                out = await send_with_retries(
                    lambda: client.post(URL, json={}), policy, rng=random.Random(1), sleep=fake_sleep
                )
            return out, route.call_count

    out, calls = asyncio.run(go())
    return out, sleeps, calls


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 422])
def test_client_errors_are_answers_not_retried(status):
    out, sleeps, calls = _run([status, 200])
    assert calls == 1 and out.response.status_code == status and sleeps == []


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_transient_statuses_are_retried_until_success(status):
    out, sleeps, calls = _run([status, status, 200])
    assert calls == 3 and out.response.status_code == 200 and len(sleeps) == 2


def test_retry_after_seconds_is_honoured_exactly():
    out, sleeps, _ = _run([429, 200], headers={0: {"Retry-After": "3"}})
    assert out.response.status_code == 200
    assert sleeps == [3.0]


@pytest.mark.parametrize("value", ["3600", "0"])
def test_absurd_or_zero_retry_after_falls_back_to_backoff(value):
    _, sleeps, _ = _run([429, 200], headers={0: {"Retry-After": value}})
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5


def test_retry_after_ms_wins():
    _, sleeps, _ = _run([429, 200], headers={0: {"Retry-After": "5", "retry-after-ms": "1500"}})
    assert sleeps == [1.5]


def test_limiters_are_per_event_loop():
    from sourcedesk.core.net.policy import shared_limiter

    async def get():
        return shared_limiter("http://x", 10)

    a, b = asyncio.run(get()), asyncio.run(get())
    assert a is not b


def test_backoff_doubles_with_bounded_jitter_and_gives_up():
    policy = RetryPolicy(max_retries=4, base_delay_s=0.5, max_delay_s=8.0)
    out, sleeps, calls = _run([503] * 10, policy=policy)
    assert calls == 5 and out.response.status_code == 503
    for attempt, s in enumerate(sleeps):
        cap = min(0.5 * 2**attempt, 8.0)
        assert cap / 2 <= s <= cap


def test_writer_policy_retries_408_and_409_but_exa_does_not():
    assert WRITER_RETRY.should_retry_status(408) and WRITER_RETRY.should_retry_status(409)
    assert not EXA_RETRY.should_retry_status(408)


def test_connection_errors_are_retried_then_reported():
    sleeps: list[float] = []

    async def fake_sleep(s):
        sleeps.append(s)

    async def go():
        with respx.mock() as mock:
            mock.post(URL).mock(side_effect=httpx.ConnectError("refused"))
            async with httpx.AsyncClient() as client:
                return await send_with_retries(lambda: client.post(URL), RetryPolicy(max_retries=2), sleep=fake_sleep)

    out = asyncio.run(go())
    assert out.response is None and isinstance(out.error, httpx.ConnectError)
    assert out.requests == 3 and len(sleeps) == 2


def test_parse_retry_after_forms():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    later = clock.now() + timedelta(seconds=30)  # the product's clock: a date is read against it
    assert 25 <= (parse_retry_after(format_datetime(later, usegmt=True)) or 0) <= 31
    with clock.using(datetime(2030, 5, 1, 12, 0, 0, tzinfo=UTC)):
        assert parse_retry_after("Wed, 01 May 2030 12:00:07 GMT") == 7.0


def _acquire_times(lim: RateLimiter, n: int) -> list[float]:
    """When each of ``n`` concurrent acquisitions got its token, on the loop's virtual clock
    (it moves only while every task waits: the limiter's own pacing, never the machine's load)."""

    async def go():
        loop = asyncio.get_running_loop()
        start = loop.time()
        stamps = []

        async def one():
            await lim.acquire()
            stamps.append(loop.time() - start)

        await asyncio.gather(*(one() for _ in range(n)))
        return sorted(stamps)

    return run_virtual(go())


def test_rate_limiter_bursts_then_paces_at_the_rate():
    stamps = _acquire_times(RateLimiter(10, per=1.0, burst=8), 12)
    assert all(t < 0.001 for t in stamps[:8])  # eight go at once (paced, the eighth would wait 0.7 s)…
    for i, t in enumerate(stamps[8:], start=1):  # …then one every 100 ms: never earlier, and no stall
        assert 0.1 * i <= t < 0.1 * i + 0.001


def test_rate_limiter_never_admits_more_than_the_bucket_allows():
    stamps = _acquire_times(RateLimiter(20, per=0.5, burst=20), 60)
    # token-bucket conformance: over any span, at most burst + rate × span acquisitions
    for i in range(len(stamps)):
        for j in range(i, len(stamps)):
            assert j - i + 1 <= 20 + 40 * (stamps[j] - stamps[i]) + 1e-6
    assert 1.0 <= stamps[-1] < 1.001  # and it does not stall: 40 more after the burst take 1 s


def test_rate_limiter_burst_never_exceeds_the_rate():
    assert RateLimiter(10, burst=50).burst == 10 and RateLimiter(10, burst=0).burst == 1
