"""Crash-safe file writes: temp file in the same directory, fsync, ``os.replace``.

A reader (or a crash) can only ever see the old file or the new one, never a
half-written mix; an in-place truncate-and-write cannot promise that.

Permissions: replacing a file must not change who may read it. The new file gets the
target's existing mode, or — for a file that did not exist — exactly what ``open()``
gives (0666 minus the umask). ``tempfile.mkstemp`` is not used for that reason: it
creates 0600 files, so notes and memo.md would silently become private to their owner.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from pathlib import Path

_NEW_FILE_MODE = 0o666  # the kernel takes the umask off, as for open()
_ATTEMPTS = 100
_TEMPORARY = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")  # what _create_temp names a temporary
STALE_AFTER_S = 600.0  # a write takes milliseconds: a temporary this old was left by a killed process


def fsync_dir(directory: Path) -> None:
    """Make a completed rename durable (best effort: not every platform allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _existing_mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new, empty temp file beside ``path`` (``O_EXCL``: never someone else's file)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_ATTEMPTS):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, _NEW_FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file beside {path}")


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` in one step. ``durable=False`` skips the flushes to disk
    (still all-or-nothing, but a power cut may bring the old file back): for notes to self."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _existing_mode(path)
    fd, tmp = _create_temp(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.chmod(tmp, mode)  # by path: os.fchmod does not exist everywhere
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def remove_stale_temporaries(
    directory: Path, *, older_than_s: float = STALE_AFTER_S, now: float | None = None, levels: int = 0
) -> list[Path]:
    """Remove the temporaries a killed process left in ``directory`` (``.name.1a2b3c4d.tmp``, older
    than ``older_than_s``), and in its folders ``levels`` deep (never through a link); the ones
    removed. A process killed between creating its temporary and renaming it (``kill -9``, a power
    cut) leaves one behind, and nothing else would ever remove it. The age is the file system's
    own (its mtime against the real time), not the product's clock: a shifted clock is no reason
    to take a temporary another process is writing right now."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        try:
            if levels > 0 and entry.is_dir(follow_symlinks=False):
                removed += remove_stale_temporaries(
                    Path(entry.path), older_than_s=older_than_s, now=now, levels=levels - 1
                )
                continue
            if not _TEMPORARY.fullmatch(entry.name):
                continue
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime > older_than_s:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # gone already, or not ours to remove
    return removed
