"""One clock: the environment moves it for the whole product, and a test sets it.

``make test`` runs the suite a second time with ``SOURCEDESK_CLOCK_SHIFT_DAYS`` set, so these
tests read the shift in force instead of assuming there is none.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from sourcedesk.core.domain import clock
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.memo.templates import template_variables
from sourcedesk.core.writing.prompt import build_prompt
from sourcedesk.tui.cli import main

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "run" / "nats-memo"
A_DAY = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
A_YEAR_LATER = datetime(2027, 3, 2, 16, 5, tzinfo=UTC)


@pytest.fixture
def no_shift(monkeypatch):
    """The environment's shift (the suite's second pass sets one) taken away for this test."""
    monkeypatch.delenv(clock.SHIFT_ENV, raising=False)
    monkeypatch.delenv(clock.TODAY_ENV, raising=False)


# ---------------------------------------------------------------- the clock itself


def test_the_environment_moves_the_clock_by_whole_days(no_shift, monkeypatch):
    real = clock.now()
    monkeypatch.setenv(clock.SHIFT_ENV, "200")
    moved = clock.now()
    assert timedelta(days=200) <= moved - real < timedelta(days=200, minutes=5)
    assert clock.today() == moved.astimezone().date()
    monkeypatch.setenv(clock.SHIFT_ENV, "-1.5")
    assert timedelta(days=-1.5) <= clock.now() - real < timedelta(days=-1.5, minutes=5)


def test_sourcedesk_today_sets_the_date_and_the_time_runs_on(no_shift, monkeypatch):
    monkeypatch.setenv(clock.TODAY_ENV, "2031-07-14")
    assert clock.today() == date(2031, 7, 14)
    # the time of day is the real one: only whole days are added
    days = (date(2031, 7, 14) - datetime.now(UTC).astimezone().date()).days
    assert abs(clock.now() - datetime.now(UTC) - timedelta(days=days)) < timedelta(minutes=5)


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        (clock.SHIFT_ENV, "two hundred", "is not a number of days"),
        (clock.SHIFT_ENV, "nan", "is not a number of days"),
        (clock.SHIFT_ENV, "1e9", "is not a number of days"),
        (clock.TODAY_ENV, "2027-02-30", "is not a calendar date"),
    ],
)
def test_a_bad_clock_variable_is_named_with_a_hint(no_shift, monkeypatch, variable, value, words):
    monkeypatch.setenv(variable, value)
    with pytest.raises(clock.ClockSettingError) as caught:
        clock.now()
    assert f"{variable}={value!r} {words}" in str(caught.value) and "Hint: " in str(caught.value)


def test_both_clock_variables_at_once_are_refused(no_shift, monkeypatch):
    monkeypatch.setenv(clock.SHIFT_ENV, "3")
    monkeypatch.setenv(clock.TODAY_ENV, "2030-01-01")
    with pytest.raises(clock.ClockSettingError, match="both SOURCEDESK_CLOCK_SHIFT_DAYS and SOURCEDESK_TODAY"):
        clock.today()


def test_the_command_line_refuses_a_bad_clock_before_doing_anything(no_shift, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(clock.SHIFT_ENV, "soon")
    assert main(["init", str(tmp_path / "memo"), "--subject", "NATS", "--url", "https://nats.io"]) == 2
    err = capsys.readouterr().err
    assert "SOURCEDESK_CLOCK_SHIFT_DAYS='soon' is not a number of days" in err and "Traceback" not in err
    assert not (tmp_path / "memo").exists()


def test_a_set_clock_is_the_whole_truth_and_is_put_back(monkeypatch):
    monkeypatch.setenv(clock.SHIFT_ENV, "200")
    with clock.using(A_DAY):
        assert clock.now() == A_DAY and clock.today() == A_DAY.astimezone().date()
        assert clock.timestamp() == A_DAY.timestamp()
    manual = clock.ManualClock(A_DAY)
    previous = clock.use(manual)
    try:
        manual.advance(hours=25)
        assert clock.now() == A_DAY + timedelta(hours=25)
    finally:
        clock.use(previous)
    assert clock.now() - datetime.now(UTC) >= timedelta(days=199)


def test_the_prompt_and_the_query_variables_read_the_clock():
    memo = load_memo(FIXTURE).memo
    section = memo.section("overview")
    with clock.using(A_YEAR_LATER):
        prompt = build_prompt(memo, section, None)
        variables = template_variables(memo, section)
    assert "Today's date is 2027-03-02." in prompt.system
    assert variables["today"] == "2027-03-02" and variables["year"] == "2027"
