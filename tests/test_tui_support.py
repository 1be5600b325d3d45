"""Helpers shared by the TUI tests (the app driven through Textual's Pilot). No tests here."""

from __future__ import annotations

import html
import re
import time
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


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; notices: {pilot.app.notices}")
        await pilot.pause(0.05)


async def run_and_wait(pilot, key: str = "r", section: str | None = None) -> None:
    app = pilot.app
    await pilot.press(key)
    await wait_for(
        pilot, lambda: bool(app.jobs) or (section is not None and section in app.last_outcomes), what="the run to start"
    )
    await wait_for(pilot, lambda: not app.jobs, what="the run to finish")
    await pilot.pause()


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
