"""``make bench-ui``: how fast the workbench is to look at, each figure a ratio or a budget.

Three figures, on memos built here (no network, no writer: the store and the notes are
written directly, as a run would have left them):

* **first screen** — from process start until the last row of a 20-section × 55-source
  memo is painted in a pseudo-terminal (its title and its cost on one line), against the
  same measure for a bare Textual app that shows those rows in a ``DataTable``. The two
  alternate, ``REPEAT`` times each; the medians count. Target: at most ``FIRST_TARGET``×.
* **tab switch** — the CPU time (this process) from pressing a tab's number on the section
  screen until the tab is shown, its detail pane filled and the screen idle; the median of
  every tab, visited in turn. Target: at most ``TAB_TARGET_MS`` ms. For scale, the same measure
  of a bare Textual app switching between two tabs of 55-row ``DataTable``s is printed beside it.
* **a 515-source section** — from ``enter`` on the memo screen until the section screen
  shows every one of its 515 source rows. Target: at most ``OPEN_TARGET_MS`` ms.

The last two drive the app headless through Textual's Pilot in this process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pty
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

FIRST_TARGET = 1.5
TAB_TARGET_MS = 30.0
OPEN_TARGET_MS = 60.0
REPEAT = 5
SIZE = (160, 45)
SECTIONS = 20
SOURCES = 55
BIG_SOURCES = 515
BIG_KEPT = 60  # the rest of the big section was omitted by the budget

_MOVES = re.compile(rb"\x1b\[\d*;?\d*H|\r?\n")  # a cursor move starts a new line of text
_ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]")


# ---------------------------------------------------------------- the memos


def _source(section: str, j: int, *, marker: str | None) -> Any:
    from sourcedesk.core.domain.models import Source

    host = f"site{j % 17}.example.com"
    words = " ".join(f"{section} finding {j}.{k} reported by analysts in the quarter" for k in range(6))
    return Source(
        provider="exa",
        url=f"https://{host}/{section}/{j}",
        title=f"{section.title()} report {j}: revenue, customers and the market",
        published_date=f"2026-0{1 + j % 9}-1{j % 9}",
        summary=words,
        highlights=[f"{section} highlight {j} one", f"{section} highlight {j} two"],
        facts={"year": str(2010 + j % 15), "customers": str(100 + j)},
        text=(words + "\n") * 12,
        rank=j,
        marker=marker,
    )


@dataclass
class BenchMemo:
    """A memo folder built for the bench and what its rows show."""

    dir: Path
    titles: list[str]
    costs: list[str]  # as the memo screen prints them, "$0.012"


def build_memo(root: Path, *, sections: int = SECTIONS, sources: int = SOURCES, kept: int | None = None) -> BenchMemo:
    """A memo whose every section was run once: a frozen set of ``sources`` sources (the first
    ``kept`` kept, the rest omitted by the budget), a run record with a report, and a note."""
    from sourcedesk.core.config.settings import Settings
    from sourcedesk.core.domain.models import OmittedSource, SourceSet
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.core.notes.note import NoteRecord, note_path, render_note
    from sourcedesk.core.sources.retrieve import plan_section
    from sourcedesk.store.memo_store import MemoStore

    root.mkdir(parents=True, exist_ok=True)
    ids = [f"part-{i:02d}" for i in range(sections)]
    titles = [f"Bench section {i:02d} of the memo" for i in range(sections)]
    lines = ["title: UI bench memo", "subject: {name: Benchco, url: https://benchco.example}", "sections:"]
    for sid, title in zip(ids, titles, strict=True):
        lines += [
            f"  - id: {sid}",
            f"    title: {title}",
            f'    include-sources: [{{provider: exa, query: "{{{{subject}}}} {sid}", num-results: 10, pin: none}}]',
        ]
    (root / "memo.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_memo(root)
    settings = Settings()
    kept = sources if kept is None else kept
    costs = []
    now = datetime.now(UTC) - timedelta(minutes=5)
    with MemoStore(root) as store:
        for i, sid in enumerate(ids):
            plan = plan_section(loaded, sid, settings=settings, memo_rejects=[], global_rejects=[])
            all_sources = [_source(sid, j, marker=f"E{j + 1}" if j < kept else None) for j in range(sources)]
            saved = store.save_source_set(
                SourceSet(
                    section=sid,
                    fingerprint=plan.fingerprint,
                    request=plan.request,
                    sources=all_sources[:kept],
                    omitted=[OmittedSource(source=s, size=s.size) for s in all_sources[kept:]],
                    budget_chars=12_000,
                    created_at=now,
                )
            )
            cost = round(0.011 + i / 1000, 3)
            costs.append(f"${cost:.3f}")
            citations = [
                {
                    "key": f"E{j + 1}",
                    "status": "verified" if j % 5 else "substituted",
                    "cited_url": all_sources[j].url,
                    "resolved_url": all_sources[j].url,
                    "claim": f"{sid} claim {j} about revenue and customers",
                    "support": "supported",
                    "evidence": all_sources[j].summary[:120],
                    "score": 0.8,
                }
                for j in range(min(kept, 24))
            ]
            counts = {
                "verified": sum(c["status"] == "verified" for c in citations),
                "substituted": sum(c["status"] == "substituted" for c in citations),
            }
            run_id = store.save_run(
                {
                    "section": sid,
                    "status": "ok",
                    "message": "ok",
                    "source_set_id": saved.id,
                    "report": {**counts, "citations": citations},
                    "counts": counts,
                    "cost": {"total": cost},
                    "timings": {"total_s": 3.0},
                    "finished_at": now.isoformat(),
                },
                section_state={"last_run": None, "last_status": "ok"},
            )
            store.update_section_state(sid, {"last_run": run_id, "last_status": "ok"})
            record = NoteRecord(
                section=sid,
                title=titles[i],
                run_id=run_id,
                model="perplexity/sonar",
                generated_at=now,
                source_set_id=saved.id,
                source_set_version=saved.version,
                source_set_fingerprint=saved.fingerprint,
                counts={**counts, "citations": citations},
                cost_writer=cost,
            )
            body = "\n\n".join(f"{c['claim']} [^{c['key']}]" for c in citations)
            path = note_path(root, loaded.memo, sid)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_note(record, body), encoding="utf-8")
    return BenchMemo(root, titles, costs)


# ---------------------------------------------------------------- first screen, in a pseudo-terminal

BARE_APP = """
import json, sys
from textual.app import App
from textual.widgets import DataTable, Footer, Header

rows = json.loads(open(sys.argv[1], encoding="utf-8").read())


class Bare(App):
    def compose(self):
        yield Header()
        yield DataTable(cursor_type="row")
        yield Footer()

    def on_mount(self):
        table = self.query_one(DataTable)
        table.add_columns("#", "Section", "Status", "Pin", "Sources", "Citations", "Flags", "Cost")
        for row in rows:
            table.add_row(*row)


Bare().run()
"""


def _first_paint(argv: list[str], env: dict[str, str], wanted: Callable[[str], bool], timeout: float = 60.0) -> float:
    """Seconds from starting ``argv`` in a 160×45 pseudo-terminal until its screen shows a line
    ``wanted`` accepts; then the process is ended."""
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    seen = b""
    took = None
    try:
        while took is None:
            if time.perf_counter() - t0 > timeout:
                raise SystemExit(f"bench-ui: {argv[1:3]} never painted its last row; it showed {seen[-2000:]!r}")
            ready, _w, _x = select.select([master], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            seen += chunk
            text = _ESCAPES.sub(b"", _MOVES.sub(b"\n", seen)).decode("utf-8", errors="replace")
            if any(wanted(line) for line in text.splitlines()[-400:]):
                took = time.perf_counter() - t0
    finally:
        proc.kill()
        proc.wait(timeout=10)
        os.close(master)
    if took is None:
        raise SystemExit(f"bench-ui: {argv[1:3]} ended before it painted its last row")
    return took


def bench_first_screen(memo: BenchMemo, repeat: int = REPEAT) -> dict[str, Any]:
    env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor", "TEXTUAL_ANIMATIONS": "none"}
    for fixed in ("COLUMNS", "LINES", "TEXTUAL"):
        env.pop(fixed, None)
    title, cost = memo.titles[-1], memo.costs[-1]
    rows = [
        [f"{i + 1:02d}", t, "fresh", "none", str(SOURCES), "████████████ 19✓ 5≈ 0✗", "✂1", c]
        for i, (t, c) in enumerate(zip(memo.titles, memo.costs, strict=True))
    ]
    rows_file = memo.dir.parent / "bare-rows.json"
    rows_file.write_text(json.dumps(rows), encoding="utf-8")

    def last_row(line: str) -> bool:
        return title in line and cost in line

    ours_cmd = [sys.executable, "-m", "sourcedesk.tui.cli", "open", str(memo.dir)]
    bare_cmd = [sys.executable, "-c", BARE_APP, str(rows_file)]
    _first_paint(ours_cmd, env, last_row)  # warm the file cache and the bytecode of both
    _first_paint(bare_cmd, env, last_row)
    ours, bare = [], []
    for _ in range(repeat):
        ours.append(_first_paint(ours_cmd, env, last_row))
        bare.append(_first_paint(bare_cmd, env, last_row))
    o, b = statistics.median(ours), statistics.median(bare)
    return {"ours_s": o, "bare_s": b, "ratio": o / b, "ours_all": ours, "bare_all": bare}


# ---------------------------------------------------------------- in the app: tab switch and a big section


async def _settle(pilot: Any) -> None:
    """Until no worker of the app's is loading or applying anything (the memo watcher runs on)."""
    app = pilot.app
    await pilot.pause()
    for _ in range(50):
        busy = [w for w in app.workers if w.is_running and not w.name.startswith("watch")]
        if not busy:
            return
        await app.workers.wait_for_complete(busy)
        await pilot.pause()


def _open_app(memo_dir: Path) -> Any:
    from sourcedesk.core.config.settings import Settings
    from sourcedesk.store.global_store import GlobalStore
    from sourcedesk.tui.app import SourcedeskApp

    return SourcedeskApp(memo_dir, settings=Settings(), global_store=GlobalStore(memo_dir.parent / "global.json"))


def _source_rows(app: Any) -> int:
    from textual.widgets import DataTable

    try:
        return app.screen.query_one("#sources", DataTable).row_count
    except Exception:  # noqa: BLE001 - not the section screen (yet)
        return -1


async def _tabs_and_open(small: Path, big: Path) -> dict[str, Any]:
    tabs: list[float] = []
    app = _open_app(small)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(pilot)
        await pilot.press("enter")
        await _settle(pilot)
        for _round in range(3):
            for key in "23456711":
                t0 = time.process_time()
                await pilot.press(key)
                await _settle(pilot)
                tabs.append((time.process_time() - t0) * 1000)
    opens: list[float] = []
    for _ in range(REPEAT):
        app = _open_app(big)
        async with app.run_test(size=SIZE) as pilot:
            await _settle(pilot)
            t0 = time.perf_counter()
            await pilot.press("enter")
            while _source_rows(app) < BIG_SOURCES:
                await pilot.pause()
                if time.perf_counter() - t0 > 30:
                    raise SystemExit("bench-ui: the big section never showed its sources")
            opens.append((time.perf_counter() - t0) * 1000)
    return {
        "tab_ms": statistics.median(tabs),
        "tab_worst_ms": max(tabs),
        "open_ms": statistics.median(opens),
        "open_all": opens,
    }


async def _bare_tab_switch() -> float:
    """The median CPU of a tab switch in a bare Textual app: two tabs, a 55×7 table in each."""
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable, Footer, Header, TabbedContent, TabPane

    class Bare(App[None]):
        BINDINGS = [("1", "show('a')"), ("2", "show('b')")]  # noqa: RUF012

        def compose(self) -> ComposeResult:
            yield Header()
            with TabbedContent(id="tabs"):
                for name in "ab":
                    with TabPane(name, id=name):
                        yield DataTable(id=f"t{name}", cursor_type="row")
            yield Footer()

        def on_mount(self) -> None:
            for name in "ab":
                table = self.query_one(f"#t{name}", DataTable)
                table.add_columns(*[f"column {i}" for i in range(7)])
                for r in range(SOURCES):
                    table.add_row(*[f"row {r} cell {i}" for i in range(7)])

        def action_show(self, name: str) -> None:
            self.query_one("#tabs", TabbedContent).active = name

    taken: list[float] = []
    app = Bare()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for key in "21" * 8:
            t0 = time.process_time()
            await pilot.press(key)
            await pilot.pause()
            taken.append((time.process_time() - t0) * 1000)
    return statistics.median(taken)


def bench_ui(repeat: int = REPEAT) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sourcedesk-bench-ui-") as tmp:
        os.environ.setdefault("SOURCEDESK_DATA_DIR", str(Path(tmp) / "data"))
        os.environ.setdefault("SOURCEDESK_CONFIG_DIR", str(Path(tmp) / "config"))
        os.environ.setdefault("SOURCEDESK_LOG_DIR", str(Path(tmp) / "logs"))
        memo = build_memo(Path(tmp) / "memo")
        big = build_memo(Path(tmp) / "big", sections=1, sources=BIG_SOURCES, kept=BIG_KEPT)
        first = bench_first_screen(memo, repeat)
        inside = asyncio.run(_tabs_and_open(memo.dir, big.dir))
        bare_tab = asyncio.run(_bare_tab_switch())
    return {**first, **inside, "bare_tab_ms": bare_tab}


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def print_ui(r: dict[str, Any]) -> None:
    print(f"workbench: a {SECTIONS}-section × {SOURCES}-source memo, {SIZE[0]}×{SIZE[1]}")
    print(
        f"  first screen (process start → last row painted, pty)  {r['ours_s']:.2f} s vs a bare Textual "
        f"DataTable app {r['bare_s']:.2f} s = {r['ratio']:.2f}x (target <= {FIRST_TARGET:.1f}x: "
        f"{_verdict(r['ratio'] <= FIRST_TARGET)})"
    )
    print("    runs: ours " + ", ".join(f"{x:.2f}" for x in r["ours_all"]) + " s; bare ", end="")
    print(", ".join(f"{x:.2f}" for x in r["bare_all"]) + " s")
    print(
        f"  tab switch, CPU                                        {r['tab_ms']:.1f} ms median, "
        f"{r['tab_worst_ms']:.1f} ms worst (target <= {TAB_TARGET_MS:.0f} ms: {_verdict(r['tab_ms'] <= TAB_TARGET_MS)}); "
        f"a bare Textual app's tab switch: {r['bare_tab_ms']:.1f} ms"
    )
    print(
        f"  a {BIG_SOURCES}-source section opens                          {r['open_ms']:.1f} ms median "
        f"(target <= {OPEN_TARGET_MS:.0f} ms: {_verdict(r['open_ms'] <= OPEN_TARGET_MS)})"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sourcedesk.sandbox.bench_ui", description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=REPEAT, help="first-screen runs of each app (medians count)")
    args = p.parse_args(argv)
    print_ui(bench_ui(args.repeat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
