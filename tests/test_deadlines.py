"""Total deadlines and size caps: the primitives every client uses, and the retrieval stage's.

A trickling server (one byte a second) never trips httpx's per-read timeout; these
bounds count the whole job. Against a real loopback server a test can only bound the wall
time from above: each bound is at least 10x the deadline under test, and far below what the
job would take without the deadline (a 30 s stall, a 100 s trickle), so a loaded machine
cannot fail it and a missing deadline cannot pass it. The writer's client adopts ``fetch_bounded`` /
``iter_lines_capped`` and ``writer_deadline_s`` in one step; the tests below pin the
primitives it will use against a real loopback server.
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.net.bounded import ResponseTooLarge, fetch_bounded, iter_lines_capped, read_capped
from sourcedesk.core.net.deadline import Deadline, DeadlineExceeded, budget, current_deadline, deadline_scope, within
from sourcedesk.core.net.policy import RetryPolicy, send_with_retries
from sourcedesk.core.sources.providers.exa.provider import exa_settings
from sourcedesk.tui.cli import main
from tests.hostile_server import HostileServer, Reply
from tests.virtual_time import run_virtual


@pytest.fixture(scope="module")
def server():
    with HostileServer() as hs:
        yield hs


def _fetch(url: str, *, seconds: float, max_bytes: int = 1 << 20):
    async def go():
        async with httpx.AsyncClient() as client:
            request = client.build_request("GET", url)
            return await fetch_bounded(client, request, seconds=seconds, max_bytes=max_bytes, what="Test")

    started = time.monotonic()
    try:
        result = asyncio.run(go())
    except Exception as exc:  # the outcome under test
        result = exc
    return result, time.monotonic() - started


def test_a_complete_answer_comes_back_whole_and_closed(server):
    server.route("/ok", Reply(body=b'{"a": 1}'))
    response, _ = _fetch(f"{server.url}/ok", seconds=2)
    assert response.status_code == 200 and response.json() == {"a": 1}


def test_a_one_byte_a_second_server_ends_at_the_total_deadline(server):
    server.route("/drip", Reply(body=b"x" * 100, drip_s=1.0))
    err, took = _fetch(f"{server.url}/drip", seconds=0.6)
    assert isinstance(err, DeadlineExceeded) and isinstance(err, httpx.TimeoutException)  # retried like a timeout
    assert took < 10 * 0.6  # the whole body would take 100 s
    assert "still trickling in after 0.6 s" in str(err) and "too slowly" in str(err)


@pytest.mark.parametrize(
    "reply, words",
    [
        (Reply(body=b"{}", stall_s=30), "did not answer within 0.4 s (the connection stalled)"),
        (Reply(body=b"{}", stall_after_headers_s=30), "sent headers but no body"),
    ],
)
def test_a_stalled_server_ends_at_the_deadline_and_says_where_it_stalled(server, reply, words):
    server.route("/stall", reply)
    err, took = _fetch(f"{server.url}/stall", seconds=0.4)
    assert isinstance(err, DeadlineExceeded) and words in str(err)
    assert took < 10 * 0.4  # the stall lasts 30 s


def test_a_body_over_the_cap_stops_reading_at_the_cap(server):
    server.route("/big", Reply(body=b"y" * 300_000, chunked=True))
    err, _ = _fetch(f"{server.url}/big", seconds=5, max_bytes=64 * 1024)
    assert isinstance(err, ResponseTooLarge) and "larger than the 64 KiB cap" in str(err)
    assert not isinstance(err, httpx.TimeoutException)  # an answer, not an accident: never retried


def test_an_announced_length_over_the_cap_is_refused_before_reading(server):
    server.route("/huge", Reply(body=b"{}", content_length=50 * 1024 * 1024))
    err, _ = _fetch(f"{server.url}/huge", seconds=5, max_bytes=1024)
    # refused on the announced length: reading would have ended at the deadline (the server sends
    # 2 of the 50 MiB), as DeadlineExceeded, not as ResponseTooLarge with the length it declared
    assert isinstance(err, ResponseTooLarge) and err.declared == 50 * 1024 * 1024 and "50 MiB" in str(err)


def test_streamed_lines_are_capped_too(server):
    events = b"".join(b"data: " + json.dumps({"i": i}).encode() + b"\n\n" for i in range(2000))
    server.route("/sse", Reply(body=events, headers=(("Content-Type", "text/event-stream"),), chunked=True))

    async def read(limit: int) -> list[str]:
        got: list[str] = []
        async with httpx.AsyncClient() as client, client.stream("GET", f"{server.url}/sse") as response:
            async for line in iter_lines_capped(response, limit, what="The writer"):
                got.append(line)
        return got

    assert len([ln for ln in asyncio.run(read(1 << 20)) if ln.startswith("data:")]) == 2000
    with pytest.raises(ResponseTooLarge, match="The writer's answer is larger than the 4 KiB cap"):
        asyncio.run(read(4096))


def test_read_capped_keeps_what_fits(server):
    server.route("/fits", Reply(body=b"z" * 1000))

    async def go():
        async with httpx.AsyncClient() as client, client.stream("GET", f"{server.url}/fits") as response:
            return await read_capped(response, 1000, what="T")

    assert asyncio.run(go()) == b"z" * 1000


# ---------------------------------------------------------------- deadlines in force


def test_within_cancels_the_job_and_names_what_ran_out():
    ended: list[float] = []

    async def slow():
        try:
            await asyncio.sleep(10)
        finally:
            ended.append(asyncio.get_running_loop().time())

    with pytest.raises(
        DeadlineExceeded, match=r"the writer call \(writer_deadline_s\) did not finish within its 0\.3 s"
    ):
        run_virtual(within(slow(), 0.3, what="the writer call (writer_deadline_s)"))
    # cancelled at the deadline, not at 10 s (the loop's clock is virtual: no real waiting)
    assert len(ended) == 1 and ended[0] <= 0.3


def test_the_tightest_deadline_is_the_one_in_force():
    async def go():
        outer = Deadline(0.5, "outer")
        with deadline_scope(outer):
            with deadline_scope(Deadline(30, "inner")):
                assert current_deadline() is outer
                assert budget(10) <= 0.5
        assert current_deadline() is None
        assert budget(10) == 10

    asyncio.run(go())


def test_a_retry_that_could_not_finish_in_time_is_not_started():
    sleeps: list[float] = []

    async def fake_sleep(s: float) -> None:
        sleeps.append(s)

    async def go():
        calls = 0

        async def send() -> httpx.Response:
            nonlocal calls
            calls += 1
            return httpx.Response(429, headers={"Retry-After": "5"}, request=httpx.Request("POST", "http://x"))

        with deadline_scope(Deadline(2.0, "the section's retrieval (retrieval_deadline_s)")):
            out = await send_with_retries(send, RetryPolicy(max_retries=4), sleep=fake_sleep)
        return out, calls

    out, calls = asyncio.run(go())
    assert calls == 1 and sleeps == []  # waiting 5 s would outlast the 2 s left
    assert out.stopped and "retrieval_deadline_s" in out.stopped
    assert out.attempts[0].retry_after_s == 5.0


def test_a_retry_left_with_no_time_reports_what_used_the_time_up(server):
    """The warning must name the cause (a trickling server), not only 'did not finish in time'."""
    from sourcedesk.core.sources.providers.exa.client import ExaClient
    from sourcedesk.core.sources.providers.exa.errors import ExaError

    body = json.dumps({"results": [{"url": "https://acme-robotics.io/a", "title": "A"}]}).encode()
    server.reset()
    server.serve("exa", Reply(body=body, drip_s=0.2))

    async def go() -> ExaError:
        section = Deadline(1.0, "the section's retrieval (retrieval_deadline_s)")

        async def use_up_the_rest(_wait: float) -> None:  # a backoff that ends as the section's time does
            await asyncio.sleep(max(section.remaining, 0) + 0.01)

        client = ExaClient(server.url, "exa-deadline-test-key", timeout=0.5, sleep=use_up_the_rest)
        try:
            with deadline_scope(section):
                await client.search({"query": "acme", "numResults": 1})
        except ExaError as exc:
            return exc
        finally:
            await client.aclose()
        raise AssertionError("the search should have failed")

    error = asyncio.run(go())
    assert "trickling" in str(error), str(error)


def test_the_deadline_settings_have_bounded_defaults():
    s = Settings()
    assert s.retrieval_deadline_s <= 60 and s.writer_deadline_s <= 240
    assert s.request_timeout_s <= s.retrieval_deadline_s
    assert s.check_timeout_s <= s.check_url_deadline_s <= s.check_deadline_s
    assert exa_settings(s).exa_max_response_bytes > 0 and s.writer_max_response_bytes > 0 and s.check_max_page_bytes > 0


# ---------------------------------------------------------------- a section's retrieval in all

TWO_ENTRIES = """\
title: Acme
subject: {name: Acme Robotics, url: https://acme-robotics.io}
sections:
  - id: overview
    title: Overview
    include-sources:
      - {provider: exa, query: "acme one", pin: none}
      - {provider: exa, query: "acme two", pin: none}
      - {provider: files, glob: "notes/*.md"}
"""


def test_a_slow_entry_uses_up_the_sections_deadline_and_later_ones_say_so(server, tmp_path, monkeypatch, capsys):
    """Each request is answered just inside its own deadline, slowly enough that the section's runs out."""
    body = json.dumps({"results": [{"url": "https://acme-robotics.io/a", "title": "A"}]}).encode()
    server.reset()
    server.serve("exa", Reply(body=body, stall_s=2.0))
    memo = tmp_path / "memo"
    (memo / "notes").mkdir(parents=True)
    (memo / "memo.yaml").write_text(TWO_ENTRIES, encoding="utf-8")
    (memo / "notes" / "call.md").write_text("# Call notes\n\nAcme ships robots.\n", encoding="utf-8")
    monkeypatch.setenv("SOURCEDESK_EXA_URL", server.url)
    monkeypatch.setenv("EXA_API_KEY", "exa-deadline-test-key")
    # the first answer (2 s) fits in its request's 6 s and the section's 3 s with a second to spare
    # on a busy machine; the second cannot
    monkeypatch.setenv("SOURCEDESK_REQUEST_TIMEOUT_S", "6")
    monkeypatch.setenv("SOURCEDESK_RETRIEVAL_DEADLINE_S", "3")
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "0")
    started = time.monotonic()
    assert main(["retrieve", str(memo), "--json"]) == 0
    took = time.monotonic() - started
    section = json.loads(capsys.readouterr().out)["sections"][0]
    warnings = [w["message"] for w in section["warnings"]]
    assert took < 10 * 3, took  # a hang, not a slow machine
    assert section["degraded"]
    assert any("exa entry 2" in w and "retrieval_deadline_s" in w for w in warnings), warnings
    assert [s["provider"] for s in section["sources"]] == ["exa", "files"]  # local files are still read


def test_a_trickling_exa_that_outlasts_the_retry_names_the_cause_and_the_deadline_once(
    server, tmp_path, monkeypatch, capsys
):
    """The retry's own deadline message and the retry loop's 'would have run out' said the same thing twice."""
    body = json.dumps({"results": [{"url": "https://acme-robotics.io/a", "title": "A"}]}).encode()
    server.reset()
    server.serve("exa", Reply(body=body, drip_s=0.2))
    memo = tmp_path / "memo"
    memo.mkdir()
    (memo / "memo.yaml").write_text(TWO_ENTRIES.replace('      - {provider: files, glob: "notes/*.md"}\n', ""))
    monkeypatch.setenv("SOURCEDESK_EXA_URL", server.url)
    monkeypatch.setenv("EXA_API_KEY", "exa-deadline-test-key")
    monkeypatch.setenv("SOURCEDESK_REQUEST_TIMEOUT_S", "0.6")
    monkeypatch.setenv("SOURCEDESK_RETRIEVAL_DEADLINE_S", "1.0")
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "2")
    started = time.monotonic()
    assert main(["retrieve", str(memo), "--json"]) == 0
    assert time.monotonic() - started < 10 * 1.0  # trickled out in full, the answer would take 16 s a try
    section = json.loads(capsys.readouterr().out)["sections"][0]
    warnings = [w["message"] for w in section["warnings"]]
    assert section["degraded"] and any("trickling" in w for w in warnings), warnings
    assert all(w.count("retrieval_deadline_s") == 1 for w in warnings if "retrieval_deadline_s" in w), warnings


def test_check_urls_stops_at_its_global_deadline_and_lists_what_it_did_not_reach(server, tmp_path, monkeypatch, capsys):
    server.reset()
    paths = [f"/stall/{i}" for i in range(6)]
    for path in paths:
        server.route(path, Reply(body=b"<html></html>", stall_s=30))
    note = tmp_path / "sections" / "01-overview.md"
    note.parent.mkdir(parents=True)
    definitions = "\n".join(f"[^{i + 1}]: [Page {i}]({server.url}{p})" for i, p in enumerate(paths))
    markers = " ".join(f"[^{i + 1}]" for i in range(len(paths)))
    note.write_text(f"# Overview\n\nAcme builds robots. {markers}\n\n{definitions}\n", encoding="utf-8")
    for name, value in {
        "SOURCEDESK_CHECK_CONCURRENCY": "1",
        "SOURCEDESK_CHECK_TIMEOUT_S": "0.4",
        "SOURCEDESK_CHECK_MAX_RETRIES": "0",
        "SOURCEDESK_CHECK_URL_DEADLINE_S": "0.5",
        "SOURCEDESK_CHECK_DEADLINE_S": "1.3",
    }.items():
        monkeypatch.setenv(name, value)
    started = time.monotonic()
    code = main(["check-urls", str(note), "--json", "--allow-private"])
    took = time.monotonic() - started
    report = json.loads(capsys.readouterr().out)
    assert code == 0, code  # nothing could be decided: listed, not failed
    assert took < 10 * 1.3, took  # six 30 s stalls, one at a time, would take 3 minutes
    details = [row["detail"] for row in report["urls"]]
    assert all(row["status"] == "error" for row in report["urls"])
    assert any("stalled" in d for d in details), details
    assert any(d.startswith("not checked: the whole check (check_deadline_s) ran out") for d in details), details
    assert any("not fully checked within their deadline" in w for w in report["warnings"])
