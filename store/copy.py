"""``sourcedesk store copy``: one analyst's TinyDB stores into the team's PostgreSQL store.

Everything a memo's ``.sourcedesk/`` holds moves (every version of every frozen set with its
texts, the memo's rejections and names with when and who, learned namesakes — removed ones
too, so they are not learned again — run records, section state), and the analyst's global
lists join the team's. Running it again copies nothing twice: a set already copied (or
saved under the same id) is recognised, a rejection or run with the same key is skipped, and
a section that already has a state on the server keeps it.

A version number a colleague's set already has is not overwritten: the copied set gets the
next free version and the report names the renumbering (notes that name the old id show as
stale until their section is re-run). Notes themselves are not copied: they stay in the memo
folder, under the team's version control.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.store.postgres.global_store import PgGlobalStore
from sourcedesk.store.postgres.memo_store import PgMemoStore


@dataclass
class CopyReport:
    what: str  # "memo synadia" or "global lists"
    sets_copied: int = 0
    sets_present: int = 0
    renumbered: list[tuple[str, str]] = field(default_factory=list)
    runs_copied: int = 0
    runs_present: int = 0
    rejects_added: int = 0
    names_added: int = 0
    namesakes_added: int = 0
    states_copied: int = 0

    def lines(self) -> list[str]:
        out = [
            f"{self.what}: {self.sets_copied} source set version(s) copied, {self.sets_present} already there; "
            f"{self.runs_copied} run(s) copied, {self.runs_present} already there; "
            f"{self.rejects_added} rejected domain(s), {self.names_added} rejected name(s), "
            f"{self.namesakes_added} learned namesake(s) and {self.states_copied} section state(s) added"
        ]
        out += [
            f"  {old} was copied as {new}: a colleague's set already had its version "
            "(notes naming the old id show as stale until re-run)"
            for old, new in self.renumbered
        ]
        return out


def copy_memo(source: MemoStore, target: PgMemoStore) -> CopyReport:
    report = CopyReport(f"memo {source.memo_key}")
    for section in source.sections():
        for version in source.source_set_versions(section):
            stored, status = target.import_source_set(version)
            if status == "present":
                report.sets_present += 1
                continue
            report.sets_copied += 1
            if status == "renumbered":
                report.renumbered.append((version.id, stored.id))
    report.rejects_added = target.import_rejects(source.reject_entries())
    report.names_added = target.import_reject_names(source.reject_name_entries())
    report.namesakes_added = target.add_learned_namesakes(source.learned_namesakes(include_removed=True))
    for run in reversed(source.runs()):  # oldest first: the team store lists them in the same order
        if target.import_run(run):
            report.runs_copied += 1
        else:
            report.runs_present += 1
    for section in source.sections():
        state = source.section_state(section)
        if state.to_json() and target.import_section_state(section, state):
            report.states_copied += 1
    return report


def copy_global(source: GlobalStore, target: PgGlobalStore) -> CopyReport:
    report = CopyReport("global lists")
    report.rejects_added = target.import_rejects(source.reject_entries())
    report.names_added = target.import_reject_names(source.reject_name_entries())
    return report


__all__ = ["CopyReport", "copy_global", "copy_memo"]
