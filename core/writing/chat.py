"""Chat completions (``POST /chat/completions``): the body, the answer, the stream folded into one.

Shared by the legacy Sonar backend and the OpenAI-compatible one. Everything the
answer carries is kept (``search_results``, because a bare ``[N]`` indexes that
list; ``citations``; ``usage`` and its cost; the raw body for the store), and a
reasoning model's ``<think>`` block is split off so it can never reach a note.
Three real stream shapes come out the same:

- Perplexity ``full`` mode: every chunk is ``object: "chat.completion"`` with the
  *cumulative* ``message.content`` plus a ``delta``, and no ``data: [DONE]``;
- Perplexity ``concise`` mode: ``chat.reasoning`` / ``chat.reasoning.done`` /
  ``chat.completion.chunk`` / ``chat.completion.done`` chunks, with
  ``search_results`` and the cost only on the ``done`` chunks;
- OpenAI-compatible servers: delta-only chunks, ``data: [DONE]``, usage (if at
  all) on a last chunk whose ``choices`` is empty.

The answer is outside text: its content, reasoning, citations and search results
are cleaned where they are read (``sourcedesk.core.text.safety``), a stream only once it is
folded whole, so a control sequence split across two chunks is removed whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from httpx_sse import ServerSentEvent

from sourcedesk.core.domain.costs import reported_dollars, unusable_amount
from sourcedesk.core.net.ambiguous_urls import why_unusable
from sourcedesk.core.text.safety import MAX_TREE_DEPTH, Taint, clean_text, clean_tree, tainted, too_deep
from sourcedesk.core.text.secrets import secret_values
from sourcedesk.core.writing.base import (
    DEFAULT_MAX_ANSWER_CHARS,
    TextCallback,
    WriteRequest,
    WriterError,
    WriterResponse,
)
from sourcedesk.core.writing.events import StreamProgress, answer_too_long
from sourcedesk.core.writing.replies import Scrubber
from sourcedesk.core.writing.results import read_results
from sourcedesk.core.writing.transport import HttpWriter


def _text(content: Any) -> str | None:
    """Message content as text: a string, or OpenAI-style content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    return None


class StreamAccumulator:
    """Folds chunk objects into one ``chat.completion``-shaped dict."""

    def __init__(self) -> None:
        self.chunks = 0
        self.done = False
        self._deltas: list[str] = []
        self._delta_len = 0
        self._cumulative = ""
        self._finish_reason: str | None = None
        self._top: dict[str, Any] = {}  # last seen top-level fields (id, model, created, ...)
        self._search_results: list[Any] | None = None
        self._citations: list[Any] | None = None
        self._usage: dict[str, Any] | None = None
        self.finished = False  # a final event arrived: a finish_reason, a "*.done" chunk, or [DONE]

    @property
    def chars(self) -> int:
        """Characters of answer text so far (without joining the deltas)."""
        return max(len(self._cumulative), self._delta_len)

    @property
    def text(self) -> str:
        """The best text so far: the cumulative message when the server sends one, else the deltas."""
        if self._cumulative and len(self._cumulative) >= self._delta_len:
            return self._cumulative
        return "".join(self._deltas)

    def feed_data(self, data: str) -> None:
        """One event's data string; WriterError for a chunk that is not JSON or reports an error."""
        if data.strip() == "[DONE]":
            self.done = self.finished = True
            return
        try:
            chunk = json.loads(data)
        except (json.JSONDecodeError, RecursionError):
            raise WriterError("malformed", 200, "the writer's stream contained a chunk that is not JSON") from None
        self.feed_chunk(chunk)

    def feed_chunk(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            raise WriterError("malformed", 200, "the writer's stream contained a chunk that is not a JSON object")
        if chunk.get("error"):
            raise WriterError("server", 200, _error_text(chunk["error"]))
        self.chunks += 1
        kind = chunk.get("object")
        if isinstance(kind, str) and kind.endswith(".done"):  # Perplexity's concise mode: chat.completion.done
            self.finished = True
        for key, value in chunk.items():
            if key == "choices":
                continue
            if key == "search_results" and isinstance(value, list):
                if value or self._search_results is None:
                    self._search_results = value
            elif key == "citations" and isinstance(value, list):
                if value or self._citations is None:
                    self._citations = value
            elif key == "usage" and isinstance(value, dict):
                self._usage = value
            elif key not in ("search_results", "citations", "usage"):
                self._top[key] = value
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return  # e.g. OpenAI's usage-only last chunk
        choice = choices[0]
        message = choice.get("message")
        if isinstance(message, dict):
            full = _text(message.get("content"))
            if full:
                self._cumulative = full
        delta = choice.get("delta")
        if isinstance(delta, dict):
            piece = _text(delta.get("content"))
            if piece:
                self._deltas.append(piece)
                self._delta_len += len(piece)
        if choice.get("finish_reason"):
            self._finish_reason = choice["finish_reason"]
            self.finished = True

    def completion(self) -> dict[str, Any]:
        """The stream as a non-streaming response body."""
        if self.chunks == 0:
            raise WriterError("malformed", 200, "the writer's stream ended without any completion chunk")
        if not self.finished:
            raise WriterError(
                "network",
                None,
                f"the writer's stream ended without its final event (no finish_reason and no [DONE]) after "
                f"{self.chars:,} characters; the answer is incomplete",
            )
        out: dict[str, Any] = dict(self._top)
        out["object"] = "chat.completion"
        out["choices"] = [
            {"index": 0, "finish_reason": self._finish_reason, "message": {"role": "assistant", "content": self.text}}
        ]
        if self._search_results is not None:
            out["search_results"] = self._search_results
        if self._citations is not None:
            out["citations"] = self._citations
        if self._usage is not None:
            out["usage"] = self._usage
        out["stream"] = {"chunks": self.chunks, "done_marker": self.done}
        return out


def _error_text(error: Any) -> str:
    msg = (error.get("message") or error.get("type") or "unknown error") if isinstance(error, dict) else str(error)
    return f"the writer reported an error mid-stream: {str(msg)[:300]}"


def cleaning_notices(taint: Taint) -> list[str]:
    """The section's warnings for what cleaning the writer's answer took out."""
    notes = []
    if taint.controls:
        notes.append("writer: its answer carried terminal control sequences or bidi overrides; they were removed")
    if taint.invisible:
        notes.append(
            "writer: its answer carried invisible characters (direction marks, zero-width spaces, line separators) "
            "or text that is not valid Unicode; they were removed or replaced with U+FFFD"
        )
    if taint.echoed:
        notes.append("writer: its answer echoed the API key back; it was redacted and never stored")
    return notes


def _reported_cost(usage: dict[str, Any]) -> object:
    cost = usage.get("cost")
    return cost.get("total_cost") if isinstance(cost, dict) else cost


def cost_of(usage: dict[str, Any]) -> float:
    """``usage.cost.total_cost`` (or a bare ``usage.cost``) when it is a usable amount, else 0."""
    return reported_dollars(_reported_cost(usage)) or 0.0


def depth_notices(data: object) -> list[str]:
    """A warning when part of the answer nested too deeply to keep (it was cut off, the rest read)."""
    if not too_deep(data):
        return []
    return [f"writer: part of its answer was nested more than {MAX_TREE_DEPTH} levels deep; that part was not kept"]


def cost_notices(usage: dict[str, Any]) -> list[str]:
    """A warning when the writer reported a cost that cannot be counted (NaN, negative…)."""
    bad = unusable_amount(_reported_cost(usage))
    if bad is None:
        return []
    return [f"writer: it reported a cost of {bad}, which is not a dollar amount; it was counted as $0"]


_THINK_RE = re.compile(r"^\s*<think>(.*?)(</think>\s*|$)", re.DOTALL)


def split_reasoning(content: str) -> tuple[str, str]:
    """(reasoning, answer): sonar-reasoning models open with ``<think>…</think>``,
    which must never reach a note; an unclosed block is all reasoning."""
    m = _THINK_RE.match(content)
    if not m:
        return "", content
    return m.group(1).strip(), content[m.end() :]


def _first_choice(data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return {}
    return choices[0]


def read_completion(
    data: Any,
    *,
    model: str = "",
    requests: int = 1,
    max_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    secrets: list[str] | None = None,
) -> WriterResponse:
    """A chat-completions body (plain or folded from a stream) as a :class:`WriterResponse`.

    Every string is cleaned here, where it enters (``secrets``: the keys to redact,
    default every known key); the raw body kept for the store is cleaned too."""
    if not isinstance(data, dict):
        raise WriterError("malformed", 200, "the writer's answer is JSON but not an object", requests=requests)
    message = _first_choice(data).get("message")
    content = _text(message.get("content")) if isinstance(message, dict) else None
    if content is None:
        raise WriterError("malformed", 200, "the writer's answer has no choices[0].message.content", requests=requests)
    if len(content) > max_chars:
        raise answer_too_long(len(content), max_chars, requests)
    keys = secret_values() if secrets is None else secrets
    content = clean_text(content, multiline=True, secrets=keys)
    reasoning, content = split_reasoning(content)
    if not content.strip():
        what = "only reasoning (a <think> block) and no answer" if reasoning else "an empty answer"
        raise WriterError("malformed", 200, f"the writer returned {what}", requests=requests)
    finish = _first_choice(data).get("finish_reason")
    raw_citations = data.get("citations")
    raw_urls = [c if isinstance(c, str) else "" for c in raw_citations] if isinstance(raw_citations, list) else []
    # A URL carrying control characters (or read as two hosts) is refused, never repaired: "" keeps its place.
    citations = ["" if why_unusable(c) else clean_text(c.strip(), secrets=keys) for c in raw_urls]
    items = data.get("search_results")
    if not isinstance(items, list) or (not items and raw_urls):
        # Older/compatible servers send only the URL list; it is still ground truth.
        items = [{"url": url, "title": ""} for url in raw_urls]
    web = read_results(items, use_ids=False, secrets=keys)  # chat completions number results by position
    raw: dict[str, Any] = clean_tree(data, secrets=keys)  # type: ignore[assignment]  # a dict stays a dict
    usage: dict[str, Any] = raw["usage"] if isinstance(raw.get("usage"), dict) else {}
    truncated = "length" if finish == "length" else None
    warnings = cleaning_notices(tainted(data, keys)) + list(web.warnings) + cost_notices(usage) + depth_notices(data)
    if truncated:
        warnings.append("writer: the answer was cut off at the token limit (finish_reason=length)")
    served = data.get("model")
    return WriterResponse(
        content=content,
        web=web,
        citations=citations,
        usage=usage,
        cost_dollars=cost_of(usage),
        model=clean_text(served, secrets=keys) if isinstance(served, str) and served else model,
        raw=raw,
        requests=requests,
        truncated=truncated,
        reasoning=reasoning,
        warnings=warnings,
    )


class ChatCompletionsWriter(HttpWriter):
    """``POST {base}/chat/completions`` with ``messages``; subclasses add their own fields."""

    path = "/chat/completions"

    def base_body(self, request: WriteRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": [
                {"role": "system", "content": request.prompt.system},
                {"role": "user", "content": request.prompt.user},
            ],
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_output_tokens is not None:
            body["max_tokens"] = request.max_output_tokens
        return body

    def finish_body(self, body: dict[str, Any], request: WriteRequest) -> dict[str, Any]:
        if self.stream:
            body["stream"] = True
        if request.extra:
            body.update(request.extra)
        return body

    def parse(self, data: Any, *, requests: int, request: WriteRequest) -> WriterResponse:
        return read_completion(
            data,
            model=request.model or self.model,
            requests=requests,
            max_chars=self.max_answer_chars,
            secrets=self.secrets(),
        )

    async def fold_stream(
        self,
        events: AsyncIterator[ServerSentEvent],
        *,
        requests: int,
        request: WriteRequest,
        on_text: TextCallback | None,
        progress: StreamProgress,
        scrub: Scrubber,
    ) -> WriterResponse:
        acc = StreamAccumulator()
        secrets = self.secrets()
        try:
            async for event in events:
                if not event.data:
                    continue
                acc.feed_data(event.data)
                progress.chars = acc.chars
                if acc.chars > self.max_answer_chars:
                    raise answer_too_long(acc.chars, self.max_answer_chars, requests, streaming=True)
                if on_text is not None and acc.chunks:
                    on_text(clean_text(acc.text, multiline=True, secrets=secrets))
                if acc.done:
                    break
            completion = acc.completion()
            return read_completion(
                completion,
                model=request.model or self.model,
                requests=requests,
                max_chars=self.max_answer_chars,
                secrets=secrets,
            )
        except WriterError as exc:
            raise WriterError(exc.kind, exc.status, scrub(exc.message), requests=requests) from None
