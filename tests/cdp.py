"""A small Chrome DevTools Protocol client: Debian's headless Chromium, driven over a websocket.

Enough for the browser test of ``sourcedesk serve``: open a page, type keys, read the page's
text, take a screenshot, close the tab. aiohttp (already installed for textual-serve) is the
websocket client, so the test needs no driver package and no downloaded browser. No tests here.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

# What this closed network needs: no sandbox (root), no GPU, and none of Chromium's own
# connections to Google's services (they fail here, many at a time, and slow the start).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
)

# Keys as DevTools sends them (a keydown carrying the text it types, as a keyboard would).
KEYS = {
    "enter": {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"},
    "escape": {"key": "Escape", "code": "Escape", "windowsVirtualKeyCode": 27},
}


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class CDPError(RuntimeError):
    pass


class Chromium:
    """``async with Chromium() as page:`` a headless browser with one tab, ended on the way out."""

    def __init__(self, *, width: int = 1400, height: int = 900, start_bound_s: float = 60.0) -> None:
        binary = chromium_binary()
        if binary is None:
            raise RuntimeError("no chromium on PATH")
        self.binary = binary
        self.width, self.height = width, height
        self.start_bound_s = start_bound_s
        self._profile = tempfile.TemporaryDirectory(prefix="sourcedesk-chromium-")
        self._proc: subprocess.Popen[bytes] | None = None
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self.port = 0
        self.target_id = ""

    async def __aenter__(self) -> Chromium:
        self._proc = subprocess.Popen(
            [self.binary, *FLAGS, f"--user-data-dir={self._profile.name}", f"--window-size={self.width},{self.height}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            self.port = await self._devtools_port()
            self._http = aiohttp.ClientSession()
            async with self._http.get(f"http://127.0.0.1:{self.port}/json/list") as response:
                targets = await response.json()
            page = next(t for t in targets if t["type"] == "page")
            self.target_id = page["id"]
            self._ws = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
            await self.call("Page.enable")  # scripts for new documents run only with the Page domain on
            # A headless window never has the focus: without this, focus() fires no focus event,
            # and a page that waits for one (xterm.js tells the app it was focused) never gets it.
            await self.call("Emulation.setFocusEmulationEnabled", enabled=True)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                await asyncio.to_thread(self._proc.wait, 30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                await asyncio.to_thread(self._proc.wait, 30)
        with contextlib.suppress(OSError):
            self._profile.cleanup()

    async def _devtools_port(self) -> int:
        """Chromium writes the port it picked to DevToolsActivePort in its profile."""
        active = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + self.start_bound_s
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self._proc.returncode} before it was ready")
            with contextlib.suppress(OSError, ValueError, IndexError):
                return int(active.read_text().split()[0])
            await asyncio.sleep(0.1)
        raise TimeoutError(f"chromium did not open its DevTools port within {self.start_bound_s:.0f} s")

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are dropped)."""
        assert self._ws is not None
        number = next(self._ids)
        await self._ws.send_json({"id": number, "method": method, "params": params})
        while True:
            message = await self._ws.receive_json()
            if message.get("id") == number:
                if "error" in message:
                    raise CDPError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise CDPError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def before_every_page(self, script: str) -> None:
        await self.call("Page.addScriptToEvaluateOnNewDocument", source=script)

    async def navigate(self, url: str) -> None:
        await self.call("Page.navigate", url=url)

    async def press(self, key: str) -> None:
        """One key, down and up: a named one from ``KEYS`` or a single character."""
        if key in KEYS:
            fields = dict(KEYS[key])
        else:
            fields = {"key": key, "text": key, "code": f"Key{key.upper()}", "windowsVirtualKeyCode": ord(key.upper())}
        text = fields.pop("text", None)
        await self.call("Input.dispatchKeyEvent", type="keyDown", **fields, **({"text": text} if text else {}))
        await self.call("Input.dispatchKeyEvent", type="keyUp", **fields)

    async def screenshot(self, path: Path) -> Path:
        shot = await self.call("Page.captureScreenshot", format="png")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    async def close_tab(self) -> None:
        """Close the tab as the analyst would (the page's websocket closes with it)."""
        assert self._http is not None
        async with self._http.get(f"http://127.0.0.1:{self.port}/json/close/{self.target_id}") as response:
            await response.read()
        if self._ws is not None:
            await self._ws.close()
            self._ws = None
