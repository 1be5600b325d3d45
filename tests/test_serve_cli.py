"""``sourcedesk serve`` as the analyst runs it: the real command in its own process.

Off loopback it makes a token and prints it once, refuses the page without it and starts no
app; past --max-sessions the page says the desk is busy; Ctrl-C ends every session's app
and the server (exit 0). Bad arguments are one line and exit 2, before anything is served.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import aiohttp

from sourcedesk.tui.cli import main
from tests.serve_support import BOUND_S, alive, children, connect, origin_of, read_screen, until

ROOT = Path(__file__).resolve().parents[1]
URL_WITH_TOKEN = re.compile(r"(http://127\.0\.0\.1:\d+/)\?token=(\S+)")
OPENED = re.compile(r"session (\d+) opened from \S+ \(pid (\d+);")


class Served:
    """``sourcedesk serve …`` running, its output collected line by line as it comes."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sourcedesk.tui.cli", "serve", *args],
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))

    def all_output(self) -> str:
        for reader in self._readers:
            reader.join(BOUND_S)
        return "\n".join(self.out + self.err)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(BOUND_S)


def test_off_loopback_a_token_is_made_printed_once_and_required_and_ctrl_c_ends_every_session(tmp_path):
    served = Served("--demo", "--host", "0.0.0.0", "--port", "0", "--max-sessions", "2")
    try:
        asyncio.run(_scenario(served))
        output = served.all_output()
    finally:
        served.stop()
    token = URL_WITH_TOKEN.search(output).group(2)
    assert output.count(token) == 1, output  # printed once, never again
    logs = Path(os.environ["SOURCEDESK_LOG_DIR"])
    for path in logs.rglob("*") if logs.exists() else []:
        assert not path.is_file() or token not in path.read_text(errors="replace"), path


async def _scenario(served: Served) -> None:
    await until(lambda: any(URL_WITH_TOKEN.search(line) for line in served.out), "the URL with its token")
    base, token = next(m.groups() for line in served.out if (m := URL_WITH_TOKEN.search(line)))
    assert any("printed only this once" in line for line in served.out)
    async with aiohttp.ClientSession() as client:
        async with client.get(base) as response:
            assert response.status == 403
        async with client.get(base, params={"token": token[:-1] + "x"}) as response:
            assert response.status == 403
        assert children(served.proc.pid) == []  # no app was started

        sockets = []
        for _ in range(2):
            async with client.get(base, params={"token": token}) as response:
                assert response.status == 200
                ws_url = re.search(r'data-session-websocket-url="([^"]+)"', await response.text()).group(1)
            sockets.append(await connect(client, ws_url, origin_of(base)))
        for ws in sockets:  # two workbenches on one memo: sections are held while they run, not the memo
            await read_screen(ws, bytearray(), b"Company overview")
        async with client.get(base, params={"token": token}) as response:
            assert response.status == 503
            assert "The desk is busy" in await response.text()
        pids = [int(m.group(2)) for line in served.out if (m := OPENED.search(line))]
        assert len(pids) == 2 and all(alive(pid) for pid in pids)
        assert sorted(children(served.proc.pid)) == sorted(pids)

        served.proc.send_signal(signal.SIGINT)  # Ctrl-C
        await until(lambda: served.proc.poll() is not None, "the server to stop")
    assert served.proc.returncode == 0
    assert not any(alive(pid) for pid in pids)
    for pid in pids:
        assert any(line.startswith("session ") and f"(pid {pid})" in line for line in served.out), served.out
    await until(lambda: "sourcedesk serve stopped." in served.err, "the server's last word")


def test_bad_arguments_are_refused_before_anything_is_served(tmp_path, capsys):
    memo = tmp_path / "nowhere"
    assert main(["serve", "--token", "too-short"]) == 2
    assert "at least 16 characters" in capsys.readouterr().err
    assert main(["serve", str(tmp_path), "--demo"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["serve", str(memo), "--port", "0"]) == 2
    assert str(memo) in capsys.readouterr().err
    assert main(["serve", "--demo", "--max-sessions", "0"]) == 2
    assert "--max-sessions must be at least 1" in capsys.readouterr().err
