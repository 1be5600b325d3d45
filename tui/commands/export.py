"""``sourcedesk export DIR [--output memo.md] [--json] [--no-review]`` — assemble the section notes
into one memo.

Unless ``--no-review`` is given, the memo's ledger runs over the notes and, when two sections give
one quantity two values, a review list of those conflicts ends memo.md (and is printed).
``--json`` prints ``{"path", "sections", "footnotes", "missing": [section ids], "warnings": […],
"review": […]}``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "export",
        help="assemble the section notes into memo.md",
        description="Assemble the section notes into one memo.md, footnotes renumbered across sections, "
        "ending with a review list of claims two sections state differently (unless --no-review).",
    )
    p.add_argument("dir", metavar="DIR", type=Path, help="the memo folder (holds memo.yaml)")
    p.add_argument("--output", "-o", type=Path, default=None, help="where to write (default: DIR/memo.md)")
    p.add_argument("--json", action="store_true", help="print what was written as a JSON object")
    p.add_argument(
        "--no-review",
        action="store_true",
        help="leave out the review list of claims that contradict each other across sections",
    )
    p.set_defaults(func=_export)


def _export(args) -> int:
    from sourcedesk.core.notes.export import export_memo
    from sourcedesk.store.backend import open_existing_store

    if args.no_review:
        result = export_memo(args.dir, args.output, review=False)
    else:
        store = open_existing_store(args.dir, url=args.settings.store_url) if args.dir.is_dir() else None
        try:
            result = export_memo(args.dir, args.output, store=store)
        finally:
            if store is not None:
                store.close()
    if args.json:
        document = {
            "path": str(result.path) if result.path else None,
            "sections": result.sections,
            "footnotes": result.footnotes,
            "missing": list(result.missing),
            "warnings": list(result.warnings),
            "review": list(result.review),
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if result.missing:
        print(f"not written yet (shown as a note in the memo): {', '.join(result.missing)}", file=sys.stderr)
    for line in result.review:
        print(f"review: {line}", file=sys.stderr)
    print(f"wrote {result.path} — {result.sections} section(s), {result.footnotes} footnote(s)")
    return 0
