"""``sourcedesk export DIR [--output memo.md]`` — assemble the section notes into one memo."""

from __future__ import annotations

import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("export", help="assemble the section notes into memo.md")
    p.add_argument("dir", metavar="DIR", type=Path, help="the memo folder (holds memo.yaml)")
    p.add_argument("--output", "-o", type=Path, default=None, help="where to write (default: DIR/memo.md)")
    p.set_defaults(func=_export)


def _export(args) -> int:
    from core.export import export_memo

    result = export_memo(args.dir, args.output)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if result.missing:
        print(f"not written yet (shown as a note in the memo): {', '.join(result.missing)}", file=sys.stderr)
    print(f"wrote {result.path} — {result.sections} section(s), {result.footnotes} footnote(s)")
    return 0
