"""``make bench-memory``: peak memory and time of ``sourcedesk run`` against a huge writer answer.

A writer that answers with 50 MB must not take the machine down with it. This
starts a small loopback server that answers every writer call with a ``--mb`` MB
answer, then runs ``sourcedesk run DIR --json`` once per shape under
``/usr/bin/time -v`` (a process of its own, so only the product is measured; without
``/usr/bin/time`` the kernel's ``wait4`` count for the child is used) and
prints the peak resident set size, the wall time, the exit code, what the run
said and whether the previous note survived byte for byte:

* ``agent-json``          — Agent API JSON with its ``Content-Length`` announced;
* ``agent-json-streamed`` — the same body with no length (read until the connection closes);
* ``agent-sse``           — Agent API typed events (``writer_stream: true``), length announced;
* ``agent-sse-streamed``  — the same events with no length;
* ``sonar-json-streamed`` — legacy chat completions, no length.

Every run uses the product's own settings unless ``--max-response-bytes`` (and
``--max-answer-chars``) are given: with the defaults a 50 MB answer is over the
32 MiB byte cap; raising the cap above the answer shows the cost of reading it
whole and stopping at the note cap instead.

    make bench-memory                                              # the same as:
    python -m sourcedesk.sandbox.bench_memory                                 # 50 MB, every shape
    python -m sourcedesk.sandbox.bench_memory --max-response-bytes 67108864   # read it whole
    python -m sourcedesk.sandbox.bench_memory --shapes agent-sse --mb 10 --json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TIME = "/usr/bin/time"
CHUNK = 64 * 1024
SENTENCE = "Acme Robotics builds warehouse robots for mid-sized retailers [^V1]. "
SHAPES = ("agent-json", "agent-json-streamed", "agent-sse", "agent-sse-streamed", "sonar-json-streamed")

MEMO_YAML = """\
title: Acme Robotics — memory bench
subject: {name: Acme Robotics, url: https://acme-robotics.io}
writer: {web-search: false, target-words: 80}
sections:
  - id: overview
    title: Company overview
    questions: ["What does it do?"]
    include-sources:
      - provider: files
        glob: "notes/*.md"
"""
NOTE = "# Acme Robotics\n\nAcme Robotics builds warehouse robots for mid-sized retailers. It was founded in 2019.\n"


@dataclass(frozen=True)
class Body:
    """One canned answer: the bytes, their content type, and whether the length is announced."""

    data: bytes
    content_type: str
    announced: bool


def _text(size: int) -> str:
    return (SENTENCE * (size // len(SENTENCE) + 1))[:size]


def _agent_json(text: str) -> bytes:
    answer = {
        "id": "resp_bench",
        "object": "response",
        "status": "completed",
        "model": "perplexity/sonar",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
        "usage": {"input_tokens": 10, "output_tokens": 10, "cost": {"total_cost": 0.001}},
    }
    return json.dumps(answer).encode()


def _agent_sse(text: str) -> bytes:
    parts = [b"event: response.created\ndata: " + json.dumps({"type": "response.created"}).encode() + b"\n\n"]
    for start in range(0, len(text), CHUNK):
        delta = {"type": "response.output_text.delta", "delta": text[start : start + CHUNK]}
        parts.append(b"data: " + json.dumps(delta).encode() + b"\n\n")
    done = {"type": "response.completed", "response": {"status": "completed", "model": "perplexity/sonar"}}
    parts.append(b"data: " + json.dumps(done).encode() + b"\n\n")
    return b"".join(parts)


def _sonar_json(text: str) -> bytes:
    answer = {
        "id": "bench",
        "model": "sonar-pro",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10},
    }
    return json.dumps(answer).encode()


def bodies(size: int) -> dict[str, Body]:
    """Every shape's answer, about ``size`` bytes each; ``small`` is a normal answer for the first run."""
    text = _text(size)
    agent = _agent_json(text)
    sse = _agent_sse(text)
    return {
        "small": Body(_agent_json(SENTENCE * 3), "application/json", True),
        "agent-json": Body(agent, "application/json", True),
        "agent-json-streamed": Body(agent, "application/json", False),
        "agent-sse": Body(sse, "text/event-stream", True),
        "agent-sse-streamed": Body(sse, "text/event-stream", False),
        "sonar-json-streamed": Body(_sonar_json(text), "application/json", False),
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        shape = self.path.strip("/").split("/", 1)[0]
        body = self.server.bodies.get(shape)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", body.content_type)
        if body.announced:
            self.send_header("Content-Length", str(len(body.data)))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        try:
            view = memoryview(body.data)
            for start in range(0, len(view), CHUNK):
                self.wfile.write(view[start : start + CHUNK])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at its cap: that is the point
        if not body.announced:
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, served: dict[str, Body]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.bodies = served


@dataclass
class Measured:
    shape: str
    body_bytes: int
    exit_code: int
    status: str
    peak_rss_mb: float
    wall_s: float
    note_kept: bool
    note_bytes: int
    message: str


def _rss_and_wall(report: str) -> tuple[float, float]:
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", report)
    seconds = 0.0
    if wall:
        for part in wall.group(1).split(":"):
            seconds = seconds * 60 + float(part)
    return (int(rss.group(1)) / 1024 if rss else float("nan")), seconds


def _environment(base: Path, url: str, shape: str, extra: dict[str, str]) -> dict[str, str]:
    keep = ("SOURCEDESK_CLOCK_SHIFT_DAYS", "SOURCEDESK_TODAY")  # the day it runs on is not a setting
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCEDESK_") or k in keep}
    env.update(
        SOURCEDESK_CONFIG_DIR=str(base / "config"),
        SOURCEDESK_DATA_DIR=str(base / "data"),
        SOURCEDESK_LOG_DIR=str(base / "log"),
        SOURCEDESK_WRITER_URL=f"{url}/{shape}",
        SOURCEDESK_WRITER_API="perplexity-sonar" if shape.startswith("sonar") else "perplexity",
        SOURCEDESK_WRITER_STREAM="true" if "sse" in shape else "false",
        PERPLEXITY_API_KEY="bench-memory-key",
    )
    env.update(extra)
    return env


@dataclass
class _Ran:
    code: int
    stdout: str
    stderr: str
    peak_rss_mb: float
    wall_s: float


def _run(memo: Path, env: dict[str, str]) -> _Ran:
    """``sourcedesk run MEMO --json`` in a process of its own, measured by ``/usr/bin/time -v``
    (or, where it is not installed, by the kernel's own count for the child, ``wait4``)."""
    timed = Path(TIME).exists()
    command = [*([TIME, "-v"] if timed else []), sys.executable, "-m", "sourcedesk.tui.cli", "run", str(memo), "--json"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = code = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    rss, reported = _rss_and_wall(stderr) if timed else (usage.ru_maxrss / 1024, wall)
    return _Ran(code, stdout, stderr, rss, reported or wall)


def _outcome(stdout: str) -> tuple[str, str]:
    try:
        [section] = json.loads(stdout)
    except (ValueError, TypeError):
        return "?", stdout.strip()[:200]
    warnings = [w for w in section.get("warnings", []) if "writer" in w.lower()]
    return str(section.get("status")), str(section.get("message") or "; ".join(warnings))


def measure(shapes: list[str], size: int, extra: dict[str, str]) -> list[Measured]:
    """One run per shape against a ``size``-byte answer (``extra``: SOURCEDESK_* settings)."""
    served = bodies(size)
    server = _Server(served)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    out: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        base = Path(tmp)
        first = base / "memo"
        (first / "notes").mkdir(parents=True)
        (first / "memo.yaml").write_text(MEMO_YAML, encoding="utf-8")
        (first / "notes" / "acme.md").write_text(NOTE, encoding="utf-8")
        ran = _run(first, _environment(base, url, "small", extra))
        note = first / "sections" / "01-overview.md"
        if ran.code != 0 or not note.is_file():
            raise SystemExit(f"the first, small run failed ({ran.code}): {ran.stdout[-400:]} {ran.stderr[-400:]}")
        for shape in shapes:
            memo = base / f"memo-{shape}"
            shutil.copytree(first, memo)
            note = memo / "sections" / "01-overview.md"
            before = hashlib.sha256(note.read_bytes()).hexdigest()
            ran = _run(memo, _environment(base, url, shape, extra))
            status, message = _outcome(ran.stdout)
            after = note.read_bytes() if note.is_file() else b""
            out.append(
                Measured(
                    shape=shape,
                    body_bytes=len(served[shape].data),
                    exit_code=ran.code,
                    status=status,
                    peak_rss_mb=round(ran.peak_rss_mb, 1),
                    wall_s=round(ran.wall_s, 2),
                    note_kept=hashlib.sha256(after).hexdigest() == before,
                    note_bytes=len(after),
                    message=message,
                )
            )
    server.shutdown()
    server.server_close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sourcedesk.sandbox.bench_memory", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--mb", type=float, default=50.0, help="size of the writer's answer in MB (default 50)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, of: {', '.join(SHAPES)}")
    parser.add_argument("--max-response-bytes", type=int, help="writer_max_response_bytes for the runs")
    parser.add_argument("--max-answer-chars", type=int, help="writer_max_answer_chars for the runs")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args(argv)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(SHAPES)}")
    extra: dict[str, str] = {}
    if args.max_response_bytes:
        extra["SOURCEDESK_WRITER_MAX_RESPONSE_BYTES"] = str(args.max_response_bytes)
    if args.max_answer_chars:
        extra["SOURCEDESK_WRITER_MAX_ANSWER_CHARS"] = str(args.max_answer_chars)
    started = time.monotonic()
    rows = measure(shapes, int(args.mb * 1_000_000), extra)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        return 0
    print(f"writer answer ≈ {args.mb:g} MB; settings: {extra or 'the defaults'}")
    print(f"{'shape':<22}{'body':>10}{'exit':>6}  {'status':<9}{'peak RSS':>10}{'wall':>8}  note        message")
    for r in rows:
        kept = "kept" if r.note_kept else f"{r.note_bytes:,} B"
        print(
            f"{r.shape:<22}{r.body_bytes / 1e6:>8.1f}MB{r.exit_code:>6}  {r.status:<9}{r.peak_rss_mb:>7.0f} MB"
            f"{r.wall_s:>7.1f}s  {kept:<10}  {r.message[:150]}"
        )
    print(f"({time.monotonic() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
