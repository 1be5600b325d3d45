"""``writer_api: perplexity`` — Perplexity's Agent API (``POST {base}/v1/agent``), the default writer.

Facts it is built on (Perplexity's Agent API reference and Sonar migration guide):

- **Strict bodies.** Any unknown field, top-level or nested, is HTTP 400 naming
  it in ``error.param``, so the body holds only ``model`` or ``preset``,
  ``input`` (the user prompt), ``instructions`` (the system prompt), ``tools``,
  ``tool_choice``, ``max_output_tokens``, ``temperature`` and ``stream``.
- **Search only through a tool.** ``tools: [{"type": "web_search", "filters":
  {"search_domain_filter": [...]}}]``, forced with ``tool_choice`` because every
  claim must be citable. Strict mode sends a model, no tools and never a preset
  (a preset's bundled search cannot be switched off).
- **``status`` decides, even inside HTTP 200.** ``failed``/``cancelled`` is a
  failed section with the API's message; ``incomplete`` is an answer with a
  warning naming the truncation.
- **The answer** is the ``output_text`` parts of ``message`` items; the ground
  truth is every ``search_results`` item's results, flattened in order;
  ``url_citation`` annotations carry ``start_index``/``end_index``, documented only
  as a "character index" (read in the unit that lines the spans up with the text:
  ``sourcedesk.core.writing.annotations``). Cost is ``usage.cost.total_cost``.
- **Streaming** is typed events with no ``[DONE]``: text in
  ``response.output_text.delta``, exactly one terminal (``response.completed |
  failed | incomplete | cancelled``) or a bare ``error``; the completed and
  incomplete snapshots carry the whole response; unknown types are ignored.

What the annotations do to the text, and in which unit their offsets are read, is
``sourcedesk.core.writing.annotations``. A streamed answer is folded first and cleaned
as a whole, so a control sequence split across two deltas goes whole.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from httpx_sse import ServerSentEvent

from sourcedesk.core.text.safety import clean_text, clean_tree, tainted
from sourcedesk.core.text.secrets import secret_values
from sourcedesk.core.writing.annotations import assemble
from sourcedesk.core.writing.base import (
    DEFAULT_MAX_ANSWER_CHARS,
    TextCallback,
    WriteRequest,
    WriterError,
    WriterResponse,
)
from sourcedesk.core.writing.chat import cleaning_notices, cost_notices, cost_of, depth_notices
from sourcedesk.core.writing.events import StreamProgress, answer_too_long
from sourcedesk.core.writing.replies import Scrubber, error_message
from sourcedesk.core.writing.results import read_results
from sourcedesk.core.writing.transport import HttpWriter

PRESETS = ("fast", "low", "medium", "high", "xhigh")
# Previous names the API still accepts; sent under their current name.
PRESET_ALIASES = {
    "fast-search": "fast",
    "pro-search": "low",
    "deep-research": "medium",
    "advanced-deep-research": "high",
}
TERMINALS = ("response.completed", "response.incomplete", "response.failed", "response.cancelled", "error")

_MARKER_AFTER = re.compile(r"\s*\[\^?[^\[\]\s]{1,40}\]")
_MARKER_AT_END = re.compile(r"\[\^?[^\[\]\s]{1,40}\]\s*$")


def canonical_preset(name: str) -> str | None:
    """``pro-search`` → ``low``; None for a name the API does not know."""
    key = name.strip().lower()
    if key in PRESETS:
        return key
    return PRESET_ALIASES.get(key)


class UnknownPreset(ValueError):
    """A preset the Agent API does not know; ``hint`` lists the ones it does."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown preset {name!r}; the Agent API presets are {', '.join(PRESETS)}")
        close = difflib.get_close_matches(name.strip().lower(), [*PRESETS, *PRESET_ALIASES], n=1, cutoff=0.6)
        guess = f"did you mean {close[0]!r}? " if close else ""
        self.hint = (
            f"{guess}valid presets: {', '.join(PRESETS)} (older names also accepted: "
            f"{', '.join(PRESET_ALIASES)}); or name a model with model: instead"
        )


class AgentWriter(HttpWriter):
    api = "perplexity"
    label = "Perplexity Agent API"
    key_name = "PERPLEXITY_API_KEY"
    searches_web = True
    has_presets = True
    needs_key = True
    default_model = "perplexity/sonar"
    path = "/v1/agent"

    def describe(self, request: WriteRequest | None = None) -> str:
        if request is not None and request.preset and request.web_search:
            return f"{self.label} (preset {request.preset})"
        return f"{self.label} ({(request.model if request else None) or self.model})"

    def request_body(self, request: WriteRequest) -> dict[str, Any]:
        if request.extra:
            raise ValueError("the Agent API refuses fields it does not know; extra body fields are not sent")
        body: dict[str, Any] = {}
        preset = canonical_preset(request.preset) if request.preset and request.web_search else None
        if request.preset and request.web_search and preset is None:
            raise ValueError(f"unknown Agent API preset {request.preset!r}; presets: {', '.join(PRESETS)}")
        if preset:
            body["preset"] = preset
        else:
            body["model"] = request.model or self.model
        body["input"] = request.prompt.user
        body["instructions"] = request.prompt.system
        if request.web_search:
            tool: dict[str, Any] = {"type": "web_search"}
            if request.domain_filter:
                tool["filters"] = {"search_domain_filter": list(request.domain_filter)}
            body["tools"] = [tool]
            body["tool_choice"] = {"type": "web_search"}
        if request.max_output_tokens is not None:
            body["max_output_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if self.stream:
            body["stream"] = True
        return body

    def parse(self, data: Any, *, requests: int, request: WriteRequest) -> WriterResponse:
        return read_response(
            data,
            requests=requests,
            model=request.model or self.model,
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
        folder = _StreamFolder()
        secrets = self.secrets()
        async for event in events:
            if not event.data:
                continue
            try:
                done = folder.feed(event.data)
            except WriterError as exc:
                if _foreign(event.event):  # a named event this API never sends (a proxy's ping): ignored
                    continue
                raise WriterError(exc.kind, exc.status, scrub(exc.message), requests=requests) from None
            progress.chars = folder.chars
            if folder.chars > self.max_answer_chars:
                raise answer_too_long(folder.chars, self.max_answer_chars, requests, streaming=True)
            if on_text is not None and folder.text_changed:
                on_text(clean_text(folder.text, multiline=True, secrets=secrets))
            if done:
                break
        snapshot = folder.snapshot(progress.chars)
        try:
            response = read_response(
                snapshot,
                requests=requests,
                model=request.model or self.model,
                max_chars=self.max_answer_chars,
                secrets=secrets,
            )
        except WriterError as exc:
            raise WriterError(exc.kind, exc.status, scrub(exc.message), requests=requests) from None
        response.raw = {**response.raw, "stream": {"events": folder.events, "terminal": folder.terminal}}
        return response


def _foreign(name: str) -> bool:
    """An SSE ``event:`` name outside the API's typed events (``response.*``, ``error``): unknown
    events are to be ignored, even when their data is not the API's JSON."""
    return bool(name) and name != "message" and name != "error" and not name.startswith("response.")


# ---------------------------------------------------------------- reading a response object


def _api_error(data: dict[str, Any]) -> str:
    return error_message({"error": data.get("error")}) or "no reason given"


def secret_list(secrets: list[str] | None) -> list[str]:
    return secret_values() if secrets is None else secrets


def _answer_chars(output: list[Any]) -> int:
    """Characters of answer text in the output (what a note would hold), before any cleaning."""
    return sum(
        len(part["text"])
        for item in output
        if isinstance(item, dict) and item.get("type") == "message" and isinstance(item.get("content"), list)
        for part in item["content"]
        if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str)
    )


def read_response(
    data: Any,
    *,
    requests: int = 1,
    model: str = "",
    max_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    secrets: list[str] | None = None,
) -> WriterResponse:
    """An Agent API response object as a :class:`WriterResponse`; ``status`` decides.

    Every string is cleaned here, where it enters (``secrets``: the keys to redact,
    default every known key); the raw object kept for the store is cleaned too."""
    if not isinstance(data, dict):
        raise WriterError("malformed", 200, "the writer's answer is JSON but not an object", requests=requests)
    status = data.get("status")
    if status is None and data.get("error"):  # an error envelope where a response was expected
        status = "failed"
    if status in ("failed", "cancelled"):
        kind: Any = status
        raise WriterError(kind, 200, f"the writer's run {status}: {_api_error(data)}", requests=requests)
    if status not in ("completed", "incomplete"):
        shown = f"status {status!r}" if isinstance(status, str) else "no status"
        raise WriterError(
            "malformed", 200, f"the writer's answer is not a finished response ({shown})", requests=requests
        )
    output = data.get("output")
    if not isinstance(output, list):
        raise WriterError("malformed", 200, "the writer's answer has no output list", requests=requests)
    chars = _answer_chars(output)
    if chars > max_chars:
        raise answer_too_long(chars, max_chars, requests)
    keys = secret_list(secrets)
    items: list[Any] = []
    for item in output:
        if isinstance(item, dict) and item.get("type") == "search_results":
            results = item.get("results")
            if isinstance(results, list):
                items += results
    web = read_results(items, secrets=keys)
    assembled = assemble(output, web, keys)
    text = assembled.text
    warnings = cleaning_notices(tainted(data, keys)) + list(web.warnings) + assembled.notes
    truncated: str | None = None
    if status == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        truncated = reason if isinstance(reason, str) and reason else "unknown reason"
        warnings.append(
            f"writer: the answer is incomplete ({truncated}) — the API cut it off, so the section may end mid-sentence"
        )
    if not text.strip():
        what = f"was cut off before any text ({truncated})" if truncated else "returned an empty answer"
        raise WriterError("malformed", 200, f"the writer {what}", requests=requests)
    raw: dict[str, Any] = clean_tree(data, secrets=keys)  # type: ignore[assignment]  # a dict stays a dict
    usage: dict[str, Any] = raw["usage"] if isinstance(raw.get("usage"), dict) else {}
    warnings += cost_notices(usage) + depth_notices(data)
    served = data.get("model")
    return WriterResponse(
        content=text,
        web=web,
        usage=usage,
        cost_dollars=cost_of(usage),
        model=clean_text(served, secrets=keys) if isinstance(served, str) and served else model,
        raw=raw,
        requests=requests,
        truncated=truncated,
        warnings=warnings,
        annotations=assembled.records,
        offset_unit=assembled.unit,
    )


# ---------------------------------------------------------------- folding a stream


class _StreamFolder:
    """Typed events → one response object; stops at the one terminal."""

    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.items: list[Any] = []  # finished output items, in order
        self.snapshot_obj: dict[str, Any] | None = None
        self.terminal: str | None = None
        self.events = 0
        self.chars = 0  # characters of text folded so far (joining the deltas each time would be quadratic)
        self.text_changed = False

    @property
    def text(self) -> str:
        return "".join(self.deltas)

    def feed(self, data: str) -> bool:
        """One event's data; True when it was the terminal."""
        self.text_changed = False
        try:
            event = json.loads(data)
        except (json.JSONDecodeError, RecursionError):
            raise WriterError("malformed", 200, "the writer's stream contained an event that is not JSON") from None
        if not isinstance(event, dict):
            raise WriterError("malformed", 200, "the writer's stream contained an event that is not a JSON object")
        self.events += 1
        kind = event.get("type")
        if kind == "response.output_text.delta" and isinstance(event.get("delta"), str):
            self.deltas.append(event["delta"])
            self.chars += len(event["delta"])
            self.text_changed = bool(event["delta"])
        elif kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            self.items.append(event["item"])
        elif kind in TERMINALS:
            self.terminal = kind
            snapshot = event.get("response")
            self.snapshot_obj = snapshot if isinstance(snapshot, dict) else None
            if kind == "error" or kind == "response.failed" or kind == "response.cancelled":
                status = "cancelled" if kind == "response.cancelled" else "failed"
                error = event.get("error") or (self.snapshot_obj or {}).get("error")
                if kind == "error" and not error:
                    error = {"message": event.get("message") or "the stream reported an error"}
                self.snapshot_obj = {**(self.snapshot_obj or {}), "status": status, "error": error}
            return True
        return False

    def snapshot(self, chars: int) -> dict[str, Any]:
        if self.terminal is None:
            raise WriterError(
                "network",
                None,
                f"the writer's stream ended without a final event after {chars} characters; the answer is incomplete",
            )
        snap = dict(self.snapshot_obj or {})
        snap.setdefault("status", "incomplete" if self.terminal == "response.incomplete" else "completed")
        given = snap.get("output")
        output: list[Any] = list(given) if isinstance(given, list) and given else list(self.items)
        if not any(isinstance(i, dict) and i.get("type") == "message" for i in output):
            # A terminal whose snapshot lacks the answer: the streamed text is the answer.
            output = [*output, {"type": "message", "content": [{"type": "output_text", "text": self.text}]}]
        snap["output"] = output
        return snap
