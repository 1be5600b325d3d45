"""The desk in a real browser: Debian's headless Chromium on ``sourcedesk serve --demo``.

It opens the served page, waits for the memo screen, types ``a``, waits until every section
is fresh, opens the first section and takes a screenshot (kept in ``test-artifacts/``). What
it asserts is read from the page's terminal: xterm.js's accessibility tree, the screen's rows
as DOM text. Closing the tab ends that session's app process; Ctrl-C ends the server.

Runs when a ``chromium`` is on PATH (``.ci/run`` installs Debian's); otherwise ``make test``
says in one line that it did not run.
"""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import pytest

from tests.cdp import Chromium, chromium_binary
from tests.conftest import BROWSER_NOT_RUN
from tests.serve_support import alive, until
from tests.test_serve_cli import Served

NOT_RUN = f"{BROWSER_NOT_RUN}: no chromium on PATH (apt-get install chromium chromium-driver)"
pytestmark = pytest.mark.skipif(chromium_binary() is None, reason=NOT_RUN)

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
SECTIONS = {  # the demo memo's sections, as the memo screen titles them
    "overview": "Company overview",
    "product": "Product and technology",
    "competitors": "Competitive landscape",
    "funding": "Funding and investors",
    "news": "Recent news and risks",
}
# The first section's pinned sources come from the sandbox's bundled corpus; this is one of them.
OVERVIEW_SOURCE = "About NATS | NATS.io"
RUN_BOUND_S = 600.0  # five sections against the sandbox's latency: ~30 s on a loaded 2-core machine
BOUND_S = 120.0

# textual-serve's page keeps its xterm.js Terminal inside a private object
# (`this.terminal = new Terminal(…)`). Catch it as it is stored and switch on xterm's
# screen-reader mode, which keeps the screen's text as rows in `.xterm-accessibility-tree`.
SCREEN_READER = """
Object.defineProperty(Object.prototype, 'terminal', {
  configurable: true,
  set(value) {
    Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true, enumerable: true});
    if (value && value.options) { value.options.screenReaderMode = true; }
  },
});
"""
SCREEN_TEXT = "(document.querySelector('.xterm-accessibility-tree') || {}).innerText || ''"


def test_the_served_demo_in_chromium_runs_every_section_and_opens_one(tmp_path):
    served = Served("--demo", "--port", "0")
    try:
        asyncio.run(_in_the_browser(served))
    finally:
        served.stop()


async def _in_the_browser(served: Served) -> None:
    url_line = re.compile(r"^\s+(http://127\.0\.0\.1:\d+/)$")
    await until(lambda: any(url_line.match(line) for line in served.out), "the URL to open", BOUND_S)
    url = next(m.group(1) for line in served.out if (m := url_line.match(line)))
    async with Chromium() as page:
        await page.before_every_page(SCREEN_READER)
        await page.navigate(url)

        async def screen() -> str:
            return str(await page.evaluate(SCREEN_TEXT))

        async def shows(*words: str) -> bool:
            text = await screen()
            return all(word in text for word in words)

        async def wait(condition, what: str, bound_s: float = BOUND_S) -> None:
            try:
                await until(condition, what, bound_s)
            except AssertionError as failed:
                screen_now = await screen()
                raise AssertionError(
                    f"{failed}\nthe page's terminal:\n{screen_now}\nthe server: {served.out}"
                ) from None

        await wait(lambda: shows(*SECTIONS.values(), "never run"), "the memo screen")
        await page.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
        await page.press("a")

        async def all_fresh() -> bool:
            rows = _section_rows(await screen())
            failed = {key: row for key, row in rows.items() if "failed" in row or "degraded" in row}
            assert not failed, failed  # a run that went wrong fails now, not at the bound
            return len(rows) == len(SECTIONS) and all(" fresh " in row for row in rows.values())

        await wait(all_fresh, "every section to be fresh", RUN_BOUND_S)
        await page.screenshot(ARTIFACTS / "serve-memo-screen.png")

        await page.press("enter")  # the cursor is on the first section
        # its sources, their about verdicts (judged after the rows are shown) and its keys
        await wait(lambda: shows(OVERVIEW_SOURCE, "Sources", "esc Back", "✓ subject"), "the overview section's sources")
        shot = await page.screenshot(ARTIFACTS / "serve-section-screen.png")
        assert shot.stat().st_size > 10_000  # a picture of the screen, not an empty frame
        text = await screen()
        assert SECTIONS["overview"] in text and OVERVIEW_SOURCE in text

        pid = int(next(m.group(1) for line in served.out if (m := re.search(r"opened .*\(pid (\d+);", line))))
        await page.close_tab()
        await until(lambda: not alive(pid), "the closed tab's app process to end", BOUND_S)
        ended = re.compile(rf"session 1 ended: .* \(pid {pid}\)$")
        await until(
            lambda: any(ended.match(line) for line in served.out), f"the session's end in {served.out}", BOUND_S
        )

    served.proc.send_signal(signal.SIGINT)
    await until(lambda: served.proc.poll() is not None, "the server to stop on Ctrl-C", BOUND_S)
    assert served.proc.returncode == 0


def _section_rows(text: str) -> dict[str, str]:
    """The memo screen's row of each section (its title, id, status, …), by section id."""
    rows = {}
    for line in text.splitlines():
        for key, title in SECTIONS.items():
            if f"{title} {key} " in line:
                rows[key] = line
    return rows
