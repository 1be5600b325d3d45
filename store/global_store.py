"""Global (all memos) rejections on TinyDB: ``data_dir()/global.json``.

Several sourcedesk processes may use it at once, so it is never held open: a read takes
the file as it is now (every write replaces it atomically; an unchanged file is not parsed
again), and a write is one transaction under the file's lock — read again if another
process replaced it, changed, replaced once — with the change announced in its log.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tinydb.table import Table

from sourcedesk.core.config.paths import data_dir
from sourcedesk.store.changes import PROCESS_ORIGIN, ChangeKind, Scope, StoreChange, append_to_log
from sourcedesk.store.holders import now_iso, whoami
from sourcedesk.store.json_storage import AtomicJSONStorage, Tables
from sourcedesk.store.process_lock import ProcessLock
from sourcedesk.store.tiny_lists import TinyRejectLists

LOCK_WAIT_S = 10.0


def default_global_path() -> Path:
    return data_dir() / "global.json"


class GlobalStore(TinyRejectLists):
    backend = "tinydb"
    scope: Scope = "global"

    def __init__(self, path: Path | None = None, *, origin: str = PROCESS_ORIGIN) -> None:
        self.path = Path(path) if path is not None else default_global_path()
        self.origin = origin
        self._mutex = threading.RLock()
        self._storage = AtomicJSONStorage(self.path, label="global rejection list")
        self._changes: list[StoreChange] = []

    def __repr__(self) -> str:
        return f"GlobalStore({str(self.path)!r})"

    def close(self) -> None:
        """Nothing is held between operations."""

    def describe_location(self) -> str:
        return str(self.path)

    @contextmanager
    def _reading(self) -> Iterator[Tables]:
        with self._mutex:
            yield self._storage.current()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with self._mutex:
            if self._storage.in_transaction:
                yield
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock = ProcessLock(
                self.path.with_name(self.path.name + ".lock"),
                what=f"the global rejection list {self.path}",
                hint="another sourcedesk is updating it; try again in a moment",
                owner_path=self.path.with_name(self.path.name + ".owner.json"),
            )
            lock.acquire(LOCK_WAIT_S)
            self._storage.begin()
            try:
                yield
                if self._changes:
                    tables = self._storage.read() or {}
                    append_to_log(tables, self._changes)
                    self._storage.write(tables)
                self._storage.commit()
            except BaseException:
                self._storage.rollback()
                raise
            finally:
                self._changes.clear()
                lock.release()

    def _table(self, name: str) -> Table:
        return Table(self._storage, name, cache_size=0)

    def _note_change(self, kind: ChangeKind, what: str, section: str | None = None) -> None:
        self._changes.append(
            StoreChange(kind=kind, what=what, by=whoami(), at=now_iso(), scope="global", origin=self.origin)
        )
