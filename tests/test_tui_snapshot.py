"""Pictures of every screen, section tab and modal, compared with the accepted SVGs in
tests/__snapshots__/.

Each is taken in a state an analyst meets — before a run, after a run, while one is going —
at 80×24 and at 160×45; the memo and section screens in both themes. Nothing in view depends
on the clock, a port or a path: the sandbox is seeded, the runs are made at a pinned time and
their volatile fields (random run-id suffixes, durations) are pinned afterwards, the time zone
is UTC, and the check's clock is fixed.

After an intended change to the look: ``pytest tests/test_tui_snapshot.py --snapshot-update``,
then look at every new SVG before accepting it, and keep its line in ``SEEN`` true.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.widgets import Input

from sourcedesk.core.domain import clock
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.pipeline.run import run_memo
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.app import SourcedeskApp
from sourcedesk.tui.demo import demo_settings, prepare_demo
from tests.test_tui_support import control, settle, stage_reached

PINNED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SMALL, LARGE = (80, 24), (160, 45)
RAN = ("overview", "news")  # the sections run before the "after a run" pictures
TTL_HOURS = 10_000_000  # the pinned runs never grow older than the sources' TTL


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=3) as server:
        yield server


def _pin_volatile(memo_dir: Path) -> None:
    """The values a run takes from the clock or from chance, made fixed: each run id's random
    suffix, the durations, and the time stamps the pinned ``now`` does not reach."""
    db = memo_dir / ".sourcedesk" / "db.json"
    notes = sorted((memo_dir / "sections").glob("*.md"))
    texts = {p: p.read_text(encoding="utf-8") for p in [db, *notes]}
    found = re.compile(r"run-\d{8}T\d{6}-[0-9a-f]{6}")
    ids = [m.group() for note in notes for m in found.finditer(texts[note])]  # in section order, not by chance
    ids = list(dict.fromkeys([*ids, *sorted(set(found.findall(texts[db])))]))
    # A run's body lives in a payload file keyed by the original run id ("part"): that key stays,
    # or the pinned record would lose its report and web results (the Report and Web results
    # tabs drew an empty table under the counts).
    parts = re.compile(r'("part":\s*")(run-\d{8}T\d{6}-[0-9a-f]{6})"')
    texts[db] = parts.sub(lambda m: f'{m.group(1)}{m.group(2).replace("run-", "RUN-PART-")}"', texts[db])
    for n, run_id in enumerate(ids):
        pinned = f"{run_id[:-6]}{n:06d}"
        texts = {p: t.replace(run_id, pinned) for p, t in texts.items()}
    texts[db] = texts[db].replace("RUN-PART-", "run-")
    db_text = re.sub(r'("[a-z_]+_s"):\s*-?[0-9.e+-]+', r"\1:1.25", texts[db])
    db_text = re.sub(
        r'("(?:created_at|started_at|finished_at|added_at|at)"):\s*"[^"]*"', rf'\1:"{PINNED.isoformat()}"', db_text
    )
    texts[db] = db_text
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def ran_memo(tmp_path_factory, sandbox) -> Path:
    """The demo memo after a run of ``RAN`` (a template each test copies)."""
    root = tmp_path_factory.mktemp("snapshot-memo")
    memo_dir = prepare_demo(root=root / "demo")
    settings = demo_settings(sandbox.url, max_retries=0, source_ttl_hours=TTL_HOURS)
    loaded = load_memo(memo_dir)

    async def run() -> None:
        with clock.using(PINNED), MemoStore(memo_dir) as store:
            for section in RAN:  # one at a time: the seeded writer draws in the order it is asked
                await run_memo(
                    loaded,
                    [section],
                    store=store,
                    global_lists=GlobalStore(root / "g.json"),
                    settings=settings,
                    now=PINNED,
                )

    control(sandbox.url, "/_sandbox/reset")

    asyncio.run(run())
    _pin_volatile(memo_dir)
    return memo_dir


@pytest.fixture
def pinned(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    clock.use(PINNED)  # the product's own clock: make test's second pass moves it no further
    yield
    time.tzset()


def _app(tmp_path: Path, url: str, memo: Path | None = None) -> SourcedeskApp:
    if memo is not None:
        memo_dir = tmp_path / "memo"
        shutil.copytree(memo, memo_dir)
    else:
        memo_dir = prepare_demo(root=tmp_path / "demo")
    settings = demo_settings(url, max_retries=0, source_ttl_hours=TTL_HOURS)
    return SourcedeskApp(memo_dir, settings=settings, global_store=GlobalStore(tmp_path / "g.json"), watch_memo=False)


Steps = Callable[..., Awaitable[None]]


def keys(*pressed: str, grounded: bool = False, light: bool = False) -> Steps:
    """A ``run_before``: the theme, then ``pressed`` one at a time, each settled."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(pilot)
        if light:
            await pilot.press("t")
            await settle(pilot)
        if grounded:  # what the workbench does after a run: ground the note offline
            for section in RAN:
                check = await app.ground_section(section)
                assert check is not None
            app.store_changed()
            await settle(pilot)
        for key in pressed:
            await pilot.press(key)
            await settle(pilot)
        await steady(pilot)

    return run_before


async def steady(pilot) -> None:
    """Text cursors that do not blink: a picture taken mid-blink would differ from the last."""
    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False
    await pilot.pause()


def running(*pressed: str, light: bool = False) -> Steps:
    """A ``run_before``: the first section's run held at the writer, then ``pressed``."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(pilot)
        if light:
            await pilot.press("t")
        writing = stage_reached(app, "overview", "writing")
        await pilot.press("r")
        await asyncio.wait_for(writing.wait(), 120)  # a guard: the message ends the wait
        await pilot.pause()
        for key in pressed:
            await pilot.press(key)
            await pilot.pause()
        await steady(pilot)
        loading = [w for w in app.workers if w.group in ("section-load", "memo-load", "read-run")]
        if loading:  # (an empty list would wait for every worker, the held run too)
            await app.workers.wait_for_complete(loading)
        await pilot.pause()

    return run_before


# (id, memo state, run_before, sizes): memo state "before" (never run), "after" (RAN run), or
# "running" (overview held at the writer).
CASES: list[tuple[str, str, Steps]] = [
    ("memo-before", "before", keys()),
    ("memo-before-light", "before", keys(light=True)),
    ("memo-after", "after", keys(grounded=True)),
    ("memo-after-light", "after", keys(grounded=True, light=True)),
    ("memo-running", "running", running()),
    ("memo-running-light", "running", running(light=True)),
    ("section-before-sources", "before", keys("enter")),
    ("section-before-checks", "before", keys("enter", "7")),
    ("section-running", "running", running("enter")),
    ("section-after-sources", "after", keys("enter", grounded=True)),
    ("section-after-sources-light", "after", keys("enter", grounded=True, light=True)),
    ("section-after-report", "after", keys("enter", "2", grounded=True)),
    ("section-after-report-light", "after", keys("enter", "2", grounded=True, light=True)),
    ("section-after-warnings", "after", keys("enter", "3", grounded=True)),
    ("section-after-note", "after", keys("enter", "4", grounded=True)),
    ("section-after-web", "after", keys("enter", "5", grounded=True)),
    ("section-after-history", "after", keys("enter", "6", grounded=True)),
    ("section-after-checks", "after", keys("enter", "7", grounded=True)),
    ("modal-reject-domain", "after", keys("enter", "x", grounded=True)),
    ("modal-reject-name", "after", keys("enter", "down", "down", "down", "down", "down", "down", "n")),
    ("modal-namesakes", "after", keys("N")),
    ("modal-help-memo", "before", keys("question_mark")),
    ("modal-help-section", "after", keys("enter", "question_mark")),
    # (a query: with none, the palette lists its providers' commands in the order they answer)
    ("palette", "after", keys("ctrl+p", *"export")),
]

# Each picture as reviewed by eye, one line (the 80×24 and 160×45 pictures of a case alike).
SEEN = {
    "memo-before": "five sections, every one 'never run' with dashes for counts and cost; the why-line and the keys below",
    "memo-before-light": "the same table on the light theme: dark text on a pale background, accent keys",
    "memo-after": "overview and news fresh with their citation bars (1 weak), flags ⚠4 ✗1 ?2 and costs; the others never run",
    "memo-after-light": "the ran memo on the light theme, bars green/amber/red on white",
    "memo-running": "overview shows '● writing' in the accent colour, its why-line says c cancels; others never run",
    "memo-running-light": "the running row on the light theme",
    "section-before-sources": "overview's section screen before any run: empty Sources table, no set in the head line",
    "section-before-checks": "the Checks tab before a run: 'No note yet — r writes it; then v checks its URLs…', no rows",
    "section-running": "the section screen while its run writes: head '● writing', 'Running: writing… c cancels'",
    "section-after-sources": "kept sources E1–E6 with ✓ subject verdicts and ✓ pinned, a namesake removed; source detail",
    "section-after-sources-light": "the Sources tab on the light theme",
    "section-after-report": "counts line, filter select, one row per citation with status and support; uncited claim last",
    "section-after-report-light": "the Report tab on the light theme",
    "section-after-warnings": "Retrieval warnings (namesakes removed) and the note's warnings (out of range)",
    "section-after-note": "the note's text with its [^E1] markers highlighted and its sources list",
    "section-after-web": "the writer's web results with In set markers and their about verdicts",
    "section-after-history": "one ok run at 2026-03-01 09:00 marked current; the detail pane lists its record",
    "section-after-checks": "grounding only (offline, after the run) · 09:00:00: USD 41.2M supported, the uncited 140 percent not found",
    "modal-reject-domain": "the Reject a domain dialog over the section: nats.io, the subject's-own-domain warning, scope choice",
    "modal-reject-name": "the Reject a name dialog offering GNATS: scope choice, 'No kept source names GNATS', Reject and Cancel",
    "modal-namesakes": "the namesakes list: NATS Holdings from memo.yaml, and learned ones with where they came from",
    "modal-help-memo": "the memo screen's keys with their ids (generated from the bindings) and the symbols legend",
    "modal-help-section": "the section screen's keys (run, verify, reject…, tabs 1–7) with their ids, and the legend",
    "palette": "the command palette over the memo, 'export' typed: Export memo.md, 'assemble the section notes…'",
}


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x45"])
@pytest.mark.parametrize(("case", "state", "run_before"), CASES, ids=[c[0] for c in CASES])
def test_snapshot(snap_compare, tmp_path, sandbox, ran_memo, pinned, case, state, run_before, size):
    assert SEEN[case]  # reviewed, and described in one line
    control(sandbox.url, "/_sandbox/reset")
    if state == "running":
        control(sandbox.url, "/_sandbox/latency", {"writer": 60_000})
    try:
        app = _app(tmp_path, sandbox.url, ran_memo if state == "after" else None)
        assert snap_compare(app, terminal_size=size, run_before=run_before)
    finally:
        control(sandbox.url, "/_sandbox/reset")
