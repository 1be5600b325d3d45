"""Global (all memos) rejections: ``data_dir()/global.json``.

Several sourcedesk processes may run at once (one per memo), so unlike the
memo store this one is not held open: each operation takes the file lock,
reads the file if another process replaced it since (the storage compares the
file's identity; an unchanged file is not parsed again), writes atomically and
lets go.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tinydb.table import Table

from sourcedesk.core.config.paths import data_dir
from sourcedesk.store import rejections
from sourcedesk.store.json_storage import AtomicJSONStorage
from sourcedesk.store.process_lock import ProcessLock

LOCK_WAIT_S = 10.0


def default_global_path() -> Path:
    return data_dir() / "global.json"


class GlobalStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_global_path()
        self._mutex = threading.RLock()
        self._storage = AtomicJSONStorage(self.path, label="global rejection list")

    def __repr__(self) -> str:
        return f"GlobalStore({str(self.path)!r})"

    @contextmanager
    def _rejects_table(self, name: str = "rejects") -> Iterator[Table]:
        with self._mutex:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock = ProcessLock(
                self.path.with_name(self.path.name + ".lock"),
                what=f"the global rejection list {self.path}",
                hint="another sourcedesk is updating it; try again in a moment",
                owner_path=self.path.with_name(self.path.name + ".owner.json"),
            )
            lock.acquire(LOCK_WAIT_S)
            try:
                yield Table(self._storage, name, cache_size=0)
            finally:
                lock.release()

    def rejects(self) -> list[str]:
        with self._rejects_table() as table:
            return rejections.list_domains(table.all())

    def reject_entries(self) -> list[dict[str, Any]]:
        with self._rejects_table() as table:
            return rejections.list_entries(table.all())

    def add_reject(self, domain: str, note: str = "") -> bool:
        with self._rejects_table() as table:
            return rejections.add_domain(table, domain, note)

    def add_rejects(self, domains: Iterable[str], note: str = "") -> int:
        with self._rejects_table() as table:
            return rejections.add_domains(table, domains, note)

    def remove_reject(self, domain: str) -> bool:
        with self._rejects_table() as table:
            return rejections.remove_domain(table, domain)

    def reject_names(self) -> list[str]:
        with self._rejects_table("reject_names") as table:
            return rejections.list_names(table.all())

    def reject_name_entries(self) -> list[dict[str, Any]]:
        with self._rejects_table("reject_names") as table:
            return rejections.list_name_entries(table.all())

    def add_reject_name(self, name: str, note: str = "") -> bool:
        with self._rejects_table("reject_names") as table:
            return rejections.add_name(table, name, note)

    def remove_reject_name(self, name: str) -> bool:
        with self._rejects_table("reject_names") as table:
            return rejections.remove_name(table, name)
