"""One HTTP exchange with a total deadline and a size cap on the body.

``fetch_bounded`` sends a request and reads the whole answer as one job: it ends
when the body is complete, when ``seconds`` have passed (however slowly the bytes
trickle in), or when the body grows past ``max_bytes`` — read as a stream and
stopped there, so a 50 MB answer never sits in memory whole. A declared
``Content-Length`` over the cap is refused before any of the body is read, and the cap
counts the body *decoded*: a compressed answer is inflated under it, a bounded slice at a
time and off the event loop (``sourcedesk.core.net.decoding``), however many
``Content-Encoding`` layers are stacked.
``read_capped`` and ``iter_lines_capped`` are the same cap for a response the
caller streams itself; ``open_bounded`` waits for the headers alone within a
deadline (a writer's server-sent events are then read as they arrive), and
``read_bounded`` reads the rest of an open response like ``fetch_bounded`` does.
"""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx

from sourcedesk.core.net.deadline import DeadlineExceeded
from sourcedesk.core.net.decoding import DecodedTooLarge, UndecodableBody, decoded_chunks


class ResponseTooLarge(httpx.HTTPError):
    """The body is larger than the cap; nothing past the cap was kept."""

    def __init__(self, message: str, *, limit: int, declared: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.declared = declared  # the Content-Length the server announced, if any


def describe_size(n: int) -> str:
    """``16 MiB``, ``512 KiB``, ``900 bytes``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) or value >= 10 else f"{value:.1f} {unit}"
    return f"{n} bytes"


def describe_seconds(s: float) -> str:
    """``30 s``, ``0.5 s`` — never ``0.473643 s``."""
    return f"{s:.0f} s" if s >= 10 or s == int(s) else f"{s:.1f} s"


@dataclass
class _Progress:
    answered: bool = False  # status line and headers arrived
    received: int = 0  # body bytes so far


def _declared_length(response: httpx.Response) -> int | None:
    value = response.headers.get("content-length", "")
    return int(value) if value.strip().isdigit() else None


def too_large(what: str, limit: int, declared: int | None, setting: str | None) -> ResponseTooLarge:
    """The error for an answer past ``limit`` bytes (``declared``: its announced length)."""
    return _too_large(what, limit, declared, setting)


def declared_length(response: httpx.Response) -> int | None:
    """The ``Content-Length`` the server announced, if it is a number."""
    return _declared_length(response)


def _too_large(
    what: str, limit: int, declared: int | None, setting: str | None, *, decompressed: bool = False
) -> ResponseTooLarge:
    said = f"; it announced {describe_size(declared)}" if declared is not None else ""
    if decompressed:
        said += " (counted decompressed: it was sent compressed)"
    named = f" ({setting})" if setting else ""
    return ResponseTooLarge(
        f"{what}'s answer is larger than the {describe_size(limit)} cap{named}{said}; it was not read further",
        limit=limit,
        declared=declared,
    )


async def read_capped(
    response: httpx.Response,
    max_bytes: int,
    *,
    what: str,
    setting: str | None = None,
    progress: _Progress | None = None,
) -> bytes:
    """The whole (decoded) body, or ``ResponseTooLarge`` once it passes ``max_bytes``
    (``setting``: the name of the setting that sets the cap, for the message)."""
    declared = _declared_length(response)
    if declared is not None and declared > max_bytes:
        raise _too_large(what, max_bytes, declared, setting)
    chunks: list[bytes] = []
    size = 0
    async for chunk in body_chunks(response, max_bytes, what=what, setting=setting):
        size += len(chunk)
        if progress is not None:
            progress.received = size
        if size > max_bytes:
            raise _too_large(what, max_bytes, declared, setting)
        chunks.append(chunk)
    return b"".join(chunks)


async def body_chunks(
    response: httpx.Response, max_bytes: int, *, what: str, setting: str | None = None
) -> AsyncIterator[bytes]:
    """A streamed response's body, decoded, in chunks; ``ResponseTooLarge`` as soon as decoding
    would pass ``max_bytes`` (``UndecodableBody``, an ``httpx.DecodingError``, for an encoding
    that cannot be undone)."""
    try:
        async for chunk in decoded_chunks(response, max_bytes):
            yield chunk
    except DecodedTooLarge:
        raise _too_large(what, max_bytes, _declared_length(response), setting, decompressed=True) from None


async def iter_lines_capped(
    response: httpx.Response, max_bytes: int, *, what: str, setting: str | None = None
) -> AsyncIterator[str]:
    """The body's lines as they arrive (a stream of events), stopping with
    ``ResponseTooLarge`` once more than ``max_bytes`` have arrived in all."""
    declared = _declared_length(response)
    if declared is not None and declared > max_bytes:
        raise _too_large(what, max_bytes, declared, setting)
    decoder = codecs.getincrementaldecoder(response.charset_encoding or "utf-8")(errors="replace")
    size = 0
    partial: list[str] = []  # the line being received (a long one arrives in many chunks)
    async for chunk in body_chunks(response, max_bytes, what=what, setting=setting):
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(what, max_bytes, declared, setting)
        first, *rest = decoder.decode(chunk).split("\n")
        partial.append(first)
        for piece in rest:
            yield "".join(partial).rstrip("\r")
            partial = [piece]
    partial.append(decoder.decode(b"", final=True))
    last = "".join(partial)
    if last:
        yield last.rstrip("\r")


def _slow_answer(what: str, seconds: float, progress: _Progress) -> DeadlineExceeded:
    took = describe_seconds(seconds)
    if not progress.answered:
        message = f"{what} did not answer within {took} (the connection stalled)"
    elif progress.received == 0:
        message = f"{what} sent headers but no body within {took} (the answer stalled)"
    else:
        got = f"{progress.received:,} byte" + ("s" if progress.received != 1 else "")
        message = (
            f"{what}'s answer was still trickling in after {took} (only {got} arrived): the server sends too slowly"
        )
    return DeadlineExceeded(
        message, seconds=seconds, what=what, received=progress.received if progress.answered else None
    )


async def fetch_bounded(
    client: httpx.AsyncClient,
    request: httpx.Request,
    *,
    seconds: float,
    max_bytes: int,
    what: str,
    setting: str | None = None,
) -> httpx.Response:
    """Send ``request`` and read its whole body within ``seconds`` and ``max_bytes``.

    Returns a complete, closed response (``.content`` and ``.json()`` work). Raises
    ``DeadlineExceeded`` (a timeout: callers may retry it), ``ResponseTooLarge``
    (an answer, not an accident: do not retry) or httpx's own errors."""
    progress = _Progress()
    if seconds <= 0:
        raise _slow_answer(what, 0.0, progress)
    timeout = asyncio.timeout(seconds)
    try:
        async with timeout:
            response = await client.send(request, stream=True)
            progress.answered = True
            try:
                body = await read_capped(response, max_bytes, what=what, setting=setting, progress=progress)
            finally:
                await response.aclose()
    except TimeoutError:
        if not timeout.expired():
            raise
        raise _slow_answer(what, seconds, progress) from None
    return _complete(response, body)


def _complete(response: httpx.Response, body: bytes) -> httpx.Response:
    """A closed response holding ``body`` (already decoded), with the original status and headers."""
    headers = [
        (name, value)
        for name, value in response.headers.multi_items()
        if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=body,
        request=response.request,
        extensions={k: v for k, v in response.extensions.items() if k != "network_stream"},
    )


async def open_bounded(
    client: httpx.AsyncClient, request: httpx.Request, *, seconds: float, what: str
) -> httpx.Response:
    """Send ``request`` and return as soon as the status line and headers arrive, within
    ``seconds``; the body is left to the caller to stream (and the response to close).
    Raises ``DeadlineExceeded`` naming a stalled connection, or httpx's own errors."""
    progress = _Progress()
    if seconds <= 0:
        raise _slow_answer(what, 0.0, progress)
    timeout = asyncio.timeout(seconds)
    try:
        async with timeout:
            return await client.send(request, stream=True)
    except TimeoutError:
        if not timeout.expired():
            raise
        raise _slow_answer(what, seconds, progress) from None


async def read_bounded(
    response: httpx.Response, *, seconds: float, max_bytes: int, what: str, setting: str | None = None
) -> httpx.Response:
    """The rest of an open response read within ``seconds`` and ``max_bytes``, as a complete,
    closed response (the open one is closed). Raises like ``fetch_bounded``."""
    progress = _Progress(answered=True)
    try:
        if seconds <= 0:
            raise _slow_answer(what, 0.0, progress)
        timeout = asyncio.timeout(seconds)
        try:
            async with timeout:
                body = await read_capped(response, max_bytes, what=what, setting=setting, progress=progress)
        except TimeoutError:
            if not timeout.expired():
                raise
            raise _slow_answer(what, seconds, progress) from None
    finally:
        await response.aclose()
    return _complete(response, body)


__all__ = [
    "ResponseTooLarge",
    "UndecodableBody",
    "body_chunks",
    "declared_length",
    "describe_seconds",
    "describe_size",
    "fetch_bounded",
    "iter_lines_capped",
    "open_bounded",
    "read_bounded",
    "read_capped",
    "too_large",
]
