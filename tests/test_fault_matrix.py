"""The fault matrix: every way a hostile server can answer, against the real CLI and clients.

Each row is one case — a ``Reply`` from ``tests.hostile_server`` (a real loopback
server), the command an analyst would type, and what must hold. For every row:

- the command finishes inside its deadline (short ones here: the settings are the
  product's, set tight), with the exit code the README documents (0 ok or
  degraded, 1 a section failed or a URL is a problem, 2 bad input, 130
  interrupted);
- a warning or detail names the cause;
- notes and the store are intact: the previous frozen set still loads, a note
  that was not rewritten is byte-identical, every stored file parses;
- no API key and no control character appears in any output — stdout, stderr,
  the log, the store (db.json and payloads), notes, quarantine files.

Adding a case is adding a row. The writer's rows join when its client adopts the
deadline and size cap primitives (``core.deadline``, ``core.bounded_http``); the
two here exercise the total writer-call deadline the run already enforces.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from core.text_safety import UNSAFE_CHARACTER
from sandbox.server import SandboxServer
from store.memo_store import MemoStore
from tests.hostile_server import HostileServer, Reply
from tui.cli import main

EXA_KEY = "exa-hostile-SECRET-key-7731"
WRITER_KEY = "pplx-hostile-SECRET-key-7731"
SECRETS = (EXA_KEY, WRITER_KEY)

REQUEST_S = 0.5  # request_timeout_s: one Exa request in all
RETRIEVAL_S = 1.5  # retrieval_deadline_s: one section's retrieval in all
WRITER_S = 1.5  # writer_deadline_s
CHECK_REQUEST_S = 0.5
CHECK_URL_S = 1.2
CAP = 64 * 1024  # exa_max_response_bytes and check_max_page_bytes
SLACK_S = 2.5  # start-up, the store, the writer sandbox: what a case may take beyond its deadline

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

JSON = (("Content-Type", "application/json"),)
HTML = (("Content-Type", "text/html; charset=utf-8"),)


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


def _rate_limited(retry_after: str | None) -> Reply:
    headers = (*JSON, ("Retry-After", retry_after)) if retry_after else JSON
    return Reply(status=429, body=b'{"error": "Rate limit exceeded", "tag": "RATE_LIMIT"}', headers=headers)


@dataclass(frozen=True)
class Case:
    id: str
    service: str  # "exa" | "writer" | "check"
    reply: Reply
    cause: str  # a phrase some warning (or the URL row's detail) must contain, case-insensitive
    exit_code: int = 0
    command: str = "retrieve"  # "retrieve" | "run" (exa, writer) — check rows run check-urls
    degraded: bool = True  # exa: the section could not use this answer
    status: str | None = None  # check: the URL row's status
    extra_s: float = 0.0  # a case that legitimately waits (Retry-After)


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
    Case("retry-after-seconds", "exa", Reply(503, b"{}", (*JSON, ("Retry-After", "1"))), "server error (503) after 2 attempts", extra_s=1.0),
    Case("retry-after-http-date", "exa", Reply(429, b"{}", (*JSON, ("Retry-After", "{http-date+1}"))), "rate-limiting", extra_s=1.0),
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
]
WRITER_CASES = [
    Case("writer-stall", "writer", Reply(stall_s=30), "writer_deadline_s", exit_code=1, command="run"),
    Case("writer-drip", "writer", Reply(body=b'{"choices": []}' * 20, headers=JSON, drip_s=1.0), "writer_deadline_s", exit_code=1, command="run"),
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


def _invoke(args: list[str], capsys, caplog) -> tuple[int, float, str, str, str]:
    caplog.clear()
    started = time.monotonic()
    with caplog.at_level(logging.DEBUG):
        code = main(args)
    elapsed = time.monotonic() - started
    captured = capsys.readouterr()
    return code, elapsed, captured.out, captured.err, caplog.text


def _with_dates(reply: Reply) -> Reply:
    """``{http-date+N}`` in a header: an HTTP date N seconds from now (made when the case starts)."""
    headers = []
    for name, value in reply.headers:
        if value.startswith("{http-date+"):
            value = formatdate(time.time() + float(value[len("{http-date+") : -1]), usegmt=True)
        headers.append((name, value))
    return Reply(**{**reply.__dict__, "headers": tuple(headers)})


# ---------------------------------------------------------------- exa and writer rows


def _stored_sets(memo: Path) -> list:
    with MemoStore(memo) as store:
        versions = store.source_set_versions("overview")
        assert store.take_notices() == [], "nothing in the store should have needed quarantine"
    return versions


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
    hostile.reset()
    hostile.serve(case.service, _with_dates(case.reply))

    args = [case.command, str(memo), "--json"] + (["--refresh"] if case.service == "exa" else [])
    code, elapsed, out, err, log = _invoke(args, capsys, caplog)
    seen = Observed(code, elapsed, out, err, log, memo, _files(memo))

    deadline = (WRITER_S if case.service == "writer" else RETRIEVAL_S) + SLACK_S + case.extra_s
    assert elapsed < deadline, f"{case.id} took {elapsed:.1f} s"
    assert code == case.exit_code, (out, err)
    assert "Traceback" not in err + log
    document = json.loads(out)
    if case.command == "retrieve":
        section = document["sections"][0]
        messages = [w["message"] for w in section["warnings"]]
        assert section["degraded"] is case.degraded, messages
        if case.degraded:  # the curated set from the good run was kept, not replaced
            assert section["kept_previous"] and section["source_set_id"] == sets_before[-1].id
    else:
        outcome = document[0]
        messages = [*outcome["warnings"], outcome["message"]]
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
    code, elapsed, out, err, log = _invoke(["check-urls", str(note), "--json", "--allow-private"], capsys, caplog)
    seen = Observed(code, elapsed, out, err, log, tmp_path / "memo", _files(tmp_path / "memo"))

    assert elapsed < CHECK_URL_S + SLACK_S, f"{case.id} took {elapsed:.1f} s"
    assert code == case.exit_code, out
    report = json.loads(out)
    (row,) = report["urls"]
    assert row["status"] == case.status, row
    assert case.cause.lower() in (row["detail"] + " ".join(report["warnings"])).lower(), row
    _assert_no_leaks(seen)
    assert note.read_bytes() == before
