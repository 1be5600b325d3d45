"""The one clock sourcedesk reads the date and the time of day from.

Why one: the prompt tells the writer today's date, source sets expire after a TTL, runs,
checks, rejections and store files are stamped, and ``{{today}}``/``{{year}}`` fill queries.
If each read ``datetime.now`` itself, nothing could show that the product (and its tests)
behave the same on another day. Every such read goes through ``now()`` or ``today()``:

- the analyst (or CI) moves the clock with ``SOURCEDESK_CLOCK_SHIFT_DAYS=200`` (days ahead,
  negative for back) or ``SOURCEDESK_TODAY=2027-06-20`` (that date, the time of day running
  on): the product reads these variables itself, so a subprocess, the sandbox and the
  workbench all see the same day;
- a test sets the clock outright with ``use(...)`` (a fixed instant or any callable); a set
  clock is the whole truth, the environment's shift does not apply on top of it.

Durations and deadlines are not dates: they stay on ``time.monotonic``, which no shift moves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache

from sourcedesk.core.domain.errors import UserError

SHIFT_ENV = "SOURCEDESK_CLOCK_SHIFT_DAYS"
TODAY_ENV = "SOURCEDESK_TODAY"

Source = Callable[[], datetime]

_source: Source | None = None


class ClockSettingError(UserError):
    """SOURCEDESK_CLOCK_SHIFT_DAYS or SOURCEDESK_TODAY holds something that is not a day."""


def _real_now() -> datetime:
    return datetime.now(UTC)


@lru_cache(maxsize=8)
def _parse_shift(shift: str, today: str) -> timedelta:
    """The offset the two variables ask for (cached: read on every clock read)."""
    if shift and today:
        raise ClockSettingError(
            f"both {SHIFT_ENV} and {TODAY_ENV} are set; they would move the clock twice",
            f"unset one of them (e.g. unset {SHIFT_ENV})",
        )
    if shift:
        try:
            days = float(shift)
        except ValueError:
            days = float("nan")
        if not (abs(days) <= 100_000):  # also refuses nan and inf
            raise ClockSettingError(
                f"{SHIFT_ENV}={shift!r} is not a number of days",
                f"write a whole or decimal number of days, e.g. {SHIFT_ENV}=200 (negative moves back)",
            )
        return timedelta(days=days)
    if today:
        try:
            wanted = date.fromisoformat(today)
        except ValueError:
            raise ClockSettingError(
                f"{TODAY_ENV}={today!r} is not a calendar date",
                f"write an ISO date, e.g. {TODAY_ENV}=2027-06-20",
            ) from None
        return timedelta(days=(wanted - _real_now().astimezone().date()).days)
    return timedelta(0)


def shift() -> timedelta:
    """How far the environment moves the clock (zero when neither variable is set).

    Raises ClockSettingError, naming the variable, for a value that is not a day."""
    return _parse_shift(os.environ.get(SHIFT_ENV, "").strip(), os.environ.get(TODAY_ENV, "").strip())


def check_environment() -> None:
    """Refuse a bad clock variable at start-up, before any work is stamped with it."""
    shift()


def now() -> datetime:
    """The current instant, timezone-aware in UTC."""
    if _source is not None:
        return _source().astimezone(UTC)
    return _real_now() + shift()


def today() -> date:
    """Today's date where the analyst is (the local date of ``now()``)."""
    return now().astimezone().date()


def timestamp() -> float:
    """``now()`` as seconds since the epoch (where an API or a header wants a number)."""
    return now().timestamp()


def use(source: Source | datetime | None) -> Source | None:
    """Set the clock to ``source`` (a callable, or a fixed instant); ``None`` returns to the
    real one. Returns the clock that was set before, so a caller can put it back."""
    global _source
    previous = _source
    _source = ManualClock(source) if isinstance(source, datetime) else source
    return previous


@contextmanager
def using(source: Source | datetime) -> Iterator[None]:
    """``use(source)`` for the length of a ``with`` block."""
    previous = use(source)
    try:
        yield
    finally:
        use(previous)


class ManualClock:
    """A clock a test moves by hand: it stands still until ``advance`` is called."""

    def __init__(self, start: datetime) -> None:
        self.current = start if start.tzinfo is not None else start.replace(tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> datetime:
        """Move forward by ``timedelta(**delta)`` (e.g. ``hours=25``); returns the new instant."""
        self.current += timedelta(**delta)
        return self.current
