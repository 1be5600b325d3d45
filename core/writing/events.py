"""The writer's server-sent events, read under the size cap as they arrive (httpx-sse decodes them).

The body is counted against ``writer_max_response_bytes`` decoded (a compressed
stream is inflated under the cap), checked to be text in its charset, and followed
by one blank line so an event the server ended without its closing blank line is
still dispatched. ``StreamProgress`` keeps what arrived so far for the message when
a stream stalls, trickles or breaks off.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import AsyncIterator

import httpx
from httpx_sse import EventSource, ServerSentEvent

from sourcedesk.core.net.bounded import body_chunks, declared_length, describe_seconds, too_large
from sourcedesk.core.net.deadline import current_deadline
from sourcedesk.core.writing.base import DEFAULT_MAX_RESPONSE_BYTES, WriterError
from sourcedesk.core.writing.replies import CAP_SETTING, CHARS_SETTING, WHAT, charset_of, shown_charset


class StreamProgress:
    """What a stream delivered so far, for the message when it breaks off or runs out of time."""

    def __init__(self) -> None:
        self.chars = 0  # answer text folded so far (set by the backend's fold)
        self.bytes = 0
        self.started = time.monotonic()
        self.last_at = self.started  # when the last bytes arrived

    def too_slow(self, seconds: float) -> str:
        """Why a stream did not finish within ``seconds``: stalled, or trickling in."""
        took = describe_seconds(seconds)
        now = time.monotonic()
        gap = now - self.last_at
        if self.bytes == 0:
            said = f"the writer's stream sent headers but no events within {took} (the stream stalled)"
        elif gap >= min(10.0, 0.6 * (now - self.started)):  # silent for most of the time, or for long
            said = (
                f"the writer's stream stalled after {self.chars:,} characters: "
                f"nothing arrived for the last {describe_seconds(gap)}"
            )
        else:
            said = (
                f"the writer's stream was still trickling in after {took} ({self.bytes:,} bytes, "
                f"{self.chars:,} characters so far): the server sends too slowly"
            )
        return said + deadline_note()


def deadline_note() -> str:
    deadline = current_deadline()
    return f"; {deadline.what} ran out ({describe_seconds(deadline.seconds)})" if deadline is not None else ""


class _BoundedEventBytes(httpx.AsyncByteStream):
    """The response body, counted against the cap and checked to be text in its charset,
    followed by one blank line so an event the server ended without its closing blank
    line is still dispatched (the data line is complete)."""

    def __init__(self, response: httpx.Response, max_bytes: int, progress: StreamProgress):
        self._response = response
        self._max_bytes = max_bytes
        self._progress = progress

    async def __aiter__(self) -> AsyncIterator[bytes]:
        declared = declared_length(self._response)
        if declared is not None and declared > self._max_bytes:
            raise too_large(WHAT, self._max_bytes, declared, CAP_SETTING)
        charset = charset_of(self._response)
        decoder = codecs.getincrementaldecoder(charset)("strict")
        progress = self._progress
        async for chunk in body_chunks(self._response, self._max_bytes, what=WHAT, setting=CAP_SETTING):
            progress.bytes += len(chunk)
            progress.last_at = time.monotonic()
            if progress.bytes > self._max_bytes:
                raise too_large(WHAT, self._max_bytes, declared, CAP_SETTING)
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                raise WriterError(
                    "malformed", 200, f"the writer's stream is not {shown_charset(charset)} text"
                ) from None
            yield chunk
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise WriterError(
                "malformed", 200, f"the writer's stream ended inside a {shown_charset(charset)} character"
            ) from None
        yield b"\n\n"

    async def aclose(self) -> None:
        await self._response.aclose()


def sse_events(
    response: httpx.Response,
    *,
    max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    progress: StreamProgress | None = None,
) -> AsyncIterator[ServerSentEvent]:
    """The stream's events (httpx-sse), read under the size cap: blank keep-alive lines
    and ``:`` comments yield nothing."""
    framed = httpx.Response(
        response.status_code,
        headers={"content-type": f"text/event-stream; charset={charset_of(response)}"},
        stream=_BoundedEventBytes(response, max_bytes, progress or StreamProgress()),
        request=response.request,
    )
    return EventSource(framed).aiter_sse()


def is_event_stream(response: httpx.Response) -> bool:
    """A server asked to stream may still answer with plain JSON (or an HTML page)."""
    ctype = response.headers.get("content-type", "").lower()
    return "application/json" not in ctype and "text/html" not in ctype


def answer_too_long(chars: int, limit: int, requests: int = 0, *, streaming: bool = False) -> WriterError:
    """An answer whose text is longer than a note may hold (``streaming``: it was still arriving)."""
    held = f"{chars:,} characters had arrived" if streaming else f"it holds {chars:,}"
    return WriterError(
        "too_large",
        200,
        f"the writer's answer is longer than the {limit:,} characters a note may hold ({CHARS_SETTING}; "
        f"{held}); it was not written",
        requests=requests,
    )
