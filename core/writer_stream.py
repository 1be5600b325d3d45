"""Reading the writer's answer: a chat-completions body, or an SSE stream folded into one.

Everything the answer carries is kept (``search_results`` in place, because a
bare ``[N]`` indexes that list; ``citations``; ``usage`` and its cost; the raw
body for the store), and a reasoning model's ``<think>`` block is split off so
it can never reach a note. Three real stream shapes have to come out the same:

- Perplexity ``full`` mode (the default; the 2024 recording): every chunk is
  ``object: "chat.completion"`` carrying the *cumulative* ``message.content``
  plus a ``delta``, search results repeated along the way, and no
  ``data: [DONE]`` at the end;
- Perplexity ``concise`` mode: ``chat.reasoning`` / ``chat.reasoning.done`` /
  ``chat.completion.chunk`` (delta only) / ``chat.completion.done`` chunks,
  with ``search_results`` and the cost only on the ``done`` chunks;
- OpenAI-compatible servers: delta-only chunks, ``data: [DONE]``, usage (if at
  all) on a last chunk whose ``choices`` is empty.

The folded result has the non-streaming response shape, so one parser reads
both and the store keeps the same kind of ``raw`` record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

SEARCH_RESULT_FIELDS = ("url", "title", "date", "last_updated", "snippet", "source")


class AnswerError(ValueError):
    """The answer is unusable: an error event mid-stream (``kind`` "server") or
    no usable completion ("malformed")."""

    def __init__(self, message: str, kind: str = "malformed"):
        super().__init__(message)
        self.kind = kind


class SSEDecoder:
    """Line-oriented SSE decoding (WHATWG event-stream rules, the parts that matter).

    ``data:`` lines of one event are joined with newlines; a blank line ends the
    event; comments (``:``) and ``event:``/``id:``/``retry:`` fields are ignored.
    """

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        """One line (without its newline); returns an event's data when one completes."""
        line = line.rstrip("\r\n")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if not sep:  # a field with no value; only "data" would matter and it is empty
            name, value = line, ""
        elif value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name.lstrip().startswith("{") and not self._data:
            # A bare JSON line without the "data:" prefix (seen from ad-hoc proxies).
            return line.strip()
        return None

    def flush(self) -> str | None:
        """The pending event at end of stream (the last event may lack its blank line)."""
        return self._dispatch()

    def _dispatch(self) -> str | None:
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        return data


@dataclass
class WriterResponse:
    content: str
    search_results: list[dict[str, Any]] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    cost_dollars: float = 0.0
    model: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    requests: int = 1
    finish_reason: str | None = None  # "length" means the answer was cut off at max_tokens
    reasoning: str = ""  # a reasoning model's leading <think> block, kept out of ``content``


def _text(content: Any) -> str | None:
    """Message content as text: a string, or OpenAI-style content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
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

    @property
    def text(self) -> str:
        """The best text so far: the cumulative message when the server sends one
        (full mode, concise ``done``), else the concatenated deltas."""
        if self._cumulative and len(self._cumulative) >= self._delta_len:
            return self._cumulative
        return "".join(self._deltas)

    def feed_data(self, data: str) -> None:
        """One event's data string."""
        if data.strip() == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            raise AnswerError("the writer's stream contained a chunk that is not JSON") from None
        self.feed_chunk(chunk)

    def feed_chunk(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            raise AnswerError("the writer's stream contained a chunk that is not a JSON object")
        if chunk.get("error"):
            raise AnswerError(_error_text(chunk["error"]), kind="server")
        self.chunks += 1
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

    def completion(self) -> dict[str, Any]:
        """The stream as a non-streaming response body."""
        if self.chunks == 0:
            raise AnswerError("the writer's stream ended without any completion chunk")
        out: dict[str, Any] = dict(self._top)
        out["object"] = "chat.completion"
        out["choices"] = [
            {
                "index": 0,
                "finish_reason": self._finish_reason,
                "message": {"role": "assistant", "content": self.text},
            }
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
    if isinstance(error, dict):
        msg = error.get("message") or error.get("type") or "unknown error"
    else:
        msg = str(error)
    return f"the writer reported an error mid-stream: {str(msg)[:300]}"


def fold_sse_lines(lines: Iterable[str]) -> dict[str, Any]:
    """A whole recorded stream (lines) as one completion; for tests and replays."""
    decoder, acc = SSEDecoder(), StreamAccumulator()
    for line in lines:
        data = decoder.feed(line)
        if data is not None:
            acc.feed_data(data)
        if acc.done:
            break
    else:
        data = decoder.flush()
        if data is not None:
            acc.feed_data(data)
    return acc.completion()


# ---------------------------------------------------------------- response parsing


def _str_or_none(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _search_results(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every item kept in place (``[N]`` indexes this list), each with the six fields."""
    items = data.get("search_results")
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        item = item if isinstance(item, dict) else {}
        out.append({k: _str_or_none(item.get(k)) for k in SEARCH_RESULT_FIELDS})
    return out


def _citations(data: dict[str, Any]) -> list[str]:
    items = data.get("citations")
    if not isinstance(items, list):
        return []
    return [c if isinstance(c, str) else "" for c in items]


def _cost(usage: dict[str, Any]) -> float:
    cost = usage.get("cost")
    if isinstance(cost, dict):
        cost = cost.get("total_cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        return float(cost)
    return 0.0


_THINK_RE = re.compile(r"^\s*<think>(.*?)(</think>\s*|$)", re.DOTALL)


def _split_reasoning(content: str) -> tuple[str, str]:
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


def _content(data: dict[str, Any]) -> str | None:
    message = _first_choice(data).get("message")
    if not isinstance(message, dict):
        return None
    return _text(message.get("content"))


def read_completion(data: Any, *, model: str = "", requests: int = 1) -> WriterResponse:
    """A chat-completions body (plain or folded from a stream) as a :class:`WriterResponse`."""
    if not isinstance(data, dict):
        raise AnswerError("the writer's answer is JSON but not an object")
    content = _content(data)
    if content is None:
        raise AnswerError("the writer's answer has no choices[0].message.content")
    reasoning, content = _split_reasoning(content)
    if not content.strip():
        what = "only reasoning (a <think> block) and no answer" if reasoning else "an empty answer"
        raise AnswerError(f"the writer returned {what}")
    finish = _first_choice(data).get("finish_reason")
    citations = _citations(data)
    results = _search_results(data)
    if not results and citations:
        # Older/compatible servers send only the URL list; it is still ground truth.
        results = [{**dict.fromkeys(SEARCH_RESULT_FIELDS), "url": url, "title": ""} for url in citations]
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return WriterResponse(
        content=content,
        search_results=results,
        citations=citations,
        usage=usage,
        cost_dollars=_cost(usage),
        model=data.get("model") if isinstance(data.get("model"), str) and data.get("model") else model,
        raw=data,
        requests=requests,
        finish_reason=finish if isinstance(finish, str) else None,
        reasoning=reasoning,
    )
