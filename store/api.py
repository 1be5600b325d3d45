"""What every store backend offers the commands and the workbench, beyond core's protocols.

``sourcedesk.core.domain.storage`` says what the pipeline needs; the CLI and the workbench
also hold sections, list entries with who made them, watch for a colleague's changes and
close what they opened. ``MemoStoreAPI`` and ``GlobalStoreAPI`` are that whole surface:
``sourcedesk.store.memo_store.MemoStore`` (TinyDB) and ``sourcedesk.store.postgres``'s
stores fulfil them, and mypy checks both against it (``store/backend.py`` returns them typed
so).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.domain.records import RunRecord, SectionState
from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.store.changes import StoreChange
from sourcedesk.store.holders import LockHolder, OnWait


class SectionHoldAPI(Protocol):
    section: str

    def release(self) -> None: ...

    @property
    def held(self) -> bool: ...

    def __enter__(self) -> SectionHoldAPI: ...

    def __exit__(self, *exc: object) -> None: ...


class RejectListsAPI(Protocol):
    backend: str
    origin: str

    def rejects(self) -> list[str]: ...

    def reject_entries(self) -> list[dict[str, Any]]: ...

    def add_reject(self, domain: str, note: str = "") -> bool: ...

    def add_rejects(self, domains: Iterable[str], note: str = "") -> int: ...

    def remove_reject(self, domain: str) -> bool: ...

    def reject_names(self) -> list[str]: ...

    def reject_name_entries(self) -> list[dict[str, Any]]: ...

    def add_reject_name(self, name: str, note: str = "") -> bool: ...

    def remove_reject_name(self, name: str) -> bool: ...

    def close(self) -> None: ...


class GlobalStoreAPI(RejectListsAPI, Protocol):
    """The rejection lists for every memo."""

    def describe_location(self) -> str: ...


class MemoStoreAPI(RejectListsAPI, Protocol):
    """One memo's store, whichever backend keeps it."""

    memo_key: str

    def describe_location(self) -> str: ...

    def __enter__(self) -> MemoStoreAPI: ...

    def __exit__(self, *exc: object) -> None: ...

    # sections held, and what others change
    def hold_section(
        self, section: str, *, purpose: str = "running it", wait_s: float = 0.0, on_wait: OnWait | None = None
    ) -> SectionHoldAPI: ...

    def section_holders(self) -> dict[str, LockHolder]: ...

    def watch_changes(
        self, stop: threading.Event, *, global_store: Any = None, poll_s: float = 0.5
    ) -> Iterator[StoreChange]: ...

    def take_notices(self, section: str | None = None) -> list[str]: ...

    # source sets
    def save_source_set(self, source_set: SourceSet) -> SourceSet: ...

    def get_source_set(self, set_id: str) -> SourceSet | None: ...

    def latest_source_set(
        self, section: str, *, fingerprint: str | None = None, degraded: bool | None = None
    ) -> SourceSet | None: ...

    def source_set_versions(self, section: str) -> list[SourceSet]: ...

    def sections(self) -> list[str]: ...

    # learned namesakes
    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]: ...

    def add_learned_namesakes(self, items: Sequence[LearnedNamesake]) -> int: ...

    def remove_learned_namesake(self, name: str) -> bool: ...

    def restore_learned_namesake(self, name: str) -> bool: ...

    # runs and state
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

    def set_section_state(self, section: str, state: SectionState | Mapping[str, Any]) -> None: ...

    def update_section_state(self, section: str, changes: Mapping[str, Any]) -> SectionState: ...

    # payloads
    def put_payload(self, data: bytes | str) -> str: ...

    def get_payload(self, key: str) -> bytes: ...


__all__ = ["GlobalStoreAPI", "MemoStoreAPI", "RejectListsAPI", "SectionHoldAPI"]
