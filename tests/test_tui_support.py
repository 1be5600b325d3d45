"""Helpers shared by the TUI tests (the app driven through Textual's Pilot). No tests here."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable
from pathlib import Path

import httpx
from textual.widgets import DataTable

from sourcedesk.store.global_store import GlobalStore
from sourcedesk.tui.app import SourcedeskApp
from sourcedesk.tui.demo import demo_settings, prepare_demo

SIZE = (160, 45)


def control(url: str, path: str, payload=None) -> dict:
    with httpx.Client(base_url=url, timeout=5) as client:
        if payload is None and path.endswith("stats"):
            return client.get(path).json()
        return client.post(path, json=payload if payload is not None else {}).json()


def exa_requests(url: str) -> int:
    return control(url, "/_sandbox/stats")["exa"]["requests"]


def make_app(tmp_path: Path, sandbox_url: str, **settings) -> SourcedeskApp:
    """The demo memo, fresh, against the given sandbox; short timeouts so failures are quick."""
    memo = prepare_demo(root=tmp_path / "demo")
    values = {"max_retries": 0, "writer_timeout_s": 10.0, "request_timeout_s": 5.0}
    values.update(settings)
    return SourcedeskApp(
        memo, settings=demo_settings(sandbox_url, **values), global_store=GlobalStore(tmp_path / "demo" / "global.json")
    )


def busy_workers(app) -> list:
    """The app's and its screens' workers still at work (the memo.yaml and terminal watchers
    run for the whole session and are left out)."""
    return [w for w in app.workers if not w.is_finished and not (w.group or "").startswith("watch")]


async def settle(pilot) -> None:
    """Until every run, check and loader has finished and the screens have applied what their
    messages said: awaits the workers (each may start another: a finished run makes the
    screens read again), never a clock."""
    app = pilot.app
    await pilot.pause()
    while busy := busy_workers(app):
        await app.workers.wait_for_complete(busy)
        await pilot.pause()


async def press(pilot, *keys: str) -> None:
    """Press ``keys``, then wait for everything they started."""
    await pilot.press(*keys)
    await settle(pilot)


def stage_reached(app, section: str, stage: str) -> asyncio.Event:
    """An event set when ``section``'s run reports ``stage`` (the message the screens get)."""
    reached = asyncio.Event()
    progress = app._progress

    def spy(section_id: str, at: str) -> None:
        progress(section_id, at)
        if (section_id, at) == (section, stage):
            reached.set()

    app._progress = spy  # the run reads the app's progress callback when it starts
    return reached


async def run_and_wait(pilot, key: str = "r", section: str | None = None) -> None:
    """Start a run (``key``: r, R or a) and wait for it — and what it made the screens read."""
    app = pilot.app
    before = dict(app.last_outcomes)
    await press(pilot, key)
    if section is not None:
        assert app.last_outcomes.get(section) is not before.get(section), f"{section} did not run; {app.notices}"


def cells(table: DataTable, key: str) -> list[str]:
    return [str(c) for c in table.get_row(key)]


def column(table: DataTable, column_key: str) -> list[str]:
    index = [c.key.value for c in table.ordered_columns].index(column_key)
    return [str(table.get_row(row.key)[index]) for row in table.ordered_rows]


async def select_row(pilot, table: DataTable, predicate: Callable[[list[str]], bool]) -> str:
    """Put the cursor on the first row whose cells satisfy ``predicate``; returns its key."""
    for index, row in enumerate(table.ordered_rows):
        if predicate([str(c) for c in table.get_row(row.key)]):
            table.move_cursor(row=index)
            await pilot.pause()
            return row.key.value
    raise AssertionError(f"no matching row in #{table.id}")


def screen_text(app) -> str:
    """What the terminal shows, as plain text (from the SVG screenshot)."""
    svg = app.export_screenshot()
    runs = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape("".join(runs)).replace("\xa0", " ")
