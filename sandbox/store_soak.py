"""The team-store soak: four processes reject, un-reject and run sections of one memo at once.

``make soak-store`` (CI runs it after ``make test``) runs it for 60 s on PostgreSQL (a real
server from ``sourcedesk.sandbox.pg_server``) and on TinyDB; the test suite runs the same
code for a few seconds (``tests/test_store_soak.py``). Each worker is a process of its own
that goes through the command line as an analyst would (``sourcedesk reject``,
``unreject``, ``run --section``), against the offline sandbox, and logs every operation
that succeeded. Afterwards:

- every domain's last successful operation decides whether it is rejected, and the store
  agrees (each worker rejects and un-rejects its own domains, so the order is its own);
- every section's versions are 1…N with none missing and none twice, and every set a run
  reported exists;
- every note on disk names a run the store holds, that run names the note's set, the set
  has the note's version and fingerprint, and the section's state holds the note's hash.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WORKERS = 4
SECTIONS = 6


def _worker(memo_dir: Path, n: int, seconds: float, log_path: Path, domains: list[str]) -> None:
    """One analyst: random operations for ``seconds``, each success appended to ``log_path``."""
    import sourcedesk.tui.commands.rejects
    import sourcedesk.tui.commands.run
    import sourcedesk.tui.headless  # noqa: F401 - imported before the clock starts: the soak times work, not imports
    from sourcedesk.tui.cli import main

    rng = random.Random(n)
    own = [f"w{n}-{i}.example.org" for i in range(6)] + domains
    sections = [
        line.split("id:")[1].strip() for line in (memo_dir / "memo.yaml").read_text().splitlines() if "- id:" in line
    ]
    deadline = time.monotonic() + seconds
    done: set[str] = set()  # kinds of operation that have succeeded at least once
    with log_path.open("a", encoding="utf-8") as log:
        # For ``seconds``, and on until this worker has changed a list and written a note (a
        # short soak on a loaded machine must still have done what it then checks).
        while time.monotonic() < deadline or not {"list", "run"} <= done:
            op = rng.choice(["reject", "reject", "unreject", "run", "run", "refresh"])
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                if op in ("reject", "unreject"):
                    domain = rng.choice(own)
                    code = main([op, domain, "--memo", str(memo_dir), "--json"])
                    entry: dict[str, Any] = {"op": op, "domain": domain, "code": code}
                else:
                    sid = rng.choice(sections)
                    argv = ["run", str(memo_dir), "--section", sid, "--json"] + (
                        ["--refresh"] if op == "refresh" else []
                    )
                    code = main(argv)
                    entry = {"op": "run", "section": sid, "code": code}
                    if out.getvalue().strip():
                        with contextlib.suppress(ValueError, IndexError):
                            entry["set"] = json.loads(out.getvalue())[0].get("source_set_id")
            if code == 0:
                done.add("run" if op in ("run", "refresh") else "list")
            else:
                entry["held"] = "is held by" in err.getvalue()
                entry["error"] = err.getvalue()[-400:]
            entry["t"] = time.time()
            log.write(json.dumps(entry) + "\n")
            log.flush()


def _spawn(
    memo_dir: Path, n: int, seconds: float, log_path: Path, domains: list[str], env: dict[str, str]
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sourcedesk.sandbox.store_soak",
            "--worker",
            str(n),
            "--memo",
            str(memo_dir),
            "--seconds",
            str(seconds),
            "--log",
            str(log_path),
            "--domains",
            ",".join(domains),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def verify(memo_dir: Path, logs: list[Path], url: str) -> dict[str, Any]:
    """What the soak promises, checked; raises AssertionError naming the first thing that is wrong."""
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.core.notes.note import find_note, parse_note
    from sourcedesk.store.backend import open_memo_store

    expected: dict[str, bool] = {}
    counts = {"reject": 0, "unreject": 0, "run": 0, "run_ok": 0, "locked": 0, "failed": 0}
    failures: list[str] = []
    reported_sets: set[str] = set()
    for path in logs:
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            counts[entry["op"]] += 1
            if entry["op"] in ("reject", "unreject") and entry["code"] == 0:
                expected[entry["domain"]] = entry["op"] == "reject"  # a worker's own domains: in its order
            elif entry["op"] == "run" and entry["code"] == 0:
                counts["run_ok"] += 1
                if entry.get("set"):
                    reported_sets.add(entry["set"])
            elif entry.get("held"):
                counts["locked"] += 1
            else:  # failed for another reason than a colleague holding the section: a bug
                counts["failed"] += 1
                failures.append(f"{entry['op']}: {entry.get('error', '')}")
    assert not failures, "operations failed for another reason than a held section:\n" + "\n".join(failures[:5])
    loaded = load_memo(memo_dir)
    with open_memo_store(memo_dir, url=url) as store:
        rejected = set(store.rejects())
        for domain, present in expected.items():
            assert (domain in rejected) == present, f"{domain}: expected {'rejected' if present else 'not rejected'}"
        versions = 0
        for section in loaded.memo.sections:
            found = [s.version for s in store.source_set_versions(section.id)]
            assert found == list(range(1, len(found) + 1)), f"{section.id}: versions {found}"
            versions += len(found)
        for set_id in reported_sets:
            assert store.get_source_set(set_id) is not None, f"a run reported set {set_id}, which is not stored"
        notes = 0
        for section in loaded.memo.sections:
            found_note = find_note(memo_dir, loaded.memo, section.id)
            if found_note is None:
                continue
            path = found_note
            notes += 1
            raw = path.read_bytes()
            front, _body = parse_note(raw.decode("utf-8"), path=path)
            run = store.get_run(front["run_id"])
            assert run is not None, f"{path.name} names run {front['run_id']}, which is not stored"
            recorded = front["source_set"]
            assert run.source_set_id == recorded["id"], f"{path.name}: run set {run.source_set_id} != {recorded['id']}"
            frozen = store.get_source_set(recorded["id"])
            assert frozen is not None and frozen.version == recorded["version"], f"{path.name}: set {recorded}"
            assert frozen.fingerprint.startswith(recorded["fingerprint"]), f"{path.name}: fingerprint"
            state = store.section_state(section.id)
            assert hashlib.sha256(raw).hexdigest() == state.note_sha256, f"{path.name}: not the note the store knows"
    return {**counts, "domains": len(expected), "versions": versions, "notes": notes}


@contextlib.contextmanager
def _backend(name: str, server: Any = None) -> Iterator[str]:
    """The store URL: "" for TinyDB; a fresh database on ``server`` (or on a server of its own)."""
    if name == "tinydb":
        yield ""
        return
    from sourcedesk.sandbox.pg_server import PgServer
    from sourcedesk.store.postgres.connection import Database
    from sourcedesk.store.postgres.opening import migrate_database

    with contextlib.ExitStack() as stack:
        if server is None:
            server = stack.enter_context(PgServer(durable=True))
        database = f"soak_{os.getpid()}_{int(time.time() * 1000) % 10**9}"
        server.sql(f"CREATE DATABASE {database}")
        url = server.url(database)
        migrate_database(Database(url))
        yield url


def soak(
    backend: str, seconds: float, workers: int = WORKERS, sections: int = SECTIONS, server: Any = None
) -> dict[str, Any]:
    """Run the soak on ``backend`` (``server``: a running ``PgServer`` to use) and verify it."""
    from sourcedesk.sandbox.bench import sandbox_process, write_bench_memo

    with _backend(backend, server) as url, sandbox_process(0, 0, "--exa-rps", "0", "--writer-rpm", "0") as sandbox_url:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "memo").mkdir()
            memo_dir = write_bench_memo(root / "memo", sections)
            env = {
                **os.environ,
                "SOURCEDESK_EXA_URL": sandbox_url,
                "SOURCEDESK_WRITER_URL": sandbox_url,
                "EXA_API_KEY": "soak-key",
                "PERPLEXITY_API_KEY": "soak-key",
                "SOURCEDESK_EXA_REQUESTS_PER_SECOND": "1000",
                "SOURCEDESK_WRITER_REQUESTS_PER_MINUTE": "0",
                "SOURCEDESK_STORE_URL": url,
                "SOURCEDESK_DATA_DIR": str(root / "data"),
                "SOURCEDESK_CONFIG_DIR": str(root / "config"),
                "SOURCEDESK_LOG_DIR": str(root / "logs"),
            }
            first = subprocess.run(
                [sys.executable, "-m", "sourcedesk.tui.cli", "run", str(memo_dir), "--json"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if first.returncode != 0:
                raise SystemExit(f"soak: the first run failed: {first.stderr[-800:]}")
            hosts = sorted({s["host"] for o in json.loads(first.stdout) for s in o.get("sources", []) if s.get("host")})
            logs = [root / f"worker-{n}.jsonl" for n in range(workers)]
            procs = [_spawn(memo_dir, n, seconds, logs[n], hosts[n::workers][:2], env) for n in range(workers)]
            for proc in procs:
                _out, err = proc.communicate(timeout=seconds + 300)
                if proc.returncode != 0:
                    raise SystemExit(f"soak: a worker failed: {err[-800:]}")
            checked = verify(memo_dir, logs, url)
            return {"backend": backend, "seconds": seconds, "workers": workers, "sections": sections, **checked}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--backend", choices=["postgresql", "tinydb", "both"], default="both")
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    p.add_argument("--memo", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--log", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--domains", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker is not None:
        _worker(args.memo, args.worker, args.seconds, args.log, [d for d in args.domains.split(",") if d])
        return 0
    backends = ["postgresql", "tinydb"] if args.backend == "both" else [args.backend]
    for backend in backends:
        result = soak(backend, args.seconds)
        print(
            f"soak on {backend}: {result['workers']} processes for {result['seconds']:g} s — "
            f"{result['reject']} rejects, {result['unreject']} un-rejects, {result['run']} runs "
            f"({result['run_ok']} written, {result['locked']} refused: the section was held); "
            f"{result['domains']} domains as their last operation left them, {result['versions']} set versions "
            f"with none lost or twice, {result['notes']} notes matching their recorded sets",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
