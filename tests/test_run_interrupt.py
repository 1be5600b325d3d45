"""``sourcedesk run`` in a terminal: progress on stderr as it happens, and Ctrl-C loses nothing finished.

The real command in a real process: stdout is a pipe (a script reading the JSON),
stderr is a pseudo-terminal (the analyst watching), and the writer is a loopback
server that answers one section at once and never answers the other.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.hostile_server import HostileServer, Reply

ROOT = Path(__file__).resolve().parents[1]
MEMO_YAML = """\
title: Acme — profile
subject: {name: Acme Robotics, url: https://acme-robotics.io}
writer: {web-search: false, target-words: 80}
sections:
  - id: fast
    title: Quick facts
  - id: slow
    title: Deep dive STALL-THIS-SECTION
"""
ANSWER = {  # a completed Agent API response (the default writer API)
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "model": "perplexity/sonar",
    "output": [
        {
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Acme builds robots.", "annotations": []}],
        }
    ],
    "usage": {"input_tokens": 10, "output_tokens": 4, "total_tokens": 14, "cost": {"total_cost": 0.001}},
}


def test_ctrl_c_during_run_json_prints_the_finished_sections_and_exits_130(tmp_path):
    memo = tmp_path / "memo"
    memo.mkdir()
    (memo / "memo.yaml").write_text(MEMO_YAML, encoding="utf-8")
    with HostileServer() as writer:
        writer.serve(
            "writer",
            Reply(stall_s=60, when_body_contains=b"STALL-THIS-SECTION"),
            Reply(body=json.dumps(ANSWER).encode()),
        )
        env = {
            **os.environ,
            "SOURCEDESK_WRITER_URL": writer.url,
            "PERPLEXITY_API_KEY": "pplx-interrupt-test-key",
            "SOURCEDESK_WRITER_DEADLINE_S": "120",
            "PYTHONUNBUFFERED": "1",
        }
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "sourcedesk.tui.cli", "run", str(memo), "--json"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
        )
        os.close(slave)
        terminal: list[bytes] = []
        arrived = threading.Condition()  # notified with every chunk the terminal shows

        def read_terminal() -> None:
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    return
                if not chunk:
                    return
                with arrived:
                    terminal.append(chunk)
                    arrived.notify_all()

        def shown() -> str:
            return b"".join(terminal).decode(errors="replace")

        reader = threading.Thread(target=read_terminal, daemon=True)
        reader.start()
        try:
            with arrived:
                shows_both = arrived.wait_for(lambda: "fast: saved" in shown() and "slow: writing" in shown(), 60)
            assert shows_both, shown()
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
        reader.join(timeout=5)
        os.close(master)

    assert proc.returncode == 130
    outcomes = json.loads(out)
    by_section = {o["section"]: o for o in outcomes}
    assert [o["section"] for o in outcomes] == ["fast", "slow"]
    assert by_section["fast"]["status"] == "ok" and Path(by_section["fast"]["note_path"]).is_file()
    assert by_section["slow"]["status"] == "cancelled" and "previous note is unchanged" in by_section["slow"]["message"]
    assert not (memo / "sections" / "02-slow.md").exists()
    progress = shown()
    assert "fast: retrieving" in progress and "fast: writing" in progress and "fast: saved [1 done]" in progress
    assert "sourcedesk: interrupted" in progress
