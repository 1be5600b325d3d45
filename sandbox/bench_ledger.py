"""The memo ledger on hand-made two-section memos (``python -m sourcedesk.sandbox.bench_ledger``).

Reads ``tests/ledger/memos.yaml``: memos of two sections, each a note body and the frozen set
its markers cite; half with a planted conflict (the same quantity of the same entity given two
values, by two sources that disagree or by a claim its own source does not back), half with
the same fact worded differently, and a few look-alikes (two quantities that read alike). It
reports the share of planted conflicts found (target ≥ 0.95), the share of conflict-free memos
with a conflict reported (target ≤ 0.05), and how often "sources disagree" is said exactly
when both claims are what their own sources say.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from sourcedesk.core.verify.ledger import NoteClaims, build

ROOT = Path(__file__).resolve().parent.parent / "tests" / "ledger"


def load(root: Path = ROOT) -> list[dict[str, Any]]:
    return list(yaml.safe_load((root / "memos.yaml").read_text(encoding="utf-8")))


def run(memos: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    planted = found = clean = false = disagree_right = 0
    lines: list[str] = []
    for memo in memos:
        notes = [NoteClaims(s["id"], s["text"], s["sources"]) for s in memo["sections"]]
        conflicts = build(notes, memo.get("subject") or ()).conflicts
        if memo["conflicts"]:
            planted += 1
            found += bool(conflicts)
            if conflicts:
                disagree_right += conflicts[0].disagree == bool(memo["conflicts"][0].get("disagree"))
                lines.append(f"found   {memo['id']}: {conflicts[0].describe()} — {conflicts[0].verdict()}")
            else:
                lines.append(f"MISSED  {memo['id']}")
        else:
            clean += 1
            false += bool(conflicts)
            lines += [f"FALSE   {memo['id']}: {c.describe()}" for c in conflicts]
    figures = {
        "memos": len(memos),
        "planted": planted,
        "conflicts_found": round(found / planted, 4) if planted else 1.0,
        "conflict_free": clean,
        "false_conflicts": round(false / clean, 4) if clean else 0.0,
        "sources_disagree_right": f"{disagree_right}/{found}",
    }
    return figures, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sourcedesk.sandbox.bench_ledger", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="folder with memos.yaml")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="list what was found for every memo")
    args = parser.parse_args(argv)
    figures, lines = run(load(args.root))
    print(json.dumps(figures, indent=2) if args.json else "\n".join(f"{k:24} {v}" for k, v in figures.items()))
    if args.verbose:
        print("\n".join(f"  {line}" for line in lines))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
