"""The ``sourcedesk`` command line.

Each subcommand lives in ``tui/commands/<module>.py`` and exposes
``register(subparsers)``. ``COMMANDS`` below names every command, the module
that implements it and its one-line help, so ``sourcedesk --help`` lists them
without importing any of them: only the module of the command being run is
imported. A command whose module is missing, or a module that does not define
the commands listed for it, is an error at start-up — never a command that
silently vanishes.

One error path for every command: the settings are loaded here, once (a
broken config file or environment value is the same clean message and exit 2
everywhere, except ``config path``, which must answer so the analyst can find
the file); ``UserError`` is a message and exit 2; anything unexpected is written
with its traceback to the log file and the user sees one line naming that file
(exit 1). Headless commands never import Textual.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from typing import Any

from sourcedesk.core.domain.errors import UserError

COMMAND_PACKAGE = "sourcedesk.tui.commands"


@dataclass(frozen=True)
class Command:
    name: str
    module: str  # in tui/commands/
    help: str
    needs_settings: bool = True


# Order is the order shown in --help.
COMMANDS: tuple[Command, ...] = (
    Command("demo", "demo", "open the bundled demo memo against the offline sandbox"),
    Command("open", "open", "open a memo in the workbench"),
    Command("init", "init", "create a memo folder with a standard company-profile outline"),
    Command("retrieve", "retrieve", "resolve sections' sources (reuses frozen sets; --refresh to fetch again)"),
    Command("run", "run", "retrieve, write, reconcile and save section notes"),
    Command("reconcile", "reconcile", "check a draft's citations against a sources file"),
    Command("tidy", "tidy", "fix citation spacing, punctuation, duplicates and numbering in place"),
    Command(
        "check-urls",
        "check_urls",
        "check that cited pages are alive and that quotes and figures appear in their sources",
    ),
    Command("reject", "rejects", "exclude domains (and their subdomains) or names from retrieval"),
    Command("unreject", "rejects", "lift rejected domains or names; forget a learned namesake"),
    Command("rejects", "rejects", "list rejected domains and names, and the memo's namesakes"),
    Command("export", "export", "assemble the section notes into memo.md"),
    Command("facts", "facts", "list the facts each source states, or the memo's conflicting claims"),
    Command("store", "store", "the team store (PostgreSQL): migrate, copy TinyDB stores into it, status"),
    Command("serve", "serve", "serve the workbench to a browser (textual-serve)"),
    Command("sandbox", "sandbox", "run the offline Exa/Perplexity sandbox server"),
    Command("config", "config", "show configuration locations", needs_settings=False),
)


class CommandTableError(Exception):
    """``COMMANDS`` and the modules in tui/commands/ disagree (a packaging or typing mistake)."""


def check_command_modules(commands: tuple[Command, ...] | None = None) -> None:
    """Every listed module exists (found, not imported: start-up stays fast)."""
    commands = COMMANDS if commands is None else commands
    for module in sorted({c.module for c in commands}):
        name = f"{COMMAND_PACKAGE}.{module}"
        if importlib.util.find_spec(name) is None:
            users = ", ".join(c.name for c in commands if c.module == module)
            raise CommandTableError(f"the module {name} for `sourcedesk {users}` is missing")


def register_module(sub: Any, module: str, commands: tuple[Command, ...] | None = None) -> None:
    """Import one command module and check it defined exactly the commands listed for it."""
    commands = COMMANDS if commands is None else commands
    before = set(sub.choices)
    importlib.import_module(f"{COMMAND_PACKAGE}.{module}").register(sub)
    defined = set(sub.choices) - before
    listed = {c.name for c in commands if c.module == module}
    if defined != listed:
        raise CommandTableError(
            f"{COMMAND_PACKAGE}.{module} defines {sorted(defined)} but the command table lists {sorted(listed)}"
        )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sourcedesk")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (the package metadata costs start-up time)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"sourcedesk {_version()}")
        parser.exit()


def _chosen(argv: list[str], commands: tuple[Command, ...]) -> Command | None:
    """The command the arguments name (the first word that is not an option)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return next((c for c in commands if c.name == word), None)
    return None


def build_parser(argv: list[str] | None = None, commands: tuple[Command, ...] | None = None) -> argparse.ArgumentParser:
    """The parser; only the module of the command in ``argv`` is imported (``None``: every one)."""
    commands = COMMANDS if commands is None else commands
    check_command_modules(commands)
    parser = argparse.ArgumentParser(
        prog="sourcedesk",
        description="Write research memos section by section: retrieval first, reconciled citations.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = _chosen(argv, commands) if argv is not None else None
    done: set[str] = set()
    for command in commands:
        load = argv is None or (chosen is not None and chosen.module == command.module)
        if load:
            if command.module not in done:
                register_module(sub, command.module, commands)
                done.add(command.module)
        else:
            sub.add_parser(command.name, help=command.help)
    return parser


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the deepest (sub)command ``args`` chose (``config path``: the ``path`` one)."""
    while True:
        chosen = None
        for action in parser._actions:  # argparse has no public way to reach its subparsers
            if isinstance(action, argparse._SubParsersAction):
                name = getattr(args, action.dest, None) if action.dest != argparse.SUPPRESS else None
                chosen = action.choices.get(name) if isinstance(name, str) else None
        if chosen is None:
            return parser
        parser = chosen


EXIT_PIPE_CLOSED = 141  # 128 + SIGPIPE, as a shell reports a pipeline cut short by `head`


def main(argv: list[str] | None = None) -> int:
    """The command, its exit code — and nothing said when its reader went away (``| head -1``)."""
    try:
        return _main(argv)
    except BrokenPipeError:
        _stdout_gone()
        return EXIT_PIPE_CLOSED


def _stdout_gone() -> None:
    """The reader of stdout left: what is still buffered goes nowhere (Python would otherwise
    complain about it at exit), and nothing is logged — it is no error of ours."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout (tests): nothing to redirect
        pass


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(argv)
    except CommandTableError as exc:
        print(f"sourcedesk: broken installation: {exc}", file=sys.stderr)
        return 2
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the parser of the (sub)command they were given to, with its usage
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from sourcedesk.tui.logs import setup_logging

    setup_logging()
    command = next((c for c in COMMANDS if c.name == args.command), None)
    try:
        from sourcedesk.core.domain import clock

        clock.check_environment()  # a bad SOURCEDESK_CLOCK_SHIFT_DAYS/SOURCEDESK_TODAY stops here, named
        if command is None or command.needs_settings:
            from sourcedesk.core.config.settings import load_settings

            args.settings = load_settings()
        return int(args.func(args) or 0)
    except UserError as err:
        print(f"sourcedesk: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sourcedesk: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise  # the reader of stdout went away: main says nothing
    except Exception as exc:  # noqa: BLE001 - anything else is written down, never shown as a traceback
        from sourcedesk.tui.logs import report_unexpected

        print(f"sourcedesk: {report_unexpected(exc, f'sourcedesk {args.command}')}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
