"""``sourcedesk open [DIR]`` — the workbench on a memo, against the configured services."""

from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "open",
        help="open a memo in the workbench",
        description="Open the memo in DIR in the workbench: every section's state, its sources, report and note; "
        "run, curate and verify from there. Read-only commands (rejects, export, check-urls) still work beside it.",
    )
    p.add_argument(
        "dir",
        metavar="DIR",
        nargs="?",
        type=Path,
        default=Path("."),
        help="the memo folder (holds memo.yaml; default: the current folder)",
    )
    p.set_defaults(func=_open)


def _open(args) -> int:
    from sourcedesk.tui.app import SourcedeskApp

    SourcedeskApp(args.dir, settings=args.settings).run()  # settings: loaded once by the CLI entry point
    return 0
