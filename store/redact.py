"""Keep API keys out of everything the store writes.

Every byte the store persists (db.json and payload files) passes through here,
so a key that slipped into a raw response, a prompt or an error string is
replaced before it reaches the disk. The values are read from the environment
at write time (and from ``register_secret`` for keys that came from a config
file), so there is nothing to remember at the call site.
"""

from __future__ import annotations

from typing import Any

from sourcedesk.core.text.secrets import (  # noqa: F401 (re-exported for the store's callers)
    MIN_SECRET_LEN,
    REDACTED,
    SECRET_ENV_VARS,
    register_secret,
    secret_values,
)


def redact_text(text: str, secrets: list[str] | None = None) -> str:
    for secret in secret_values() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_bytes(data: bytes, secrets: list[str] | None = None) -> bytes:
    for secret in secret_values() if secrets is None else secrets:
        raw = secret.encode("utf-8")
        if raw in data:
            data = data.replace(raw, REDACTED.encode("ascii"))
    return data


def redact(value: Any, secrets: list[str] | None = None) -> Any:
    """A copy of a JSON-like value with every secret replaced, in keys and in values."""
    if secrets is None:
        secrets = secret_values()
    if not secrets:
        return value
    return _walk(value, secrets)


def _walk(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        return {(redact_text(k, secrets) if isinstance(k, str) else k): _walk(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, secrets) for v in value]
    return value


def encode_redacted(value: Any) -> bytes:
    """``value`` as compact JSON bytes (orjson) with every secret replaced: what a store
    backend writes for a document."""
    import orjson

    raw = orjson.dumps(value)
    secrets = secret_values()
    if secrets and any(s.encode("utf-8") in raw or orjson.dumps(s)[1:-1] in raw for s in secrets):
        raw = orjson.dumps(redact(value, secrets))
    return raw
