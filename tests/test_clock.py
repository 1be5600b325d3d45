"""One clock: the environment moves it for the whole product, a test sets it, and what the
sandbox writer drafts does not depend on it.

``make test`` runs the suite a second time with ``SOURCEDESK_CLOCK_SHIFT_DAYS`` set, so these
tests read the shift in force instead of assuming there is none.
"""

from __future__ import annotations

import asyncio
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain import clock
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.memo.templates import template_variables
from sourcedesk.core.notes.note import parse_note
from sourcedesk.core.writing.prompt import build_prompt
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.sandbox.writer_api import digest
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main
from sourcedesk.tui.headless import run_memo_folder

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


# ---------------------------------------------------------------- the sandbox writer on two dates


def test_the_sandbox_writer_draws_from_what_is_asked_never_from_the_day():
    asked = "## Section to write\n\nSection: Company overview\n"
    assert digest(5, asked + "Today's date is 2026-12-02.\n") == digest(5, asked + "Today's date is 2027-06-20.\n")
    assert digest(5, asked + "Current date: 2026-12-02\n") == digest(5, asked + "Current date: 2027-01-01\n")
    assert digest(5, asked) != digest(5, asked.replace("overview", "funding")) != digest(6, asked)


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=5) as server:
        yield server


@pytest.fixture
def env(sandbox, monkeypatch):
    httpx.post(f"{sandbox.url}/_sandbox/reset")
    monkeypatch.setenv("SOURCEDESK_EXA_URL", sandbox.url)
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", sandbox.url)
    monkeypatch.setenv("EXA_API_KEY", "exa-key-0123456789")
    monkeypatch.setenv("PERPLEXITY_API_KEY", "pplx-key-0123456789")
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "0")
    return sandbox


def _run_on(day: datetime, memo_dir: Path, api: str) -> dict[str, tuple[str, str, str, str]]:
    """Each section's (system prompt, draft, note body, generated_at) from a run on ``day``."""
    if api == "perplexity-sonar":  # the legacy chat completions API, with one of its own models
        spec = memo_dir / "memo.yaml"
        spec.write_text(spec.read_text(encoding="utf-8").replace("model: perplexity/sonar", "model: sonar-pro"))
    with clock.using(day):
        outcomes = asyncio.run(run_memo_folder(memo_dir, ["overview", "funding"], settings=Settings(writer_api=api)))
    assert [o.status for o in outcomes] == ["ok", "ok"], [o.message for o in outcomes]
    found = {}
    with MemoStore(memo_dir) as store:
        for o in outcomes:
            run = store.get_run(o.run_id)
            raw = run.raw_response
            assert isinstance(run.prompt, dict)
            if api == "perplexity":
                draft = "".join(c["text"] for i in raw["output"] if i["type"] == "message" for c in i["content"])
            else:
                draft = raw["choices"][0]["message"]["content"]
            front, body = parse_note(o.note_path.read_text(encoding="utf-8"))
            found[o.section] = (run.prompt["system"], draft, body, str(front["generated_at"]))
    return found


@pytest.mark.parametrize("api", ["perplexity", "perplexity-sonar"])
def test_the_same_section_a_year_apart_is_drafted_byte_for_byte_the_same(env, tmp_path, api):
    """The sandbox drew its prose from a digest of the whole prompt, today's date included:
    the demo's draft changed every day, and a test expecting one draft passed or failed by date."""
    first = _run_on(A_DAY, Path(shutil.copytree(FIXTURE, tmp_path / "first")), api)
    later = _run_on(A_YEAR_LATER, Path(shutil.copytree(FIXTURE, tmp_path / "later")), api)
    for section in ("overview", "funding"):
        (system_a, draft_a, body_a, stamp_a), (system_b, draft_b, body_b, stamp_b) = first[section], later[section]
        # the writer was told two different days, and the notes are stamped with them …
        assert "Today's date is 2026-03-02." in system_a and "Today's date is 2027-03-02." in system_b
        assert stamp_a.startswith("2026-03-02") and stamp_b.startswith("2027-03-02")
        # … and wrote the very same draft, which became the very same note
        assert draft_a and draft_a.encode() == draft_b.encode(), section
        assert body_a.encode() == body_b.encode(), section
