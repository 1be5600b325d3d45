"""The section screen's curation: pin mode, reject / un-reject a domain or a name, drop /
restore, keep.

The screen holds one ``SectionCuration`` and asks it to act; it reads what is highlighted from
the screen's tabs (typed rows, never a row key's text). The work on disk is in
``sourcedesk.core.sources.curation`` and ``sourcedesk.core.memo.pin_edit``; after each change
the app tells the screens what it touched (``StoreChanged``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.memo.pin_edit import toggle_section_pin
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
from sourcedesk.core.sources.judge import name_to_offer
from sourcedesk.core.sources.name_rejects import assemble as assemble_names
from sourcedesk.tui import loading
from sourcedesk.tui.widgets.source_rows import SourceRow
from sourcedesk.tui.widgets.sources_tab import SourcesTab
from sourcedesk.tui.widgets.web_tab import WebTab

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.screens.section_screen import SectionScreen
    from sourcedesk.tui.app import SourcedeskApp


class SectionCuration:
    """The curation actions of one section screen."""

    def __init__(self, screen: SectionScreen) -> None:
        self.screen = screen

    @property
    def app(self) -> SourcedeskApp:
        return self.screen.sd_app

    @property
    def section_id(self) -> str:
        return self.screen.section_id

    def _source(self, *, sources_tab_only: bool = True) -> SourceRow | None:
        """The highlighted source row (when the Sources tab is shown, with ``sources_tab_only``)."""
        if sources_tab_only and not isinstance(self.screen.active_tab(), SourcesTab):
            return None
        return self.screen.sources.highlighted()

    def _changed(self) -> None:
        self.app.store_changed()

    def toggle_pin(self) -> None:
        app, view = self.app, self.screen.view
        if view is None:
            return
        try:
            edit = toggle_section_pin(app.loaded.path, self.section_id, view.pin_modes)
        except UserError as exc:
            app.report(exc, "pin mode")
            return
        app.reload_memo()
        # What the next run does, as the section's state works it out: it may reuse a set
        # already retrieved with this pin rather than search again.
        now = loading.describe(app, self.section_id)
        then = now.why if now.status == "stale" and now.why else "the next run (r) retrieves with it"
        app.say(
            f"{self.section_id}: pin: {edit.new} written to memo.yaml ({edit.changed} entr"
            f"{'y' if edit.changed == 1 else 'ies'}); {then}."
        )

    def _reject_target(self) -> str | None:
        if isinstance(self.screen.active_tab(), WebTab):
            result = self.screen.web.highlighted()
            return result.url if result else None
        row = self._source(sources_tab_only=False)
        return row.url if row else None

    def reject_domain(self) -> None:
        from sourcedesk.screens.reject_modal import RejectScreen

        app = self.app
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
        app = self.app
        domain, chosen = choice
        scope: Scope = "global" if chosen == "global" else "memo"
        try:
            result = reject_domain(
                app.loaded, app.store, domain, scope=scope, settings=app.settings, global_store=app.global_store
            )
        except UserError as exc:
            app.report(exc, "reject")
            return
        where = "in this memo" if scope == "memo" else "globally"
        already = "" if result.added else " (it already was)"
        learned = f" Learned namesake(s): {', '.join(result.learned)} (N lists them)." if result.learned else ""
        app.say(
            f"Rejected {result.domain} {where}{already}: {result.removed_count} source(s) left the frozen "
            f"sets{' (' + ', '.join(result.removed) + ')' if result.removed else ''}. Markers re-packed; "
            f"r re-runs against the curated set.{learned}"
        )
        self._changed()

    # ------------------------------------------------------------------ names

    def _name_target(self) -> tuple[str, str]:
        """``(phrase to offer, what it came from)`` for the highlighted source or web result."""
        screen = self.screen
        item: object | None
        if isinstance(screen.active_tab(), WebTab):
            web_row = screen.web.highlighted()
            about = screen.web.about_of(web_row)
            item = web_row.result if web_row is not None else None
        else:
            row = self._source(sources_tab_only=False)
            about = screen.sources.about_of(row)
            item = row.source if row is not None else None
        if about is None:
            return "", ""
        judge = screen.data.judge if screen.data is not None else None
        if about.verdict != "namesake" or judge is None:
            return about.phrase or "", about.verdict
        # the form of the namesake's name that takes out the highlighted source itself
        store, memo = self.app.store, self.app.loaded.memo
        sets = [store.latest_source_set(s.id) for s in memo.sections]
        return name_to_offer(judge, about, sets, item), about.verdict

    def reject_name(self) -> None:
        from sourcedesk.screens.reject_name_modal import RejectNameScreen

        app = self.app
        phrase, verdict = self._name_target()
        memo = app.loaded.memo
        ids = [s.id for s in memo.sections]
        titles = {s.id: s.title for s in memo.sections}
        results = list(self.screen.web_results)

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
        app = self.app
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
            app.report(exc, "reject name")
            return
        where = "in this memo" if scope == "memo" else "globally"
        already = "" if result.added else " (it already was)"
        app.say(
            f"Rejected the name '{result.name}' {where}{already}: {result.removed_count} source(s) left the frozen "
            f"sets{' (' + ', '.join(result.removed) + ')' if result.removed else ''}; web results naming it are "
            "dropped from now on. r re-runs against the curated set."
        )
        self._changed()

    def _unreject_name(self, name: str) -> None:
        app = self.app
        try:
            result = unreject_name(app.loaded, app.store, name, global_store=app.global_store)
        except UserError as exc:
            app.report(exc, "un-reject name")
            return
        still = rejected_name_scopes(app.store, app.global_store, name)
        app.say(_unrejected(f"the name '{result.name}'", result, still))
        self._changed()

    # ------------------------------------------------------------------ this set only

    def drop(self) -> None:
        app = self.app
        row = self._source()
        if row is None or row.kind not in ("kept", "omitted"):
            app.say("Highlight a kept or omitted source in the Sources tab to drop it from the frozen set.", "warning")
            return
        try:
            saved = drop_source(app.store, self.section_id, row.url)
        except UserError as exc:
            app.report(exc, "drop")
            return
        app.say(
            f"Dropped {row.host} from {saved.id}; markers re-packed. A refresh (R) may find it again: "
            "x rejects its domain for good."
        )
        app.store_changed(frozenset({self.section_id}))

    def unreject(self) -> None:
        app = self.app
        row = self._source()
        if row is not None and row.dropped:
            try:
                saved = restore_source(app.store, self.section_id, row.url)
            except UserError as exc:
                app.report(exc, "restore")
                return
            app.say(f"Restored {row.host} to {saved.id}.")
            app.store_changed(frozenset({self.section_id}))
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
            app.report(exc, "un-reject")
            return
        still = rejected_scopes(app.store, app.global_store, domain)
        app.say(_unrejected(result.domain, result, still))
        self._changed()

    def keep(self) -> None:
        app = self.app
        held = self._source()
        if held is not None and held.kind == "held":
            self._keep_in(held)
            return
        if not isinstance(self.screen.active_tab(), WebTab):
            app.say(
                "Keep works on a greyed 'held out' source (Sources tab) or a writer's web result "
                "(Web results tab, 5): highlight one.",
                "warning",
            )
            return
        row = self.screen.web.highlighted()
        if row is None:
            app.say("The last run returned no web results to keep.", "warning")
            return
        rejects = list(dict.fromkeys([*app.store.rejects(), *app.global_rejects()]))
        names = [*app.store.reject_names(), *app.global_reject_names()]
        try:
            source = promote_web_result(
                app.loaded, app.store, self.section_id, row.result, rejects=rejects, names=names
            )
        except UserError as exc:
            app.report(exc, "keep")
            return
        app.say(f"Kept {source.host} in the frozen set as {source.marker}; r re-runs with it.")
        app.store_changed(frozenset({self.section_id}))

    def _keep_in(self, row: SourceRow) -> None:
        """A held-out source (about a namesake) kept in the writer's set after all."""
        app = self.app
        try:
            saved = keep_in(app.store, self.section_id, row.url)
        except UserError as exc:
            app.report(exc, "keep")
            return
        marker = next((s.marker for s in saved.sources if s.url == row.url), None)
        app.say(
            f"Kept {row.host} in {saved.id} as {marker or 'a source'}, though it reads as about "
            f"{row.held_for or 'a namesake'}; a note that cites it is flagged ⚑."
        )
        app.store_changed()


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
