"""The fault matrix's rows as data: a ``Case`` names a hostile answer, the command and what must hold.

Shared by ``tests/test_fault_matrix.py`` (which runs every row) and the modules that add
rows (``tests/fault_cases_issue20.py``): the reply builders for Exa's, the Agent API's and
chat completions' shapes, and the one good Exa answer a baseline memo is built from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.hostile_server import Reply

JSON = (("Content-Type", "application/json"),)
HTML = (("Content-Type", "text/html; charset=utf-8"),)
SSE = (("Content-Type", "text/event-stream"),)


def _exa(results: list[Any], **extra) -> bytes:
    body = {"requestId": "r-1", "results": results, "costDollars": {"total": 0.005}, **extra}
    return json.dumps(body, ensure_ascii=False).encode()


GOOD_RESULTS = [
    {
        "url": "https://acme-robotics.io/about",
        "title": "About Acme Robotics",
        "summary": "Acme Robotics builds warehouse robots. It was founded in 2019.",
        "publishedDate": "2024-03-01",
    },
    {
        "url": "https://acme-robotics.io/blog/funding",
        "title": "Acme raises a Series A",
        "summary": "Acme Robotics raised $12M in a Series A round.",
    },
]
GOOD = Reply(body=_exa(GOOD_RESULTS), headers=JSON)


@dataclass(frozen=True)
class Case:
    id: str
    service: str  # "exa" | "writer" | "check"
    reply: Reply
    cause: str  # a phrase some warning (or the URL row's detail) must contain, case-insensitive
    exit_code: int = 0
    command: str = "retrieve"  # "retrieve" | "run" (exa, writer) — check rows run check-urls
    degraded: bool = True  # exa: the section could not use this answer; writer: no new note is expected
    status: str | None = None  # check: the URL row's status
    extra_s: float = 0.0  # a case that legitimately waits (Retry-After)
    settings: tuple[tuple[str, str], ...] = ()  # SOURCEDESK_* settings of this row
    web_search: bool = False  # writer: the section lets the writer search the web (its results matter)
    note_has: str = ""  # writer: text the new note must contain
    absent: tuple[str, ...] = ()  # text that must reach no output at all (stdout, stderr, the log, any file)
    peak_mb: float | None = None  # the most memory (MB, Python allocations) the command may take at its peak


STREAM = (("SOURCEDESK_WRITER_STREAM", "true"),)
# A row that waits out a 1 s Retry-After: its deadline has room for the wait and both tries on a
# busy machine (the 1.5 s one left half a second, and a slow first try made the retry not start).
WAITS = (("SOURCEDESK_RETRIEVAL_DEADLINE_S", "6"), ("SOURCEDESK_WRITER_DEADLINE_S", "6"))
SONAR = (("SOURCEDESK_WRITER_API", "perplexity-sonar"),)
ANSWER = "Acme Robotics builds warehouse robots for retailers. [^E1] It raised a Series A in 2024. [^E2]"
WEB_RESULTS = [
    {"id": 1, "url": "https://acme-robotics.io/about", "title": "About Acme", "snippet": "Warehouse robots."},
    {"id": 2, "url": "https://news.example/acme-series-a", "title": "Acme raises", "snippet": "A Series A."},
]


def _agent(text: str = ANSWER, *, status: str = "completed", results=None, annotations=None, **extra) -> bytes:
    """An Agent API response object."""
    output: list = []
    if results is not None:
        output.append({"type": "search_results", "results": results})
    part = {"type": "output_text", "text": text, "annotations": annotations or []}
    output.append({"type": "message", "role": "assistant", "content": [part]})
    body: dict[str, Any] = {"id": "resp_1", "object": "response", "status": status, "model": "perplexity/sonar"}
    body["output"] = output
    body["usage"] = {"input_tokens": 10, "output_tokens": 20, "cost": {"total_cost": 0.002}}
    return json.dumps({**body, **extra}, ensure_ascii=False).encode()


def _events(*events: dict) -> bytes:
    return b"".join(b"data: " + json.dumps(e, ensure_ascii=False).encode() + b"\n\n" for e in events)


def _agent_stream(*deltas: str, terminal: str | None = "response.completed") -> bytes:
    """Typed Agent API events: the deltas, then the terminal (without the answer: it is rebuilt)."""
    events: list[dict[str, Any]] = [{"type": "response.created"}]
    events += [{"type": "response.output_text.delta", "delta": d} for d in deltas]
    if terminal == "response.failed":
        events.append({"type": terminal, "response": {"status": "failed", "error": {"message": "model overloaded"}}})
    elif terminal:
        events.append({"type": terminal, "response": {"status": "completed", "model": "perplexity/sonar"}})
    return _events(*events)


def _chat(content: str = ANSWER, **extra) -> bytes:
    """A chat completion (the legacy Sonar path)."""
    body = {
        "id": "c-1",
        "model": "sonar-pro",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "cost": {"total_cost": 0.002}},
    }
    return json.dumps({**body, **extra}, ensure_ascii=False).encode()


def _writer_error(message: str, param: str | None = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error", "param": param}}).encode()
