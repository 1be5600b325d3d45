"""The Textual workbench: one memo, its sections, their runs.

The app owns what outlives a screen: the loaded memo, the one open ``MemoStore``
(its inter-process lock is held for the whole session), the shared HTTP clients
(so rate limiters and connection pools are shared by every section's run), and
the running jobs. Each section's run is its own async worker (exclusive per
section); progress arrives through ``run_section``'s callback on the app's event
loop, so nothing blocks the interface. Screens ask the app to start, cancel or
describe work and are told when a section changed.

Every message to the analyst goes through ``say`` (a toast with markup off, plus a
log the tests read); no exception reaches the terminal as a traceback.

Verification (``sourcedesk.tui.checks``): a successful run grounds its new note before it
reports (offline), and ``v`` checks a section's URLs in a worker of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import httpx
from rich.text import Text
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.worker import Worker

from sourcedesk.core.config.settings import Settings, is_set, load_settings
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.memo.loader import LoadedMemo, load_memo
from sourcedesk.core.pipeline.run import RunOutcome, newest_first, run_section, writer_from_settings
from sourcedesk.core.pipeline.section_state import SectionView, describe_memo, describe_section
from sourcedesk.core.sources.about import About, AboutJudge
from sourcedesk.core.sources.judge import cited_namesakes, memo_judge
from sourcedesk.core.sources.providers import ProviderClients, get_provider
from sourcedesk.core.sources.providers.base import Provider
from sourcedesk.core.text.safety import clean_text
from sourcedesk.core.writing.registry import Writer, writer_class
from sourcedesk.screens.palette import SourcedeskCommands
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.themes import DARK, LIGHT, STYLESHEET, load_theme_name, save_theme_name, toggled
from sourcedesk.tui.checks import CheckRunner
from sourcedesk.tui.logs import logged_at, report_unexpected
from sourcedesk.tui.widgets.cells import Palette

log = logging.getLogger("sourcedesk.tui")

STAGE_WORDS = {
    "queued": "queued",
    "retrieving": "retrieving",
    "writing": "writing",
    "reconciling": "reconciling",
    "judging": "asking the model judge",
    "saved": "saving",
    "grounding": "grounding",
    "failed": "failing",
    "cancelled": "cancelling",
}


@dataclass
class Job:
    """One section's run in progress."""

    section_id: str
    refresh: bool
    stage: str = "queued"
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    worker: Worker | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def stage_text(self) -> str:
        word = STAGE_WORDS.get(self.stage, self.stage)
        return "cancelling" if self.cancel.is_set() else word


class SourcedeskApp(CheckRunner, App[None]):
    CSS_PATH = str(STYLESHEET)
    TITLE = "sourcedesk"
    COMMANDS = App.COMMANDS | {SourcedeskCommands}
    NOTIFICATION_TIMEOUT = 6
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "toggle_theme", "Theme"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        memo_dir: Path | str,
        *,
        settings: Settings | None = None,
        store: MemoStore | None = None,
        global_store: GlobalStore | None = None,
        banner: str = "",
    ) -> None:
        super().__init__()
        self.settings = settings or load_settings()
        self.loaded: LoadedMemo = load_memo(Path(memo_dir), writer_api=self.settings.writer_api)
        self._own_store = store is None
        self.store = store or MemoStore(self.loaded.dir)
        self.global_store = global_store or GlobalStore()
        self.banner = banner
        self.jobs: dict[str, Job] = {}
        self.notices: list[tuple[str, str]] = []  # (severity, message), oldest first
        self.last_outcomes: dict[str, RunOutcome] = {}
        self._init_checks()
        self._memo_mtime = self._mtime()
        self._http: httpx.AsyncClient | None = None
        self._clients: ProviderClients | None = None
        self._slots: asyncio.Semaphore | None = None
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
        self._slots = asyncio.Semaphore(max(1, int(self.settings.max_concurrent_sections)))
        self.push_screen(MemoScreen())
        for provider in self._keyless_providers():
            self.say(
                f"No {provider.key_env} is set: {provider.display_name} entries are skipped and runs continue "
                "without their sources.",
                "warning",
            )
        writer = writer_class(self.loaded.memo.writer.api or self.settings.writer_api)
        if writer.needs_key and not is_set(self.settings.key_for(writer.api)):
            self.say(f"No {writer.key_name} is set: runs will fail at the writer until one is set.", "warning")
        for notice in self.load_notices():
            self.say(notice, "warning")
        self._watch_terminal()

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
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signals off the main thread
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self._terminal_gone)

        def check() -> None:
            if not os.isatty(fd):
                self._terminal_gone()

        self.set_interval(1.0, check, name="terminal-watch")

    def _terminal_gone(self) -> None:
        log.warning("the terminal went away; closing the workbench")
        self.exit()

    async def on_unmount(self) -> None:
        for job in list(self.jobs.values()):
            job.cancel.set()
        for check in list(self.check_jobs.values()):
            if check.worker is not None:
                check.worker.cancel()
        if self._clients is not None:
            try:
                await self._clients.aclose()
            except Exception:
                log.debug("closing the provider clients failed", exc_info=True)
        if self._http is not None:
            await self._http.aclose()
        if self._own_store:
            self.store.close()

    # ------------------------------------------------------------------ messages

    def say(self, message: str, severity: SeverityLevel = "information", *, title: str = "") -> None:
        """Tell the analyst something: a toast (never markup) and an entry in ``notices``."""
        message = clean_text(message, multiline=True)  # it may quote a server's words
        self.notices.append((severity, message))
        timeout = 12 if severity == "error" else self.NOTIFICATION_TIMEOUT
        self.notify(message, title=title, severity=severity, markup=False, timeout=timeout)

    def say_error(self, exc: BaseException, what: str = "") -> None:
        if isinstance(exc, UserError):
            text = exc.message + (f" — {exc.hint}" if exc.hint else "")
        else:
            log.error(
                "unexpected error%s", f" while {what}" if what else "", exc_info=(type(exc), exc, exc.__traceback__)
            )
            where = logged_at()
            text = f"{type(exc).__name__}: {exc}" + (f" (details in {where})" if where else "")
        self.say(f"{what}: {text}" if what else text, "error")

    def _fatal_error(self) -> None:
        """Textual's end for an unhandled exception, without its traceback on the terminal:
        the traceback goes to the log file and the analyst gets one line naming it."""
        error = sys.exc_info()[1] or self._exception
        message = report_unexpected(error, "the workbench") if error is not None else "unexpected error"
        self.bell()
        self.exit(return_code=1, message=Text(f"sourcedesk: {message}"))
        self._close_messages_no_wait()  # what Textual's own handler does next: stop at once

    @property
    def palette(self) -> Palette:
        return Palette(self.current_theme)

    # ------------------------------------------------------------------ memo and state

    def _mtime(self) -> float | None:
        try:
            return self.loaded.path.stat().st_mtime
        except OSError:
            return None

    def reload_memo(self, *, quiet: bool = False) -> bool:
        """Read memo.yaml again (after the pin toggle or an outside edit). A memo that no
        longer loads keeps the previous one on screen and says why."""
        try:
            self.loaded = load_memo(self.loaded.path, writer_api=self.settings.writer_api)
        except UserError as exc:
            if not quiet:
                self.say_error(exc, "memo.yaml")
            return False
        self._memo_mtime = self._mtime()
        self.title = self.loaded.memo.title
        return True

    def reload_if_changed(self) -> bool:
        if self._mtime() != self._memo_mtime:
            return self.reload_memo()
        return False

    def global_rejects(self) -> list[str]:
        try:
            return newest_first(self.global_store.reject_entries())
        except UserError as exc:
            self.say_error(exc, "global rejections")
            return []

    def global_reject_names(self) -> list[str]:
        try:
            return self.global_store.reject_names()
        except UserError as exc:
            self.say_error(exc, "global rejections")
            return []

    def describe(self, section_id: str) -> SectionView:
        view = describe_section(
            self.loaded,
            section_id,
            store=self.store,
            settings=self.settings,
            global_rejects=self.global_rejects(),
            global_name_rejects=self.global_reject_names(),
        )
        self._say_store_notices()
        return view

    def describe_all(self) -> list[SectionView]:
        views = describe_memo(
            self.loaded,
            store=self.store,
            settings=self.settings,
            global_rejects=self.global_rejects(),
            global_name_rejects=self.global_reject_names(),
        )
        self._say_store_notices()
        return views

    def _say_store_notices(self) -> None:
        """Damaged store data that reading just moved aside: the analyst hears of it once."""
        take = getattr(self.store, "take_notices", None)
        if not callable(take):
            return
        notices = list(take())
        for section in self.loaded.memo.sections:
            notices += take(section.id)
        for message in notices:
            self.say(message, "warning")

    def about_judge(self) -> AboutJudge:
        """Which company each source is about: memo.yaml's and the learned namesakes, as they are now."""
        return memo_judge(self.loaded.memo, self.store, global_name_rejects=self.global_reject_names())

    def namesake_citations(self, view: SectionView, judge: AboutJudge | None = None) -> list[tuple[str, About]]:
        """The citations of the section's current note whose source is about a namesake (judged now)."""
        if view.note_path is None or view.run_id is None or view.note_error:
            return []
        try:
            record = self.store.get_run(view.run_id)
            note_set = self.store.get_source_set(view.note_set_id) if view.note_set_id else None
        except UserError as exc:
            log.info("cannot read the run of %s: %s", view.id, exc)
            return []
        report = record.the_report if record is not None else None
        frozen = note_set if note_set is not None else view.source_set
        return cited_namesakes(
            list(report.citations) if report is not None else [],
            frozen.sources if frozen is not None else [],
            record.writer_results() if record is not None else [],
            judge or self.about_judge(),
        )

    def notify_screens(self, handler_name: str, section_id: str | None) -> None:
        """Call ``handler_name(section_id)`` on every screen on the stack that has it."""
        for screen in list(self.screen_stack):
            handler = getattr(screen, handler_name, None)
            if handler is not None:
                try:
                    handler(section_id)
                except Exception:
                    log.exception("screen %s failed to show %s", screen, handler_name)

    def section_changed(self, section_id: str | None = None) -> None:
        """Tell every screen on the stack that a section (or, with None, everything) changed."""
        self.notify_screens("section_changed", section_id)

    # ------------------------------------------------------------------ runs

    def _keyless_providers(self) -> list[Provider]:
        """Network providers the memo uses whose API key is missing (their entries will be skipped)."""
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

    def _run_clients(self) -> tuple[Writer, ProviderClients]:
        """The writer and provider clients every run of the session shares (one rate limit each)."""
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(self.settings.writer_timeout_s))
        if self._clients is None:
            self._clients = ProviderClients(self.settings)
        writer = writer_from_settings(self.settings, self.loaded.memo, http=self._http)
        return writer, self._clients

    def _memo_runnable(self) -> bool:
        """A run uses memo.yaml as it is on disk, as ``sourcedesk run`` does: edited into a
        file that no longer loads, it stops the run (silently running the last version that
        loaded would ignore the analyst's edits)."""
        if self._mtime() == self._memo_mtime or self.reload_memo():
            return True
        self.say("Nothing was run: memo.yaml does not load (see above) — fix it, then run again.", "error")
        return False

    def start_run(self, section_id: str, *, refresh: bool = False, checked: bool = False) -> bool:
        """Run one section in its own worker; False when it is already running or unknown, or
        memo.yaml no longer loads (``checked``: the caller has just made sure it does)."""
        if not checked and not self._memo_runnable():
            return False
        if section_id not in {s.id for s in self.loaded.memo.sections}:
            self.say(f"There is no section {section_id!r} in memo.yaml.", "error")
            return False
        if section_id in self.jobs:
            self.say(f"{section_id} is already running (c cancels it).", "warning")
            return False
        job = Job(section_id=section_id, refresh=refresh)
        self.jobs[section_id] = job
        job.worker = self.run_worker(
            self._run(job),
            name=f"run {section_id}",
            group=f"section:{section_id}",
            exclusive=True,
            exit_on_error=False,
        )
        self.section_changed(section_id)
        return True

    def run_all(self, *, refresh: bool = False) -> int:
        if not self._memo_runnable():
            return 0
        started = 0
        for section in self.loaded.memo.sections:
            if section.id not in self.jobs and self.start_run(section.id, refresh=refresh, checked=True):
                started += 1
        if not started:
            self.say("Every section is already running.", "warning")
        return started

    def cancel_run(self, section_id: str) -> bool:
        job = self.jobs.get(section_id)
        if job is None:
            self.say(f"{section_id} is not running.", "warning")
            return False
        job.cancel.set()
        self.section_changed(section_id)
        return True

    def _progress(self, section_id: str, stage: str) -> None:
        job = self.jobs.get(section_id)
        if job is not None:
            job.stage = stage
            self.section_changed(section_id)

    async def _run(self, job: Job) -> None:
        sid = job.section_id
        try:
            assert self._slots is not None
            async with self._slots:
                if job.cancel.is_set():
                    self.say(f"{sid}: cancelled before it started.")
                    return
                writer, clients = self._run_clients()
                outcome = await run_section(
                    self.loaded,
                    sid,
                    store=self.store,
                    settings=self.settings,
                    refresh=job.refresh,
                    writer=writer,
                    clients=clients,
                    global_rejects=self.global_rejects(),
                    progress=self._progress,
                    cancel=job.cancel,
                    global_name_rejects=self.global_reject_names(),
                )
            self.last_outcomes[sid] = outcome
            grounded = None
            if outcome.ok:  # the new note's quotes and figures, offline, before the notice
                self._progress(sid, "grounding")
                grounded = await self.ground_section(sid)
            self._report(outcome, grounded)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug in one run is a toast, not a crash
            self.say_error(exc, f"{sid} failed")
        finally:
            self.jobs.pop(sid, None)
            self.section_changed(sid)

    def _report(self, outcome: RunOutcome, grounded: Any = None) -> None:
        sid = outcome.section
        if outcome.status == "cancelled":
            self.say(f"{sid}: {outcome.message}")
            return
        if outcome.status == "failed":
            self.say(f"{sid}: {outcome.message}", "error")
            return
        report = outcome.report or {}
        parts = [
            f"{report.get(k, 0)} {label}"
            for k, label in (
                ("verified", "verified"),
                ("substituted", "substituted"),
                ("dropped", "dropped"),
                ("out_of_range", "out of range"),
            )
            if report.get(k)
        ]
        reused = "frozen set reused" if outcome.source_set_reused else "sources retrieved"
        text = f"{sid}: {outcome.status} — {', '.join(parts) or 'no citations'}; {reused}; ${outcome.cost['total']:.3f}"
        if grounded is not None:
            from sourcedesk.tui.widgets.check_rows import grounding_words

            text += f"; grounding: {grounding_words(grounded.report)}"
            if grounded.problems and outcome.status != "degraded":
                self.say(text + " — the section's Checks tab (7) lists them", "warning")
                return
        if outcome.status == "degraded":
            first = next((w for w in outcome.warnings if w.startswith(("degraded", "stale"))), "")
            self.say(text + (f"\n{first}" if first else ""), "warning")
        else:
            self.say(text)

    # ------------------------------------------------------------------ actions

    def action_toggle_theme(self) -> None:
        self.theme = toggled(self.theme)
        save_theme_name(self.theme)
        self.section_changed(None)

    def action_help(self) -> None:
        from sourcedesk.screens.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_run_all(self) -> None:
        self.run_all()

    def action_export(self) -> None:
        from sourcedesk.core.notes.export import export_memo

        try:
            result = export_memo(self.loaded.dir)
        except UserError as exc:
            self.say_error(exc, "export")
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
                self.section_changed(None)
            return removed

        if not isinstance(self.screen, NamesakesScreen):
            self.push_screen(
                NamesakesScreen(memo.subject.name, list(memo.subject.namesakes), self.store.learned_namesakes, remove)
            )

    def open_section(self, section_id: str) -> None:
        from sourcedesk.screens.section_screen import SectionScreen

        if section_id not in {s.id for s in self.loaded.memo.sections}:
            self.say(f"There is no section {section_id!r}.", "error")
            return
        while isinstance(self.screen, SectionScreen) or getattr(self.screen, "is_modal", False):
            if isinstance(self.screen, SectionScreen) and self.screen.section_id == section_id:
                return
            self.pop_screen()
        self.push_screen(SectionScreen(section_id))

    async def action_quit(self) -> None:
        for job in self.jobs.values():
            job.cancel.set()
        self.exit()
