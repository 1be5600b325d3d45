"""Content-addressed files for large payloads (page texts, raw responses, prompts).

Keeping them out of ``db.json`` keeps every database write small: TinyDB
rewrites the whole document on each change. The same text stored twice costs
one file. Files are named by the sha256 of their (redacted) bytes.

``externalise``/``restore`` swap long strings (and, for chosen keys, whole
values) in a JSON-like tree for a small reference object and back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.files.atomic import atomic_write_bytes
from sourcedesk.core.files.regular import read_regular
from sourcedesk.store.quarantine import Quarantine
from sourcedesk.store.redact import redact_bytes

LARGE_CHARS = 2048  # strings longer than this leave db.json
REF_KEY = "__sourcedesk_payload__"
PART_KEY = "part"  # a ref to one entry of a JSON payload that holds several (a batch of run bodies)
_KEY_RE = re.compile(r"^[0-9a-f]{64}$")


class MissingPayload(UserError):
    """A payload file the database refers to is gone (the store was edited or partly copied)."""


class CorruptPayload(MissingPayload):
    """A payload file whose bytes no longer match its name (sha256): it was moved to the
    quarantine folder, and whoever asked for it treats it as missing."""


class PayloadDir:
    def __init__(self, root: Path, quarantine: Quarantine | None = None):
        self.root = Path(root)
        self.quarantine = quarantine or Quarantine(self.root.parent)

    def _path(self, key: str) -> Path:
        if not _KEY_RE.match(key or ""):
            raise MissingPayload(f"{key!r} is not a payload key", hint="payload keys are 64 hex characters")
        return self.root / key[:2] / key

    def put(self, data: bytes | str) -> str:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        raw = redact_bytes(raw)
        key = hashlib.sha256(raw).hexdigest()
        path = self._path(key)
        if not path.is_file():
            if path.exists() or path.is_symlink():  # a FIFO, directory or broken link in its place
                self.quarantine.keep_file(path, f"payload-{key}")
            atomic_write_bytes(path, raw)
        return key

    def get(self, key: str) -> bytes:
        """The payload's bytes, verified against their hash: a file that does not match is
        quarantined and reported as ``CorruptPayload`` (a kind of ``MissingPayload``)."""
        path = self._path(key)
        try:
            raw = read_regular(path)
        except FileNotFoundError:
            raise MissingPayload(
                f"payload {key[:12]}… is missing from {self.root}",
                hint="the store was edited or copied without its payloads/ folder; refresh the section's sources",
            ) from None
        except OSError as exc:  # a directory, FIFO, device or symlink loop in its place
            moved = self.quarantine.keep_file(path, f"payload-{key}")  # so that the next put writes it anew
            where = f"; moved aside to {self.quarantine.shown(moved)}" if moved else ""
            raise CorruptPayload(
                f"payload {key[:12]}… cannot be read ({exc.strerror or exc}){where}",
                hint="it is treated as missing: the section's sources are retrieved again",
            ) from None
        if hashlib.sha256(raw).hexdigest() != key:
            moved = self.quarantine.keep_file(path, f"payload-{key}")
            where = f"; moved aside to {self.quarantine.shown(moved)}" if moved else ""
            raise CorruptPayload(
                f"payload {key[:12]}… is damaged (its content no longer matches its hash){where}",
                hint="it is treated as missing: the section's sources are retrieved again",
            )
        return raw

    def exists(self, key: str) -> bool:
        return self._path(key).exists()


def payload_ref(key: str, kind: str, size: int) -> dict[str, Any]:
    """What stands in a document for a value kept in a payload file (``kind``: text or json)."""
    return {REF_KEY: key, "kind": kind, "chars": size}


def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get(REF_KEY), str)


def externalise(
    value: Any,
    put: Callable[[bytes | str], str],
    *,
    threshold: int = LARGE_CHARS,
    whole_keys: Iterable[str] = (),
) -> Any:
    """Copy of ``value`` with strings longer than ``threshold`` replaced by payload refs.

    Top-level keys in ``whole_keys`` (e.g. ``raw_response``) move as one JSON payload
    when their serialised form is larger than ``threshold``.
    """
    whole = set(whole_keys)
    if isinstance(value, dict) and whole:
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in whole and not isinstance(v, str) and v is not None:
                encoded = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
                if len(encoded) > threshold:
                    out[k] = payload_ref(put(encoded), "json", len(encoded))
                    continue
            out[k] = externalise(v, put, threshold=threshold)
        return out
    if isinstance(value, str):
        return payload_ref(put(value), "text", len(value)) if len(value) > threshold else value
    if isinstance(value, dict):
        return {k: externalise(v, put, threshold=threshold) for k, v in value.items()}
    if isinstance(value, list):
        return [externalise(v, put, threshold=threshold) for v in value]
    return value


def restore(
    value: Any, get: Callable[[str], bytes], *, missing: Callable[[dict[str, Any], Exception], Any] | None = None
) -> Any:
    """Inverse of ``externalise``. A payload that is missing, damaged or unreadable raises
    ``MissingPayload`` — or, with ``missing``, is replaced by what ``missing(ref, error)`` returns."""
    if is_ref(value):
        try:
            raw = get(value[REF_KEY]).decode("utf-8")
            if value.get("kind") != "json":
                return raw
            loaded = orjson.loads(raw)
        except (MissingPayload, UnicodeDecodeError, ValueError) as exc:
            if missing is not None:
                return missing(value, exc)
            if isinstance(exc, MissingPayload):
                raise
            raise MissingPayload(
                f"payload {str(value[REF_KEY])[:12]}… cannot be read ({type(exc).__name__})",
                hint="it is treated as missing",
            ) from None
        part = value.get(PART_KEY)
        if isinstance(part, str):
            loaded = loaded.get(part) if isinstance(loaded, dict) else None
        return restore(loaded, get, missing=missing)
    if isinstance(value, dict):
        return {k: restore(v, get, missing=missing) for k, v in value.items()}
    if isinstance(value, list):
        return [restore(v, get, missing=missing) for v in value]
    return value


def unloaded(value: Any) -> Any:
    """``value`` with every payload ref replaced by None (a listing that reads no payload file)."""
    if is_ref(value):
        return None
    if isinstance(value, dict):
        return {k: unloaded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unloaded(v) for v in value]
    return value
