"""``sourcedesk export DIR [--output memo.md] [--json]`` — assemble the section notes into one memo.

``--json`` prints ``{"path", "sections", "footnotes", "missing": [section ids], "warnings": […]}``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("export", help="assemble the section notes into memo.md")
    p.add_argument("dir", metavar="DIR", type=Path, help="the memo folder (holds memo.yaml)")
    p.add_argument("--output", "-o", type=Path, default=None, help="where to write (default: DIR/memo.md)")
    p.add_argument("--json", action="store_true", help="print what was written as a JSON object")
    p.set_defaults(func=_export)


def _export(args) -> int:
    from sourcedesk.core.notes.export import export_memo

    result = export_memo(args.dir, args.output)
    if args.json:
        document = {
            "path": str(result.path) if result.path else None,
            "sections": result.sections,
            "footnotes": result.footnotes,
            "missing": list(result.missing),
            "warnings": list(result.warnings),
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if result.missing:
        print(f"not written yet (shown as a note in the memo): {', '.join(result.missing)}", file=sys.stderr)
    print(f"wrote {result.path} — {result.sections} section(s), {result.footnotes} footnote(s)")
    return 0
