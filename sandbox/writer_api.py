"""The sandbox's Perplexity-style writer: ``POST /chat/completions``.

Speaks the real API's shapes (testdata/api/perplexity-*): Bearer auth with an
HTML 401 page, ``{"error": {"message", "type", "code"}}`` 400 bodies, the
recorded response layout (``citations``, ``search_results``, ``usage.cost``),
and SSE streaming where the search results, citations and usage arrive only on
the final chunk. The server around it applies latency, faults and counters.

Request fields understood (everything else is accepted and ignored, as the real
API does with unknown knobs):

- ``model``: sonar, sonar-pro, sonar-reasoning, sonar-reasoning-pro,
  sonar-deep-research. The reasoning models open their answer with a
  ``<think>…</think>`` block, as the real ones do.
- ``messages``: system/user/assistant; after the system messages, user and
  assistant alternate and the last one is the user's.
- ``search_domain_filter``: ≤ 20 domains/URLs, all allow or all ``-``deny.
- ``disable_search: true`` (Perplexity's switch for "no web search"): empty
  ``search_results``/``citations``; the prose cites only retrieved markers.
  ``web_search_options.search_context_size`` (low/medium/high) is echoed in
  ``usage`` and prices the request.
- ``stream: true``: SSE. ``data: [DONE]`` ends the stream unless the request
  carries the header ``x-sandbox-no-done: 1`` (or ``"sandbox_no_done": true``):
  real full-mode recordings (testdata 2024 .sse) end without it, and a client
  must cope with both.
- ``max_tokens``: the answer is cut there with ``finish_reason: "length"``.
- sandbox only: ``"sandbox_citation_mode": "field" | "clean"`` (or the header
  ``x-sandbox-citation-mode``); default ``field`` (see ``sourcedesk.sandbox.writer_prose``).

Non-standard response field ``sandbox_truth`` records the class of every
citation in the raw answer (real clients ignore unknown fields).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import uuid
from collections.abc import Iterator
from typing import Any

from sourcedesk.core.domain import clock
from sourcedesk.sandbox.http import Reply, Request, SandboxContext, html_reply, json_reply, key_accepted
from sourcedesk.sandbox.writer_judge import is_judge, judge_answer
from sourcedesk.sandbox.writer_prompt import ParsedPrompt, parse_prompt
from sourcedesk.sandbox.writer_prose import compose
from sourcedesk.sandbox.writer_search import FilterError, own_search, parse_domain_filter, search_result
from sourcedesk.sandbox.writer_truth import recount

MODEL_DOCS = "https://docs.perplexity.ai/guides/model-cards"
# USD per million input/output tokens, and per request by search context size (per-1000 price / 1000).
PRICING: dict[str, tuple[float, float, dict[str, float]]] = {
    "sonar": (1.0, 1.0, {"low": 0.005, "medium": 0.008, "high": 0.012}),
    "sonar-pro": (3.0, 15.0, {"low": 0.006, "medium": 0.010, "high": 0.014}),
    "sonar-reasoning": (1.0, 5.0, {"low": 0.005, "medium": 0.008, "high": 0.012}),
    "sonar-reasoning-pro": (2.0, 8.0, {"low": 0.006, "medium": 0.010, "high": 0.014}),
    "sonar-deep-research": (2.0, 8.0, {"low": 0.005, "medium": 0.005, "high": 0.005}),
}
MODELS = tuple(PRICING)
REASONING_MODELS = ("sonar-reasoning", "sonar-reasoning-pro", "sonar-deep-research")
CONTEXT_SIZES = ("low", "medium", "high")
MODES = ("field", "clean")

UNAUTHORIZED_HTML = """<html>
<head><title>401 Authorization Required</title></head>
<body>
<center><h1>401 Authorization Required</h1></center>
<hr><center>openresty/1.27.1.1</center>
</body>
</html>
"""


class BadRequest(Exception):
    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.message, self.kind = message, kind


def error_reply(message: str, kind: str, status: int = 400) -> Reply:
    return json_reply(status, {"error": {"message": message, "type": kind, "code": status}})


def bearer(req: Request) -> str | None:
    auth = req.headers.get("authorization", "").strip()
    if auth[:7].lower() != "bearer ":
        return None
    return auth[7:].strip() or None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise BadRequest("messages: content must be a string or a list of content parts", "invalid_message")


def _check_messages(messages: Any) -> list[dict[str, str]]:
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: field required (a non-empty list of messages)", "invalid_message")
    checked: list[dict[str, str]] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in ("system", "user", "assistant"):
            raise BadRequest(f"messages[{i}]: role must be one of system, user, assistant", "invalid_message")
        if "content" not in msg:
            raise BadRequest(f"messages[{i}]: content is required", "invalid_message")
        checked.append({"role": msg["role"], "content": _content_text(msg["content"])})
    roles = [m["role"] for m in checked]
    rest = roles[next((i for i, r in enumerate(roles) if r != "system"), len(roles)) :]
    expected = "user"
    for role in rest:
        if role != expected:
            raise BadRequest(
                "After the (optional) system message(s), user and assistant roles should be alternating.",
                "invalid_message",
            )
        expected = "assistant" if role == "user" else "user"
    if not rest or rest[-1] != "user":
        raise BadRequest("Last message must have role `user`.", "invalid_message")
    return checked


def _options(body: dict[str, Any], req: Request) -> dict[str, Any]:
    model = body.get("model")
    if not isinstance(model, str) or model not in PRICING:
        shown = model if isinstance(model, str) else json.dumps(model)
        raise BadRequest(
            f"Invalid model '{shown}'. Permitted models can be found in the documentation at {MODEL_DOCS}.",
            "invalid_model",
        )
    messages = _check_messages(body.get("messages"))
    try:
        domain_filter = parse_domain_filter(body.get("search_domain_filter"))
    except FilterError as exc:
        raise BadRequest(str(exc), "invalid_parameter") from None
    mode = body.get("sandbox_citation_mode") or req.headers.get("x-sandbox-citation-mode") or "field"
    if mode not in MODES:
        raise BadRequest(f"sandbox_citation_mode must be one of {', '.join(MODES)}", "invalid_parameter")
    wso = body.get("web_search_options")
    size = wso.get("search_context_size") if isinstance(wso, dict) else None
    max_tokens = body.get("max_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        raise BadRequest("max_tokens must be a positive integer", "invalid_parameter")
    no_done = body.get("sandbox_no_done") is True or req.headers.get("x-sandbox-no-done", "").strip() in ("1", "true")
    return {
        "model": model,
        "messages": messages,
        "filter": domain_filter,
        "mode": mode,
        "search": body.get("disable_search") is not True,
        "context_size": size if size in CONTEXT_SIZES else "low",
        "stream": body.get("stream") is True,
        "max_tokens": max_tokens,
        "no_done": no_done,
    }


# "Today's date is 2026-12-02." / "Current date: …": how a prompt tells a model the day.
_DATE_STATEMENT = re.compile(r"(?i)\b(?:today'?s|the current|current) date(?:\s+is|\s*:)\s*[^\n.]*\.?")


def digest(seed: int, asked: str) -> str:
    """The key every choice of an answer is drawn from: the server's seed and what the request
    asks (the user's part of the prompt: subject, sources, the section's questions), never the
    day. The system part carries the rules and today's date, so the same section with the same
    sources is written the same way on any date; a date written into the user's part is left
    out too."""
    payload = json.dumps([seed, _DATE_STATEMENT.sub("", asked)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def search_query(parsed: ParsedPrompt, last_user: str) -> str:
    words = " ".join(filter(None, [parsed.subject, *parsed.aliases, parsed.section_title]))
    return words or " ".join(last_user.split()[:30])


def _think(parsed: ParsedPrompt) -> str:
    title = parsed.section_title or "this section"
    return (
        f'<think>\nThe user wants the "{title}" section about {parsed.subject_name}. '
        "I should use the provided sources first, then my search results, and cite each claim.\n"
        "</think>\n\n"
    )


def truncate(content: str, max_tokens: int | None) -> tuple[str, str]:
    if max_tokens is None or tokens(content) <= max_tokens:
        return content, "stop"
    cut = content[: max_tokens * 4]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut), "length"


def tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def _usage(model: str, prompt_tokens: int, completion_tokens: int, context_size: str) -> dict[str, Any]:
    per_in, per_out, per_request = PRICING[model]
    input_cost = round(prompt_tokens * per_in / 1_000_000, 3)
    output_cost = round(completion_tokens * per_out / 1_000_000, 3)
    request_cost = per_request[context_size]
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "search_context_size": context_size,
        "cost": {
            "input_tokens_cost": input_cost,
            "output_tokens_cost": output_cost,
            "request_cost": request_cost,
            "total_cost": round(input_cost + output_cost + request_cost, 3),
        },
    }


def answer(opts: dict[str, Any], ctx: SandboxContext) -> dict[str, Any]:
    """The complete (non-streamed) response body for validated options."""
    messages = opts["messages"]
    key = digest(ctx.seed, "\n\n".join(m["content"] for m in messages if m["role"] == "user"))
    prompt_text = "\n\n".join(m["content"] for m in messages if m["role"] in ("system", "user"))
    last_user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    parsed = parse_prompt(prompt_text)

    results: list[dict[str, Any]] = []
    if is_judge(prompt_text):  # sourcedesk's model judge: its JSON answer, no search, no prose
        content, finish = truncate(judge_answer(prompt_text), opts["max_tokens"])
        truth: dict[str, Any] = {"judge": True, "citations": [], "search_enabled": False}
    else:
        if opts["search"]:
            limit = random.Random(key + ":search").randint(5, 8)
            query = search_query(parsed, last_user)
            pages = own_search(query, ctx.pages, opts["filter"], limit)
            results = [
                search_result(p, int(hashlib.sha256((key + p.url).encode()).hexdigest()[:8], 16), query) for p in pages
            ]
        composition = compose(
            parsed,
            results,
            corpus=ctx.pages,
            mode=opts["mode"],
            search_enabled=opts["search"],
            rng=random.Random(key + ":prose"),
        )
        content = composition.content
        if opts["model"] in REASONING_MODELS:
            content = _think(parsed) + content
        content, finish = truncate(content, opts["max_tokens"])
        truth = dict(composition.truth)
        truth["citations"] = recount(truth["citations"], content)
        truth["search_enabled"] = opts["search"]
    return {
        "id": str(uuid.uuid4()),
        "model": opts["model"],
        "created": int(clock.timestamp()),
        "usage": _usage(opts["model"], tokens(prompt_text), tokens(content), opts["context_size"]),
        "citations": [r["url"] for r in results],
        "search_results": results,
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": content},
                "delta": {"role": "assistant", "content": ""},
            }
        ],
        "sandbox_truth": truth,
    }


def _pieces(content: str) -> list[str]:
    words = re.findall(r"\s*\S+", content)
    return ["".join(words[i : i + 4]) for i in range(0, len(words), 4)] or [""]


def stream_events(full: dict[str, Any], *, done: bool) -> Iterator[bytes]:
    """SSE chunks: content deltas (with the running message), then one final chunk carrying
    finish_reason, usage, citations and search_results; then ``data: [DONE]`` unless told not to."""
    head = {"id": full["id"], "model": full["model"], "created": full["created"]}
    content = full["choices"][0]["message"]["content"]
    sofar = ""
    for piece in _pieces(content):
        sofar += piece
        chunk = {
            **head,
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": None,
                    "message": {"role": "assistant", "content": sofar},
                    "delta": {"role": "assistant", "content": piece},
                }
            ],
        }
        yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
    final = {
        **head,
        "object": "chat.completion.chunk",
        "usage": full["usage"],
        "citations": full["citations"],
        "search_results": full["search_results"],
        "choices": [
            {
                "index": 0,
                "finish_reason": full["choices"][0]["finish_reason"],
                "message": {"role": "assistant", "content": content},
                "delta": {"role": "assistant", "content": ""},
            }
        ],
        "sandbox_truth": full["sandbox_truth"],
    }
    yield f"data: {json.dumps(final, ensure_ascii=False)}\n\n".encode()
    if done:
        yield b"data: [DONE]\n\n"


def handle(req: Request, ctx: SandboxContext) -> Reply:
    if not key_accepted(bearer(req), ctx.api_keys.get("writer")):
        return html_reply(401, UNAUTHORIZED_HTML)
    try:
        body = req.json()
    except ValueError as exc:
        return error_reply(str(exc), "invalid_request_error")
    if not isinstance(body, dict):
        return error_reply("request body must be a JSON object", "invalid_request_error")
    try:
        opts = _options(body, req)
    except BadRequest as exc:
        return error_reply(exc.message, exc.kind)
    full = answer(opts, ctx)
    if opts["stream"]:
        return Reply(
            200,
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
            stream=stream_events(full, done=not opts["no_done"]),
        )
    return json_reply(200, full)
