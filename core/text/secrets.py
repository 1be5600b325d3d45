"""The set of secret values that must never be persisted or printed.

Keys from the environment are always included; keys that arrived any other way
(config.yaml) are registered when ``Settings`` is built, so every writer of
files (the store, notes, logs) can redact without knowing where keys came from.
"""

from __future__ import annotations

import os
import threading

SECRET_ENV_VARS = ("EXA_API_KEY", "PERPLEXITY_API_KEY", "OPENAI_API_KEY")
_watched_env: set[str] = set()  # key variables of providers and writers registered from outside
MIN_SECRET_LEN = 8
REDACTED = "[redacted]"  # what a key is replaced with wherever it would have appeared

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    if value and len(value) >= MIN_SECRET_LEN:
        with _lock:
            _registered.add(value)


def watch_secret_env(name: str) -> None:
    """Treat the value of environment variable ``name`` as a secret from now on."""
    with _lock:
        _watched_env.add(name)


def secret_values() -> list[str]:
    """Current secrets, longest first (so a key containing another is replaced whole)."""
    with _lock:
        names = {*SECRET_ENV_VARS, *_watched_env}
        found = set(_registered)
    found |= {os.environ.get(name, "").strip() for name in names}
    return sorted((s for s in found if len(s) >= MIN_SECRET_LEN), key=len, reverse=True)
