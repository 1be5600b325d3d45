"""``sourcedesk open [DIR]`` — the workbench on a memo, against the configured services."""

from __future__ import annotations

from pathlib import Path

from core.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("open", help="open a memo in the workbench")
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
    from core.settings import load_settings
    from tui.app import SourcedeskApp

    try:
        settings = load_settings()
    except ValueError as exc:  # a broken config.yaml or a bad SOURCEDESK_* value
        raise UserError(
            f"the settings could not be read: {exc}",
            hint="fix the config file (`sourcedesk config path` shows where) or the environment",
        ) from None
    SourcedeskApp(args.dir, settings=settings).run()
    return 0
