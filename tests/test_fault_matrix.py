"""The fault matrix: every way a hostile server can answer, against the real CLI and clients.

Each row is one case — a ``Reply`` from ``tests.hostile_server`` (a real loopback
server), the command an analyst would type, and what must hold. For every row:

- the command ends at its deadline, not when the server would let it (short deadlines
  here: the settings are the product's, set tight; the wall-time bound is 10x the
  deadline, far below a 30 s stall or a minutes-long trickle), with the exit code the README documents (0 ok or
  degraded, 1 a section failed or a URL is a problem, 2 bad input, 130
  interrupted);
- a warning or detail names the cause;
- notes and the store are intact: the previous frozen set still loads, a note
  that was not rewritten is byte-identical, every stored file parses;
- no API key and no control character appears in any output — stdout, stderr,
  the log, the store (db.json and payloads), notes, quarantine files.

Adding a case is adding a row. The writer's rows run ``run`` against the hostile
server as the writer (Exa is the sandbox, and the frozen set is reused): on the
Agent API by default, streamed with ``writer_stream``, on the legacy Sonar path
with ``writer_api: perplexity-sonar``, and with the writer's own web search
where its search results matter.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
import tracemalloc
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path

import pytest

from sourcedesk.core.domain import clock
from sourcedesk.core.text.key_forms import key_spans
from sourcedesk.core.text.safety import UNSAFE_CHARACTER
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main
from tests.fault_cases import (
    ANSWER,
    GOOD,
    GOOD_RESULTS,
    HTML,
    JSON,
    SONAR,
    SSE,
    STREAM,
    WAITS,
    WEB_RESULTS,
    Case,
    _agent,
    _agent_stream,
    _chat,
    _events,
    _exa,
    _writer_error,
)
from tests.fault_cases_issue20 import ISSUE20_CHECK_CASES, ISSUE20_EXA_CASES, ISSUE20_WRITER_CASES
from tests.hostile_server import HostileServer, Reply

EXA_KEY = "exa-hostile-SECRET-key-7731"
WRITER_KEY = "pplx-hostile-SECRET-key-7731"
SECRETS = (EXA_KEY, WRITER_KEY)

REQUEST_S = 0.5  # request_timeout_s: one Exa request in all
RETRIEVAL_S = 1.5  # retrieval_deadline_s: one section's retrieval in all
WRITER_S = 1.5  # writer_deadline_s
CHECK_REQUEST_S = 0.5
CHECK_URL_S = 1.2
CAP = 64 * 1024  # exa_max_response_bytes, writer_max_response_bytes and check_max_page_bytes
ANSWER_CHARS = 20_000  # writer_max_answer_chars
HANG = 10  # a case taking 10x its deadline did not stop at it (every stall and trickle here is longer)

MEMO_YAML = """\
title: Acme Robotics — profile
subject: {name: Acme Robotics, url: https://acme-robotics.io}
writer: {web-search: false, target-words: 80}
sections:
  - id: overview
    title: Company overview
    questions: ["What does it do?"]
    include-sources:
      - provider: exa
        query: "{{subject}} overview"
        pin: none
        num-results: 3
"""

HOSTILE_TEXT = [
    {
        "url": "https://acme-robotics.io/about",
        "title": "Acme \x1b[2J\x1b]0;PWNED-TITLE\x07Robotics \u202eexe.pdf",
        "text": "line one\n\x1b]52;c;UFdORUQ=\x07line two\x9b31m",
        "highlights": ["\x1b]8;;http://evil.example/\x07click here\x1b]8;;\x07 \u2066isolated\u2069"],
        "summary": json.dumps({"founded_year": "2019\x1b[31m", "headquarters": "Berlin\u202e"}),
        "author": "Mallory\x07",
    },
    {
        "url": "https://acme-robotics.io/blog",
        "title": "Blog\x1bP1$r\x1b\\",
        "summary": "Posts \x9d0;x\x9c about robots.",
    },
]
REFLECTED = [
    {
        "url": "https://acme-robotics.io/about?token={key}",
        "title": "Acme Robotics {key}",
        "text": "Your key is {key}.",
        "highlights": ["key: {key}"],
        "summary": "Summary for {key}",
    },
    {"url": "https://acme-robotics.io/team", "title": "Team", "summary": '{"ceo": "{key}"}'},
]
MIXED_SHAPES = [
    "just a string",
    {"title": "no url"},
    {"url": None, "title": "null url"},
    {"url": "ftp://acme-robotics.io/x", "title": "not http"},
    {"url": "https://acme-robotics.io/\x1b[2Jevil", "title": "control characters in the URL"},
    {"url": "https://acme-robotics.io/about", "title": "The one good result"},
]


_DEEP = json.loads("[" * 600 + "]" * 600)  # deep enough to break a recursive walk, shallow enough to parse


def _rate_limited(retry_after: str | None) -> Reply:
    headers = (*JSON, ("Retry-After", retry_after)) if retry_after else JSON
    return Reply(status=429, body=b'{"error": "Rate limit exceeded", "tag": "RATE_LIMIT"}', headers=headers)


HOSTILE_ANSWER = (
    "Acme \x1b[2J\x1b]0;PWNED-TITLE\x07Robotics builds \u202ewarehouse\u202c robots. [^E1]\n"
    "\x1b]52;c;UFdORUQ=\x07It raised a Series A\x9b31m in 2024. [^E2]\x1b]8;;http://evil.example/\x07x\x1b]8;;\x07"
)
HOSTILE_RESULTS = [
    {
        "id": 1,
        "url": "https://acme-robotics.io/about\x1b[2J",
        "title": "About \x1b]0;PWNED\x07Acme",
        "snippet": "Robots\u202e.",
    },
    {"id": 2, "url": "https://news.example/acme", "title": "Acme \x9d0;x\x9c raises", "date": "2024\x07-01-01"},
]
REFLECTING_ANSWER = "Acme Robotics builds warehouse robots ({key}). [^E1] Its key is {key}. [^E2]"
REFLECTING_RESULTS = [
    {"id": 1, "url": "https://acme-robotics.io/about?token={key}", "title": "Acme {key}", "snippet": "key {key}"},
]
# The answer starts with a control sequence, then the annotated span: its offsets index the raw text.
_ANNOTATED = "\x1b]0;PWNED\x07\x1b[31mAcme Robotics builds warehouse robots\x1b[0m for retailers."
ANNOTATED_SPAN = (_ANNOTATED.index("Acme"), _ANNOTATED.index(" for retailers"))
ANNOTATIONS = [
    {
        "type": "url_citation",
        "url": "https://acme-robotics.io/about",
        "title": "About \x1b[2JAcme",
        "start_index": ANNOTATED_SPAN[0],
        "end_index": ANNOTATED_SPAN[1],
    }
]


# fmt: off
EXA_CASES = [
    Case("status-400", "exa", Reply(400, b'{"error": "numResults must be 1-100"}', JSON), "rejected the search request (400)"),
    Case("status-401", "exa", Reply(401, b'{"error": "Invalid API key"}', JSON), "rejected the API key (401)"),
    Case("status-402", "exa", Reply(402, b'{"error": "No more credits"}', JSON), "no credits left (402)"),
    Case("status-403", "exa", Reply(403, b'{"error": "Forbidden"}', JSON), "refused the request (403)"),
    Case("status-404", "exa", Reply(404, b"", JSON), "404"),
    Case("status-422", "exa", Reply(422, b'{"error": "bad field"}', JSON), "(422)"),
    Case("status-500", "exa", Reply(500, b'{"error": "Internal"}', JSON), "server error (500) after 2 attempts"),
    Case("status-502-html", "exa", Reply(502, b"<html><body><h1>502 Bad Gateway</h1></body></html>", HTML), "server error (502)"),
    Case("retry-after-seconds", "exa", Reply(503, b"{}", (*JSON, ("Retry-After", "1"))), "server error (503) after 2 attempts", extra_s=1.0, settings=WAITS),
    Case("retry-after-http-date", "exa", Reply(429, b"{}", (*JSON, ("Retry-After", "{http-date+1}"))), "rate-limiting", extra_s=1.0, settings=WAITS),
    Case("retry-after-huge", "exa", _rate_limited("86400"), "asked to retry after 86400 s"),
    Case("retry-after-absent", "exa", _rate_limited(None), "rate-limiting the search (429) after 2 attempts"),
    Case("html-body-200", "exa", Reply(200, b"<!doctype html><html><title>Maintenance</title></html>", HTML), "an HTML page"),
    Case("drip", "exa", Reply(body=_exa(GOOD_RESULTS), headers=JSON, drip_s=1.0), "trickling"),
    Case("stall-before-headers", "exa", Reply(body=_exa(GOOD_RESULTS), headers=JSON, stall_s=30), "stalled"),
    Case("stall-after-headers", "exa", Reply(body=_exa(GOOD_RESULTS), headers=JSON, stall_after_headers_s=30), "no body"),
    Case("reset-mid-body", "exa", Reply(body=_exa(GOOD_RESULTS), headers=JSON, reset_after=40), "broke off"),
    Case("truncated-json", "exa", Reply(body=_exa(GOOD_RESULTS)[:60], headers=JSON), "truncated or not JSON"),
    Case("length-lies", "exa", Reply(body=_exa(GOOD_RESULTS), headers=JSON, content_length=4000), "broke off"),
    Case("empty-body", "exa", Reply(body=b"", headers=JSON), "an empty body"),
    Case("oversized-streamed", "exa", Reply(body=_exa(GOOD_RESULTS * 2000), headers=JSON, chunked=True), "larger than the 64 KiB cap (exa_max_response_bytes)"),
    Case("oversized-announced", "exa", Reply(body=b"{}", headers=JSON, content_length=50 * 1024 * 1024), "it announced 50 MiB"),
    Case("non-utf8-body", "exa", Reply(body=b'{"results": [{"url": "https://acme-robotics.io/\xff\xfe", "title": "\xe9"}]}', headers=JSON), "not UTF-8"),
    Case("wrong-shape-object", "exa", Reply(body=b'{"data": []}', headers=JSON), "not with search results"),
    Case("wrong-shape-list", "exa", Reply(body=b'["results"]', headers=JSON), "not with search results"),
    Case("redirect", "exa", Reply(301, b"", (("Location", "https://elsewhere.example/search"),)), "redirect (301"),
    Case("redirect-loop", "exa", Reply(307, b"", (("Location", "/search"),)), "redirect (307"),
    Case("error-body-reflects-key", "exa", Reply(400, b'{"error": "bad request from key {key}"}', JSON), "[redacted]"),
    Case("control-sequences", "exa", Reply(body=_exa(HOSTILE_TEXT), headers=JSON), "control sequences", degraded=False),
    Case("reflected-key", "exa", Reply(body=_exa(REFLECTED), headers=JSON), "echoed the API key", degraded=False),
    Case("malformed-items", "exa", Reply(body=_exa(MIXED_SHAPES), headers=JSON), "without a usable URL", degraded=False),
    Case("run-drip", "exa", Reply(body=_exa(GOOD_RESULTS), headers=JSON, drip_s=1.0), "trickling", command="run"),
    Case("run-control-sequences", "exa", Reply(body=_exa(HOSTILE_TEXT), headers=JSON), "control sequences", command="run", degraded=False),
    Case("run-reflected-key", "exa", Reply(body=_exa(REFLECTED), headers=JSON), "echoed the API key", command="run", degraded=False),
    Case("deep-json", "exa", Reply(body=b'{"results": ' + b"[" * 5_000 + b"]" * 5_000 + b"}", headers=JSON), "nested too deeply to read"),
    Case("error-body-deep-json", "exa", Reply(400, b"[" * 5_000 + b"]" * 5_000, JSON), "rejected the search request (400)"),
    Case("run-deep-fields", "exa", Reply(body=_exa([{**GOOD_RESULTS[0], "entities": [{"x": _DEEP}], "summary": {"y": _DEEP}}], costDollars={"total": 0.005, "search": _DEEP}), headers=JSON), "", command="run", degraded=False),
    Case("run-cost-nan", "exa", Reply(body=_exa(GOOD_RESULTS, costDollars={"total": float("nan")}), headers=JSON), "not a dollar amount", command="run", degraded=False),
    Case("cost-negative", "exa", Reply(body=_exa(GOOD_RESULTS, costDollars=-3), headers=JSON), "not a dollar amount", degraded=False),
]
def W(id: str, reply: Reply, cause: str, exit_code: int = 1, **kw) -> Case:
    """A writer row: ``run`` against the hostile writer; a failure keeps the note, a success writes one."""
    return Case(id, "writer", reply, cause, exit_code=exit_code, command="run", degraded=exit_code != 0, **kw)


_BIG_ANSWER = "Acme Robotics builds warehouse robots. [^E1] " * 2000  # ~88 KB: over the 64 KiB cap
_LONG_ANSWER = "Acme Robotics builds warehouse robots. [^E1] " * 600  # ~26,000 characters, under the byte cap
_NON_UTF8 = b'{"status": "completed", "output": [{"type": "message", "content": [{"type": "output_text", "text": "Caf\xe9 robots \xff"}]}]}'
WRITER_CASES = [
    # status codes and Retry-After
    W("writer-400", Reply(400, _writer_error("Unknown field 'foo'", "foo"), JSON), "rejected the request (HTTP 400): Unknown field 'foo'"),
    W("writer-401", Reply(401, _writer_error("Invalid API key"), JSON), "rejected the API key (HTTP 401)"),
    W("writer-403-html", Reply(403, b"<html><body>Forbidden</body></html>", HTML), "refused the request (HTTP 403)"),
    W("writer-404", Reply(404, b"", JSON), "answered HTTP 404"),
    W("writer-413", Reply(413, _writer_error("Request too large"), JSON), "too large for the writer (HTTP 413)"),
    W("writer-500", Reply(500, _writer_error("Internal"), JSON), "HTTP 500 from writer: Internal (gave up after 2 attempts)"),
    W("writer-502-html", Reply(502, b"<html><body><h1>502 Bad Gateway</h1></body></html>", HTML), "HTTP 502 from writer gateway (HTML page)"),
    W("writer-retry-after-seconds", Reply(429, b"{}", (*JSON, ("Retry-After", "1"))), "rate limiting requests (HTTP 429) (gave up after 2 attempts)", extra_s=1.0, settings=WAITS),
    W("writer-retry-after-http-date", Reply(503, b"{}", (*JSON, ("Retry-After", "{http-date+1}"))), "HTTP 503", extra_s=1.0, settings=WAITS),
    W("writer-retry-after-huge", Reply(429, b"{}", (*JSON, ("Retry-After", "86400"))), "asked to retry after 86400 s"),
    W("writer-retry-after-absent", Reply(429, _writer_error("slow down"), JSON), "rate limiting requests (HTTP 429): slow down (gave up after 2 attempts)"),
    W("writer-error-body-reflects-key", Reply(400, _writer_error("bad key {key} \x1b]0;PWNED\x07"), JSON), "[redacted]"),
    W("writer-redirect", Reply(301, b"", (("Location", "https://elsewhere.example/v1/agent?k={key}"),)), "redirect (HTTP 301 to https://elsewhere.example/v1/agent)"),
    W("writer-redirect-loop", Reply(307, b"", (("Location", "/v1/agent"),)), "redirect (HTTP 307"),
    # bodies
    W("writer-html-200", Reply(200, b"<!doctype html><html><title>Maintenance</title></html>", HTML), "HTTP 200 with an HTML page"),
    W("writer-empty-200", Reply(200, b"", JSON), "HTTP 200 with an empty body"),
    W("writer-truncated", Reply(200, _agent()[:90], JSON), "truncated JSON body"),
    W("writer-not-json", Reply(200, b"status=completed&text=hello", JSON), "a body that is not JSON"),
    W("writer-non-utf8", Reply(200, _NON_UTF8, JSON), "not UTF-8 text"),
    W("writer-wrong-shape-list", Reply(200, b'["output"]', JSON), "JSON but not an object"),
    W("writer-wrong-shape-object", Reply(200, b'{"data": {"text": "hi"}}', JSON), "not a finished response (no status)"),
    W("writer-oversized-streamed", Reply(200, _agent(_BIG_ANSWER), JSON, chunked=True), "larger than the 64 KiB cap (writer_max_response_bytes)"),
    W("writer-oversized-announced", Reply(200, b"{}", JSON, content_length=50 * 1024 * 1024), "it announced 50 MiB"),
    W("writer-answer-too-long", Reply(200, _agent(_LONG_ANSWER), JSON), "writer_max_answer_chars"),
    W("writer-stall", Reply(stall_s=30), "did not answer within"),
    W("writer-stall-after-headers", Reply(200, _agent(), JSON, stall_after_headers_s=30), "sent headers but no body"),
    W("writer-drip", Reply(200, _agent(), JSON, drip_s=1.0), "still trickling in"),
    W("writer-reset-mid-body", Reply(200, _agent(), JSON, reset_after=60), "broke off before the answer was complete"),
    # failures inside HTTP 200, and a truncated answer
    W("writer-failed-in-200", Reply(200, _agent(status="failed", error={"message": "model overloaded"}), JSON), "run failed: model overloaded"),
    W("writer-cancelled-in-200", Reply(200, _agent(status="cancelled"), JSON), "run cancelled"),
    W("writer-deep-json", Reply(200, b'{"status": "completed", "output": ' + b"[" * 5_000 + b"]" * 5_000 + b"}", JSON), "nested too deeply to read"),
    W("writer-deep-usage", Reply(200, _agent(usage={"cost": {"total_cost": 0.002}, "detail": _DEEP}), JSON), "nested more than 64 levels deep", exit_code=0, note_has="warehouse robots"),
    W("writer-stream-deep-event", Reply(200, b"data: " + b"[" * 5_000 + b"]" * 5_000 + b"\n\n", SSE), "not JSON", settings=STREAM),
    W("writer-cost-negative", Reply(200, _agent(usage={"cost": {"total_cost": -5.0}}), JSON), "not a dollar amount", exit_code=0, note_has="warehouse robots"),
    W("writer-incomplete", Reply(200, _agent(status="incomplete", incomplete_details={"reason": "max_output_tokens"}), JSON), "incomplete (max_output_tokens)", exit_code=0, note_has="warehouse robots"),
    # hostile text: cleaned where it enters, said in a warning
    W("writer-control-text", Reply(200, _agent(HOSTILE_ANSWER), JSON), "control sequences", exit_code=0, note_has="Acme Robotics builds warehouse robots"),
    W("writer-control-annotations", Reply(200, _agent(_ANNOTATED, results=WEB_RESULTS, annotations=ANNOTATIONS), JSON), "control sequences", exit_code=0, web_search=True, note_has="Acme Robotics builds warehouse robots [^"),
    W("writer-control-results", Reply(200, _agent("Acme builds robots. [1] It raised money. [2]", results=HOSTILE_RESULTS), JSON), "control sequences", exit_code=0, web_search=True, note_has="Acme builds robots"),
    W("writer-malformed-results", Reply(200, _agent("Acme builds robots. [5]", results=MIXED_SHAPES), JSON), "skipped 5 malformed search results", exit_code=0, web_search=True, note_has="Acme builds robots"),
    W("writer-reflected-key", Reply(200, _agent(REFLECTING_ANSWER, results=REFLECTING_RESULTS), JSON), "echoed the API key", exit_code=0, web_search=True, note_has="[redacted]"),
    # streamed (typed events)
    W("writer-stream-control-split", Reply(200, _agent_stream("Acme Robotics builds \x1b]0;PWN", "ED\x07warehouse robots. [^E1]"), SSE), "control sequences", exit_code=0, settings=STREAM, note_has="Acme Robotics builds warehouse robots"),
    W("writer-stream-stalled-mid-stream", Reply(200, _agent_stream("Acme Robotics ", "builds robots."), SSE, pause_after=120, pause_s=30), "stream stalled after", settings=STREAM),
    W("writer-stream-drip", Reply(200, _agent_stream(ANSWER), SSE, drip_s=1.0), "still trickling in", settings=STREAM),
    W("writer-stream-oversized", Reply(200, _agent_stream(*[_BIG_ANSWER[:4000]] * 20), SSE, chunked=True), "larger than the 64 KiB cap (writer_max_response_bytes)", settings=(*STREAM, ("SOURCEDESK_WRITER_MAX_ANSWER_CHARS", "1000000"))),
    W("writer-stream-oversized-announced", Reply(200, _agent_stream(ANSWER), SSE, content_length=50 * 1024 * 1024), "it announced 50 MiB", settings=STREAM),
    W("writer-stream-too-long", Reply(200, _agent_stream(*[_LONG_ANSWER[:5000]] * 6), SSE, chunked=True), "writer_max_answer_chars", settings=STREAM),
    W("writer-stream-no-terminal", Reply(200, _agent_stream("Acme Robotics builds", terminal=None), SSE), "ended without a final event", settings=STREAM),
    W("writer-stream-non-utf8", Reply(200, b'data: {"type": "response.output_text.delta", "delta": "caf\xe9"}\n\n', SSE), "stream is not UTF-8 text", settings=STREAM),
    W("writer-stream-failed", Reply(200, _agent_stream("Acme", terminal="response.failed"), SSE), "run failed: model overloaded", settings=STREAM),
    W("writer-stream-reset", Reply(200, _agent_stream(ANSWER, ANSWER), SSE, reset_after=150), "broke off", settings=STREAM),
    # the legacy Sonar path
    W("sonar-502-html", Reply(502, b"<html><body>Bad Gateway</body></html>", HTML), "HTTP 502 from writer gateway (HTML page)", settings=SONAR),
    W("sonar-truncated", Reply(200, _chat()[:80], JSON), "truncated JSON body", settings=SONAR),
    W("sonar-drip", Reply(200, _chat(), JSON, drip_s=1.0), "still trickling in", settings=SONAR),
    W("sonar-control-and-key", Reply(200, _chat(HOSTILE_ANSWER + " {key}", citations=["https://acme-robotics.io/\x1b[2J?k={key}"]), JSON), "echoed the API key", exit_code=0, settings=SONAR, note_has="warehouse robots"),
    W("sonar-stream-stalled", Reply(200, _events({"choices": [{"delta": {"content": "Acme "}}]}) + _events({"choices": [{"delta": {"content": "builds"}}]}), SSE, pause_after=40, pause_s=30), "stream stalled after", settings=(*SONAR, *STREAM)),
]
_SOFT_404 = (
    b"<html><head><title>Page not found \x1b]0;PWNED\x07 " + EXA_KEY.encode() + b"</title></head>"
    b"<body>Sorry, the page you are looking for does not exist.</body></html>"
)
CHECK_CASES = [
    Case("page-ok", "check", Reply(200, b"<html><title>Acme</title><body>" + b"Acme robots. " * 200 + b"</body></html>", HTML), "", status="ok"),
    Case("page-404", "check", Reply(404, b"not here", HTML), "HTTP 404", exit_code=1, status="dead"),
    Case("page-410", "check", Reply(410, b"gone", HTML), "HTTP 410", exit_code=1, status="dead"),
    Case("page-500", "check", Reply(500, b"oops", HTML), "HTTP 500 after 2 tries", status="error"),
    Case("page-429-huge-retry-after", "check", Reply(429, b"", (("Retry-After", "86400"),)), "HTTP 429", status="error"),
    Case("page-403", "check", Reply(403, b"denied", HTML), "retrieval returned this page", status="forbidden"),
    Case("page-soft-404-hostile-title", "check", Reply(200, _SOFT_404, HTML), "page title says", exit_code=1, status="soft_404"),
    Case("page-drip", "check", Reply(200, b"<html><title>Acme</title>" + b"x" * 200, HTML, drip_s=0.2), "still arriving", status="ok"),
    Case("page-stall", "check", Reply(200, b"<html></html>", HTML, stall_s=30), "stalled", status="error"),
    Case("page-redirect-loop", "check", Reply(302, b"", (("Location", "/p/page-redirect-loop"),)), "redirect loop", status="error"),
    Case("page-reset-mid-body", "check", Reply(200, b"<html><title>Acme</title>" + b"y" * 5000, HTML, reset_after=100), "broke off", status="ok"),
    Case("page-oversized", "check", Reply(200, b"<html><title>Acme</title>" + b"z" * (CAP * 3), HTML, chunked=True), "page larger than 64 KiB", status="ok"),
    Case("page-location-control", "check", Reply(302, b"", (("Location", "/p/\x9b2Jnext"),)), "unusable Location", status="error"),
    Case("page-non-utf8", "check", Reply(200, b"<html><title>Caf\xe9</title><body>" + b"\xff\xfe" * 800 + b"</body></html>", HTML), "", status="ok"),
    Case("page-quadratic-html", "check", Reply(200, b"<title>" * 20000 + b"<script>" * 20000 + b"<!--" * 20000, HTML), "", status="ok"),
    Case("page-empty-200", "check", Reply(200, b"", HTML), "", status="ok"),
]
# fmt: on
EXA_CASES += ISSUE20_EXA_CASES
WRITER_CASES += ISSUE20_WRITER_CASES
CHECK_CASES += ISSUE20_CHECK_CASES
CASES = EXA_CASES + WRITER_CASES + CHECK_CASES


def test_the_matrix_has_enough_cases_across_services():
    assert len(CASES) >= 30
    assert {c.service for c in CASES} == {"exa", "writer", "check"}
    assert len({c.id for c in CASES}) == len(CASES)


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def hostile():
    with HostileServer() as server:
        yield server


@pytest.fixture(scope="module")
def writer_sandbox():
    with SandboxServer(port=0, seed=3, exa_key=None, fault_hold_s=1.0) as server:
        yield server


def _environment(mp: pytest.MonkeyPatch, base: Path, exa_url: str, writer_url: str) -> None:
    settings = {
        "SOURCEDESK_CONFIG_DIR": str(base / "config"),
        "SOURCEDESK_DATA_DIR": str(base / "data"),
        "SOURCEDESK_EXA_URL": exa_url,
        "SOURCEDESK_WRITER_URL": writer_url,
        "EXA_API_KEY": EXA_KEY,
        "PERPLEXITY_API_KEY": WRITER_KEY,
        "SOURCEDESK_REQUEST_TIMEOUT_S": str(REQUEST_S),
        "SOURCEDESK_RETRIEVAL_DEADLINE_S": str(RETRIEVAL_S),
        "SOURCEDESK_MAX_RETRIES": "1",
        "SOURCEDESK_RETRY_MAX_WAIT_S": "2",
        "SOURCEDESK_EXA_MAX_RESPONSE_BYTES": str(CAP),
        "SOURCEDESK_WRITER_DEADLINE_S": str(WRITER_S),
        "SOURCEDESK_WRITER_TIMEOUT_S": "5",
        "SOURCEDESK_WRITER_MAX_RESPONSE_BYTES": str(CAP),
        "SOURCEDESK_WRITER_MAX_ANSWER_CHARS": str(ANSWER_CHARS),
        "SOURCEDESK_CHECK_TIMEOUT_S": str(CHECK_REQUEST_S),
        "SOURCEDESK_CHECK_URL_DEADLINE_S": str(CHECK_URL_S),
        "SOURCEDESK_CHECK_DEADLINE_S": "5",
        "SOURCEDESK_CHECK_MAX_RETRIES": "1",
        "SOURCEDESK_CHECK_MAX_PAGE_BYTES": str(CAP),
    }
    for name, value in settings.items():
        mp.setenv(name, value)


@pytest.fixture(scope="module")
def baseline(hostile, writer_sandbox, tmp_path_factory):
    """A memo that has run once against a well-behaved server: a good frozen set and a note."""
    base = tmp_path_factory.mktemp("matrix-baseline")
    memo = base / "memo"
    memo.mkdir()
    (memo / "memo.yaml").write_text(MEMO_YAML, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        _environment(mp, base, hostile.url, writer_sandbox.url)
        hostile.reset()
        hostile.serve("exa", GOOD)
        assert main(["run", str(memo)]) == 0
    hostile.reset()
    note = memo / "sections" / "01-overview.md"
    assert note.is_file()
    return memo


@dataclass
class Observed:
    code: int
    elapsed: float
    out: str
    err: str
    log: str
    memo: Path
    files: dict[str, str] = field(default_factory=dict)


def _files(memo: Path) -> dict[str, str]:
    found = {}
    for path in sorted(memo.rglob("*")):
        if path.is_file() and path.name != "lock":
            found[str(path.relative_to(memo))] = path.read_bytes().decode("utf-8", errors="replace")
    return found


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _assert_clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where}: an API key leaked"
    spelled = key_spans(text, SECRETS)  # encoded, another case, reversed, split by an invisible character
    assert not spelled, f"{where}: an API key leaked in another spelling: {text[spelled[0][0] : spelled[0][1]]!r}"
    bad = UNSAFE_CHARACTER.search(text)
    assert bad is None, (
        f"{where}: control character {bad.group(0)!r} at {bad.start()}: {text[max(0, bad.start() - 40) : bad.end() + 40]!r}"
    )


def _assert_no_leaks(seen: Observed) -> None:
    _assert_clean(seen.out, "stdout")
    _assert_clean(seen.err, "stderr")
    _assert_clean(seen.log, "log")
    for name, text in seen.files.items():
        _assert_clean(text, name)
        if name.endswith(".json"):  # JSON escapes control characters: look inside the strings too
            try:
                data = json.loads(text)
            except ValueError:
                continue
            for s in _strings(data):
                _assert_clean(s, f"{name} (a JSON string)")
    for output in (seen.out,):
        try:
            data = json.loads(output)
        except ValueError:
            continue
        for s in _strings(data):
            _assert_clean(s, "stdout JSON (a string)")


def _assert_absent(seen: Observed, absent: tuple[str, ...]) -> None:
    """What a row says must reach no output a reader sees: stdout, stderr, the log, the notes (the
    store keeps the raw answer, cleaned, as the evidence of what the writer sent)."""
    readable = [(t, n) for n, t in seen.files.items() if not n.startswith(".sourcedesk")]
    for text, where in [(seen.out, "stdout"), (seen.err, "stderr"), (seen.log, "log"), *readable]:
        for what in absent:
            assert what not in text, f"{where} holds {what!r}"


def _invoke(args: list[str], capsys, caplog, *, peak_mb: float | None = None) -> tuple[int, float, str, str, str]:
    caplog.clear()
    if peak_mb is not None:
        tracemalloc.start()
    started = time.monotonic()
    try:
        with caplog.at_level(logging.DEBUG):
            code = main(args)
    finally:
        peak = tracemalloc.get_traced_memory()[1] if peak_mb is not None else 0
        tracemalloc.stop()
    elapsed = time.monotonic() - started
    assert peak <= (peak_mb or 0) * 1024 * 1024, f"{' '.join(args[:1])} took {peak / 2**20:.0f} MB at its peak"
    captured = capsys.readouterr()
    return code, elapsed, captured.out, captured.err, caplog.text


def _with_dates(reply: Reply) -> Reply:
    """``{http-date+N}`` in a header: an HTTP date N seconds from now (made when the case starts)."""
    headers = []
    for name, value in reply.headers:
        if value.startswith("{http-date+"):
            value = formatdate(clock.timestamp() + float(value[len("{http-date+") : -1]), usegmt=True)
        headers.append((name, value))
    return Reply(**{**reply.__dict__, "headers": tuple(headers)})


# ---------------------------------------------------------------- exa and writer rows


def _stored_sets(memo: Path) -> list:
    with MemoStore(memo) as store:
        versions = store.source_set_versions("overview")
        assert store.take_notices() == [], "nothing in the store should have needed quarantine"
    return versions


def _not_json(constant: str) -> float:
    raise AssertionError(f"the JSON output holds {constant}, which is not JSON")


@pytest.mark.parametrize("case", EXA_CASES + WRITER_CASES, ids=lambda c: c.id)
def test_exa_and_writer_faults(case, hostile, writer_sandbox, baseline, tmp_path, monkeypatch, capsys, caplog):
    memo = tmp_path / "memo"
    shutil.copytree(baseline, memo)
    note = memo / "sections" / "01-overview.md"
    note_before = note.read_bytes()
    sets_before = _stored_sets(memo)
    exa_url = hostile.url if case.service == "exa" else writer_sandbox.url
    writer_url = hostile.url if case.service == "writer" else writer_sandbox.url
    _environment(monkeypatch, tmp_path, exa_url, writer_url)
    for name, value in case.settings:
        monkeypatch.setenv(name, value)
    if case.web_search:
        memo_yaml = memo / "memo.yaml"
        memo_yaml.write_text(memo_yaml.read_text().replace("web-search: false", "web-search: true"))
    hostile.reset()
    hostile.serve(case.service, _with_dates(case.reply))

    args = [case.command, str(memo), "--json"] + (["--refresh"] if case.service == "exa" else [])
    code, elapsed, out, err, log = _invoke(args, capsys, caplog, peak_mb=case.peak_mb)
    seen = Observed(code, elapsed, out, err, log, memo, _files(memo))
    _assert_absent(seen, case.absent)

    deadline = (WRITER_S if case.service == "writer" else RETRIEVAL_S) + case.extra_s
    assert elapsed < HANG * deadline, f"{case.id} took {elapsed:.1f} s"
    assert code == case.exit_code, (out, err)
    assert "Traceback" not in err + log
    document = json.loads(out, parse_constant=_not_json)  # NaN/Infinity are not JSON: a reader would refuse it
    if case.command == "retrieve":
        section = document["sections"][0]
        messages = [w["message"] for w in section["warnings"]]
        assert section["degraded"] is case.degraded, messages
        if case.degraded:  # the curated set from the good run was kept, not replaced
            assert section["kept_previous"] and section["source_set_id"] == sets_before[-1].id
    else:
        outcome = document[0]
        messages = [*outcome["warnings"], outcome["message"]]
        assert all(v >= 0 for v in outcome["cost"].values()), outcome["cost"]  # what a server said is never a refund
    assert any(case.cause.lower() in m.lower() for m in messages), messages
    _assert_no_leaks(seen)

    # notes and store intact
    sets_after = _stored_sets(memo)
    assert [s.id for s in sets_after[: len(sets_before)]] == [s.id for s in sets_before]
    assert sets_after[0].sources == sets_before[0].sources
    if case.degraded:
        assert len(sets_after) == len(sets_before)  # no degraded version piled up over the good one
    if case.exit_code == 1 or case.command == "retrieve":
        assert note.read_bytes() == note_before  # a failed (or retrieval-only) run leaves the note as it was
    else:
        assert note.read_bytes() != note_before or case.degraded
        assert note.read_text(encoding="utf-8").startswith("---\n")
        assert case.note_has in note.read_text(encoding="utf-8")


# ---------------------------------------------------------------- check-urls rows


@pytest.mark.parametrize("case", CHECK_CASES, ids=lambda c: c.id)
def test_check_urls_faults(case, hostile, tmp_path, monkeypatch, capsys, caplog):
    _environment(monkeypatch, tmp_path, hostile.url, hostile.url)
    hostile.reset()
    path = f"/p/{case.id}"
    hostile.route(path, _with_dates(case.reply))
    note = tmp_path / "memo" / "sections" / "01-overview.md"
    note.parent.mkdir(parents=True)
    note.write_text(
        "---\nsection: overview\n---\n# Overview\n\nAcme builds robots. [^1]\n\n"
        f"## Sources (retrieved)\n\n[^1]: [Acme]({hostile.url}{path})\n",
        encoding="utf-8",
    )
    before = note.read_bytes()
    code, elapsed, out, err, log = _invoke(
        ["check-urls", str(note), "--json", "--allow-private"], capsys, caplog, peak_mb=case.peak_mb
    )
    seen = Observed(code, elapsed, out, err, log, tmp_path / "memo", _files(tmp_path / "memo"))
    _assert_absent(seen, case.absent)

    assert elapsed < HANG * CHECK_URL_S, f"{case.id} took {elapsed:.1f} s"
    assert code == case.exit_code, out
    report = json.loads(out)
    (row,) = report["urls"]
    assert row["status"] == case.status, row
    assert case.cause.lower() in (row["detail"] + " ".join(report["warnings"])).lower(), row
    _assert_no_leaks(seen)
    assert note.read_bytes() == before
