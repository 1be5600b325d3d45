"""A response body's Content-Encoding undone under a cap, layer by layer, a bounded slice at a time.

httpx decodes each arriving chunk whole: 1.8 KB of ``gzip(gzip(1 GiB))`` under
``Content-Encoding: gzip, gzip`` came out as one 1 GiB chunk before any size cap
could look at it (2 GB resident, and the event loop blocked while zlib ran, so no
deadline fired). Here the raw bytes are inflated with ``max_length``: no layer ever
hands the next more than ``SLICE`` bytes at once, and the total that leaves the last
layer is counted against the caller's cap as it is produced, so a bomb stops one
slice past the cap whatever the ratio or the number of layers.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator, Iterator

import httpx

SLICE = 64 * 1024  # the most one layer inflates in one step
MAX_LAYERS = 4  # "gzip, gzip, gzip, gzip" is already absurd; more is refused
_ALIASES = {"x-gzip": "gzip", "x-deflate": "deflate"}


class UndecodableBody(httpx.DecodingError):
    """An encoding sourcedesk does not decode, too many layers, or bytes that do not inflate
    (``str()`` says which, in words fit for the analyst)."""


class DecodedTooLarge(Exception):
    """The decoded body goes on past the cap (``produced``: the bytes let through, up to it)."""

    def __init__(self, produced: int) -> None:
        super().__init__(produced)
        self.produced = produced


def encodings(header_values: list[str]) -> list[str]:
    """The Content-Encoding layers in the order they were applied (``identity`` dropped)."""
    layers = [v.strip().lower() for value in header_values for v in value.split(",") if v.strip()]
    layers = [_ALIASES.get(v, v) for v in layers if v != "identity"]
    unknown = [v for v in layers if v not in ("gzip", "deflate")]
    if unknown:
        raise UndecodableBody(f"the body is encoded as {unknown[0]!r}, which sourcedesk does not decode")
    if len(layers) > MAX_LAYERS:
        raise UndecodableBody(
            f"the body is encoded {len(layers)} times over ({', '.join(layers)}); at most {MAX_LAYERS} layers are decoded"
        )
    return layers


class _Layer:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._d = zlib.decompressobj(31 if kind == "gzip" else zlib.MAX_WBITS)
        self._raw_deflate = False
        self._first = True

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        pending = data
        while pending:
            try:
                out = self._d.decompress(pending, SLICE)
            except zlib.error:
                if self.kind == "deflate" and self._first and not self._raw_deflate:
                    self._raw_deflate = True  # deflate sent without its zlib header, as many servers do
                    self._d = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise UndecodableBody(f"the body is not valid {self.kind} data") from None
            self._first = False
            pending = self._d.unconsumed_tail
            if out:
                yield out
            if self._d.eof:
                # gzip members may follow one another; anything else after the end is ignored, as httpx does
                rest = self._d.unused_data
                if self.kind != "gzip" or rest[:2] != b"\x1f\x8b":
                    return
                self._d = zlib.decompressobj(31)
                pending = rest
            elif not out:
                return  # zlib needs more input than it has

    def feed(self, data: bytes) -> Iterator[bytes]:
        yield from self._inflate(data)

    def flush(self) -> Iterator[bytes]:
        out = self._d.flush(SLICE)  # what zlib still holds is never more than one window
        if out:
            yield out


class BoundedDecoder:
    """Feed raw chunks, get decoded chunks; no more than ``limit`` decoded bytes ever come out.

    Past the limit the decoder stops (``overflowed``): the bytes up to the limit are returned,
    and nothing more is inflated."""

    def __init__(self, layers: list[str], limit: int) -> None:
        self._layers = [_Layer(k) for k in reversed(layers)]  # the last encoding applied is undone first
        self.limit = limit
        self.produced = 0
        self.overflowed = False

    def _through(self, chunks: Iterator[bytes], i: int) -> Iterator[bytes]:
        for chunk in chunks:
            if self.overflowed:
                return
            if i < len(self._layers):
                yield from self._through(self._layers[i].feed(chunk), i + 1)
                continue
            room = self.limit - self.produced
            if len(chunk) > room:
                self.overflowed = True
                chunk = chunk[: max(room, 0)]
            self.produced += len(chunk)
            if chunk:
                yield chunk

    def feed(self, raw: bytes) -> list[bytes]:
        """The decoded chunks ``raw`` yields (nothing once the limit was passed)."""
        return list(self._through(iter([raw]), 0))

    def flush(self) -> list[bytes]:
        out: list[bytes] = []
        for i, layer in enumerate(self._layers):
            out += list(self._through(layer.flush(), i + 1))
        return out


async def decoded_chunks(response: httpx.Response, limit: int) -> AsyncIterator[bytes]:
    """The body of a streamed ``response`` with its Content-Encoding undone: every decoded byte
    up to ``limit``, then ``DecodedTooLarge`` if the body goes on past it. Inflating runs in a
    worker thread, one arriving chunk at a time, so the event loop (and every deadline on it)
    keeps running."""
    if response.is_stream_consumed:
        # A response made from bytes (a transport that answers from memory) was read, and its
        # encoding undone, when it was made: there is no raw stream left to read.
        body = response.content
        yield body[:limit]
        if len(body) > limit:
            raise DecodedTooLarge(len(body))
        return
    layers = encodings(response.headers.get_list("content-encoding"))
    if not layers:
        async for raw in response.aiter_raw():
            yield raw
        return
    decoder = BoundedDecoder(layers, limit)
    async for raw in response.aiter_raw():
        for chunk in await asyncio.to_thread(decoder.feed, raw):
            yield chunk
        if decoder.overflowed:
            raise DecodedTooLarge(decoder.produced)
    for chunk in await asyncio.to_thread(decoder.flush):
        yield chunk
    if decoder.overflowed:
        raise DecodedTooLarge(decoder.produced)
