"""The sandbox's Perplexity Agent API: ``POST /v1/agent`` (and ``/v1/responses``), JSON or SSE.

It speaks the shapes Perplexity documents for the Agent API and keeps its quirks:

- **strict bodies** — any unknown field, top-level or nested, is HTTP 400
  ``{"error": {"message", "type": "invalid_request", "code": 400, "param"}}``
  naming the field (nested ones as a path: ``tools[0].filters.search_mode``);
- **search only through a tool** — ``tools: [{"type": "web_search", "filters":
  {"search_domain_filter": […]}}]`` or a preset (which bundles it); a bare model
  answers without searching;
- **``status`` decides** — the faults ``failed``/``cancelled`` answer HTTP 200
  with that status and an ``error``; ``incomplete`` (or a ``max_output_tokens``
  the answer exceeds) cuts the text with ``incomplete_details.reason``;
- **ground truth in ``search_results`` output items** — sometimes split over
  two items (two queries), result ``id``s numbering the whole answer 1…n, which
  is what the prose's ``[N]`` markers mean;
- **annotations** — ``url_citation`` spans (code-point offsets into the part's
  text) on some answers, empty on others; some cited spans carry only the
  annotation and no ``[N]`` marker;
- **SSE** — ``data: <one-line JSON>`` events with ``type`` and
  ``sequence_number``, blank keep-alive lines between some of them, an unknown
  event type now and then, no ``[DONE]``, exactly one terminal (or a bare
  ``error`` with the ``stream-error`` fault).

The prose and its field-mode citation faults come from the chat-completions
writer (``sourcedesk.sandbox.writer_prose``), so both endpoints fabricate alike.
Non-standard top-level ``sandbox_truth`` records every raw citation's class.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import uuid
from collections.abc import Iterator
from typing import Any

from sourcedesk.core.domain import clock
from sourcedesk.sandbox.http import Reply, Request, SandboxContext, json_reply, key_accepted
from sourcedesk.sandbox.writer_api import MODES, bearer, digest, search_query, tokens, truncate
from sourcedesk.sandbox.writer_judge import is_judge, judge_answer
from sourcedesk.sandbox.writer_prompt import parse_prompt
from sourcedesk.sandbox.writer_prose import compose
from sourcedesk.sandbox.writer_search import DomainFilter, FilterError, own_search, parse_domain_filter, search_result
from sourcedesk.sandbox.writer_truth import recount

MODELS = ("perplexity/sonar", "openai/gpt-5.1", "anthropic/claude-sonnet-4-5", "google/gemini-3-flash-preview")
PRESETS = {
    "fast": "perplexity/sonar",
    "low": "perplexity/sonar",
    "medium": "openai/gpt-5.1",
    "high": "openai/gpt-5.1",
    "xhigh": "anthropic/claude-sonnet-4-5",
}
PRESET_ALIASES = {
    "fast-search": "fast",
    "pro-search": "low",
    "deep-research": "medium",
    "advanced-deep-research": "high",
}
TOP_LEVEL = frozenset(
    {
        "input",
        "instructions",
        "model",
        "models",
        "preset",
        "tools",
        "tool_choice",
        "max_output_tokens",
        "temperature",
        "top_p",
        "stream",
        "stream_options",
        "reasoning",
        "response_format",
        "max_steps",
        "max_tool_calls",
        "language_preference",
        "metadata",
        "store",
        "truncation",
        "background",
        "previous_response_id",
        "parallel_tool_calls",
    }
)
WEB_SEARCH_TOOL = frozenset(
    {"type", "filters", "max_results", "max_tokens", "max_tokens_per_page", "search_context_size", "user_location"}
)
FILTERS = frozenset(
    {
        "search_domain_filter",
        "search_recency_filter",
        "search_after_date_filter",
        "search_before_date_filter",
        "last_updated_after_filter",
        "last_updated_before_filter",
    }
)
OUTCOME_FAULTS = ("failed", "cancelled", "incomplete", "stream-error")
# USD per million tokens for perplexity/sonar, and per web search call.
PRICE_IN, PRICE_OUT, PRICE_SEARCH = 1.0, 1.0, 0.005


class BadRequest(Exception):
    def __init__(self, message: str, kind: str = "invalid_request", param: str | None = None):
        super().__init__(message)
        self.message, self.kind, self.param = message, kind, param


def error_reply(status: int, message: str, kind: str, param: str | None = None) -> Reply:
    error: dict[str, Any] = {"message": message, "type": kind, "code": status}
    if param is not None:
        error["param"] = param
    return json_reply(status, {"error": error})


def _unknown(obj: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    for key in obj:
        if key not in allowed:
            raise BadRequest(f'invalid request body: json: unknown field "{key}"', param=f"{where}{key}")


# ---------------------------------------------------------------- the request


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise BadRequest(f"input[{i}] must be an object with role and content", param=f"input[{i}]")
            _unknown(item, frozenset({"role", "content", "type"}), f"input[{i}].")
            content = item.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n\n".join(parts)
    raise BadRequest("input is required: a string or a list of input items", param="input")


def _tools(value: Any) -> tuple[bool, DomainFilter]:
    """(search enabled, the domain filter) from ``tools``; 400 for anything unknown."""
    if value is None:
        return False, DomainFilter("none")
    if not isinstance(value, list):
        raise BadRequest("tools must be a list of tool objects", param="tools")
    search, domain_filter = False, DomainFilter("none")
    for i, tool in enumerate(value):
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise BadRequest(f"tools[{i}] needs a type", param=f"tools[{i}].type")
        if tool["type"] != "web_search":
            raise BadRequest(f"tools[{i}]: the sandbox serves only the web_search tool", param=f"tools[{i}].type")
        _unknown(tool, WEB_SEARCH_TOOL, f"tools[{i}].")
        filters = tool.get("filters")
        if filters is not None:
            if not isinstance(filters, dict):
                raise BadRequest(f"tools[{i}].filters must be an object", param=f"tools[{i}].filters")
            _unknown(filters, FILTERS, f"tools[{i}].filters.")
            try:
                domain_filter = parse_domain_filter(filters.get("search_domain_filter"))
            except FilterError as exc:
                raise BadRequest(
                    str(exc), "invalid_search_domain_filter", f"tools[{i}].filters.search_domain_filter"
                ) from None
            for entry in filters.get("search_domain_filter") or []:
                if "://" in entry:
                    raise BadRequest(
                        f"search_domain_filter entries are scheme-less domains, got {entry!r}",
                        "invalid_search_domain_filter",
                        f"tools[{i}].filters.search_domain_filter",
                    )
        search = True
    return search, domain_filter


def _tool_choice(value: Any) -> None:
    if value is None or value in ("none", "auto", "required"):
        return
    if isinstance(value, dict):
        _unknown(value, frozenset({"type", "name"}), "tool_choice.")
        if value.get("type") in ("web_search", "required") or isinstance(value.get("name"), str):
            return
    raise BadRequest("tool_choice must be none, auto, required or {type: web_search}", param="tool_choice")


def options(body: dict[str, Any], req: Request) -> dict[str, Any]:
    _unknown(body, TOP_LEVEL, "")
    preset = body.get("preset")
    model = body.get("model")
    if preset is not None:
        if not isinstance(preset, str) or PRESET_ALIASES.get(preset, preset) not in PRESETS:
            raise BadRequest(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}", "invalid_parameter", "preset")
        preset = PRESET_ALIASES.get(preset, preset)
    if model is not None and (not isinstance(model, str) or model not in MODELS):
        shown = model if isinstance(model, str) else json.dumps(model)
        raise BadRequest(
            f"invalid model '{shown}': Agent API models are provider/model slugs such as perplexity/sonar",
            "invalid_model",
            "model",
        )
    if preset is None and model is None:
        raise BadRequest("either model or preset is required", "invalid_request", "model")
    search, domain_filter = _tools(body.get("tools"))
    _tool_choice(body.get("tool_choice"))
    max_out = body.get("max_output_tokens")
    if max_out is not None and (not isinstance(max_out, int) or isinstance(max_out, bool) or max_out < 1):
        raise BadRequest("max_output_tokens must be a positive integer", "invalid_parameter", "max_output_tokens")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise BadRequest("instructions must be a string", "invalid_parameter", "instructions")
    mode = req.headers.get("x-sandbox-citation-mode") or "field"
    if mode not in MODES:
        raise BadRequest(f"x-sandbox-citation-mode must be one of {', '.join(MODES)}", "invalid_parameter")
    return {
        "model": model or PRESETS[str(preset)],
        "preset": preset,
        "instructions": instructions or "",
        "input": _input_text(body.get("input")),
        "search": search or preset is not None,  # a preset bundles its own web search
        "filter": domain_filter,
        "max_output_tokens": max(16, max_out) if max_out is not None else None,  # the API floors it at 16
        "stream": body.get("stream") is True,
        "mode": mode,
    }


# ---------------------------------------------------------------- the answer


_NUMERIC = re.compile(r"(?<!\^)\[(\d{1,3})\]")


def _annotate(content: str, results: list[dict[str, Any]], rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    """Turn some in-range ``[N]`` markers into ``url_citation`` annotations over their sentence.

    About a third of the annotated spans lose their ``[N]`` (the binding is only in the
    annotation); the rest keep it. Offsets are code points into the returned text."""
    pieces: list[str] = []
    annotations: list[dict[str, Any]] = []
    last = 0
    for m in _NUMERIC.finditer(content):
        n = int(m.group(1))
        if not 1 <= n <= len(results) or rng.random() < 0.4:
            continue
        before = content[last : m.start()]
        drop = rng.random() < 0.35
        if drop:
            before = before.rstrip(" ")
        pieces.append(before)
        text_so_far = "".join(pieces)
        span_end = len(text_so_far.rstrip(" "))
        cut = max(text_so_far.rfind(". ", 0, span_end - 1), text_so_far.rfind("\n", 0, span_end - 1))
        span_start = cut + 2 if cut >= 0 and text_so_far[cut] == "." else cut + 1
        if not drop:
            pieces.append(m.group(0))
        r = results[n - 1]
        annotations.append(
            {
                "type": "url_citation",
                "url": r["url"],
                "title": r["title"],
                "start_index": span_start,
                "end_index": span_end,
            }
        )
        last = m.end()
    pieces.append(content[last:])
    return "".join(pieces), annotations


def _usage(prompt_text: str, content: str, searches: int) -> dict[str, Any]:
    input_tokens, output_tokens = tokens(prompt_text), tokens(content)
    input_cost = round(input_tokens * PRICE_IN / 1_000_000, 6)
    output_cost = round(output_tokens * PRICE_OUT / 1_000_000, 6)
    tool_cost = round(searches * PRICE_SEARCH, 6)
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
        "cost": {
            "input_cost": input_cost,
            "output_cost": output_cost,
            "tool_calls_cost": tool_cost,
            "total_cost": round(input_cost + output_cost + tool_cost, 6),
            "currency": "USD",
        },
    }


def answer(opts: dict[str, Any], ctx: SandboxContext, *, fault: str | None = None) -> dict[str, Any]:
    """The complete response object for validated options (``fault`` forces an outcome)."""
    key = digest(ctx.seed, opts["input"])
    prompt_text = "\n\n".join(p for p in (opts["instructions"], opts["input"]) if p)
    parsed = parse_prompt(prompt_text)
    rng = random.Random(key + ":agent")
    results: list[dict[str, Any]] = []
    queries: list[str] = []
    if opts["search"]:
        limit = random.Random(key + ":search").randint(5, 8)
        query = search_query(parsed, opts["input"])
        queries = [query]
        pages = own_search(query, ctx.pages, opts["filter"], limit)
        results = [
            {"id": i, **search_result(p, int(hashlib.sha256((key + p.url).encode()).hexdigest()[:8], 16), query)}
            for i, p in enumerate(pages, 1)
        ]
    base_truth: dict[str, Any]
    if is_judge(prompt_text):  # sourcedesk's model judge: its JSON answer, no prose
        content, base_truth = judge_answer(prompt_text), {"judge": True, "citations": []}
    else:
        composition = compose(
            parsed,
            results,
            corpus=ctx.pages,
            mode=opts["mode"],
            search_enabled=opts["search"],
            rng=random.Random(key + ":prose"),
        )
        content, base_truth = composition.content, dict(composition.truth)
    reason: str | None = None
    if fault == "incomplete":
        content, reason = content[: max(40, len(content) // 2)].rsplit(" ", 1)[0], "max_output_tokens"
    elif opts["max_output_tokens"] is not None:
        content, finish = truncate(content, opts["max_output_tokens"])
        reason = "max_output_tokens" if finish == "length" else None
    annotations: list[dict[str, Any]] = []
    if results and rng.random() >= 0.35:  # about a third of answers come with empty annotations
        content, annotations = _annotate(content, results, rng)
    truth = base_truth
    truth["citations"] = recount(truth["citations"], content)
    truth["search_enabled"] = opts["search"]
    truth["annotations"] = len(annotations)
    output: list[dict[str, Any]] = []
    if results:
        split = len(results) // 2 if len(results) > 4 and rng.random() < 0.5 else len(results)
        for chunk, q in ((results[:split], queries[0]), (results[split:], queries[0] + " latest")):
            if chunk:
                output.append({"type": "search_results", "queries": [q], "results": chunk})
    status = "incomplete" if reason else "completed"
    error: dict[str, Any] | None = None
    if fault in ("failed", "cancelled", "stream-error"):
        status = "cancelled" if fault == "cancelled" else "failed"
        message = (
            "the run was cancelled" if fault == "cancelled" else "upstream model error: the model stopped responding"
        )
        error = {"message": message, "type": "internal_error" if status == "failed" else "cancelled", "code": 500}
    output.append(
        {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "status": status if status != "incomplete" else "completed",
            "content": [{"type": "output_text", "text": content, "annotations": annotations}],
        }
    )
    now = int(clock.timestamp())
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": now,
        "completed_at": now,
        "status": status,
        "model": opts["model"],
        "output": output,
        "usage": _usage(prompt_text, content, len(output) - 1),
        "error": error,
        "incomplete_details": {"reason": reason} if reason else None,
        "sandbox_truth": truth,
    }


# ---------------------------------------------------------------- streaming


def _pieces(content: str) -> list[str]:
    words = re.findall(r"\s*\S+", content)
    return ["".join(words[i : i + 5]) for i in range(0, len(words), 5)] or [""]


def stream_events(full: dict[str, Any], *, fault: str | None = None) -> Iterator[bytes]:
    """Typed events, blank keep-alive lines between some, one terminal; no ``[DONE]``."""
    seq = 0
    rng = random.Random(full["id"])

    def event(payload: dict[str, Any]) -> bytes:
        nonlocal seq
        seq += 1
        line = f"data: {json.dumps({**payload, 'sequence_number': seq}, ensure_ascii=False)}\n\n"
        return (line + ("\n" if rng.random() < 0.3 else "")).encode()

    shell = {k: v for k, v in full.items() if k not in ("output", "usage", "sandbox_truth")}
    yield event({"type": "response.created", "response": {**shell, "status": "in_progress", "output": []}})
    yield event({"type": "response.in_progress", "response": {**shell, "status": "in_progress", "output": []}})
    yield b"\n"  # a keep-alive before the search leg
    items = full["output"]
    for index, item in enumerate(items):
        if item["type"] == "search_results":
            yield event({"type": "response.reasoning.search_queries", "queries": item["queries"]})
            yield event({"type": "response.reasoning.search_results", "results": item["results"]})
            yield event({"type": "response.output_item.done", "output_index": index, "item": item})
    yield event({"type": "response.sandbox.unknown", "note": "an event type clients must ignore"})
    message = next((i for i in items if i["type"] == "message"), None)
    text = message["content"][0]["text"] if message else ""
    if message is not None:
        index = items.index(message)
        yield event({"type": "response.output_item.added", "output_index": index, "item": {**message, "content": []}})
        pieces = _pieces(text)
        for n, piece in enumerate(pieces):
            if fault == "stream-error" and n == len(pieces) // 2:
                yield event(
                    {
                        "type": "error",
                        "error": {"message": "stream interrupted: upstream connection reset", "code": 502},
                    }
                )
                return
            yield event(
                {
                    "type": "response.output_text.delta",
                    "item_id": message["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": piece,
                }
            )
        yield event(
            {
                "type": "response.output_text.done",
                "item_id": message["id"],
                "output_index": index,
                "content_index": 0,
                "text": text,
            }
        )
        yield event({"type": "response.output_item.done", "output_index": index, "item": message})
    if full["status"] == "failed":
        yield event({"type": "response.failed", "error": full["error"], "response": full})
    elif full["status"] == "cancelled":
        yield event({"type": "response.cancelled", "response": full})
    elif full["status"] == "incomplete":
        yield event({"type": "response.incomplete", "response": full})
    else:
        yield event({"type": "response.completed", "response": full})


# ---------------------------------------------------------------- the handler


def handle(req: Request, ctx: SandboxContext, fault: str | None = None) -> Reply:
    if not key_accepted(bearer(req), ctx.api_keys.get("writer")):
        return error_reply(401, "Invalid API key provided", "forbidden")
    try:
        body = req.json()
    except ValueError as exc:
        return error_reply(400, str(exc), "invalid_request")
    if not isinstance(body, dict):
        return error_reply(400, "request body must be a JSON object", "invalid_request")
    try:
        opts = options(body, req)
    except BadRequest as exc:
        return error_reply(400, exc.message, exc.kind, exc.param)
    full = answer(opts, ctx, fault=fault)
    if full["status"] in ("failed", "cancelled") and not opts["stream"]:
        full["output"] = []  # a failed run has no answer to give
    if opts["stream"]:
        return Reply(
            200,
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
            stream=stream_events(full, fault=fault),
        )
    return json_reply(200, full)
