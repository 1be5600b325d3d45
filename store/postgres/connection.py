"""One PostgreSQL team store as this process reaches it: a connection pool, and errors in words.

The stores of every memo a process opens on one URL share one pool (psycopg-pool): a run of
twenty sections does not open twenty connections. Locks and the change feed need a
connection of their own for as long as they live (an advisory lock belongs to its session,
``LISTEN`` to its connection), so ``dedicated`` opens one outside the pool.

Every failure to reach the server — a wrong password, an unreachable host, a server that
stopped mid-run — becomes one ``StoreUnavailable`` line naming the URL *without* its
password; the password itself is registered as a secret, so no store write, note or log
carries it either.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.text.secrets import register_secret

log = logging.getLogger("sourcedesk.store")

CONNECT_TIMEOUT_S = 5  # a host that does not answer is named after this long, not after minutes
POOL_WAIT_S = 10.0  # a section waiting for a connection (the pool is busy or the server is gone)
POOL_MIN = 4  # opened in the background when the store opens: sections finishing together need not wait for a handshake
POOL_MAX = 8
CHANNEL = "sourcedesk_changes"


class StoreUnavailable(UserError):
    """The team store cannot be reached, or stopped answering (said with the URL, no password)."""


def shown_url(url: str) -> str:
    """``url`` as it is shown: scheme, user, host, port and database — never the password
    (nor the query, which may carry one as ``password=``)."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}@{host}" if user else host
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return "the configured PostgreSQL URL (it does not parse)"


def password_of(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.password:
        return parts.password
    return next((v for k, v in parse_qsl(parts.query) if k.lower() == "password"), None)


def first_line(exc: BaseException, secret: str | None = None) -> str:
    """The error's first meaningful line, with the password (if it appears) blanked."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    if secret:
        text = text.replace(secret, "[redacted]")
    return text[:300]


class Database:
    """A team store's URL, its pool, and what every store on it shares."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.shown = shown_url(url)
        self._secret = password_of(url)
        if self._secret:
            register_secret(self._secret)
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._lock = threading.Lock()
        self.schema = ""
        self.users = 0  # stores open on it in this process

    def unavailable(self, exc: BaseException, doing: str = "") -> StoreUnavailable:
        what = f" while {doing}" if doing else ""
        if isinstance(exc, PoolTimeout):
            reason = f"no connection within {POOL_WAIT_S:g} s (the server stopped answering)"
        else:
            reason = first_line(exc, self._secret)
        return StoreUnavailable(
            f"the team store {self.shown} cannot be reached{what}: {reason}",
            hint="check the server is running, the URL (SOURCEDESK_STORE_URL or store-url) and the password",
        )

    def connect(self, *, autocommit: bool = True) -> psycopg.Connection[Any]:
        """A connection of its own (not from the pool); ``StoreUnavailable`` when it cannot be made."""
        try:
            return psycopg.connect(self.url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            raise self.unavailable(exc) from None

    def _open_pool(self) -> ConnectionPool[psycopg.Connection[Any]]:
        with self._lock:
            if self._pool is None:
                pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                    self.url,
                    # Autocommit: a read is one statement and one round trip; a write says BEGIN/COMMIT.
                    kwargs={"connect_timeout": CONNECT_TIMEOUT_S, "autocommit": True},
                    min_size=POOL_MIN,
                    max_size=POOL_MAX,
                    timeout=POOL_WAIT_S,
                    open=False,
                    name="sourcedesk",
                )
                pool.open(wait=False)
                self._pool = pool
            return self._pool

    def warm(self) -> None:
        """Start opening the pool's connections now (in its own threads; nothing waits)."""
        self._open_pool()

    @contextmanager
    def transaction(self, doing: str = "") -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection inside one transaction: committed when the block ends, rolled
        back when it raises. A lost server is ``StoreUnavailable`` (nothing was committed)."""
        pool = self._open_pool()
        try:
            with pool.connection() as conn, conn.transaction():
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise self.unavailable(exc, doing) from None

    @contextmanager
    def reading(self, doing: str = "") -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for reads: each statement on its own (one round trip), no
        transaction to open and close. A lost server is ``StoreUnavailable``."""
        pool = self._open_pool()
        try:
            with pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise self.unavailable(exc, doing) from None

    def channel_key(self) -> str:
        """Which team store a notification is about (a server may hold several schemas)."""
        return self.schema

    def lock_key(self, *parts: str) -> int:
        """A signed 64-bit advisory-lock key for ``parts`` in this store's schema."""
        digest = hashlib.blake2b("\0".join((self.schema, *parts)).encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(digest, "big", signed=True)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            try:
                pool.close(timeout=2)
            except Exception:
                log.debug("closing the pool of %s failed", self.shown, exc_info=True)


_DATABASES: dict[str, Database] = {}
_REGISTRY_LOCK = threading.Lock()


def database(url: str) -> Database:
    """The process's ``Database`` for ``url`` (one pool per URL), counted as used once more."""
    with _REGISTRY_LOCK:
        db = _DATABASES.get(url)
        if db is None:
            db = _DATABASES[url] = Database(url)
        db.users += 1
        return db


def release(db: Database) -> None:
    """One store less on ``db``; the last one closes its pool."""
    with _REGISTRY_LOCK:
        db.users -= 1
        if db.users > 0:
            return
        _DATABASES.pop(db.url, None)
    db.close()


__all__ = ["CHANNEL", "Database", "StoreUnavailable", "database", "release", "shown_url"]
