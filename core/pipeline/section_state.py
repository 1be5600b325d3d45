"""What the memo screen says about one section: its status and the figures behind it.

No Textual here: the status is derived from files and the store only, so it can be
tested (and reused by a headless ``status`` command) without a terminal.

Statuses, in the order they are decided:

- ``failed``   — the last run failed (its message is kept; the previous note, if any, stays);
  a *cancelled* last run is not a failure: the section keeps the status of the note it left;
- ``never run`` — there is no note;
- ``degraded`` — the note was written with degraded retrieval (writer-only, or a kept stale set);
- ``stale``    — the note no longer matches what a run would use now: the section's source set
  changed since the note was written (a rejection, a promotion, a refresh), the set holds a
  source a rejection made elsewhere covers, memo.yaml changed since the set was retrieved,
  or the set outlived its TTL;
- ``fresh``    — otherwise.

``running`` is not decided here: only the app knows which workers are alive, and it
shows ``running`` over whatever this module says.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.domain.records import RunRecord
from sourcedesk.core.domain.storage import MemoStorage
from sourcedesk.core.memo.loader import LoadedMemo
from sourcedesk.core.memo.spec import ExaEntry, Section
from sourcedesk.core.notes.note import COUNT_KEYS, find_note, parse_note
from sourcedesk.core.sources.rejected import Rejections
from sourcedesk.core.sources.retrieve import plan_section

log = logging.getLogger("sourcedesk.tui")

STATUSES = ("never run", "fresh", "stale", "running", "degraded", "failed")


@dataclass
class SectionView:
    """Everything the memo screen shows for a section (and the section screen starts from)."""

    section: Section
    index: int  # 0-based position in memo.yaml
    status: str
    why: str = ""  # one line: why stale / failed / degraded
    note_path: Path | None = None
    frontmatter: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    note_error: str | None = None
    source_set: SourceSet | None = None  # the set a run would use now (else the latest stored version)
    fingerprint_now: str | None = None  # what a run would ask for now (None: could not be planned)

    @property
    def id(self) -> str:
        return self.section.id

    @property
    def counts(self) -> dict[str, int]:
        raw = self.frontmatter.get("counts")
        counts: dict[str, Any] = raw if isinstance(raw, dict) else {}
        return {k: _int(counts.get(k)) for k in COUNT_KEYS}

    @property
    def warnings(self) -> list[str]:
        raw = self.frontmatter.get("warnings")
        return [str(w) for w in raw] if isinstance(raw, list) else []

    @property
    def cited_namesakes(self) -> list[str]:
        """The note's citations of sources about a namesake, as its run recorded them."""
        raw = self.frontmatter.get("cites_namesakes")
        return [str(k) for k in raw] if isinstance(raw, list) else []

    @property
    def cost(self) -> float | None:
        cost = self.frontmatter.get("cost")
        if isinstance(cost, dict) and isinstance(cost.get("total"), (int, float)):
            return float(cost["total"])
        return None

    @property
    def run_id(self) -> str | None:
        value = self.frontmatter.get("run_id")
        return str(value) if value else None

    @property
    def note_set_id(self) -> str | None:
        ss = self.frontmatter.get("source_set")
        return str(ss["id"]) if isinstance(ss, dict) and ss.get("id") else None

    @property
    def source_count(self) -> int | None:
        return len(self.source_set.sources) if self.source_set is not None else None

    @property
    def truncated(self) -> bool:
        return bool(self.source_set and self.source_set.omitted)

    @property
    def pin_modes(self) -> list[str]:
        """The pin mode of each Exa entry, in order (empty: the section has no Exa entry)."""
        return [e.pin for e in self.section.include_sources if isinstance(e, ExaEntry)]


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def same_sources(a: SourceSet | None, b: SourceSet | None) -> bool:
    """Two sets a writer would see identically (same markers on the same URLs)."""
    if a is None or b is None:
        return a is b
    return [(s.marker, s.url) for s in a.sources] == [(s.marker, s.url) for s in b.sources]


def selected_set(
    store: MemoStorage, section_id: str, fingerprint: str | None, ttl_hours: float | None, now: datetime | None
) -> SourceSet | None:
    """The set the section's current spec selects: the one a run (r) would reuse — the newest
    good set retrieved for exactly this request, within its TTL — else the newest version.

    Toggling a pin away and back makes a run reuse the set retrieved for that pin mode, which
    is not the newest version; the section shows, and judges its note against, that set."""
    latest = store.latest_source_set(section_id)
    if fingerprint is None or latest is None or latest.fingerprint == fingerprint:
        return latest
    reused = store.latest_source_set(section_id, fingerprint=fingerprint, degraded=False)
    if reused is not None and not _past_ttl(reused, ttl_hours, now):
        return reused
    return latest


def describe_section(
    loaded: LoadedMemo,
    section_id: str,
    *,
    store: MemoStorage,
    settings: Settings,
    global_rejects: list[str],
    now: datetime | None = None,
    global_name_rejects: Sequence[str] = (),
) -> SectionView:
    memo = loaded.memo
    section = memo.section(section_id)
    view = SectionView(section=section, index=memo.section_index(section_id), status="never run")
    try:
        plan = plan_section(loaded, section_id, settings=settings, memo_rejects=[], global_rejects=[], now=now)
        view.fingerprint_now = plan.fingerprint
        ttl_hours = plan.ttl_hours
    except (UserError, KeyError, ValueError) as exc:  # a provider that cannot plan: said, not raised
        log.info("could not plan section %s: %s", section_id, exc)
        ttl_hours = None
    view.source_set = selected_set(store, section_id, view.fingerprint_now, ttl_hours, now)

    path = find_note(loaded.dir, memo, section_id)
    if path is not None:
        view.note_path = path
        try:
            view.frontmatter, view.body = parse_note(path.read_text(encoding="utf-8"), path=path.name)
        except UserError as exc:
            view.note_error = exc.message
        except (OSError, UnicodeDecodeError) as exc:
            view.note_error = f"cannot read {path.name}: {exc}"

    last_status = store.section_state(section_id).last_status
    last_run = _last_run(store, section_id)
    if last_status == "failed" and last_run is not None and last_run.was_cancelled:
        last_status = "cancelled"  # recorded before runs had a status of their own for it
    if last_status == "failed":
        view.status = "failed"
        message = (last_run.message if last_run is not None else "") or "the last run failed"
        kept = path is not None and "previous note" not in message
        view.why = message + ("; the previous note is kept" if kept else "")
        return view
    # a cancelled run is not a failure of the section: it keeps the status of the note it left alone
    if path is None:
        view.status = "never run"
        view.why = "the last run was cancelled" if last_status == "cancelled" else ""
        return view
    if view.note_error:
        view.status = "stale"
        view.why = view.note_error
        return view
    if str(view.frontmatter.get("status")) == "degraded":
        view.status = "degraded"
        cause = next((w for w in view.warnings if w.startswith(("degraded: ", "stale: "))), "")
        view.why = "written with degraded retrieval: " + (cause.split(": ", 1)[1] if cause else "see the warnings")
        return view
    view.status, view.why = "fresh", ""
    rejections = Rejections.of(
        memo_domains=store.rejects(),
        global_domains=global_rejects,
        memo_names=store.reject_names(),
        global_names=global_name_rejects,
    )
    stale = _why_stale(view, store, ttl_hours, now, rejections)
    if stale:
        view.status, view.why = "stale", stale
    return view


def _why_stale(
    view: SectionView, store: MemoStorage, ttl_hours: float | None, now: datetime | None, rejections: Rejections
) -> str:
    latest = view.source_set
    if latest is None:
        return ""
    pool = [*latest.sources, *(o.source for o in latest.omitted), *(h.source for h in latest.held_out)]
    covered = rejections.covered(pool) if rejections else []
    if covered:
        return (
            f"{len(covered)} source(s) in the frozen set are covered by a rejection made since "
            "(another memo or globally); a run (r) takes them out, with no new search"
        )
    note_set = view.note_set_id
    if note_set != latest.id:
        older = store.get_source_set(note_set) if note_set else None
        if not same_sources(older, latest):
            if older is not None and older.fingerprint != latest.fingerprint:
                return (
                    f"memo.yaml changed since the note was written; a run (r) reuses {latest.id}, "
                    "retrieved earlier for these settings (R searches again)"
                )
            was = f"v{older.version}" if older is not None else "an unknown set"
            return f"the sources changed since the note was written ({was} → v{latest.version}); re-run (r)"
    if view.fingerprint_now and view.fingerprint_now != latest.fingerprint:
        # A run reuses the newest good set retrieved for exactly this request (a pin toggled
        # back, say) while it is within the TTL: it searches again only when there is none.
        earlier = store.latest_source_set(view.id, fingerprint=view.fingerprint_now, degraded=False)
        if earlier is not None and not _past_ttl(earlier, ttl_hours, now):
            return (
                f"memo.yaml changed since the sources were retrieved; a run (r) reuses {earlier.id}, "
                "retrieved earlier for these settings (R searches again)"
            )
        return "memo.yaml changed since the sources were retrieved; a run retrieves again"
    if _past_ttl(latest, ttl_hours, now):
        return f"the sources are older than the {ttl_hours:g} h TTL; a run retrieves again"
    return ""


def _past_ttl(source_set: SourceSet, ttl_hours: float | None, now: datetime | None) -> bool:
    if ttl_hours is None:
        return False
    age = _aware(now or clock.now()) - _aware(source_set.created_at)
    return age >= timedelta(hours=ttl_hours)


def _last_run(store: MemoStorage, section_id: str) -> RunRecord | None:
    runs = store.runs(section_id, with_payloads=False, limit=1)
    return runs[0] if runs else None


def describe_memo(
    loaded: LoadedMemo,
    *,
    store: MemoStorage,
    settings: Settings,
    global_rejects: list[str],
    now: datetime | None = None,
    global_name_rejects: Sequence[str] = (),
) -> list[SectionView]:
    return [
        describe_section(
            loaded,
            s.id,
            store=store,
            settings=settings,
            global_rejects=global_rejects,
            now=now,
            global_name_rejects=global_name_rejects,
        )
        for s in loaded.memo.sections
    ]
