"""The fault matrix's rows for issue 20's hostile inputs, round two (each was tried against a clone first).

Rows only: ``tests/test_fault_matrix.py`` runs them like every other row (inside the
deadline, a clear warning, notes and store intact, no control character or key in any
output — in any spelling of the key). What does not fit a row (Ctrl-C, a YAML bomb,
``reconcile /dev/zero``, leftovers, ``check-urls`` without ``--allow-private``) is in
``tests/test_fault_matrix_round_two.py``.
"""

from __future__ import annotations

import base64
import json
import zlib

from tests.fault_cases import ANSWER, GOOD_RESULTS, JSON, SONAR, STREAM, Case, _agent, _events, _exa
from tests.hostile_server import Reply

EXA_KEY = "exa-hostile-SECRET-key-7731"
WRITER_KEY = "pplx-hostile-SECRET-key-7731"
OPENAI = (("SOURCEDESK_WRITER_API", "openai"), ("SOURCEDESK_WRITER_MODEL", "gpt-test"))
PUBLIC = "93.184.216.34"
# Browsers read the host as the public address ("\\" is a path separator); httpx connects to loopback.
TWO_HOSTS = f"http://{PUBLIC}\\@127.0.0.1:9/x"


def _gzip(data_chunks) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(c.compress(chunk) for chunk in data_chunks) + c.flush()


# 64 MiB of "A" gzipped twice: a few hundred bytes on the wire, a thousand times the 64 KiB cap once inflated.
BOMB = _gzip([_gzip(b"A" * (1 << 20) for _ in range(64))])
BOMB_MB = 48  # far under the 64 MiB an unbounded decoder holds at once, far over what the capped one needs
GZIP2 = (("Content-Type", "application/json"), ("Content-Encoding", "gzip, gzip"))
GZIP2_SSE = (("Content-Type", "text/event-stream"), ("Content-Encoding", "gzip, gzip"))
GZIP2_HTML = (("Content-Type", "text/html"), ("Content-Encoding", "gzip, gzip"))


def W(id: str, reply: Reply, cause: str, exit_code: int = 1, **kw) -> Case:
    return Case(id, "writer", reply, cause, exit_code=exit_code, command="run", degraded=exit_code != 0, **kw)


_SURROGATE_EXA = (
    b'{"requestId":"r","costDollars":{"total":0.005},"results":[{"url":"https://acme-robotics.io/about",'
    b'"title":"Acme \\ud800 Robotics","summary":"Acme Robotics builds warehouse robots."},'
    b'{"url":"https://acme-robotics.io/blog/funding","title":"Acme raises","summary":"Acme raised $12M."}]}'
)
_SURROGATE_AGENT = _agent("Acme Robotics builds warehouse robots. [^E1]").replace(
    b"Acme Robotics", b"Acme \\ud800 Robotics", 1
)
_SURROGATE_DELTA = (
    b'data: {"type":"response.output_text.delta","delta":"Acme \\ud800 Robotics builds warehouse robots. [^E1]"}\n\n'
    b'data: {"type":"response.completed","response":{"status":"completed","model":"perplexity/sonar"}}\n\n'
)
_INVISIBLE = "\u200e\u200f\u061c\u2028\u2029\u200b\ufeff"
_ONE_DELTA = _events(
    {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Acme raised"}}]}
)
_NON_WEB = (
    ANSWER + "\n\nClick [x](javascript:alert(1)) or [d](data:text/html;base64,PHNjcmlwdD4=) or "
    "[v](vbscript:msgbox(1)) or [f](file:///etc/passwd).\n\n"
    '<a href="jav&#x09;ascript:alert(2)">tab</a> <img src=x onerror="alert(3)"> '
    '<a href="https://acme-robotics.io/about" onclick="alert(5)">ok</a>\n'
)
_KEY_FORMS = (
    "".join(f"%{b:02X}" for b in WRITER_KEY.encode()),
    WRITER_KEY.upper(),
    WRITER_KEY[::-1],
    WRITER_KEY[:8] + "\u200b" + WRITER_KEY[8:],
    WRITER_KEY[:8] + "\u00ad" + WRITER_KEY[8:],
    "".join(f"&#{ord(c)};" for c in WRITER_KEY),
    "".join(f"\\u{ord(c):04x}" for c in WRITER_KEY),  # a JSON escape, as a raw body shows it
    "".join(f"%25{b:02x}" for b in WRITER_KEY.encode()),  # percent-encoded twice
    "&shy;".join(WRITER_KEY),
    base64.b64encode(f"user:{WRITER_KEY}".encode()).decode(),  # an Authorization: Basic echo
)
_CRLF_RESULTS = [
    {"id": 1, "url": "https://acme-robotics.io/a\r\nSet-Cookie: x=1", "title": "About", "snippet": "Robots."},
    {"id": 2, "url": "https://acme-robotics.io/\u202egpj.exe", "title": "Raises", "snippet": "A Series A."},
    {"id": 3, "url": TWO_HOSTS, "title": "Loopback", "snippet": "Internal."},
]
_ANSWER_CHARS = (("SOURCEDESK_WRITER_MAX_ANSWER_CHARS", "200000"),)

# fmt: off
ISSUE20_EXA_CASES = [
    Case("two-hosts-result", "exa", Reply(body=_exa([{"url": TWO_HOSTS, "title": "Acme Robotics"}, *GOOD_RESULTS]), headers=JSON), "read as different hosts", command="run", degraded=False, absent=(TWO_HOSTS, "@127.0.0.1")),
    Case("gzip-bomb", "exa", Reply(body=BOMB, headers=GZIP2), "counted decompressed", peak_mb=BOMB_MB),
    Case("run-lone-surrogate", "exa", Reply(body=_SURROGATE_EXA, headers=JSON), "not valid Unicode", command="run", degraded=False),
    Case("run-invisible-title", "exa", Reply(body=_exa([{**GOOD_RESULTS[0], "title": "Acme" + _INVISIBLE + " Robotics"}, GOOD_RESULTS[1]]), headers=JSON), "invisible characters", command="run", degraded=False),
]
ISSUE20_WRITER_CASES = [
    W("writer-gzip-bomb", Reply(200, BOMB, GZIP2), "counted decompressed", peak_mb=BOMB_MB),
    W("writer-stream-gzip-bomb", Reply(200, BOMB, GZIP2_SSE), "counted decompressed", settings=STREAM, peak_mb=BOMB_MB),
    W("sonar-gzip-bomb", Reply(200, BOMB, GZIP2), "counted decompressed", settings=SONAR, peak_mb=BOMB_MB),
    W("openai-gzip-bomb", Reply(200, BOMB, GZIP2), "counted decompressed", settings=OPENAI, peak_mb=BOMB_MB),
    W("writer-unterminated-tags", Reply(200, _agent(ANSWER + "\n\n" + "<a href=" * 7_000), JSON), "raw HTML attributes", exit_code=0, settings=_ANSWER_CHARS, note_has="warehouse robots"),
    W("writer-unterminated-comments", Reply(200, _agent(ANSWER + "\n\n" + "<!--" * 14_000), JSON), "", exit_code=0, settings=_ANSWER_CHARS, note_has="warehouse robots"),
    W("sonar-stream-cut-short", Reply(200, _ONE_DELTA, (("Content-Type", "text/event-stream"),), chunked=True), "ended without its final event", settings=(*SONAR, *STREAM)),
    W("openai-stream-cut-short", Reply(200, _ONE_DELTA, (("Content-Type", "text/event-stream"),), chunked=True), "ended without its final event", settings=(*OPENAI, *STREAM)),
    W("writer-lone-surrogate", Reply(200, _SURROGATE_AGENT, JSON), "not valid Unicode", exit_code=0, note_has="warehouse robots"),
    W("writer-stream-lone-surrogate", Reply(200, _SURROGATE_DELTA, (("Content-Type", "text/event-stream"),)), "not valid Unicode", exit_code=0, settings=STREAM, note_has="warehouse robots"),
    W("writer-non-web-links", Reply(200, _agent(_NON_WEB), JSON), "only http(s) links", exit_code=0, note_has="Click x or d or v or f.", absent=("javascript:", "vbscript:", "onerror=", "onclick=", "file:///", "data:text", "alert(")),
    W("writer-401-key-forms", Reply(401, json.dumps({"error": {"message": "bad key " + " ".join(_KEY_FORMS)}}, ensure_ascii=False).encode(), JSON), "rejected the API key (HTTP 401)"),
    W("writer-answer-key-forms", Reply(200, _agent(ANSWER + " Keys: " + " ".join(_KEY_FORMS)), JSON), "echoed the API key", exit_code=0, note_has="[redacted]"),
    W("writer-result-urls-refused", Reply(200, _agent("Acme builds robots. [1] It raised money. [2] Internal. [3]", results=_CRLF_RESULTS), JSON), "refused", exit_code=0, web_search=True, note_has="Acme builds robots", absent=("Set-Cookie", "gpj.exe", TWO_HOSTS, "@127.0.0.1")),
    W("writer-invisibles", Reply(200, _agent("Acme\u200b Robotics\u2028 builds\ufeff warehouse\u200e robots. [^E1]"), JSON), "invisible characters", exit_code=0, note_has="warehouse robots"),
]
ISSUE20_CHECK_CASES = [
    Case("page-gzip-bomb", "check", Reply(200, BOMB, GZIP2_HTML), "counted decompressed", status="ok", peak_mb=BOMB_MB),
]
# fmt: on
