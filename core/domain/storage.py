"""What the pipeline needs from persistence, as protocols core defines and ``store`` fulfils.

core never imports ``store``: the CLI and the workbench open a ``store.MemoStore``
(and the ``GlobalStore``) and hand them in. Keeping the dependency pointing one way
means the pipeline can run against any persistence that has these methods — the
tests' stores, a future database — and that the store's locking and file format
never leak into the stages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.domain.records import RunRecord, SectionState
from sourcedesk.core.sources.namesakes import NamesakeStore


class RejectLists(Protocol):
    """Rejected domains and names of one scope (a memo's, or the analyst's global lists)."""

    def rejects(self) -> list[str]: ...

    def reject_entries(self) -> list[dict[str, Any]]: ...

    def add_rejects(self, domains: Iterable[str], note: str = "") -> int: ...

    def remove_reject(self, domain: str) -> bool: ...

    def reject_names(self) -> list[str]: ...

    def add_reject_name(self, name: str, note: str = "") -> bool: ...

    def remove_reject_name(self, name: str) -> bool: ...


class SourceSetStore(Protocol):
    """Versioned frozen source sets, per section."""

    def save_source_set(self, source_set: SourceSet) -> SourceSet: ...

    def get_source_set(self, set_id: str) -> SourceSet | None: ...

    def latest_source_set(
        self, section: str, *, fingerprint: str | None = None, degraded: bool | None = None
    ) -> SourceSet | None: ...

    def source_set_versions(self, section: str) -> list[SourceSet]: ...


class RunStore(Protocol):
    """Run records and each section's small state."""

    def save_run(
        self,
        record: RunRecord | Mapping[str, Any],
        *,
        section_state: Mapping[str, Any] | None = None,
        replace: bool = False,
    ) -> str: ...

    def get_run(self, run_id: str) -> RunRecord | None: ...

    def runs(
        self, section: str | None = None, *, with_payloads: bool = True, limit: int | None = None
    ) -> list[RunRecord]: ...

    def section_state(self, section: str) -> SectionState: ...


class MemoStorage(SourceSetStore, RunStore, RejectLists, NamesakeStore, Protocol):
    """Everything the pipeline keeps about one memo."""

    def take_notices(self, section: str | None = None) -> list[str]:
        """Damaged data found (and set aside) since the last call, said once."""
        ...


class EvidenceStore(Protocol):
    """What checking a note reads: the frozen set and the run its frontmatter names."""

    def get_source_set(self, set_id: str) -> SourceSet | None: ...

    def get_run(self, run_id: str) -> RunRecord | None: ...


# Opens a memo folder's existing store for reading (None when the folder has none; never
# creates one); ``UserError`` when another process holds it or it cannot be read.
EvidenceOpener = Callable[[Path], AbstractContextManager[EvidenceStore] | None]


__all__ = [
    "EvidenceOpener",
    "EvidenceStore",
    "MemoStorage",
    "RejectLists",
    "RunStore",
    "SourceSetStore",
]
