"""What one browser session's process runs: ``python -m sourcedesk.tui.web.desk_app``.

The same ``SourcedeskApp`` as ``sourcedesk open`` (settings from the environment and
config.yaml, as a terminal would load them) or ``sourcedesk demo`` (the demo's own settings
against the sandbox the server started), so the same keys, screens and store locks apply.
textual-serve has set ``TEXTUAL_DRIVER`` to Textual's web driver, which speaks to the server
on stdin/stdout instead of a terminal.

When the workbench cannot open (the memo became unreadable, a setting broke, the team store
cannot be reached), the tab shows why instead of a blank page.
"""

from __future__ import annotations

import argparse
import gc
from pathlib import Path
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Static

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.text.safety import clean_text

DEMO_BANNER = "demo · offline sandbox"


class CannotOpen(App[None]):
    """The reason the workbench could not open, in the tab, as plain text (never markup)."""

    TITLE = "sourcedesk"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "Quit")]
    CSS = "#why { padding: 1 2; }"

    def __init__(self, why: str) -> None:
        super().__init__()
        self.why = why

    def compose(self) -> ComposeResult:
        text = f"The workbench could not open.\n\n{self.why}\n\nFix it, then reload this page."
        yield Static(clean_text(text, multiline=True), id="why", markup=False)
        yield Footer()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m sourcedesk.tui.web.desk_app")
    p.add_argument("memo", type=Path)
    p.add_argument("--demo-sandbox", metavar="URL", help="the demo's sandbox (the demo's settings, not the analyst's)")
    p.add_argument("--demo-root", type=Path, metavar="DIR", help="the demo folder (its global.json)")
    return p


def build_app(args: argparse.Namespace) -> App[None]:
    from sourcedesk.tui.app import SourcedeskApp

    try:
        if args.demo_sandbox:
            from sourcedesk.store.global_store import GlobalStore
            from sourcedesk.tui.demo import demo_settings

            return SourcedeskApp(
                args.memo,
                settings=demo_settings(args.demo_sandbox),
                global_store=GlobalStore(args.demo_root / "global.json"),
                banner=DEMO_BANNER,
            )
        return SourcedeskApp(args.memo)  # settings loaded as `sourcedesk open` loads them
    except UserError as err:
        return CannotOpen(str(err))  # the message and its hint
    except Exception as exc:  # noqa: BLE001 - written to the log with its traceback, one line in the tab
        from sourcedesk.tui.logs import report_unexpected

        return CannotOpen(report_unexpected(exc, "the browser workbench"))


def main(argv: list[str] | None = None) -> int:
    from sourcedesk.tui.logs import setup_logging

    setup_logging()
    build_app(_parser().parse_args(argv)).run()
    # The app has closed its store and clients. What is left is the interpreter's own teardown,
    # whose last garbage collection walks every object the workbench made: 1.8-2.0 s from the
    # request to quit to the process's end on a loaded 2-core machine, 0.12-0.25 s with them
    # frozen (skipped by that collection; the process ends with them). The tab's session must end
    # within 5 s, as the server's grace periods count.
    gc.freeze()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
