"""The Textual workbench: one memo, its sections, their runs.

The app owns what outlives a screen: the loaded memo, the open memo store (TinyDB or the
team's PostgreSQL server, from the settings; a section is held only while it runs, so a
colleague or a command can work on the others), the shared HTTP clients (so rate limiters
and connection pools are shared by every section's run) and the running work.

Slow work runs in workers (``sourcedesk.tui.runs``, ``sourcedesk.tui.checks``, the memo.yaml
watcher below, and each screen's loaders); workers post typed messages
(``sourcedesk.tui.messages``) that the screens handle with ``@on``. Nothing polls.

One error path: an expected error (``UserError``: title, message, hint) is a toast; an
unexpected one — in a worker, a key's action or a palette command — is logged with its
traceback and shown as one line naming the log file (``report``); a crash that escapes
even that is written to the log, never to the terminal (``sourcedesk.tui.crash``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import select
import sys
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState, get_current_worker

from sourcedesk.core.config.settings import Settings, is_set, load_settings
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.memo.loader import LoadedMemo, load_memo
from sourcedesk.core.text.safety import clean_text
from sourcedesk.screens.palette import SourcedeskCommands
from sourcedesk.store.api import GlobalStoreAPI, MemoStoreAPI, SectionHoldAPI
from sourcedesk.themes import DARK, LIGHT, STYLESHEET, load_theme_name, save_theme_name, toggled
from sourcedesk.tui.checks import SectionChecks
from sourcedesk.tui.crash import CrashLog
from sourcedesk.tui.logs import report_unexpected
from sourcedesk.tui.messages import MemoReloaded, StoreChanged, ThemeChanged
from sourcedesk.tui.runs import SectionRuns
from sourcedesk.tui.store_watch import ColleagueChanged, show_store_change, start_store_watch
from sourcedesk.tui.stores import global_store as open_global
from sourcedesk.tui.stores import memo_store as open_memo
from sourcedesk.tui.widgets.cells import Palette

if TYPE_CHECKING:  # pragma: no cover - typing only
    import httpx

    from sourcedesk.core.pipeline.run import RunOutcome
    from sourcedesk.core.pipeline.section_state import SectionView
    from sourcedesk.core.sources.providers import ProviderClients
    from sourcedesk.core.sources.providers.base import Provider
    from sourcedesk.core.writing.registry import Writer
    from sourcedesk.tui.checks import SectionCheck
    from sourcedesk.tui.judging import CachedJudge

log = logging.getLogger("sourcedesk.tui")


class SourcedeskApp(SectionRuns, SectionChecks, App[None]):
    CSS_PATH = str(STYLESHEET)
    TITLE = "sourcedesk"
    COMMANDS = App.COMMANDS | {SourcedeskCommands}
    NOTIFICATION_TIMEOUT = 6
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "toggle_theme", "Theme", tooltip="Switch between the light and dark theme.", id="theme"),
        Binding("question_mark", "help", "Help", key_display="?", tooltip="Every key of this screen.", id="help"),
        Binding("q", "quit", "Quit", tooltip="Quit; running sections are cancelled, notes stay.", id="quit"),
    ]

    def __init__(
        self,
        memo_dir: Path | str,
        *,
        settings: Settings | None = None,
        store: MemoStoreAPI | None = None,
        global_store: GlobalStoreAPI | None = None,
        banner: str = "",
        watch_memo: bool = True,
    ) -> None:
        super().__init__()
        self.settings = settings or load_settings()
        self.loaded: LoadedMemo = load_memo(Path(memo_dir), writer_api=self.settings.writer_api)
        # The bytes of memo.yaml that loaded last, and the bytes last read (loaded or said to fail).
        self._memo_loaded = self._memo_seen = _digest(self.loaded.path)
        self._own_store = store is None
        self.store: MemoStoreAPI = store or open_memo(self.loaded.dir, self.settings)
        self.global_store: GlobalStoreAPI = global_store or open_global(self.settings)
        self._window: SectionHoldAPI | None = None
        self._store_watch: threading.Event | None = None
        self.banner = banner
        self.watch_memo = watch_memo
        self.notices: list[tuple[str, str]] = []  # (severity, message), oldest first
        self.judges: dict[tuple[object, ...], CachedJudge] = {}  # the current about judge (sourcedesk.tui.loading)
        self._init_runs()
        self._init_checks()
        self._http: httpx.AsyncClient | None = None
        self._clients: ProviderClients | None = None
        self._slots: asyncio.Semaphore | None = None
        self._palette: tuple[str, Palette] | None = None
        self.crash_log = CrashLog()
        self.error_console = self.crash_log.console()  # a crash's traceback goes to the log file
        self.title = self.loaded.memo.title
        self.sub_title = " · ".join(part for part in (banner, f"writer: {self.writer_label()}") if part)

    def load_notices(self) -> list[str]:
        """What memo.yaml and the settings ask for that runs differently (a retired Sonar name,
        in the memo or in the writer_model setting): said at start, as ``sourcedesk run`` does."""
        from sourcedesk.core.writing.choice import setting_notices

        api = self.loaded.memo.writer.api or self.settings.writer_api
        return [*self.loaded.notices, *setting_notices(self.loaded.memo, api, self.settings.writer_model)]

    def writer_label(self) -> str:
        """Which writer the runs use, as the header shows it (e.g. "Perplexity Agent API")."""
        from sourcedesk.core.writing.registry import writer_class

        try:
            return str(writer_class(self.loaded.memo.writer.api or self.settings.writer_api).label)
        except KeyError:
            return "unknown writer API"

    # ------------------------------------------------------------------ lifecycle

    def on_mount(self) -> None:
        from sourcedesk.screens.memo_screen import MemoScreen

        self.register_theme(DARK)
        self.register_theme(LIGHT)
        self.theme = load_theme_name()
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        self._slots = asyncio.Semaphore(max(1, int(self.settings.max_concurrent_sections)))
        self.push_screen(MemoScreen())
        self._say_missing_keys()
        for notice in self.load_notices():
            self.say(notice, "warning")
        self._watch_terminal()
        if self.watch_memo:
            self._watch_memo_file()
        self._window, self._store_watch = start_store_watch(self)

    @on(ColleagueChanged)
    def _colleague_changed(self, message: ColleagueChanged) -> None:
        show_store_change(self, message.change)

    def _say_missing_keys(self) -> None:
        from sourcedesk.core.writing.registry import writer_class

        for provider in self._keyless_providers():
            self.say(
                f"No {provider.key_env} is set: {provider.display_name} entries are skipped and runs continue "
                "without their sources.",
                "warning",
            )
        writer = writer_class(self.loaded.memo.writer.api or self.settings.writer_api)
        if writer.needs_key and not is_set(self.settings.key_for(writer.api)):
            self.say(f"No {writer.key_name} is set: runs will fail at the writer until one is set.", "warning")

    def _watch_terminal(self) -> None:
        """Quit when the terminal goes away (a closed tmux pane, a dropped ssh session).

        Textual's input thread reads end-of-file from a hung-up terminal in a tight loop, so an
        orphaned workbench would burn a core and keep the memo's lock for ever; leaving through
        the normal exit path also stops the demo sandbox and closes the store."""
        try:
            fd = sys.__stdin__.fileno() if sys.__stdin__ is not None else -1
        except (OSError, ValueError):
            fd = -1
        if fd < 0 or not os.isatty(fd):
            return  # headless (tests, pipes): nothing to watch
        import signal

        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signals off the main thread
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self._terminal_gone)
        self._wait_for_hangup(fd)

    @work(thread=True, group="watch-terminal", name="watch terminal", exit_on_error=False)
    def _wait_for_hangup(self, fd: int) -> None:
        """Blocks on the terminal until it hangs up (no SIGHUP reaches a process outside its session)."""
        poller = select.poll()
        poller.register(fd, 0)  # hang-ups and errors are always reported
        worker = get_current_worker()
        while not worker.is_cancelled:
            if any(event & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _fd, event in poller.poll(500)):
                self.call_from_thread(self._terminal_gone)
                return

    def _terminal_gone(self) -> None:
        log.warning("the terminal went away; closing the workbench")
        self.exit()

    async def on_unmount(self) -> None:
        if self._store_watch is not None:
            self._store_watch.set()
        if self._window is not None:
            self._window.release()
        self.cancel_all_runs()
        self.cancel_all_checks()
        if self._clients is not None:
            try:
                await self._clients.aclose()
            except Exception:
                log.debug("closing the provider clients failed", exc_info=True)
        if self._http is not None:
            await self._http.aclose()
        if self._own_store:
            self.store.close()
            self.global_store.close()

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """The workbench, then — after a crash — one line naming the log file, never a traceback."""
        result = super().run(*args, **kwargs)
        if self.crash_log.written:
            from sourcedesk.tui.goodbye import say_goodbye

            say_goodbye(f"sourcedesk: {self.crash_log.summary()}", sys.stderr)
        return result

    # ------------------------------------------------------------------ messages to the analyst

    def say(self, message: str, severity: SeverityLevel = "information", *, title: str = "") -> None:
        """Tell the analyst something: a toast (never markup) and an entry in ``notices``."""
        message = clean_text(message, multiline=True)  # it may quote a server's words
        self.notices.append((severity, message))
        timeout = 12 if severity == "error" else self.NOTIFICATION_TIMEOUT
        self.notify(message, title=clean_text(title), severity=severity, markup=False, timeout=timeout)

    def report(self, exc: BaseException, what: str = "") -> None:
        """The one error handler: an expected error as its title, message and hint; anything
        else logged with its traceback and shown as one line that names the log file."""
        if isinstance(exc, UserError):
            text = exc.message + (f" — {exc.hint}" if exc.hint else "")
            title = exc.title
        else:
            text = report_unexpected(exc, what or "the workbench")
            title = "Unexpected error"
        self.say(f"{what}: {text}" if what else text, "error", title=title)

    async def run_action(self, action: Any, default_namespace: Any = None, namespaces: Any = None) -> bool:
        """Every key's action: a bug in one is shown and logged, and the workbench carries on."""
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except Exception as exc:  # noqa: BLE001 - the one handler for a key's unexpected error
            self.report(exc, f"the key for {action if isinstance(action, str) else 'an action'}")
            return True

    def guarded(self, command: Callable[[], object], what: str) -> Callable[[], None]:
        """``command`` for the command palette, with its errors on the one error path."""

        def run() -> None:
            try:
                command()
            except Exception as exc:  # noqa: BLE001 - shown and logged, never a crash
                self.report(exc, what)

        return run

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """A worker that raised: its error goes the one way errors go."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.report(event.worker.error, event.worker.description or event.worker.name)

    def tell_screens(self, make: Callable[[], Message]) -> None:
        """Post a fresh ``make()`` to every screen on the stack (a screen that does not handle
        it never hears of it). Safe from a worker thread."""
        for screen in list(self.screen_stack):
            screen.post_message(make())

    def sources_changed(self) -> None:
        """A run, a curation or an edit changed what the ``about`` judge reads (the subject's
        stored pages, the namesakes, the rejected names): the next verdict is judged anew."""
        self.judges = {}

    @property
    def palette(self) -> Palette:
        """The cells' colours, from the active theme (the same object until the theme changes)."""
        if self._palette is None or self._palette[0] != self.theme:
            self._palette = (self.theme, Palette(self.current_theme))
        return self._palette[1]

    def say_outcome(self, outcome: RunOutcome, grounded: SectionCheck | None = None) -> None:
        """One notice for a finished run: what the reconciler did, what it cost, and grounding."""
        from sourcedesk.tui.outcome_words import outcome_notice

        text, severity = outcome_notice(outcome, grounded)
        self.say(text, severity)

    # ------------------------------------------------------------------ memo.yaml

    def reload_memo(self, *, quiet: bool = False) -> bool:
        """Read memo.yaml again (after the pin toggle or an outside edit). A memo that no
        longer loads keeps the previous one on screen and says why."""
        seen = self._memo_seen = _digest(self.loaded.path)
        try:
            self.loaded = load_memo(self.loaded.path, writer_api=self.settings.writer_api)
        except UserError as exc:
            if not quiet:
                self.report(exc, "memo.yaml")
            return False
        self._memo_loaded = seen
        self.sources_changed()
        self.title = self.loaded.memo.title
        self.tell_screens(MemoReloaded)
        return True

    def memo_runnable(self) -> bool:
        """A run uses memo.yaml as it is on disk, as ``sourcedesk run`` does: edited into a
        file that no longer loads, it stops the run (silently running the last version that
        loaded would ignore the analyst's edits)."""
        if _digest(self.loaded.path) == self._memo_loaded or self.reload_memo():
            return True
        self.say("Nothing was run: memo.yaml does not load (see above) — fix it, then run again.", "error")
        return False

    @work(exclusive=True, group="watch-memo", name="watch memo.yaml", exit_on_error=False)
    async def _watch_memo_file(self) -> None:
        """Re-read memo.yaml whenever it changes on disk (an editor beside the workbench)."""
        async for _changes in self._memo_changes():
            if _digest(self.loaded.path) != self._memo_seen:
                self.reload_memo()

    async def _memo_changes(self) -> AsyncIterator[object]:
        from watchfiles import awatch

        path = self.loaded.path
        async for changes in awatch(path.parent, watch_filter=lambda _c, p: Path(p).name == path.name):
            yield changes

    # ------------------------------------------------------------------ what the screens read

    def global_rejects(self) -> list[str]:
        from sourcedesk.core.pipeline.run import newest_first

        try:
            return newest_first(self.global_store.reject_entries())
        except UserError as exc:
            self.report(exc, "global rejections")
            return []

    def global_reject_names(self) -> list[str]:
        try:
            return self.global_store.reject_names()
        except UserError as exc:
            self.report(exc, "global rejections")
            return []

    def store_changed(self, sections: frozenset[str] | None = None) -> None:
        """A curation or an edit was written: the screens read again what it touched."""
        self.sources_changed()
        self.tell_screens(lambda: StoreChanged(sections))

    def take_store_notices(self) -> list[str]:
        """Damaged store data that reading just moved aside: the analyst hears of it once."""
        take = getattr(self.store, "take_notices", None)
        if not callable(take):
            return []
        notices = list(take())
        for section in self.loaded.memo.sections:
            notices += take(section.id)
        return notices

    # ------------------------------------------------------------------ runs' shared clients

    def _keyless_providers(self) -> list[Provider]:
        """Network providers the memo uses whose API key is missing (their entries will be skipped)."""
        from sourcedesk.core.sources.providers import get_provider

        if not self.settings.retrieval_enabled:
            return []
        names = dict.fromkeys(e.provider for s in self.loaded.memo.sections for e in s.include_sources)
        found = []
        for name in names:
            try:
                provider = get_provider(name)
            except KeyError:
                continue  # the memo loader already said so
            if provider.uses_network and provider.missing_key(self.settings):
                found.append(provider)
        return found

    def run_clients(self) -> tuple[Writer, ProviderClients]:
        """The writer and provider clients every run of the session shares (one rate limit each)."""
        import httpx

        from sourcedesk.core.pipeline.run import writer_from_settings
        from sourcedesk.core.sources.providers import ProviderClients

        if self._http is None:
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(self.settings.writer_timeout_s))
        if self._clients is None:
            self._clients = ProviderClients(self.settings)
        writer = writer_from_settings(self.settings, self.loaded.memo, http=self._http)
        return writer, self._clients

    def run_slots(self) -> asyncio.Semaphore:
        """At most ``max_concurrent_sections`` runs at once; the others wait, queued."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, int(self.settings.max_concurrent_sections)))
        return self._slots

    # ------------------------------------------------------------------ app-wide actions

    def action_toggle_theme(self) -> None:
        self.theme = toggled(self.theme)
        save_theme_name(self.theme)
        self.tell_screens(ThemeChanged)

    def action_help(self) -> None:
        from sourcedesk.screens.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_run_all(self) -> None:
        self.run_all()

    def action_export(self) -> None:
        from sourcedesk.core.notes.export import export_memo

        try:
            result = export_memo(self.loaded.dir)
        except UserError as exc:
            self.report(exc, "export")
            return
        except OSError as exc:
            self.say(f"export: cannot write memo.md ({exc.strerror or exc})", "error")
            return
        missing = f"; not written yet: {', '.join(result.missing)}" if result.missing else ""
        name = result.path.name if result.path else "memo.md"
        self.say(f"Wrote {name} — {result.sections} section(s), {result.footnotes} footnote(s){missing}")
        for warning in result.warnings[:3]:
            self.say(f"export: {warning}", "warning")

    def action_namesakes(self) -> None:
        """The memo's namesakes: declared in memo.yaml or learned (learned ones removable)."""
        from sourcedesk.screens.namesakes_modal import NamesakesScreen

        memo = self.loaded.memo

        def remove(name: str) -> bool:
            removed = bool(self.store.remove_learned_namesake(name))
            if removed:
                self.say(f"Removed the learned namesake '{name}'; it is not learned again.")
                self.store_changed()
            return removed

        if not isinstance(self.screen, NamesakesScreen):
            self.push_screen(
                NamesakesScreen(memo.subject.name, list(memo.subject.namesakes), self.store.learned_namesakes, remove)
            )

    def open_section(self, section_id: str, view: SectionView | None = None) -> None:
        """The section's screen (``view``: its state as the memo screen last read it, shown at once)."""
        from sourcedesk.screens.section_screen import SectionScreen

        if section_id not in {s.id for s in self.loaded.memo.sections}:
            self.say(f"There is no section {section_id!r}.", "error")
            return
        while isinstance(self.screen, SectionScreen) or self.screen.is_modal:
            if isinstance(self.screen, SectionScreen) and self.screen.section_id == section_id:
                return
            self.pop_screen()
        self.push_screen(SectionScreen(section_id, view))

    async def action_quit(self) -> None:
        self.cancel_all_runs()
        self.exit()


def _digest(path: Path) -> str | None:
    """The hash of a file's bytes (None when it cannot be read)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
