"""The writer client against hostile servers and hostile text.

Every call here goes through the real writer clients over a real loopback socket
(``tests.hostile_server``): a total deadline however slowly a server sends, a
size cap however large its answer, bodies that are not what they claim, and
outside text — answer, annotations, search results, error bodies — cleaned where
it enters, with the annotation offsets kept on the same words.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.memo.spec import Memo
from sourcedesk.core.net.policy import RetryPolicy
from sourcedesk.core.pipeline.run import writer_from_settings
from sourcedesk.core.text.safety import UNSAFE_CHARACTER
from sourcedesk.core.writing.agent import AgentWriter, read_response
from sourcedesk.core.writing.chat import read_completion
from sourcedesk.core.writing.prompt import Prompt
from sourcedesk.core.writing.registry import WriteRequest, WriterError, WriterResponse
from sourcedesk.core.writing.results import read_results
from sourcedesk.core.writing.sonar import SonarWriter
from tests.hostile_server import HostileServer, Reply

KEY = "pplx-hostile-unit-key-5519"
PROMPT = Prompt(system="RULES", user="Write about Acme Robotics", markers=["E1"])
JSON = (("Content-Type", "application/json"),)
SSE = (("Content-Type", "text/event-stream"),)
NO_RETRY = RetryPolicy(max_retries=0)
ONE_RETRY = RetryPolicy(max_retries=1, base_delay_s=0.01, max_delay_s=0.02)


@pytest.fixture(scope="module")
def server():
    with HostileServer() as hs:
        yield hs


def _agent_body(text: str, **extra) -> bytes:
    part = {"type": "output_text", "text": text, "annotations": extra.pop("annotations", [])}
    output = [*extra.pop("output", []), {"type": "message", "content": [part]}]
    return json.dumps({"status": "completed", "output": output, **extra}).encode()


def _events(*events: dict) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def _deltas(*pieces: str) -> bytes:
    return _events(
        *[{"type": "response.output_text.delta", "delta": p} for p in pieces],
        {"type": "response.completed", "response": {"status": "completed"}},
    )


def _write(
    server: HostileServer, *replies: Reply, cls: type = AgentWriter, on_text=None, **kw
) -> tuple[WriterResponse | WriterError, float]:
    server.reset()
    server.serve("writer", *replies)
    kw.setdefault("retry", NO_RETRY)
    kw.setdefault("requests_per_minute", None)
    writer = cls(server.url, kw.pop("api_key", KEY), **kw)

    async def go() -> WriterResponse | WriterError:
        try:
            return await writer.write(WriteRequest(prompt=PROMPT, web_search=False), on_text=on_text)
        except WriterError as exc:
            return exc

    started = time.monotonic()
    result = asyncio.run(go())
    return result, time.monotonic() - started


def _clean(text: str) -> None:
    assert KEY not in text
    assert UNSAFE_CHARACTER.search(text) is None, repr(text)


# ---------------------------------------------------------------- deadlines


@pytest.mark.parametrize(
    "reply, stream, words",
    [
        (Reply(200, _agent_body("Acme builds robots."), JSON, drip_s=0.3), False, "still trickling in"),
        (Reply(stall_s=30), False, "did not answer within"),
        (Reply(200, _agent_body("Acme."), JSON, stall_after_headers_s=30), False, "sent headers but no body"),
        (Reply(200, _deltas("Acme builds ", "robots."), SSE, drip_s=0.3), True, "stream was still trickling in"),
        (Reply(200, _deltas("Acme builds ", "robots."), SSE, pause_after=80, pause_s=30), True, "stream stalled after"),
        (Reply(200, _deltas("Acme."), SSE, stall_after_headers_s=30), True, "sent headers but no events"),
    ],
    ids=["json-drip", "json-stall", "json-stall-after-headers", "sse-drip", "sse-stall-mid-stream", "sse-no-events"],
)
def test_a_slow_writer_ends_inside_its_own_deadline_saying_why(server, reply, stream, words):
    """Without the run around it, the client itself keeps writer_deadline_s, retries and all."""
    result, took = _write(server, reply, stream=stream, deadline_s=1.2, timeout=30, retry=ONE_RETRY)
    assert isinstance(result, WriterError) and result.kind == "timeout", result
    assert took < 10 * 1.2  # stopped at its deadline: every reply here would take 30 s or more
    assert words in result.message and "writer_deadline_s" in result.message, result.message


def test_a_stream_keeps_its_deadline_even_while_events_keep_arriving(server):
    """The deadline covers the whole stream, not each read: endless keep-alives do not extend it."""
    keep_alive = b": ping\n\n" * 400
    result, took = _write(server, Reply(200, keep_alive, SSE, drip_s=0.01), stream=True, deadline_s=1.0)
    assert isinstance(result, WriterError) and result.kind == "timeout"
    assert took < 10 * 1.0 and "trickling" in result.message  # the keep-alives alone last 32 s


# ---------------------------------------------------------------- size caps


@pytest.mark.parametrize(
    "reply, stream, words",
    [
        (Reply(200, _agent_body("x" * 50_000), JSON, chunked=True), False, "larger than the 16 KiB cap"),
        (Reply(200, b"{}", JSON, content_length=64 * 1024 * 1024), False, "it announced 64 MiB"),
        (Reply(200, _deltas(*["y" * 4000] * 10), SSE, chunked=True), True, "larger than the 16 KiB cap"),
        (Reply(200, _deltas("z"), SSE, content_length=64 * 1024 * 1024), True, "it announced 64 MiB"),
    ],
    ids=["json-streamed", "json-announced", "sse-streamed", "sse-announced"],
)
def test_an_answer_over_the_byte_cap_fails_once_without_a_retry(server, reply, stream, words):
    result, _ = _write(server, reply, stream=stream, max_response_bytes=16 * 1024, retry=ONE_RETRY)
    assert isinstance(result, WriterError) and result.kind == "too_large", result
    assert words in result.message and "(writer_max_response_bytes)" in result.message
    assert server.hits("/v1/agent") == 1  # an answer, not an accident


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_an_answer_under_the_byte_cap_but_longer_than_a_note_may_hold_fails(server, stream):
    text = "Acme builds robots. " * 500  # 10,000 characters
    reply = Reply(200, _deltas(*[text[:1000]] * 10) if stream else _agent_body(text), SSE if stream else JSON)
    result, _ = _write(server, reply, stream=stream, max_answer_chars=5_000)
    assert isinstance(result, WriterError) and result.kind == "too_large"
    assert "5,000 characters a note may hold (writer_max_answer_chars" in result.message


def test_the_factory_hands_the_settings_caps_and_deadline_to_the_client(server):
    """writer_max_response_bytes, writer_max_answer_chars and writer_deadline_s reach the client."""
    settings = Settings(
        writer_url=server.url,
        perplexity_api_key=KEY,
        writer_max_response_bytes=2048,
        writer_max_answer_chars=700,
        writer_deadline_s=0.8,
        writer_requests_per_minute=0,
        max_retries=0,
    )
    memo = Memo.model_validate(
        {"title": "t", "subject": {"name": "Acme", "url": "https://acme.io"}, "sections": [{"id": "s", "title": "S"}]}
    )
    writer = writer_from_settings(settings, memo)

    def call(reply: Reply) -> WriterError:
        server.reset()
        server.serve("writer", reply)
        with pytest.raises(WriterError) as caught:
            asyncio.run(writer.write(WriteRequest(prompt=PROMPT, web_search=False)))
        return caught.value

    assert "2 KiB cap (writer_max_response_bytes)" in call(Reply(200, _agent_body("x" * 4000), JSON)).message
    assert "(writer_max_answer_chars" in call(Reply(200, _agent_body("x" * 1000), JSON)).message
    started = time.monotonic()
    assert "writer_deadline_s" in call(Reply(stall_s=30)).message
    assert time.monotonic() - started < 10 * 0.8  # the 0.8 s deadline, not the 30 s stall


# ---------------------------------------------------------------- malformed bodies


@pytest.mark.parametrize(
    "reply, words",
    [
        (Reply(200, b"", JSON), "HTTP 200 with an empty body"),
        (Reply(200, b"   \n", JSON), "HTTP 200 with an empty body"),
        (Reply(200, b"<html><body>Down for maintenance</body></html>", JSON), "HTTP 200 with an HTML page"),
        (Reply(200, _agent_body("Acme builds robots.")[:-20], JSON), "a truncated JSON body"),
        (Reply(200, b"Acme builds robots.", JSON), "a body that is not JSON"),
        (Reply(200, _agent_body("Caf\u00e9").replace(b"Caf\\u00e9", b"Caf\xe9"), JSON), "not UTF-8 text"),
        (Reply(200, b"[1, 2]", JSON), "JSON but not an object"),
        (Reply(200, b'{"status": "completed", "output": "text"}', JSON), "has no output list"),
    ],
    ids=["empty", "blank", "html", "truncated", "not-json", "latin-1", "list", "wrong-shape"],
)
def test_a_malformed_answer_is_named_never_passed_on_as_content(server, reply, words):
    result, _ = _write(server, reply)
    assert isinstance(result, WriterError) and result.kind == "malformed", result
    assert words in result.message
    assert "\ufffd" not in result.message


def test_a_declared_charset_is_honoured_and_a_stream_that_is_not_utf8_is_named(server):
    latin = json.dumps({"status": "completed", "output": [{"type": "message", "content": [
        {"type": "output_text", "text": "Caf\u00e9 robots."}]}]}, ensure_ascii=False).encode("latin-1")  # fmt: skip
    result, _ = _write(server, Reply(200, latin, (("Content-Type", "application/json; charset=iso-8859-1"),)))
    assert isinstance(result, WriterResponse) and result.content == "Café robots."
    body = b'data: {"type": "response.output_text.delta", "delta": "caf\xe9"}\n\n'
    result, _ = _write(server, Reply(200, body, SSE), stream=True)
    assert isinstance(result, WriterError) and result.kind == "malformed"
    assert "stream is not UTF-8 text" in result.message


def test_the_legacy_path_names_a_truncated_body_too(server):
    result, _ = _write(server, Reply(200, b'{"choices": [{"message": {"content": "Acme', JSON), cls=SonarWriter)
    assert isinstance(result, WriterError) and "truncated JSON body" in result.message


# ---------------------------------------------------------------- error bodies and redirects


def test_an_error_body_is_cleaned_of_control_sequences_and_the_reflected_key(server):
    body = json.dumps({"error": {"message": "bad \x1b]0;PWNED\x07request \x1b[2Jfrom {key} \u202eevil"}}).encode()
    result, _ = _write(server, Reply(400, body, JSON))
    assert isinstance(result, WriterError) and result.kind == "bad_request"
    _clean(result.message)
    assert "bad request from [redacted] evil" in result.message


def test_a_redirect_names_where_it_points_without_the_query(server):
    reply = Reply(302, b"", (("Location", "https://other.example/v1/agent?key={key}"),))
    result, _ = _write(server, reply)
    assert isinstance(result, WriterError)
    assert "redirect (HTTP 302 to https://other.example/v1/agent)" in result.message
    _clean(result.message)


def test_a_huge_retry_after_is_named_in_the_failure(server):
    reply = Reply(429, b"{}", (*JSON, ("Retry-After", "86400")))
    result, _ = _write(server, reply, retry=RetryPolicy(max_retries=1, base_delay_s=0.01, max_retry_after_s=2))
    assert isinstance(result, WriterError) and result.kind == "rate_limited"
    assert "asked to retry after 86400 s, longer than the 2 s we wait" in result.message
    assert server.hits("/v1/agent") == 2


# ---------------------------------------------------------------- hostile text where it enters


ESCAPES = "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31m"


def test_an_escape_before_an_annotated_span_leaves_the_span_on_the_same_words():
    text = f"{ESCAPES}Acme Robotics builds warehouse robots\x1b[0m for \u202eretailers."
    start, end = text.index("Acme"), text.index(" for")
    annotation = {"type": "url_citation", "url": "https://acme.io/about", "start_index": start, "end_index": end}
    results = [{"id": 1, "url": "https://acme.io/about", "title": "About"}]
    data = json.loads(
        _agent_body(text, annotations=[annotation], output=[{"type": "search_results", "results": results}])
    )
    response = read_response(data, secrets=[KEY])
    assert response.content == "Acme Robotics builds warehouse robots [1] for retailers."
    [record] = response.annotations
    cleaned = "Acme Robotics builds warehouse robots for retailers."
    assert cleaned[record["start"] : record["end"]] == "Acme Robotics builds warehouse robots"
    assert record["action"] == "marker_added"
    assert "writer: its answer carried terminal control sequences or bidi overrides; they were removed" in (
        response.warnings
    )


def test_annotation_urls_and_titles_and_a_span_inside_a_removed_sequence_stay_safe():
    text = "Acme\x1b]8;;http://evil.example/\x07 builds robots\x1b]8;;\x07."
    span = {"start_index": text.index("builds"), "end_index": text.index("\x1b]8;;\x07.")}
    ann = {"type": "url_citation", "url": "https://acme.io/page", "title": "T\x1b]0;x\x07itle", **span}
    # A URL carrying a control sequence is refused, not repaired into https://acme.io/page.
    hostile = {"type": "url_citation", "url": "https://acme.io/\x1b[2Jother", "title": "Other", **span}
    response = read_response(json.loads(_agent_body(text, annotations=[ann, hostile])), secrets=[KEY])
    assert response.content.startswith("Acme builds robots [^a1].")
    assert "[^a1]: [Title](https://acme.io/page)" in response.content and "other" not in response.content
    assert "writer: ignored 1 url_citation annotation whose offsets or URL were unusable" in response.warnings
    _clean(response.content)
    _clean(json.dumps(response.raw, ensure_ascii=False))


def test_a_sequence_split_across_stream_deltas_is_removed_whole(server):
    seen: list[str] = []
    reply = Reply(200, _deltas("Acme \x1b]0;PWN", "ED-TITLE\x07builds \x1b[3", "1mrobots."), SSE)
    result, _ = _write(server, reply, stream=True, on_text=seen.append)
    assert isinstance(result, WriterResponse), result
    assert result.content == "Acme builds robots."
    assert seen and seen[-1] == "Acme builds robots."
    for text in seen:  # what a live preview shows never carries a sequence, even half of one
        _clean(text)
    assert "PWN" not in "".join(seen) and "ED-TITLE" not in "".join(seen)


def test_a_reflected_key_is_redacted_everywhere_in_the_answer_with_a_warning(server):
    results = [{"id": 1, "url": "https://acme.io/?k={key}", "title": "Acme {key}", "snippet": "{key}"}]
    body = _agent_body("Acme's key is {key}. [1]", output=[{"type": "search_results", "results": results}])
    result, _ = _write(server, Reply(200, body, JSON))
    assert isinstance(result, WriterResponse)
    assert result.content == "Acme's key is [redacted]. [1]"
    assert result.search_results[0]["url"] == "https://acme.io/?k=[redacted]"
    _clean(json.dumps([result.raw, result.search_results, result.content]))
    assert "writer: its answer echoed the API key back; it was redacted and never stored" in result.warnings


def test_search_results_are_cleaned_field_by_field_and_keep_their_numbers():
    items = [
        {"url": "https://a.example/", "title": "A\x1b]0;x\x07", "snippet": "line\x9b31m one\nline two"},
        {"title": "no url"},
        {"url": "https://b.example/", "title": "B\u202e", "date": "2024\x07", "source": "web\x1b"},
    ]
    web = read_results(items, use_ids=False, secrets=[KEY])
    assert [(r.number, r.url, r.title) for r in web.results] == [
        (1, "https://a.example/", "A"),
        (3, "https://b.example/", "B"),
    ]
    assert web.results[0].snippet == "line one\nline two"
    assert (web.results[1].date, web.results[1].source) == ("2024", "web")


@pytest.mark.parametrize(
    "url",
    [
        "https://a.example/\x1b[2J",
        "https://acme.io/a\r\nSet-Cookie: x=1",
        "https://acme.io/\u202egpj.exe",
        "https://acme.io/a\u200bb",
    ],
    ids=["escape", "crlf", "rlo", "zwsp"],
)
def test_a_result_url_carrying_control_or_invisible_characters_is_refused_not_repaired(url):
    """Cleaning would turn it into another address (``…/a Set-Cookie: x=1``, ``…/exe.jpg``): it is refused,
    its number stays reserved, and nothing of it reaches a result."""
    web = read_results(
        [{"url": url, "title": "A"}, {"url": "https://b.example/", "title": "B"}], use_ids=False, secrets=[]
    )
    assert [(r.number, r.url) for r in web.results] == [(2, "https://b.example/")]
    assert 1 in web.skipped_numbers() and "refused" in web.skipped_numbers()[1]
    assert "Set-Cookie" not in json.dumps(web.indexed())


def test_chat_content_and_reasoning_are_cleaned_before_the_think_block_is_split():
    content = "<think>plan \x1b]52;c;UFdORUQ=\x07quietly</think>Acme \x1b[2Jbuilds robots. " + KEY
    response = read_completion(
        {"choices": [{"message": {"content": content}}], "citations": ["https://acme.io/\x1b[2J"]}, secrets=[KEY]
    )
    assert response.content == "Acme builds robots. [redacted]"
    assert response.reasoning == "plan quietly"
    assert response.citations == [""]  # refused, not repaired into https://acme.io/
    assert response.search_results == []
    assert len(response.warnings) == 3  # control sequences removed, the key redacted, the refused citation skipped


def test_ordinary_text_passes_untouched_and_without_a_warning():
    text = "Acme Robotics — “warehouse robots”, 2019.\n\n| a\t| b |\n[1]"
    response = read_response(json.loads(_agent_body(text)), secrets=[KEY])
    assert response.content == text and response.warnings == []


def test_a_key_shorter_than_any_real_key_does_not_redact_ordinary_words(server):
    """With PERPLEXITY_API_KEY=sandbox (the offline demo), the word "sandbox" stays in the answer."""
    body = _agent_body("Acme tests its robots in a sandbox before shipping.")
    result, _ = _write(server, Reply(200, body, JSON), api_key="sandbox")
    assert isinstance(result, WriterResponse)
    assert result.content == "Acme tests its robots in a sandbox before shipping." and result.warnings == []
