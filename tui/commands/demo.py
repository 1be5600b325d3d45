"""``sourcedesk demo [--keep]`` — the workbench on the bundled NATS/Synadia memo, fully offline."""

from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="open the bundled demo memo against the offline sandbox",
        description="Copy the bundled NATS/Synadia memo to a fresh folder in the user data dir, start the "
        "offline sandbox on a free loopback port and open the workbench on it. No network, no real keys.",
    )
    p.add_argument(
        "--keep",
        action="store_true",
        help="reopen the newest demo memo (notes, sources, rejections) instead of starting in a fresh folder",
    )
    p.add_argument(
        "--dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to put the demo folders (default: the user data dir's demo/ folder)",
    )
    p.set_defaults(func=_demo)


def _demo(args) -> int:
    import shlex

    from sourcedesk.store.backend import open_global_store
    from sourcedesk.tui.app import SourcedeskApp
    from sourcedesk.tui.demo import demo_global_list, demo_root, demo_sandbox, demo_settings, prepare_demo
    from sourcedesk.tui.goodbye import say_goodbye

    root = args.dir or demo_root()
    memo_dir = prepare_demo(keep=args.keep, root=root)
    with demo_sandbox() as server:
        app = SourcedeskApp(
            memo_dir,
            settings=demo_settings(server.url),
            global_store=open_global_store(path=demo_global_list(memo_dir)),  # the demo's own, on TinyDB
            banner="demo · offline sandbox",
        )
        app.run()
    again = "sourcedesk demo --keep" + (f" --dir {shlex.quote(str(args.dir))}" if args.dir is not None else "")
    say_goodbye(f"The demo memo is in {memo_dir} — `{again}` reopens it as you left it.")
    return 0
