"""A real PostgreSQL server on loopback for the store tests and ``make bench-store``.

The server comes from the package index (``pgserver`` ships PostgreSQL's binaries in its
wheel), so no system install or container is needed; only its binaries are used — this
module runs ``initdb`` and ``pg_ctl`` itself, to listen on a loopback TCP port with password
authentication (the tests need a wrong password to be refused) in a throw-away folder.
PostgreSQL refuses to run as root: under root (CI, this machine) the server runs as the
unprivileged ``nobody`` user, which owns only the server's own folder.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

SUPERUSER = "postgres"
NOBODY = 65534


class PgServerUnavailable(RuntimeError):
    """The PostgreSQL binaries are not installed (``pip install pgserver``) or did not start."""


def binaries() -> Path:
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PgServerUnavailable("the pgserver package (PostgreSQL's binaries) is not installed")
    found = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (found / "postgres").is_file():
        raise PgServerUnavailable(f"no postgres binary in {found}")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One PostgreSQL cluster in a temporary folder, started and stopped on demand."""

    def __init__(self, *, password: str = "sourcedesk-test", durable: bool = False) -> None:
        self.bin = binaries()
        self.password = password
        self.durable = durable  # False: no fsync (tests); True: PostgreSQL's defaults (the bench)
        self.root = Path(tempfile.mkdtemp(prefix="sourcedesk-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as_nobody = os.geteuid() == 0
        if self._as_nobody:
            os.chown(self.root, NOBODY, NOBODY)
        self.root.chmod(0o700)
        self._initdb()

    def _run(self, *args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        extra: dict[str, Any] = {}
        if self._as_nobody:
            extra = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": str(self.root)}
        return subprocess.run(
            [str(a) for a in args], env=env, cwd=self.root, capture_output=True, text=True, check=check, **extra
        )

    def _initdb(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as_nobody:
            os.chown(pwfile, NOBODY, NOBODY)
        try:
            self._run(
                self.bin / "initdb",
                "-D",
                self.data,
                "-U",
                SUPERUSER,
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
                f"--pwfile={pwfile}",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            )
        except subprocess.CalledProcessError as exc:
            raise PgServerUnavailable(f"initdb failed: {exc.stderr.strip()[-500:]}") from None
        finally:
            pwfile.unlink(missing_ok=True)

    def start(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root}"
        if not self.durable:
            # no fsync, but every commit is written to the WAL before it returns: a server stopped as a
            # crash (``stop("immediate")``) keeps what it committed, as a real one does (the OS is not crashing)
            options += " -c fsync=off -c full_page_writes=off"
        try:
            self._run(
                self.bin / "pg_ctl", "-D", self.data, "-w", "-t", "60", "-l", self.root / "log", "-o", options, "start"
            )
        except subprocess.CalledProcessError as exc:
            log = (self.root / "log").read_text(errors="replace")[-1000:] if (self.root / "log").exists() else ""
            raise PgServerUnavailable(f"postgres did not start: {exc.stderr.strip()[-300:]} {log}") from None

    def stop(self, mode: str = "fast") -> None:
        """``mode``: fast (clean), or immediate (as a crash: clients see the connection cut)."""
        self._run(self.bin / "pg_ctl", "-D", self.data, "-w", "-m", mode, "stop", check=False)

    def url(self, database: str = "postgres", *, password: str | None = None, options: str = "") -> str:
        secret = self.password if password is None else password
        query = f"?{options}" if options else ""
        return f"postgresql://{SUPERUSER}:{secret}@127.0.0.1:{self.port}/{database}{query}"

    def sql(self, statement: str, database: str = "postgres") -> None:
        """Run one statement as the superuser (autocommit: CREATE DATABASE works too)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(statement.encode("utf-8"))

    def cleanup(self) -> None:
        self.stop("immediate")
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)

    def __enter__(self) -> PgServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cleanup()


__all__ = ["PgServer", "PgServerUnavailable", "binaries"]
