"""The ``sourcedesk`` command line.

Each subcommand lives in ``tui/commands/<name>.py`` and exposes
``register(subparsers)``; this module only dispatches and turns ``UserError``
into a clean message with exit code 2. Headless commands never import Textual.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from core.errors import UserError

# Order is the order shown in --help.
COMMANDS = [
    "demo",
    "open",
    "init",
    "retrieve",
    "run",
    "reconcile",
    "tidy",
    "check_urls",
    "rejects",
    "export",
    "sandbox",
    "config",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sourcedesk",
        description="Write research memos section by section: retrieval first, reconciled citations.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"tui.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"tui.commands.{name}":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except UserError as err:
        print(f"sourcedesk: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sourcedesk: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
