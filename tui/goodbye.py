"""Lines said after the workbench closed — to a terminal that may no longer be there.

Closing the terminal window ends the workbench (``SourcedeskApp._watch_terminal``); the
line said after it (where the demo memo is, where a crash was logged) then meets a
hung-up terminal: ``OSError: [Errno 5]`` (EIO), or ``BrokenPipeError`` for a pipe. Nobody
is left to read it, so it is dropped and noted in the log, never raised or logged as an error.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

log = logging.getLogger("sourcedesk.tui")


def say_goodbye(text: str, file: TextIO | None = None) -> bool:
    """Print ``text`` (to stdout by default); False when the terminal or pipe had gone."""
    out = sys.stdout if file is None else file
    try:
        print(text, file=out, flush=True)
    except (OSError, ValueError) as exc:  # EIO: a hung-up terminal; EPIPE; ValueError: a closed file
        log.info("the terminal had gone; not said: %s (%s)", text, exc)
        return False
    return True
