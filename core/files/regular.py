"""Read a file only when it is a regular file, and only up to a limit.

A FIFO where a file is expected blocks ``open`` forever, and a link to ``/dev/zero`` or
``/dev/urandom`` reads until memory runs out; both are refused before any read."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotRegularFile(OSError):
    """The path is a FIFO, socket or device (a directory raises ``IsADirectoryError``)."""


class SymlinkRefused(OSError):
    """The path is a symbolic link where only a file of the memo's own is accepted (a note)."""


def read_regular(path: Path, limit: int | None = None, *, follow_links: bool = True) -> bytes:
    """The bytes of ``path``; with ``limit``, at most ``limit + 1`` of them (so a caller can
    tell a file that goes on past the limit). OSError as ``open`` raises it otherwise; with
    ``follow_links`` False a path that is itself a symbolic link raises ``SymlinkRefused``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # never blocks on a FIFO
    if not follow_links:
        if os.path.islink(path):
            raise SymlinkRefused(f"{path} is a symbolic link")
        flags |= getattr(os, "O_NOFOLLOW", 0)  # and if it became one since: ELOOP, not its target
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{path} is not a regular file (a pipe, socket or device)")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as stream:
            return stream.read() if limit is None else stream.read(limit + 1)
    finally:
        os.close(fd)
