"""``sourcedesk run DIR [--section ID]… [--refresh] [--json]`` — write sections headlessly.

Exit code 0 when every section ran (ok or degraded), 1 when any section failed
or was cancelled (its previous note is untouched and the reason is printed; a
script must not take the notes as written), 2 on a UserError.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

COUNT_LABELS = (
    ("verified", "verified"),
    ("retitled", "retitled"),
    ("substituted", "substituted"),
    ("dropped", "dropped"),
    ("out_of_range", "out-of-range"),
    ("protected", "protected"),
)


def register(sub) -> None:
    p = sub.add_parser("run", help="retrieve, write, reconcile and save section notes")
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
    p.set_defaults(func=_run)


def _line(outcome, memo_dir: Path) -> str:
    cost = outcome.cost.get("total", 0.0)
    if outcome.status == "failed":
        return f"{outcome.section}: FAILED — {outcome.message}"
    if outcome.status == "cancelled":
        return f"{outcome.section}: {outcome.message}"  # "cancelled while …; the previous note is unchanged"
    report = outcome.report or {}
    counts = ", ".join(f"{report.get(key, 0)} {label}" for key, label in COUNT_LABELS if report.get(key))
    try:
        shown = outcome.note_path.resolve().relative_to(memo_dir) if outcome.note_path else "-"
    except ValueError:
        shown = outcome.note_path
    reused = " (frozen set reused)" if outcome.source_set_reused else ""
    return f"{outcome.section}: {outcome.status} — {counts or 'no citations'}; ${cost:.4f}{reused} → {shown}"


def _run(args) -> int:
    from core.memo_loader import load_memo
    from core.run import run_memo

    settings = args.settings  # loaded once by the CLI entry point
    for notice in load_memo(args.dir, writer_api=settings.writer_api).notices:
        print(f"sourcedesk: notice: {notice}", file=sys.stderr)
    outcomes = asyncio.run(run_memo(args.dir, args.sections, refresh=args.refresh, settings=settings))
    if args.json:
        print(json.dumps([o.to_json() for o in outcomes], indent=2, ensure_ascii=False))
    else:
        memo_dir = args.dir.resolve()
        for outcome in outcomes:
            print(_line(outcome, memo_dir))
            for warning in outcome.warnings:
                print(f"    warning: {warning}")
        total = sum(o.cost.get("total", 0.0) for o in outcomes)
        print(f"{len(outcomes)} section(s), total ${total:.4f}")
    unwritten = [o for o in outcomes if not o.ok]
    for outcome in unwritten:
        what = "was cancelled" if outcome.status == "cancelled" else "failed"
        print(f"sourcedesk: section {outcome.section} {what}: {outcome.message}", file=sys.stderr)
    return 1 if unwritten else 0
