"""``sourcedesk serve`` at the HTTP and websocket level: who gets in, how many, and that every
session's process ends.

The desk runs in the test's event loop (``DeskServer`` on a free loopback port); the client is
aiohttp, sending what a browser sends (the page, then the websocket with an Origin). Sessions
run the real workbench on a copy of the demo memo against the sandbox, except where a test
needs an app that misbehaves or reports what it was given.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import aiohttp
import pytest

from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.backend import open_memo_store
from sourcedesk.store.holders import whoami
from sourcedesk.tui.demo import prepare_demo
from sourcedesk.tui.web.access import AccessPolicy, token_problem
from sourcedesk.tui.web.server import TOKEN_ENV
from tests.serve_support import (
    TOKEN,
    alive,
    closed,
    connect,
    demo_argv,
    open_page,
    origin_of,
    plain,
    read_screen,
    running_desk,
    sessions,
)

# An app that records that it started, and with which environment, then quits.
RECORDER = "import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(dict(os.environ)))"
# An app that speaks first (so it counts as started), then ignores the request to quit and SIGTERM.
STUBBORN = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "sys.stdout.write('__GANGLION__\\n'); sys.stdout.flush(); time.sleep(600)"
)


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0) as server:
        yield server


def run(scenario):
    return asyncio.run(scenario())


def test_the_page_refuses_a_missing_or_wrong_token_with_403_and_starts_no_app(tmp_path):
    marker = tmp_path / "started.json"

    async def scenario():
        async with running_desk([sys.executable, "-c", RECORDER, str(marker)]) as (server, url):
            async with aiohttp.ClientSession() as client:
                for params in ({}, {"token": "desk-test-token-0123456789abcdeX"}, {"token": ""}):
                    async with client.get(url, params=params) as response:
                        body = await response.text()
                        assert response.status == 403, (params, body)
                        assert "token" in body
                        assert "data-session-websocket-url" not in body
                # a websocket with no page behind it: no ticket, nothing starts
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await connect(client, url.replace("http", "ws") + "ws/made-up-ticket", origin_of(url))
                assert refused.value.status == 403
            assert server.started == 0
            assert server.lines == []
        assert not marker.exists()

    run(scenario)


def test_the_websocket_opens_only_from_the_desks_own_page_and_each_page_opens_one_session(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)  # the server's environment holds the token; the app's must not
    marker = tmp_path / "started.json"

    async def scenario():
        async with running_desk([sys.executable, "-c", RECORDER, str(marker)]) as (server, url):
            async with aiohttp.ClientSession() as client:
                for origin in ("http://evil.example", f"http://evil.example:{server.port}", None):
                    ws_url = await open_page(client, url)
                    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                        await connect(client, ws_url, origin)
                    assert refused.value.status == 403, origin
                plain_get = (await open_page(client, url)).replace("ws://", "http://", 1)
                async with client.get(plain_get, headers={"Origin": origin_of(url)}) as response:
                    assert response.status == 400  # the right page and origin, but not a websocket
                    assert "websocket only" in await response.text()
                assert server.started == 0
                assert not marker.exists()
                # from the page's own origin it starts the app, once per page
                ws_url = await open_page(client, url)
                ws = await connect(client, ws_url, origin_of(url))
                # the recorder writes down its environment and quits: its session ends by itself
                await sessions(server, lambda: server.started == 1 and not server.sessions, "the app to run")
                assert marker.exists()
                await ws.close()
                with pytest.raises(aiohttp.WSServerHandshakeError) as replayed:
                    await connect(client, ws_url, origin_of(url))
                assert replayed.value.status == 403
            assert server.started == 1
        environment = json.loads(marker.read_text())
        assert "TEXTUAL_DRIVER" in environment  # it is the app textual-serve started
        assert TOKEN_ENV not in environment

    run(scenario)


def test_without_a_token_the_desk_answers_only_to_loopback_names(tmp_path):
    async def scenario():
        async with running_desk([sys.executable, "-c", "pass"], token=None) as (server, url):
            async with aiohttp.ClientSession() as client:
                for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
                    async with client.get(url, headers={"Host": host}) as response:
                        assert response.status == 200, host
                # a site whose name was rebound to 127.0.0.1 sends its own name
                async with client.get(url, headers={"Host": f"desk.evil.example:{server.port}"}) as response:
                    assert response.status == 403
                    assert "answers only at 127.0.0.1" in await response.text()
            assert server.started == 0

    run(scenario)
    with pytest.raises(ValueError, match="needs a token"):
        AccessPolicy(host="0.0.0.0", port=8000, token=None)
    assert token_problem("short") and token_problem("a token with spaces in it")
    assert token_problem(TOKEN) is None


def test_past_the_limit_the_page_says_the_desk_is_busy_until_a_closed_tab_frees_its_place(tmp_path, sandbox):
    async def scenario():
        async with running_desk(demo_argv(tmp_path, sandbox.url), max_sessions=1) as (server, url):
            async with aiohttp.ClientSession() as client:
                first, second = await open_page(client, url), await open_page(client, url)
                ws = await connect(client, first, origin_of(url))
                await read_screen(ws, bytearray(), b"Company overview")
                pid = server.sessions[1].session.pid
                async with client.get(url, params={"token": TOKEN}) as response:
                    body = await response.text()
                    assert response.status == 503
                    assert "The desk is busy" in body and "1 of 1 sessions are open" in body
                with pytest.raises(aiohttp.WSServerHandshakeError) as busy:
                    await connect(client, second, origin_of(url))
                assert busy.value.status == 503
                assert server.started == 1
                await ws.close()  # the tab closes
                await sessions(server, lambda: not server.sessions, "the closed tab's session to end")
                assert not alive(pid)  # its app process has ended and been reaped: no orphan
                assert await open_page(client, url)  # its place is free again
            assert server.lines[-1] == f"session 1 ended: the app quit (pid {pid})"

    run(scenario)


def test_a_browser_session_is_refused_the_section_a_terminal_holds_and_runs_another(tmp_path, sandbox):
    argv = demo_argv(tmp_path, sandbox.url)
    terminal = open_memo_store(Path(argv[3]))  # the analyst's terminal, on the same memo
    stream = bytearray()

    async def scenario():
        async with running_desk(argv) as (_server, url):
            async with aiohttp.ClientSession() as client:
                ws = await connect(client, await open_page(client, url), origin_of(url))
                await read_screen(ws, stream, b"Company overview")
                with terminal.hold_section("overview", purpose="running it"):
                    await ws.send_str(json.dumps(["stdin", "r"]))  # the cursor is on overview
                    await read_screen(ws, stream, b"overview was not run")
                    await read_screen(ws, stream, whoami().encode())  # who to ask
                    assert b"held by" in plain(stream)
                    await ws.send_str(json.dumps(["stdin", "\x1b[B"]))  # down: product, which nobody holds
                    await ws.send_str(json.dumps(["stdin", "r"]))
                    await read_screen(ws, stream, b"product: ")
                await ws.close()

    try:
        run(scenario)
        assert terminal.runs("overview") == []  # the held section was not run
        assert [r.section for r in terminal.runs("product")] == ["product"]
    finally:
        terminal.close()


def test_an_app_that_ignores_quit_and_sigterm_is_killed(tmp_path):
    async def scenario():
        argv = [sys.executable, "-c", STUBBORN]
        async with running_desk(argv, quit_grace_s=0.2, term_grace_s=0.2) as (server, url):
            async with aiohttp.ClientSession() as client:
                ws = await connect(client, await open_page(client, url), origin_of(url))
                await sessions(server, lambda: server.started == 1, "the app to start")
                pid = server.sessions[1].session.pid
                assert alive(pid)
                await ws.close()
                await sessions(server, lambda: not server.sessions, "the stubborn app's session to end")
                assert not alive(pid)
            assert server.lines[-1] == f"session 1 ended: killed (pid {pid})"

    run(scenario)


def test_stopping_the_desk_ends_every_session(tmp_path, sandbox):
    async def scenario():
        async with aiohttp.ClientSession() as client:
            async with running_desk(demo_argv(tmp_path, sandbox.url)) as (server, url):
                sockets = [await connect(client, await open_page(client, url), origin_of(url)) for _ in range(2)]
                for ws in sockets:  # each app is up: two sessions on one memo (sections are held, not memos)
                    await read_screen(ws, bytearray(), b"Company overview")
                pids = [live.session.pid for live in server.sessions.values()]
                assert len(pids) == 2 and all(alive(pid) for pid in pids)
            # leaving running_desk stopped the server, as Ctrl-C does
            assert not any(alive(pid) for pid in pids)
            assert not server.sessions
            for ws in sockets:  # and each browser was told
                await closed(ws)

    run(scenario)


def test_api_keys_and_the_token_never_reach_the_page(tmp_path, sandbox, monkeypatch):
    exa_key, writer_key = "exa-key-never-on-the-page-5821", "pplx-key-never-on-the-page-9034"
    monkeypatch.setenv("EXA_API_KEY", exa_key)
    monkeypatch.setenv("PERPLEXITY_API_KEY", writer_key)
    monkeypatch.setenv("SOURCEDESK_EXA_URL", sandbox.url)
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", sandbox.url)
    memo = prepare_demo(root=tmp_path / "memo")  # served as the analyst's own memo: keys from the environment
    stream = bytearray()

    async def scenario():
        async with running_desk([sys.executable, "-m", "sourcedesk.tui.web.desk_app", str(memo)]) as (_, url):
            async with aiohttp.ClientSession() as client:
                async with client.get(url, params={"token": TOKEN}) as response:
                    page = await response.text()
                    assert response.headers["Referrer-Policy"] == "no-referrer"
                ws_url = await open_page(client, url)
                ws = await connect(client, ws_url, origin_of(url))
                await read_screen(ws, stream, b"Company overview")
                await ws.send_str(json.dumps(["stdin", "r"]))  # run the first section, with both keys
                await read_screen(ws, stream, b"overview: ")
                await ws.close()
            return page

    page = run(scenario)
    assert "data-session-websocket-url" in page
    for secret in (exa_key, writer_key, TOKEN):
        assert secret not in page
        assert secret.encode() not in stream
    assert b"Perplexity Agent API" in plain(stream)  # the stream was read: the workbench's header is in it
