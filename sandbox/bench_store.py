"""``make bench-store``: the store's share of a frozen re-run, on TinyDB and on PostgreSQL.

A frozen re-run of a 20-section memo against the sandbox at 0 ms latency (no network wait to
hide behind), with the time spent inside the store measured explicitly (``StoreClock``): for
``run_memo`` in this process and for the ``sourcedesk run DIR`` command in a process of its
own. The target is the same on both backends: the store's share at most 10% of the wall
time. The PostgreSQL figure uses a real server (``sourcedesk.sandbox.pg_server``) on
loopback with its default durability (fsync on), started for the bench and stopped after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import HasFileno

from sourcedesk.core.config.settings import Settings
from sourcedesk.sandbox.bench import _check, _timed, sandbox_process, write_bench_memo

_MISSING = object()


def _store_classes() -> list[type]:
    from sourcedesk.store.global_store import GlobalStore
    from sourcedesk.store.memo_store import MemoStore
    from sourcedesk.store.postgres.global_store import PgGlobalStore
    from sourcedesk.store.postgres.memo_store import PgMemoStore

    return [MemoStore, GlobalStore, PgMemoStore, PgGlobalStore]


class StoreClock:
    """Wall time spent inside the memo and global stores, measured at the outermost call.

    Every public method of both store classes is wrapped for the duration of a ``with``
    block; a store method calling another (``update_section_state`` → ``section_state``)
    is counted once. Payload files are read and written inside those methods, so they count.
    A run writes its records from worker threads, so two sums are kept: ``loop_s``, the
    time the thread that runs the event loop spent in the store (nothing else moved
    meanwhile), and ``seconds``: that plus the writes the worker threads made (waiting in
    the queue for another thread's write is not counted; the write itself is, in full,
    though other sections' work goes on meanwhile).
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.loop_s = 0.0
        self.calls: dict[str, list[float]] = {}
        self._local = threading.local()
        self._lock = threading.Lock()
        self._main = threading.get_ident()
        self._saved: list[tuple[Any, str, object]] = []

    def _wrap(self, cls: type, name: str):
        original = getattr(cls, name)
        clock = self

        def timed(*args, **kwargs):
            depth = getattr(clock._local, "depth", 0)
            on_loop = threading.get_ident() == clock._main
            if depth and not (name == "_write_runs" and not on_loop):
                return original(*args, **kwargs)
            clock._local.depth = depth + 1
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                took = time.perf_counter() - t0
                clock._local.depth = depth
                with clock._lock:
                    if on_loop:  # the loop waited for all of it
                        clock.loop_s += took
                        clock.seconds += took
                    elif name == "_write_runs":  # off the loop, count the writing, not the queueing
                        clock.seconds += took
                    clock.calls.setdefault(f"{cls.__name__}.{name}", []).append(took)

        return timed

    def __enter__(self) -> StoreClock:
        self.fsync_s = 0.0
        self.fsyncs = 0
        real_fsync = os.fsync  # the atomic writes' fsync: they call os.fsync
        clock = self

        def fsync(fd: int | HasFileno) -> None:  # how much of the store's time is the disk's (notes' fsyncs are not)
            if not getattr(clock._local, "depth", 0):
                real_fsync(fd)
                return
            t0 = time.perf_counter()
            try:
                real_fsync(fd)
            finally:
                with clock._lock:
                    clock.fsync_s += time.perf_counter() - t0
                    clock.fsyncs += 1

        self._saved.append((os, "fsync", real_fsync))
        os.fsync = fsync
        for cls in _store_classes():
            # Inherited methods too (the rejection lists and the runs are mixins): each is
            # wrapped on the class itself and the attribute removed again afterwards.
            for name in dir(cls):
                static = inspect.getattr_static(cls, name)
                if name.startswith("_") or not inspect.isfunction(static):
                    continue
                self._saved.append((cls, name, vars(cls).get(name, _MISSING)))
                setattr(cls, name, self._wrap(cls, name))
            self._saved.append((cls, "__init__", vars(cls)["__init__"]))
            cls.__init__ = self._wrap(cls, "__init__")  # type: ignore[misc]  # opening (and reading) counts too
            if hasattr(cls, "_write_runs"):  # group commit: the write a worker thread makes
                self._saved.append((cls, "_write_runs", vars(cls).get("_write_runs", _MISSING)))
                setattr(cls, "_write_runs", self._wrap(cls, "_write_runs"))  # noqa: B010 - timed, then put back
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, value in reversed(self._saved):
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
        self._saved.clear()

    def breakdown(self) -> list[tuple[str, int, float]]:
        return sorted(((k, len(v), sum(v)) for k, v in self.calls.items()), key=lambda r: -r[2])


STORE_TARGET = 0.10  # store time at most 10% of a frozen re-run's wall time


_CLI_CHILD = """
import contextlib, io, json, sys, time
t0 = time.perf_counter()
from sourcedesk.sandbox.bench_store import StoreClock
from sourcedesk.tui.cli import main
with StoreClock() as clock, contextlib.redirect_stdout(io.StringIO()):
    code = main(["run", sys.argv[1]])
print(json.dumps({"code": code, "store_s": clock.seconds, "loop_s": clock.loop_s, "fsync_s": clock.fsync_s}))
"""


def _cli_rerun(memo_dir: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """``sourcedesk run DIR`` as the analyst runs it (a new process), timed from outside; the
    store is timed inside that process. Returns (wall, store in all threads, store on the loop)."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CLI_CHILD, str(memo_dir)], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"bench: sourcedesk run failed: {done.stderr.strip()[-500:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["code"] != 0:
        raise SystemExit("bench: sourcedesk run reported failed sections")
    return wall, float(result["store_s"]), float(result["loop_s"])


@contextlib.contextmanager
def _store_url(backend: str) -> Iterator[str]:
    if backend == "tinydb":
        yield ""
        return
    from sourcedesk.sandbox.pg_server import PgServer
    from sourcedesk.store.postgres.connection import Database
    from sourcedesk.store.postgres.opening import migrate_database

    with PgServer(durable=True) as server:
        migrate_database(Database(server.url()))
        yield server.url()


def bench_store(sections: int = 20, reruns: int = 5, backend: str = "tinydb") -> dict[str, Any]:
    """A frozen re-run of a ``sections``-section memo against the sandbox at 0 ms latency, on
    ``backend``, with the time spent in the store measured explicitly."""
    with (
        _store_url(backend) as store_url,
        sandbox_process(0, 0, "--exa-rps", "0", "--writer-rpm", "0") as url,
        tempfile.TemporaryDirectory() as tmp,
    ):
        memo_dir = write_bench_memo(Path(tmp), sections)
        settings = Settings(
            exa_url=url,
            writer_url=url,
            exa_api_key="bench",
            perplexity_api_key="bench",
            exa_requests_per_second=1000,
            writer_requests_per_minute=60_000,
            max_concurrent_sections=sections,
            store_url=store_url,
        )
        _took, outs = asyncio.run(_timed(memo_dir, settings, refresh=True))  # cold: fills the frozen sets
        _check(outs)
        rows = []
        for _ in range(reruns):
            with StoreClock() as clock:
                took, outs = asyncio.run(_timed(memo_dir, settings))
            _check(outs)
            if not all(o.source_set_reused for o in outs):
                raise SystemExit("bench: a re-run searched again instead of reusing its frozen set")
            rows.append((took, clock.seconds, clock.breakdown(), clock.loop_s, clock.fsync_s, clock.fsyncs))
        env = {
            **os.environ,
            "SOURCEDESK_EXA_URL": url,
            "SOURCEDESK_WRITER_URL": url,
            "EXA_API_KEY": "bench",
            "PERPLEXITY_API_KEY": "bench",
            "SOURCEDESK_MAX_CONCURRENT_SECTIONS": str(sections),
            "SOURCEDESK_STORE_URL": store_url,
        }
        cli = sorted((_cli_rerun(memo_dir, env) for _ in range(reruns)), key=lambda r: r[1] / r[0])
        db = memo_dir / ".sourcedesk" / "db.json"
        size = db.stat().st_size if db.exists() else 0
    rows.sort(key=lambda r: r[1] / r[0])
    wall, store_s, breakdown, loop_s, fsync_s, fsyncs = rows[len(rows) // 2]  # the median share
    cli_wall, cli_store, cli_loop = cli[len(cli) // 2]
    return {
        "backend": backend,
        "cli_wall_s": cli_wall,
        "cli_store_s": cli_store,
        "cli_loop_s": cli_loop,
        "cli_share": cli_store / cli_wall,
        "cli_shares": [c[1] / c[0] for c in cli],
        "loop_s": loop_s,
        "fsync_s": fsync_s,
        "fsyncs": fsyncs,
        "sections": sections,
        "reruns": reruns,
        "wall_s": wall,
        "store_s": store_s,
        "share": store_s / wall,
        "shares": [r[1] / r[0] for r in rows],
        "breakdown": breakdown,
        "db_bytes": size,
    }


def print_store(r: dict[str, Any]) -> None:
    print(
        f"store on {r['backend']}: frozen re-run of a {r['sections']}-section memo, sandbox at 0 ms latency "
        f"(median of {r['reruns']})"
    )
    print(
        f"  `sourcedesk run DIR` (own process)  wall {r['cli_wall_s']:.2f} s, in the store "
        f"{r['cli_store_s'] * 1000:.0f} ms = {r['cli_share']:.1%} "
        f"(target <= {STORE_TARGET:.0%}: {'met' if r['cli_share'] <= STORE_TARGET else 'MISSED'}); "
        f"on the event loop {r['cli_loop_s'] * 1000:.0f} ms = {r['cli_loop_s'] / r['cli_wall_s']:.1%}"
    )
    print(
        f"  run_memo() alone (this process)     wall {r['wall_s']:.2f} s, in the store "
        f"{r['store_s'] * 1000:.0f} ms = {r['share']:.1%} "
        f"(target <= {STORE_TARGET:.0%}: {'met' if r['share'] <= STORE_TARGET else 'MISSED'}); "
        f"on the event loop {r['loop_s'] * 1000:.0f} ms = {r['loop_s'] / r['wall_s']:.1%}"
    )
    if r["backend"] == "tinydb":
        print(f"  of which waiting for the disk (fsync): {r['fsync_s'] * 1000:.0f} ms in {r['fsyncs']} fsyncs")
    print("  sourcedesk run shares of all re-runs: " + ", ".join(f"{x:.1%}" for x in sorted(r["cli_shares"])))
    print("  run_memo() shares of all re-runs: " + ", ".join(f"{s:.1%}" for s in sorted(r["shares"])))
    for name, calls, seconds in r["breakdown"][:8]:
        print(f"  {name:<40} {calls:4d} calls {seconds * 1000:8.1f} ms")
    if r["db_bytes"]:
        print(f"  db.json after the runs: {r['db_bytes'] / 1024:.0f} KiB")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sourcedesk.sandbox.bench_store", description=__doc__.split("\n")[0])
    p.add_argument("--backend", choices=["tinydb", "postgresql", "both"], default="both")
    p.add_argument("--reruns", type=int, default=5, help="frozen re-runs timed (the median is shown)")
    p.add_argument("--sections", type=int, default=20)
    args = p.parse_args(argv)
    os.environ.setdefault("SOURCEDESK_DATA_DIR", tempfile.mkdtemp(prefix="sourcedesk-bench-"))
    missed = False
    for backend in ["tinydb", "postgresql"] if args.backend == "both" else [args.backend]:
        result = bench_store(args.sections, args.reruns, backend)
        print_store(result)
        missed = missed or result["cli_share"] > STORE_TARGET
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
