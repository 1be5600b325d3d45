"""Section runs in the workbench: one ``@work`` worker per run, exclusive per section.

A run is started, cancelled or described here; its worker (group ``run:<section>``, so a
second run of the same section replaces the first and other sections run alongside) posts
``SectionRunStarted``, ``SectionRunProgress`` and ``SectionRunFinished`` to the screens.
A failure inside it is the worker's error: the app's one error handler shows it
(``exit_on_error=False``), the interface carries on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sourcedesk.core.domain.errors import UserError
from sourcedesk.store.holders import SectionLocked
from sourcedesk.tui.messages import SectionRunFinished, SectionRunProgress, SectionRunStarted

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.core.pipeline.run import RunOutcome
    from sourcedesk.store.api import SectionHoldAPI
    from sourcedesk.tui.app import SourcedeskApp

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
    started: float = field(default_factory=time.monotonic)

    @property
    def stage_text(self) -> str:
        word = STAGE_WORDS.get(self.stage, self.stage)
        return "cancelling" if self.cancel.is_set() else word


class SectionRuns:
    """Mixed into ``SourcedeskApp`` (whose memo, store, clients and messages a run uses)."""

    jobs: dict[str, Job]
    last_outcomes: dict[str, RunOutcome]

    @property
    def workbench(self) -> SourcedeskApp:
        from sourcedesk.tui.app import SourcedeskApp

        assert isinstance(self, SourcedeskApp), "SectionRuns is the workbench app's mixin"
        return self

    def _init_runs(self) -> None:
        self.jobs = {}
        self.last_outcomes = {}

    def start_run(self, section_id: str, *, refresh: bool = False, checked: bool = False) -> bool:
        """Run one section in its own worker; False when it is already running or unknown, or
        memo.yaml no longer loads (``checked``: the caller has just made sure it does)."""
        app = self.workbench
        if not checked and not app.memo_runnable():
            return False
        if section_id not in {s.id for s in app.loaded.memo.sections}:
            app.say(f"There is no section {section_id!r} in memo.yaml.", "error")
            return False
        if section_id in self.jobs:
            app.say(f"{section_id} is already running (c cancels it).", "warning")
            return False
        job = Job(section_id=section_id, refresh=refresh)
        self.jobs[section_id] = job
        app.tell_screens(lambda: SectionRunStarted(section_id))
        # One worker per section, exclusive in its own group: a second run of the same section
        # replaces the first, other sections run alongside (``@work`` fixes its group when the
        # class is defined, so the group named at call time goes through ``run_worker``).
        app.run_worker(
            self._run_section(job),
            name=f"run {section_id}",
            group=f"run:{section_id}",
            exclusive=True,
            exit_on_error=False,
            description=f"the run of {section_id}",
        )
        return True

    def run_all(self, *, refresh: bool = False) -> int:
        app = self.workbench
        if not app.memo_runnable():
            return 0
        started = 0
        for section in app.loaded.memo.sections:
            if section.id not in self.jobs and self.start_run(section.id, refresh=refresh, checked=True):
                started += 1
        if not started:
            app.say("Every section is already running.", "warning")
        return started

    def cancel_run(self, section_id: str) -> bool:
        job = self.jobs.get(section_id)
        if job is None:
            self.workbench.say(f"{section_id} is not running.", "warning")
            return False
        job.cancel.set()
        self.workbench.tell_screens(lambda: SectionRunProgress(section_id, "cancelled"))
        return True

    def _progress(self, section_id: str, stage: str) -> None:
        job = self.jobs.get(section_id)
        if job is not None:
            job.stage = stage
            self.workbench.tell_screens(lambda: SectionRunProgress(section_id, stage))

    async def _run_section(self, job: Job) -> None:
        """The run, then (offline) grounding of its new note, then one notice of what it did."""
        app = self.workbench
        sid = job.section_id
        outcome = None
        hold: SectionHoldAPI | None = None
        try:
            try:  # held while it runs: a colleague, another window or a command is refused
                hold = app.store.hold_section(sid, purpose="running it")
            except SectionLocked as exc:
                app.say(f"{sid} was not run: {exc.message}", "warning")
                return
            outcome = await self._run_one(job)
            if outcome is None:
                return
            self.last_outcomes[sid] = outcome
            grounded = None
            if outcome.ok:  # the new note's quotes and figures, offline, before the notice
                self._progress(sid, "grounding")
                grounded = await app.ground_section(sid)
            app.say_outcome(outcome, grounded)
        finally:
            if hold is not None:
                hold.release()
            self.jobs.pop(sid, None)
            app.sources_changed()
            app.tell_screens(lambda: SectionRunFinished(sid, outcome))

    async def _run_one(self, job: Job) -> RunOutcome | None:
        from sourcedesk.core.pipeline.run import run_section

        app = self.workbench
        sid = job.section_id
        async with app.run_slots():
            if job.cancel.is_set():
                app.say(f"{sid}: cancelled before it started.")
                return None
            writer, clients = app.run_clients()
            try:
                return await run_section(
                    app.loaded,
                    sid,
                    store=app.store,
                    settings=app.settings,
                    refresh=job.refresh,
                    writer=writer,
                    clients=clients,
                    global_rejects=app.global_rejects(),
                    progress=self._progress,
                    cancel=job.cancel,
                    global_name_rejects=app.global_reject_names(),
                )
            except UserError as exc:
                app.report(exc, f"{sid} failed")
                return None

    def cancel_all_runs(self) -> None:
        for job in self.jobs.values():
            job.cancel.set()


__all__ = ["STAGE_WORDS", "Job", "SectionRuns"]
