"""Which store a memo uses: TinyDB in its folder (the default), or a team's PostgreSQL server.

The URL comes from the settings (``SOURCEDESK_STORE_URL`` or ``store-url`` in config.yaml);
the caller passes it in, because the store never reads the settings. An empty URL (or
``tinydb``) keeps each memo's store in its ``.sourcedesk/`` folder and the global lists in
the data directory; ``postgresql://…`` puts both on the server. Whatever the backend, the
caller gets a ``MemoStoreAPI`` / ``GlobalStoreAPI``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from sourcedesk.core.domain.errors import UserError
from sourcedesk.store.api import GlobalStoreAPI, MemoStoreAPI

Backend = Literal["tinydb", "postgresql"]
_PG_SCHEMES = ("postgresql://", "postgres://")


def backend_of(url: str | None) -> Backend:
    """``tinydb`` for no URL, ``postgresql`` for a PostgreSQL URL; ``UserError`` for anything else."""
    text = (url or "").strip()
    if not text or text.lower() == "tinydb":
        return "tinydb"
    if text.lower().startswith(_PG_SCHEMES):
        return "postgresql"
    from sourcedesk.store.postgres.connection import shown_url  # the password stays out of the message

    raise UserError(
        f"store-url {shown_url(text)!r} is neither empty (TinyDB) nor a postgresql:// URL",
        hint="set SOURCEDESK_STORE_URL=postgresql://USER:PASSWORD@HOST:5432/DB, or unset it for TinyDB",
    )


def open_memo_store(memo_dir: Path, *, url: str | None = None) -> MemoStoreAPI:
    """The memo's store: read freely; hold a section (``hold_section``) to run it."""
    if backend_of(url) == "postgresql":
        from sourcedesk.store.postgres.memo_store import PgMemoStore

        assert url is not None
        return PgMemoStore(memo_dir, url.strip())
    from sourcedesk.store.memo_store import MemoStore

    return MemoStore(memo_dir)


def open_global_store(*, url: str | None = None, path: Path | None = None) -> GlobalStoreAPI:
    """The global rejection lists (``path`` overrides where TinyDB keeps them: the demo's own)."""
    if backend_of(url) == "postgresql":
        from sourcedesk.store.postgres.global_store import PgGlobalStore

        assert url is not None
        return PgGlobalStore(url.strip())
    from sourcedesk.store.global_store import GlobalStore

    return GlobalStore(path)


def open_existing_store(memo_dir: Path, *, url: str | None = None) -> MemoStoreAPI | None:
    """For a reader that must not create a store (``check-urls``): None when a TinyDB memo has
    none yet. Never waits for anyone: reading needs no lock."""
    if backend_of(url) == "postgresql":
        return open_memo_store(memo_dir, url=url)
    from sourcedesk.store.memo_store import open_existing

    return open_existing(memo_dir)


__all__ = ["Backend", "backend_of", "open_existing_store", "open_global_store", "open_memo_store"]
