"""The global rejection lists (for every memo) on the team store: ``sd_rejects`` rows of memo ''."""

from __future__ import annotations

from sourcedesk.store.changes import PROCESS_ORIGIN, Scope
from sourcedesk.store.postgres.connection import database, release
from sourcedesk.store.postgres.lists import PgRejectLists
from sourcedesk.store.postgres.opening import open_checked


class PgGlobalStore(PgRejectLists):
    scope: Scope = "global"
    list_key = ""

    def __init__(self, url: str, *, origin: str = PROCESS_ORIGIN) -> None:
        self.origin = origin
        self.db = database(url)
        try:
            open_checked(self.db)
        except BaseException:
            release(self.db)
            raise
        self._closed = False

    def __repr__(self) -> str:
        return f"PgGlobalStore({self.db.shown})"

    def describe_location(self) -> str:
        return f"the global lists on {self.db.shown}"

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            release(self.db)


__all__ = ["PgGlobalStore"]
