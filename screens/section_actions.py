"""The section screen's curation actions: pin mode, reject / un-reject a domain or a name,
drop / restore, keep, the memo's namesakes.

Kept apart from the screen's layout (``sourcedesk.screens.section_screen``) so each file says one
thing; the work on disk is in ``sourcedesk.core.sources.curation`` and ``sourcedesk.core.memo.pin_edit``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from textual.widgets import TabbedContent

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.memo.pin_edit import toggle_section_pin
from sourcedesk.core.pipeline.section_state import SectionView
from sourcedesk.core.sources.curation import (
    CurationResult,
    Scope,
    domain_for,
    drop_source,
    preview_reject,
    preview_reject_name,
    promote_web_result,
    reject_domain,
    reject_name,
    rejected_name_scopes,
    rejected_scopes,
    restore_source,
    subject_hosts,
    unreject_domain,
    unreject_name,
)
from sourcedesk.core.sources.holdout import keep_in
from sourcedesk.core.sources.name_rejects import assemble as assemble_names
from sourcedesk.screens.workbench import WorkbenchScreen
from sourcedesk.tui.widgets.source_rows import SourceRow


class SectionActions(WorkbenchScreen):
    """The base of ``SectionScreen``, which fills in what the section shows: ``section_id``,
    ``view``, ``web_results`` and what is highlighted."""

    section_id: str
    view: SectionView | None
    web_results: list[dict[str, Any]]

    def highlighted_source(self) -> SourceRow | None:
        raise NotImplementedError

    def highlighted_web_result(self) -> dict[str, Any] | None:
        raise NotImplementedError

    def _name_target(self) -> tuple[str, str]:
        """``(phrase to offer, what it came from)`` for the highlighted source or web result."""
        raise NotImplementedError

    def _active_tab(self) -> str:
        return self.query_one("#section-tabs", TabbedContent).active

    def action_toggle_pin(self) -> None:
        app, view = self.sd_app, self.view
        if view is None:
            return
        try:
            edit = toggle_section_pin(app.loaded.path, self.section_id, view.pin_modes)
        except UserError as exc:
            app.say_error(exc, "pin mode")
            return
        app.reload_memo()
        # What the next run does, as the section's state works it out: it may reuse a set
        # already retrieved with this pin rather than search again.
        now = app.describe(self.section_id)
        then = now.why if now.status == "stale" and now.why else "the next run (r) retrieves with it"
        app.say(
            f"{self.section_id}: pin: {edit.new} written to memo.yaml ({edit.changed} entr"
            f"{'y' if edit.changed == 1 else 'ies'}); {then}."
        )
        app.section_changed(None)

    def _reject_target(self) -> str | None:
        active = self._active_tab()
        if active == "tab-web":
            result = self.highlighted_web_result()
            return str(result.get("url") or "") if result else None
        row = self.highlighted_source()
        return row.url if row else None

    def action_reject(self) -> None:
        from sourcedesk.screens.reject_modal import RejectScreen

        app = self.sd_app
        url = self._reject_target()
        domain = domain_for(url) if url else None
        if not domain:
            app.say("Highlight a source (or a web result) to reject its domain.", "warning")
            return
        ids = [s.id for s in app.loaded.memo.sections]
        titles = {s.id: s.title for s in app.loaded.memo.sections}
        app.push_screen(
            RejectScreen(domain, lambda d: preview_reject(app.store, ids, d), titles, subject_hosts(app.loaded.memo)),
            self._rejected,
        )

    def _rejected(self, choice: tuple[str, str] | None) -> None:
        if not choice:
            return
        app = self.sd_app
        domain, chosen = choice
        scope: Scope = "global" if chosen == "global" else "memo"
        try:
            result = reject_domain(
                app.loaded,
                app.store,
                domain,
                scope=scope,
                settings=app.settings,
                global_store=app.global_store,
            )
        except UserError as exc:
            app.say_error(exc, "reject")
            return
        where = "in this memo" if scope == "memo" else "globally"
        already = "" if result.added else " (it already was)"
        learned = f" Learned namesake(s): {', '.join(result.learned)} (N lists them)." if result.learned else ""
        app.say(
            f"Rejected {result.domain} {where}{already}: {result.removed_count} source(s) left the frozen "
            f"sets{' (' + ', '.join(result.removed) + ')' if result.removed else ''}. Markers re-packed; "
            f"r re-runs against the curated set.{learned}"
        )
        app.section_changed(None)

    # ------------------------------------------------------------------ names

    def action_reject_name(self) -> None:
        from sourcedesk.screens.reject_name_modal import RejectNameScreen

        app = self.sd_app
        phrase, verdict = self._name_target()
        memo = app.loaded.memo
        ids = [s.id for s in memo.sections]
        titles = {s.id: s.title for s in memo.sections}
        results = list(self.web_results)

        def web_matches(name: str) -> int:
            names = assemble_names(memo_names=[name])
            return sum(1 for r in results if names.match(r) is not None)

        if not phrase and verdict not in ("namesake", "unclear"):
            app.say("Type the phrase a namesake goes by (the highlighted row names none).", "information")
        app.push_screen(
            RejectNameScreen(
                phrase,
                lambda name: preview_reject_name(app.store, ids, name),
                titles,
                web_matches=web_matches,
                subject_names=[memo.subject.name, *memo.subject.aliases],
                subject_hosts=subject_hosts(memo),
            ),
            self._name_rejected,
        )

    def _name_rejected(self, choice: tuple[str, str] | None) -> None:
        if not choice:
            return
        app = self.sd_app
        name, scope = choice
        try:
            result = reject_name(
                app.loaded,
                app.store,
                name,
                scope="global" if scope == "global" else "memo",
                global_store=app.global_store,
            )
        except UserError as exc:
            app.say_error(exc, "reject name")
            return
        where = "in this memo" if scope == "memo" else "globally"
        already = "" if result.added else " (it already was)"
        app.say(
            f"Rejected the name '{result.name}' {where}{already}: {result.removed_count} source(s) left the frozen "
            f"sets{' (' + ', '.join(result.removed) + ')' if result.removed else ''}; web results naming it are "
            "dropped from now on. r re-runs against the curated set."
        )
        app.section_changed(None)

    def _unreject_name(self, name: str) -> None:
        app = self.sd_app
        try:
            result = unreject_name(app.loaded, app.store, name, global_store=app.global_store)
        except UserError as exc:
            app.say_error(exc, "un-reject name")
            return
        still = rejected_name_scopes(app.store, app.global_store, name)
        app.say(_unrejected(f"the name '{result.name}'", result, still))
        app.section_changed(None)

    def action_namesakes(self) -> None:
        self.sd_app.action_namesakes()

    def action_drop(self) -> None:
        app = self.sd_app
        row = self.highlighted_source() if self._active_tab() == "tab-sources" else None
        if row is None or row.kind not in ("kept", "omitted"):
            app.say("Highlight a kept or omitted source in the Sources tab to drop it from the frozen set.", "warning")
            return
        try:
            saved = drop_source(app.store, self.section_id, row.url)
        except UserError as exc:
            app.say_error(exc, "drop")
            return
        app.say(
            f"Dropped {row.host} from {saved.id}; markers re-packed. A refresh (R) may find it again: "
            "x rejects its domain for good."
        )
        app.section_changed(None)

    def action_unreject(self) -> None:
        app = self.sd_app
        row = self.highlighted_source() if self._active_tab() == "tab-sources" else None
        if row is not None and row.dropped:
            try:
                saved = restore_source(app.store, self.section_id, row.url)
            except UserError as exc:
                app.say_error(exc, "restore")
                return
            app.say(f"Restored {row.host} to {saved.id}.")
            app.section_changed(None)
            return
        if row is not None and row.rejected_name is not None:
            self._unreject_name(row.rejected_name)
            return
        domain = row.rejected_domain if row else None
        if domain is None and row is not None:
            candidate = domain_for(row.url)
            if candidate and rejected_scopes(app.store, app.global_store, candidate):
                domain = candidate
        if domain is None:
            app.say("Highlight a rejected source in the Sources tab to un-reject its domain.", "warning")
            return
        try:
            result = unreject_domain(
                app.loaded, app.store, domain, settings=app.settings, global_store=app.global_store
            )
        except UserError as exc:
            app.say_error(exc, "un-reject")
            return
        still = rejected_scopes(app.store, app.global_store, domain)
        app.say(_unrejected(result.domain, result, still))
        app.section_changed(None)

    def action_keep(self) -> None:
        app = self.sd_app
        row = self.highlighted_source() if self._active_tab() == "tab-sources" else None
        if row is not None and row.kind == "held":
            try:
                saved = keep_in(app.store, self.section_id, row.url)
            except UserError as exc:
                app.say_error(exc, "keep")
                return
            marker = next((s.marker for s in saved.sources if s.url == row.url), None)
            app.say(
                f"Kept {row.host} in {saved.id} as {marker or 'a source'}, though it reads as about "
                f"{row.held_for or 'a namesake'}; a note that cites it is flagged ⚑."
            )
            app.section_changed(None)
            return
        if self._active_tab() != "tab-web":
            app.say(
                "Keep works on a greyed 'held out' source (Sources tab) or a writer's web result "
                "(Web results tab, 5): highlight one.",
                "warning",
            )
            return
        result = self.highlighted_web_result()
        if result is None:
            app.say("The last run returned no web results to keep.", "warning")
            return
        rejects = list(dict.fromkeys([*app.store.rejects(), *app.global_rejects()]))
        names = [*app.store.reject_names(), *app.global_reject_names()]
        try:
            source = promote_web_result(app.loaded, app.store, self.section_id, result, rejects=rejects, names=names)
        except UserError as exc:
            app.say_error(exc, "keep")
            return
        app.say(f"Kept {source.host} in the frozen set as {source.marker}; r re-runs with it.")
        app.section_changed(None)


def _unrejected(what: str, result: CurationResult, still: Collection[str]) -> str:
    """What an un-reject did: still rejected in another scope, or what came back and what only a refresh brings."""
    text = f"Un-rejected {what} ({'this memo' if result.scope == 'memo' else 'globally'})"
    if still:
        return text + f"; it is still rejected {'globally' if 'global' in still else 'in this memo'}."
    text += f": {result.restored_count} source(s) back in the frozen sets"
    refetch = sum(result.refetch.values())
    if refetch:
        text += f"; {refetch} result(s) were excluded at retrieval — R refreshes to fetch them"
    if result.refresh:
        text += f"; {', '.join(result.refresh)} searched without it — R refreshes to fetch what it kept out"
    return text + "."
