"""The workbench under a real pseudo-terminal shows a hostile source without obeying it.

The store holds a frozen set exactly as a hostile server would have sent it — escape
sequences that clear the screen, retitle the terminal, write the clipboard and plant
a hidden link, a right-to-left override — as an older version could have stored it
(the worst case: nothing was cleaned on the way in), plus a note and a run record
carrying the same. The app is started as the analyst starts it (``sourcedesk open``),
driven by keystrokes through the section's sources, detail, warnings and note, and
every byte it writes to the terminal is searched for the injected ones.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from sourcedesk.core.domain.models import RunWarning, Source, SourceSet
from sourcedesk.store.memo_store import MemoStore
from tests.hostile_server import wait_until

ROOT = Path(__file__).resolve().parents[1]
MEMO_YAML = """\
title: Acme — profile
subject: {name: Acme Robotics, url: https://acme-robotics.io}
sections:
  - id: overview
    title: Company overview
    include-sources: [{provider: exa, query: "{{subject}} overview", pin: none}]
"""
CLEAR = "\x1b[2J\x1b[3J\x1b[H"
RETITLE = "\x1b]0;PWNED-TITLE\x07"
CLIPBOARD = "\x1b]52;c;UFdORUQtQ0xJUA==\x07"
LINK = "\x1b]8;;https://evil.example/steal\x07click me\x1b]8;;\x07"
RLO = "\u202e"
# Bytes that only the injected text could have put on the terminal.
INJECTED = [
    b"PWNED-TITLE",
    b"\x1b]0;",
    b"\x1b]2;",
    b"\x1b]52;",
    b"UFdORUQtQ0xJUA==",
    b"evil.example",
    b"\x1b[3J",
    RLO.encode(),
    "\u2066".encode(),
]


def _hostile_memo(memo: Path) -> None:
    memo.mkdir()
    (memo / "memo.yaml").write_text(MEMO_YAML, encoding="utf-8")
    source = Source(
        provider="exa",
        url="https://acme-robotics.io/about",
        title=f"Acme{CLEAR}{RETITLE} Robotics {RLO}fdp.exe",
        summary=f"Acme builds robots.{CLIPBOARD} Founded 2019.",
        highlights=[f"Read more: {LINK}", f"\u2066isolated{RLO} text"],
        facts={"ceo": f"Jane{RETITLE} Doe", "hq": f"Berlin{CLEAR}"},
        text=f"Line one\n{CLEAR}Line two {CLIPBOARD}",
        marker="E1",
    )
    with MemoStore(memo) as store:
        saved = store.save_source_set(
            SourceSet(
                section="overview",
                fingerprint="0" * 64,
                sources=[source],
                warnings=[RunWarning(code="info", message=f"Exa said {RETITLE}hello{CLIPBOARD}")],
            )
        )
        run_id = store.save_run(
            {"section": "overview", "status": "failed", "message": f"writer failed: {RETITLE}{LINK}", "report": None}
        )
        store.update_section_state("overview", {"last_run": run_id, "last_status": "failed"})
    note = memo / "sections" / "01-overview.md"
    note.parent.mkdir()
    note.write_text(
        f"---\nsection: overview\nrun_id: {run_id}\nsource_set:\n  id: {saved.id}\n---\n"
        f"# Company overview\n\nAcme builds robots.{RETITLE} [^E1]\n\n{LINK}\n\n"
        f"## Sources (retrieved)\n\n[^E1]: [About {RLO}Acme](https://acme-robotics.io/about)\n",
        encoding="utf-8",
    )


def test_a_hostile_source_never_reaches_the_terminal(tmp_path):
    memo = tmp_path / "memo"
    _hostile_memo(memo)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 170, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor", "TEXTUAL_ANIMATIONS": "none"}
    env.pop("TEXTUAL", None)
    for fixed in ("COLUMNS", "LINES"):  # set by pytest-xdist; the terminal's size is the pty's
        env.pop(fixed, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sourcedesk.tui.cli", "open", str(memo)],
        cwd=ROOT,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    screen: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            screen.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def raw() -> bytes:
        return b"".join(screen)

    def settle(expect: bytes, timeout: float = 20) -> None:
        assert wait_until(lambda: expect in raw(), timeout), raw()[-3000:]
        time.sleep(0.4)

    try:
        settle(b"Company overview")  # the memo screen
        os.write(master, b"\r")  # open the section: sources table and the highlighted source's detail
        settle(b"Founded 2019")
        os.write(master, b"3")  # warnings
        settle(b"hello")
        os.write(master, b"4")  # the note
        settle(b"Acme builds robots.")
        os.write(master, b"q")
        wait_until(lambda: proc.poll() is not None, 10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        reader.join(timeout=5)
        os.close(master)

    output = raw()
    for injected in INJECTED:
        assert injected not in output, injected
    # Textual's own string sequence is the pointer shape (OSC 22); nothing else of the kind, no stray BEL.
    own = re.sub(rb"\x1b\]22;[\w-]*\x07", b"", output)
    assert b"\x1b]" not in own and b"\x07" not in own and b"\x1bP" not in own
    # …and the text around them was shown, cleaned (read with Textual's own cursor and style codes taken out)
    text = re.sub(rb"\x1b\[[0-?]*[ -/]*[@-~]", b"", output).decode("utf-8", errors="replace")
    for shown in ("Acme Robotics fdp.exe", "ceo: Jane Doe", "Read more: click me", "Exa said hello"):
        assert shown in text, shown


def test_the_workbench_quits_when_its_terminal_goes_away(tmp_path):
    """A closed tmux pane or a dropped ssh session hangs up the terminal: the workbench must
    leave (releasing the memo's lock), not spin on end-of-file for ever."""
    memo = tmp_path / "memo"
    _hostile_memo(memo)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 170, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
    env.pop("TEXTUAL", None)
    for fixed in ("COLUMNS", "LINES"):  # set by pytest-xdist; the terminal's size is the pty's
        env.pop(fixed, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sourcedesk.tui.cli", "open", str(memo)],
        cwd=ROOT,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert wait_until(lambda: b"Company overview" in b"".join(seen), 20)
        os.close(master)  # the terminal hangs up
        master = -1
        assert wait_until(lambda: proc.poll() is not None, 10), "the workbench kept running without a terminal"
        # and the memo is free for the next session
        MemoStore(memo).close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        if master >= 0:
            os.close(master)
