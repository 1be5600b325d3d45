"""One writer per store: an OS file lock plus a note saying who holds it.

The lock itself is ``filelock`` (``flock`` on Unix, released by the kernel if the
holder dies, so a crash never leaves a memo locked). ``owner.json`` beside it
only exists to tell the next process *who* has the memo open.
Opening the same store twice inside one process is refused too: two
in-memory views of one database would overwrite each other's changes.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import threading
import time
from pathlib import Path

from filelock import FileLock, Timeout

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import StoreLocked, UserError
from sourcedesk.core.files.atomic import atomic_write_text

_held: set[str] = set()
_held_lock = threading.Lock()


def _owner_text(owner_file: Path) -> str:
    try:
        info = json.loads(owner_file.read_text(encoding="utf-8"))
        pid = info.get("pid", "unknown")
        host = info.get("host")
    except (OSError, ValueError, AttributeError):
        return "pid unknown"
    if host and host != socket.gethostname():
        return f"pid {pid} on {host}"
    return f"pid {pid}"


def lock_problem(exc: OSError) -> str:
    """What is wrong with a lock file that cannot be opened, in words."""
    if exc.errno == errno.EISDIR:
        return "is a directory, not a lock file"
    if exc.errno == errno.ELOOP:
        return "is a symbolic link that leads back to itself"
    return f"cannot be opened ({exc.strerror or exc})"


class ProcessLock:
    """Exclusive hold on ``lock_path`` for the lifetime of the object (until ``release``)."""

    def __init__(
        self,
        lock_path: Path,
        *,
        what: str,
        hint: str,
        owner_path: Path | None = None,
        info: dict[str, object] | None = None,
    ):
        self.lock_path = Path(lock_path)
        self.owner_path = Path(owner_path) if owner_path else self.lock_path.with_name("owner.json")
        self.what = what
        self.hint = hint
        self._lock = FileLock(str(self.lock_path), thread_local=False)
        try:
            self._key = str(self.lock_path.resolve())
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11); acquire reports it
            self._key = os.path.abspath(self.lock_path)
        self._held = False
        self._info = info  # what the owner file says (default: pid, host, since)

    def acquire(self, wait_s: float = 0.0) -> None:
        deadline = time.monotonic() + max(0.0, wait_s)
        while True:
            with _held_lock:
                if self._key not in _held:
                    _held.add(self._key)
                    break
            if time.monotonic() >= deadline:
                raise StoreLocked(f"{self.what} is already open in this process (pid {os.getpid()})", hint=self.hint)
            time.sleep(0.02)
        try:
            self._lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
        except Timeout:
            self._forget()
            raise StoreLocked(
                f"{self.what} is open elsewhere ({_owner_text(self.owner_path)})", hint=self.hint
            ) from None
        except OSError as exc:  # the lock file cannot be opened: a directory or a loop in its place, no access
            self._forget()
            raise UserError(
                f"cannot lock {self.what}: {self.lock_path} {lock_problem(exc)}",
                hint=f"remove {self.lock_path} (sourcedesk recreates it) or check the folder's permissions",
            ) from None
        except BaseException:
            self._forget()
            raise
        self._held = True
        info = self._info or {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": clock.now().isoformat(timespec="seconds"),
        }
        with contextlib.suppress(OSError):  # only informational
            atomic_write_text(self.owner_path, json.dumps(info), durable=False)  # gone with the process anyway

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        with contextlib.suppress(OSError):
            self.owner_path.unlink(missing_ok=True)
        try:
            self._lock.release(force=True)
        finally:
            self._forget()

    def _forget(self) -> None:
        with _held_lock:
            _held.discard(self._key)

    @property
    def held(self) -> bool:
        return self._held
