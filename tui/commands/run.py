"""``sourcedesk run DIR [--section ID]… [--refresh] [--json]`` — write sections headlessly.

Exit code 0 when every section ran (ok or degraded), 1 when any section failed
or was cancelled (its previous note is untouched and the reason is printed; a
script must not take the notes as written), 2 on a UserError, 130 when
interrupted (Ctrl-C): the sections that completed are still printed (``--json``
too), the interrupted ones as ``cancelled`` with their previous notes untouched.

On a terminal, each section's progress (retrieving, writing, reconciling, saved)
goes to stderr as it happens, so stdout stays the report (or the JSON).
Everything printed is cleaned: no control sequence and no API key that came
from a server reaches the terminal or a script.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from sourcedesk.core.text.safety import clean_text, clean_tree

COUNT_LABELS = (
    ("verified", "verified"),
    ("retitled", "retitled"),
    ("substituted", "substituted"),
    ("dropped", "dropped"),
    ("out_of_range", "out-of-range"),
    ("protected", "protected"),
)


def register(sub) -> None:
    p = sub.add_parser(
        "run",
        help="retrieve, write, reconcile and save section notes",
        description="Run sections headlessly: retrieve (reusing frozen source sets), write, reconcile every "
        "citation and save each note. Exit 1 when a section failed (its previous note is kept).",
    )
    p.add_argument("dir", metavar="DIR", type=Path, help="the memo folder (holds memo.yaml)")
    p.add_argument(
        "--section",
        "-s",
        dest="sections",
        metavar="ID",
        action="append",
        default=None,
        help="run only this section (repeatable); default: every section",
    )
    p.add_argument("--refresh", action="store_true", help="retrieve again instead of reusing the frozen source sets")
    p.add_argument("--json", action="store_true", help="print the outcomes as a JSON list")
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for a section someone else is running (default: report who holds it at once)",
    )
    p.set_defaults(func=_run)


def _line(outcome, memo_dir: Path) -> str:
    cost = outcome.cost.get("total", 0.0)
    if outcome.status == "failed":
        return f"{outcome.section}: FAILED (why: on stderr)"  # said once, where errors go
    if outcome.status == "cancelled":
        return f"{outcome.section}: {outcome.message}"  # "cancelled while …; the previous note is unchanged"
    report = outcome.report or {}
    counts = ", ".join(f"{report.get(key, 0)} {label}" for key, label in COUNT_LABELS if report.get(key))
    try:
        shown = outcome.note_path.resolve().relative_to(memo_dir) if outcome.note_path else "-"
    except ValueError:
        shown = outcome.note_path
    reused = " (frozen set reused)" if outcome.source_set_reused else ""
    status = outcome.status
    if outcome.namesake_citations:  # never plain "ok": the note cites another company's page
        keys = ", ".join(f"[^{k}]" for k in outcome.namesake_citations)
        status += f" ⚑ cites a namesake ({keys})"
    judged = (report.get("judge") or {}).get("judged", 0) if "judge" in outcome.cost else 0
    judge = f" (model judge ${outcome.cost['judge']:.4f}, {judged} judged)" if "judge" in outcome.cost else ""
    return f"{outcome.section}: {status} — {counts or 'no citations'}; ${cost:.4f}{judge}{reused} → {shown}"


class TerminalProgress:
    """One stderr line per section and stage, with the time since the run started."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.started = time.monotonic()
        self.finished = 0
        self.seen: set[str] = set()

    def __call__(self, section_id: str, stage: str) -> None:
        self.seen.add(section_id)
        if stage in ("saved", "failed", "cancelled"):
            self.finished += 1
        elapsed = time.monotonic() - self.started
        done = f" [{self.finished} done]" if stage in ("saved", "failed", "cancelled") else "…"
        line = f"  {elapsed:6.1f}s  {section_id}: {stage}{done}"
        with contextlib.suppress(OSError, ValueError):  # a closed terminal must not stop the run
            print(clean_text(line), file=self.out, flush=True)


def _planned(args, writer_api: str) -> list[str]:
    """The section ids this run was asked for (best effort, for an interrupted run)."""
    try:
        from sourcedesk.core.memo.loader import load_memo
        from sourcedesk.core.sources.retrieve import check_section_ids

        return check_section_ids(load_memo(args.dir, writer_api=writer_api), args.sections)
    except Exception:  # noqa: BLE001 - the outcomes we have are printed whatever happens here
        return []


def _interrupted(done: list[Any], planned: list[str]) -> list[Any]:
    """The completed outcomes, then the interrupted sections as ``cancelled``, in the order asked."""
    from sourcedesk.core.pipeline.run import RunOutcome

    by_id = {o.section: o for o in done}
    order = planned + [o.section for o in done if o.section not in planned]
    message = "interrupted (Ctrl-C) before it finished; the previous note is unchanged"
    return [
        by_id.get(sid) or RunOutcome(section=sid, status="cancelled", message=message, error_kind="cancelled")
        for sid in order
    ]


def _run(args) -> int:
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.tui.headless import run_memo_folder
    from sourcedesk.tui.stores import waiting_line

    settings = args.settings  # loaded once by the CLI entry point
    from sourcedesk.core.writing.choice import setting_notices

    loaded = load_memo(args.dir, writer_api=settings.writer_api)
    api = loaded.memo.writer.api or settings.writer_api
    for notice in [*loaded.notices, *setting_notices(loaded.memo, api, settings.writer_model)]:
        print(f"sourcedesk: notice: {clean_text(notice)}", file=sys.stderr)
    done: list[Any] = []
    progress = TerminalProgress(sys.stderr) if sys.stderr.isatty() else None
    interrupted = False
    try:
        outcomes = asyncio.run(
            run_memo_folder(
                args.dir,
                args.sections,
                refresh=args.refresh,
                settings=settings,
                progress=progress,
                on_outcome=done.append,
                wait_s=args.wait,
                on_wait=lambda sid: waiting_line(sid, args.wait),
            )
        )
    except KeyboardInterrupt:
        interrupted = True
        outcomes = _interrupted(done, _planned(args, settings.writer_api))
    if args.json:
        document = clean_tree([o.to_json() for o in outcomes])
        print(json.dumps(document, indent=2, ensure_ascii=False), flush=True)
    else:
        memo_dir = args.dir.resolve()
        for outcome in outcomes:
            print(clean_text(_line(outcome, memo_dir)))
            for warning in outcome.warnings:
                print(f"    warning: {clean_text(warning)}")
        total = sum(o.cost.get("total", 0.0) for o in outcomes)
        print(f"{len(outcomes)} section(s), total ${total:.4f}", flush=True)
    unwritten = [o for o in outcomes if not o.ok]
    for outcome in unwritten:
        what = "was cancelled" if outcome.status == "cancelled" else "failed"
        print(clean_text(f"sourcedesk: section {outcome.section} {what}: {outcome.message}"), file=sys.stderr)
    if interrupted:
        print("sourcedesk: interrupted", file=sys.stderr)
        return 130
    return 1 if unwritten else 0
