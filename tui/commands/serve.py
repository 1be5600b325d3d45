"""``sourcedesk serve [DIR] [--demo]`` — the workbench in a browser, one app process per tab.

The page is textual-serve's (xterm.js); each tab runs the same ``SourcedeskApp`` as
``sourcedesk open`` (or ``demo``) in a process of its own, with the same keys and store locks.
Loopback by default; any other address needs a token, made here and printed once when none
is given. Ctrl-C ends every session, then the server (exit 0).
"""

from __future__ import annotations

import errno
import os
import sys
from contextlib import ExitStack
from pathlib import Path

from sourcedesk.core.domain.errors import UserError


def register(sub) -> None:
    from sourcedesk.tui.web.server import DEFAULT_MAX_SESSIONS, DEFAULT_PORT, TOKEN_ENV

    p = sub.add_parser(
        "serve",
        help="serve the workbench to a browser (textual-serve)",
        description="Serve the workbench on a memo (or the offline demo) to web browsers: each tab runs the "
        "same workbench as `sourcedesk open`, in a process of its own. Binds 127.0.0.1 unless --host says "
        "otherwise; any address other than loopback needs a token (one is made and printed once when "
        "--token is not given).",
    )
    p.add_argument(
        "dir",
        metavar="DIR",
        nargs="?",
        type=Path,
        default=None,
        help="the memo folder (holds memo.yaml; default: the current folder)",
    )
    p.add_argument("--demo", action="store_true", help="serve the bundled demo memo against the offline sandbox")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument(
        "--token",
        default=None,
        metavar="T",
        help=f"the token the page asks for (at least 16 characters; also read from {TOKEN_ENV}, which "
        "keeps it out of the process list)",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help=f"browser sessions open at once (default {DEFAULT_MAX_SESSIONS}); the next one is told the desk is busy",
    )
    p.set_defaults(func=_serve)


def _token(args) -> tuple[str | None, bool]:
    """The token the desk asks for (None: none, loopback only) and whether it was made here.
    Bad arguments are a UserError, before anything starts."""
    from sourcedesk.tui.web.access import is_loopback, new_token, token_problem
    from sourcedesk.tui.web.server import TOKEN_ENV

    if args.demo and args.dir is not None:
        raise UserError("give a memo folder or --demo, not both")
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port must be between 0 and 65535 (got {args.port})")
    if args.max_sessions < 1:
        raise UserError(f"--max-sessions must be at least 1 (got {args.max_sessions})")
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if token is not None and (problem := token_problem(token)):
        raise UserError(problem, hint="leave --token out and one is made for you")
    if token is None and not is_loopback(args.host):
        return new_token(), True
    return token, False


def _serve(args) -> int:
    token, made = _token(args)
    with ExitStack() as stack:
        argv, title = _desk(args, stack)
        return _run(args, argv, title, token, made)


def _desk(args, stack: ExitStack) -> tuple[list[str], str]:
    """The command each session runs, and the memo's title; the demo's sandbox lives in ``stack``."""
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.core.text.safety import clean_text

    command = [sys.executable, "-m", "sourcedesk.tui.web.desk_app"]
    if args.demo:
        from sourcedesk.tui.demo import demo_root, demo_sandbox, prepare_demo

        root = demo_root()
        memo_dir = prepare_demo(root=root)
        server = stack.enter_context(demo_sandbox())
        command += [str(memo_dir), "--demo-sandbox", server.url, "--demo-root", str(root)]
    else:
        memo_dir = (args.dir or Path(".")).resolve()
        command.append(str(memo_dir))
    loaded = load_memo(memo_dir, writer_api=args.settings.writer_api)  # a broken memo is said now, not per tab
    return command, clean_text(loaded.memo.title)


def _run(args, argv: list[str], title: str, token: str | None, made: bool) -> int:
    import asyncio

    from sourcedesk.core.text.secrets import register_secret
    from sourcedesk.tui.web.access import is_wildcard
    from sourcedesk.tui.web.server import DeskServer

    register_secret(token)  # a log line that would carry it is redacted
    server = DeskServer(
        argv,
        host=args.host,
        port=args.port,
        token=token,
        max_sessions=args.max_sessions,
        title=f"sourcedesk · {title}",
    )

    def ready(url: str) -> None:
        lines = [f"sourcedesk serve: {title}", "Open in a browser:"]
        if made:
            lines.append(f"  {url}?token={token}")
            lines.append("The token is printed only this once: whoever has it can use the desk and its API keys.")
        elif token:
            lines.append(f"  {url}?token=…  (the token you gave)")
        else:
            lines.append(f"  {url}")
        if is_wildcard(args.host):
            lines.append("From another machine, use this machine's name or address instead of 127.0.0.1.")
        lines.append(f"At most {args.max_sessions} browser session(s) at once. Press Ctrl-C to stop.")
        print("\n".join(lines), flush=True)

    try:
        asyncio.run(server.run(ready))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise UserError(
                f"port {args.port} is already in use.", "Pick another with --port N, or --port 0 for any free port."
            ) from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise UserError(f"{args.host} is not an address of this machine.", "Check --host.") from None
        raise UserError(f"could not serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    print("sourcedesk serve stopped.", file=sys.stderr)
    return 0
