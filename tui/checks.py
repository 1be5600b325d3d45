"""Verification in the workbench: after every run (offline, so it costs nothing) and on
demand (``v``, because checking URLs costs a request each).

Two kinds of check of a section's note, both in the background:

* **grounding** — offline and cheap (no DNS, no request): every quotation and
  figure looked up verbatim in the stored text of the source it cites. It runs
  after every successful run, inside that run's worker (a thread reads the
  note and the store), and its counts join the run's notice;
* **liveness and grounding** — ``v`` on the section screen: every cited URL is
  fetched for real (``sourcedesk.core.verify``), in its own worker (group ``check:<section>``,
  exclusive), with progress (URLs done / distinct URLs) on the section's head line.

Workers post ``CheckStarted``, ``CheckProgress`` and ``CheckFinished``
(``sourcedesk.tui.messages``) to the screens.

The latest check of each section is kept in memory (``checks``) with the hash
of the note it read, and its counts are saved in the section's state in the
store (``last_check``), so the memo screen can flag problems after a restart —
but only while the note is still the one that was checked.

Tests (and anyone who must stay off the network) set ``check_resolve`` /
``check_client``: the DNS resolver and the HTTP client the liveness check uses.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from textual.notifications import SeverityLevel

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.records import CheckState
from sourcedesk.core.domain.storage import EvidenceStore
from sourcedesk.core.notes.note import find_note
from sourcedesk.core.verify.addresses import Resolver
from sourcedesk.core.verify.check import CheckOptions, CheckReport, Prepared, check_notes, ground_notes, prepare_path
from sourcedesk.tui.messages import CheckFinished, CheckProgress, CheckStarted

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.tui.app import SourcedeskApp

log = logging.getLogger("sourcedesk.tui")

STATE_KEY = "last_check"


def note_sha256(path: Path | None) -> str | None:
    """The hash of a note's bytes (None when there is no readable note)."""
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@dataclass
class SectionCheck:
    """One finished check of one section's note."""

    section_id: str
    report: CheckReport
    note_name: str
    note_sha256: str
    url_by_key: dict[str, str] = field(default_factory=dict)
    at: datetime = field(default_factory=clock.now)

    @property
    def liveness(self) -> bool:
        return self.report.liveness

    @property
    def problems(self) -> int:
        return self.report.problems

    def state(self) -> CheckState:
        """What the store keeps: counts, not rows (a new check rebuilds the rows)."""
        return CheckState(
            at=self.at.isoformat(timespec="seconds"),
            note=self.note_name,
            note_sha256=self.note_sha256,
            liveness=self.liveness,
            counts=self.report.counts(),
            problems=self.problems,
        )


@dataclass
class CheckJob:
    """A liveness check in progress."""

    section_id: str
    done: int = 0
    total: int | None = None  # distinct URLs (None: still reading the note)
    started: float = field(default_factory=time.monotonic)

    @property
    def text(self) -> str:
        if self.total is None:
            return "checking: reading the note"
        if self.total == 0:
            return "checking: grounding"
        return f"checking {self.done}/{self.total} URL(s)"


def _prepare(path: Path, store: EvidenceStore) -> tuple[Prepared, str]:
    """Read the note (its hash first: the hash names exactly the bytes that were checked)."""
    sha = note_sha256(path) or ""
    return prepare_path(path, store=store, name=path.name), sha


def _ground(path: Path, store: EvidenceStore) -> tuple[CheckReport, Prepared, str]:
    prepared, sha = _prepare(path, store)
    report = ground_notes(prepared.notes, prepared.evidence)
    report.warnings = prepared.warnings + report.warnings
    return report, prepared, sha


def _url_by_key(prepared: Prepared) -> dict[str, str]:
    return {k: v for note in prepared.notes for k, v in note.url_by_key.items()}


class SectionChecks:
    """Mixed into ``SourcedeskApp``, whose memo, store, settings and messages it uses
    (through ``workbench``, typed)."""

    checks: dict[str, SectionCheck]
    check_jobs: dict[str, CheckJob]
    check_resolve: Resolver | None
    check_client: httpx.AsyncClient | None

    @property
    def workbench(self) -> SourcedeskApp:
        from sourcedesk.tui.app import SourcedeskApp  # the app module defines the class this is mixed into

        assert isinstance(self, SourcedeskApp), "SectionChecks is the workbench app's mixin"
        return self

    def _init_checks(self) -> None:
        self.checks = {}
        self.check_jobs = {}
        self.check_resolve = None
        self.check_client = None

    # ------------------------------------------------------------------ what screens ask

    def note_of(self, section_id: str) -> Path | None:
        return find_note(self.workbench.loaded.dir, self.workbench.loaded.memo, section_id)

    def last_check(self, section_id: str) -> SectionCheck | None:
        return self.checks.get(section_id)

    def check_problems(self, section_id: str, note_path: Path | None) -> int | None:
        """Problems found by the last check of the note as it is now (None: not checked)."""
        return self.problems_of(section_id, note_sha256(note_path))

    def problems_of(self, section_id: str, sha: str | None) -> int | None:
        """Problems found by the last check of the note whose bytes hash to ``sha``."""
        if sha is None:
            return None
        check = self.checks.get(section_id)
        if check is not None and check.note_sha256 == sha:
            return check.problems
        saved = self.saved_check(section_id)
        return saved.problems if saved is not None and saved.note_sha256 == sha else None

    def saved_check(self, section_id: str) -> CheckState | None:
        """The stored counts of the section's last check (from an earlier session, too)."""
        try:
            return self.workbench.store.section_state(section_id).last_check
        except Exception:
            log.debug("could not read the last check of %s", section_id, exc_info=True)
            return None

    def _keep(self, check: SectionCheck) -> None:
        self.checks[check.section_id] = check
        try:
            self.workbench.store.update_section_state(check.section_id, {STATE_KEY: check.state().to_json()})
        except Exception:
            log.exception("could not save the check of %s", check.section_id)

    # ------------------------------------------------------------------ grounding after a run

    async def ground_section(self, section_id: str) -> SectionCheck | None:
        """Ground the section's note (offline); never raises — a failure is said, not thrown."""
        self.cancel_check(section_id, why="a new note was written")
        path = self.note_of(section_id)
        if path is None:
            return None
        try:
            report, prepared, sha = await asyncio.to_thread(_ground, path, self.workbench.store)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the run itself succeeded
            self.workbench.report(exc, f"{section_id}: grounding")
            return None
        check = SectionCheck(section_id, report, path.name, sha, _url_by_key(prepared))
        self._keep(check)
        return check

    # ------------------------------------------------------------------ liveness on demand

    def start_check(self, section_id: str) -> bool:
        """Check the section's note (liveness and grounding) in its own worker."""
        app = self.workbench
        if section_id in self.check_jobs:
            app.say(f"{section_id}: a check is already running; its results replace these when it ends.", "warning")
            return False
        if section_id in app.jobs:
            app.say(f"{section_id} is running: v checks the note once the run has finished.", "warning")
            return False
        if self.note_of(section_id) is None:
            app.say(f"{section_id} has no note yet: r writes it, then v checks its citations.", "warning")
            return False
        job = CheckJob(section_id)
        self.check_jobs[section_id] = job
        app.tell_screens(lambda: CheckStarted(section_id))
        app.run_worker(
            self._check(job),
            name=f"check {section_id}",
            group=f"check:{section_id}",
            exclusive=True,
            exit_on_error=False,
            description=f"the check of {section_id}'s note",
        )
        return True

    def cancel_check(self, section_id: str, *, why: str = "") -> bool:
        job = self.check_jobs.pop(section_id, None)
        if job is None:
            return False
        app = self.workbench
        app.workers.cancel_group(app, f"check:{section_id}")
        app.say(f"{section_id}: URL check stopped{': ' + why if why else ''}; v checks again.")
        app.tell_screens(lambda: CheckFinished(section_id, None))
        return True

    async def _check(self, job: CheckJob) -> None:
        app = self.workbench
        sid = job.section_id
        check = None
        try:
            path = self.note_of(sid)
            if path is None:
                app.say(f"{sid} has no note yet: r writes it, then v checks its citations.", "warning")
                return
            prepared, sha = await asyncio.to_thread(_prepare, path, app.store)
            options = CheckOptions.from_settings(app.settings)

            def progress(done: int, total: int) -> None:
                job.done, job.total = done, total
                app.tell_screens(lambda: CheckProgress(sid, done, total))

            report = await check_notes(
                prepared.notes,
                prepared.evidence,
                options,
                liveness=True,
                resolve=self.check_resolve,
                client=self.check_client,
                progress=progress,
            )
            report.warnings = prepared.warnings + report.warnings
            if self.check_jobs.get(sid) is not job:  # stopped meanwhile (a new note was written)
                return
            check = SectionCheck(sid, report, path.name, sha, _url_by_key(prepared))
            self._keep(check)
            self._announce(check)
        finally:
            if self.check_jobs.get(sid) is job:
                self.check_jobs.pop(sid, None)
                app.tell_screens(lambda: CheckFinished(sid, check))

    def _announce(self, check: SectionCheck) -> None:
        from sourcedesk.tui.widgets.check_rows import summary

        text = f"{check.section_id}: {summary(check.report, self.workbench.palette).plain}"
        offline = next((w for w in check.report.warnings if "offline" in w), "")
        if offline:
            text += f"\n{offline}"
        severity: SeverityLevel = "warning" if check.problems or offline else "information"
        self.workbench.say(text, severity)

    def cancel_all_checks(self) -> None:
        for section_id in list(self.check_jobs):
            self.workbench.workers.cancel_group(self.workbench, f"check:{section_id}")
        self.check_jobs.clear()
