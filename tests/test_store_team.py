"""The team store from the analyst's side: the commands, the faults, the copy from TinyDB.

Against a real PostgreSQL server (``pg_server``, from the pgserver package): a wrong password
or an unreachable host is one line naming the URL without its password; a schema newer than
the program is refused naming its version; ``store migrate`` and ``store copy`` do what they
say and can run again; read-only commands work while someone runs a section, and a write
waits for it visibly or names who holds it; a server stopped in the middle of a run fails the
section with a clear message and leaves nothing half-written.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.holders import whoami
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.store.postgres.global_store import PgGlobalStore
from sourcedesk.store.postgres.memo_store import PgMemoStore
from sourcedesk.tui.cli import main
from tests.conftest import fresh_pg_url

REPO = Path(__file__).resolve().parents[1]
MEMO = """\
title: Synadia
subject: {name: NATS, url: https://nats.io, domains: [synadia.com]}
sections:
  - id: overview
    title: Company overview
    questions: ["What does NATS do?"]
  - id: team
    title: Team
    questions: ["Who founded it?"]
"""


@pytest.fixture
def memo(tmp_path: Path) -> Path:
    d = tmp_path / "synadia"
    d.mkdir()
    (d / "memo.yaml").write_text(MEMO)
    return d


def _err(capsys) -> str:
    return capsys.readouterr().err


# -- faults: reaching the server, its schema ---------------------------------------------


def test_a_wrong_password_is_one_line_naming_the_url_without_it(pg_server, memo, monkeypatch, capsys):
    url = pg_server.url(password="Wr0ng-Passw0rd-xyz")
    monkeypatch.setenv("SOURCEDESK_STORE_URL", url)
    assert main(["rejects", "--memo", str(memo)]) == 2
    err = _err(capsys)
    first = err.splitlines()[0]
    assert first.startswith(f"sourcedesk: the team store postgresql://postgres@127.0.0.1:{pg_server.port}/postgres")
    assert "cannot be reached" in first and "password authentication failed" in first
    assert "Wr0ng-Passw0rd-xyz" not in err and "Traceback" not in err
    assert len(err.splitlines()) == 2 and err.splitlines()[1].startswith("Hint: ")


def test_an_unreachable_host_is_one_line_naming_the_url(memo, monkeypatch, capsys):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("SOURCEDESK_STORE_URL", f"postgresql://alice:s3cret-pass-word@127.0.0.1:{port}/team")
    assert main(["reject", "nats.aero", "--memo", str(memo)]) == 2
    err = _err(capsys)
    assert err.splitlines()[0].startswith(f"sourcedesk: the team store postgresql://alice@127.0.0.1:{port}/team cannot")
    assert "s3cret-pass-word" not in err and "Traceback" not in err


def test_a_schema_newer_than_the_program_is_refused_naming_its_version(pg_server, memo, capsys):
    url = fresh_pg_url(pg_server)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE sd_meta SET value = '7' WHERE key = 'schema_version'")
    with pytest.raises(UserError) as refused:
        PgMemoStore(memo, url)
    assert "has schema version 7, newer than this sourcedesk knows (version 1)" in refused.value.message
    assert main(["store", "migrate", "--url", url]) == 2  # nor is it migrated "down"
    assert "schema version 7" in _err(capsys)


def test_an_empty_database_asks_for_migrate_and_migrate_runs_once(pg_server, memo, capsys):
    url = fresh_pg_url(pg_server, migrate=False)
    with pytest.raises(UserError) as refused:
        PgMemoStore(memo, url)
    assert "has no sourcedesk tables; this sourcedesk needs version 1" in refused.value.message
    assert "sourcedesk store migrate" in (refused.value.hint or "")
    assert main(["store", "migrate", "--url", url]) == 0
    assert "from schema version 0 to 1" in capsys.readouterr().out
    assert main(["store", "migrate", "--url", url]) == 0
    assert "at schema version 1; nothing to do" in capsys.readouterr().out
    with PgMemoStore(memo, url) as store:
        assert store.rejects() == []


# -- sections held, from the command line ------------------------------------------------

_HOLDER = textwrap.dedent(
    """
    import sys
    from sourcedesk.core.domain.models import Source, SourceSet
    from sourcedesk.store.backend import open_memo_store
    store = open_memo_store(sys.argv[1], url=sys.argv[2])
    store.save_source_set(
        SourceSet(section="overview", fingerprint="f" * 16, sources=[Source(provider="exa", url="https://nats.aero/x")])
    )
    hold = store.hold_section("overview")
    print("ready", flush=True)
    sys.stdin.readline()
    hold.release()
    print("released", flush=True)
    sys.stdin.readline()
    """
)


@pytest.fixture(params=["tinydb", "postgresql"])
def team_url(request, monkeypatch) -> str:
    url = "" if request.param == "tinydb" else fresh_pg_url(request.getfixturevalue("pg_server"))
    monkeypatch.setenv("SOURCEDESK_STORE_URL", url)
    return url


def _holder(memo: Path, url: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(memo), url],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    return proc


def test_read_only_commands_work_while_a_section_is_held(memo, team_url, capsys):
    holder = _holder(memo, team_url)
    try:
        assert main(["rejects", "--memo", str(memo), "--json"]) == 0
        assert main(["export", str(memo)]) == 0
        assert main(["store", "status", str(memo)]) == 0
        out = capsys.readouterr().out
        assert f"section overview: {whoami()} (pid {holder.pid}) since " in out
        code = main(["run", str(memo), "--section", "overview"])
        assert code == 1  # a write that cannot wait says exactly what holds it
        err = _err(capsys)
        assert f"section overview of memo synadia is held by {whoami()} (pid {holder.pid}) since " in err
    finally:
        holder.kill()
        holder.communicate(timeout=60)


def test_a_write_waits_visibly_for_the_held_section_then_does_its_work(memo, team_url):
    holder = _holder(memo, team_url)
    env = {**os.environ, "SOURCEDESK_STORE_URL": team_url}
    reject = subprocess.Popen(
        [sys.executable, "-m", "sourcedesk.tui.cli", "reject", "nats.aero", "--memo", str(memo), "--wait", "120"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        waiting = reject.stderr.readline()
        assert waiting.startswith("sourcedesk: waiting up to 120 s for section overview, held by ")
        assert f"(pid {holder.pid})" in waiting
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        out, err = reject.communicate(timeout=120)
        assert reject.returncode == 0, err
        assert "Rejected nats.aero" in out and "removed from its frozen set" in out
    finally:
        holder.kill()
        holder.communicate(timeout=60)
        if reject.poll() is None:
            reject.kill()


# -- store copy: one analyst's TinyDB into the team's store ------------------------------


def test_store_copy_moves_everything_and_runs_again_without_duplicates(pg_url, memo, capsys):
    page = "NATS is a connective technology. " * 400
    with MemoStore(memo) as local:
        v1 = local.save_source_set(
            SourceSet(
                section="overview",
                fingerprint="a" * 16,
                sources=[Source(provider="exa", url="https://nats.io", text=page)],
            )
        )
        local.save_source_set(SourceSet(section="overview", fingerprint="b" * 16))
        local.add_rejects(["nats.aero", "kestra.com"], note="namesakes")
        local.add_reject_name("Kestra Medical")
        local.add_learned_namesakes([LearnedNamesake(name="GNATS", origin="pin", host="gnats.io")])
        local.remove_learned_namesake("GNATS")
        run_id = local.save_run(
            {"section": "overview", "status": "ok", "source_set_id": v1.id, "prompt": "p" * 5000},
            section_state={"last_status": "ok", "note_sha256": "0" * 64},
        )
    GlobalStore().add_reject("alcresta.com")
    assert main(["store", "copy", "--from", "tinydb", "--to", pg_url, str(memo)]) == 0
    first = capsys.readouterr().out
    assert "memo synadia: 2 source set version(s) copied, 0 already there; 1 run(s) copied" in first
    assert "2 rejected domain(s), 1 rejected name(s), 1 learned namesake(s) and 1 section state(s) added" in first
    assert "global lists:" in first
    assert main(["store", "copy", "--to", pg_url, str(memo)]) == 0
    again = capsys.readouterr().out
    assert "0 source set version(s) copied, 2 already there; 0 run(s) copied, 1 already there" in again
    assert "0 rejected domain(s), 0 rejected name(s), 0 learned namesake(s) and 0 section state(s) added" in again
    with PgMemoStore(memo, pg_url) as team:
        assert [s.id for s in team.source_set_versions("overview")] == [v1.id, "overview@v2-bbbbbbbb"]
        assert team.get_source_set(v1.id).sources[0].text == page
        assert team.rejects() == ["kestra.com", "nats.aero"] and team.reject_entries()[0]["note"] == "namesakes"
        assert team.reject_names() == ["Kestra Medical"]
        assert [n.removed for n in team.learned_namesakes(include_removed=True)] == [True]
        assert team.get_run(run_id).prompt == "p" * 5000
        assert team.section_state("overview").note_sha256 == "0" * 64
        assert team.save_source_set(SourceSet(section="overview", fingerprint="c" * 16)).version == 3
    everywhere = PgGlobalStore(pg_url)
    assert everywhere.rejects() == ["alcresta.com"]
    everywhere.close()


# -- the server stops in the middle of a run ---------------------------------------------


def test_a_server_stopped_mid_run_fails_the_section_and_writes_nothing_half(memo, monkeypatch):
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.core.pipeline.run import run_section
    from sourcedesk.sandbox.pg_server import PgServer
    from sourcedesk.sandbox.server import SandboxServer
    from sourcedesk.store.postgres import connection

    monkeypatch.setattr(connection, "POOL_WAIT_S", 1.0)  # how long a section waits for a connection that never comes
    server = PgServer()
    server.start()
    try:
        url = fresh_pg_url(server)
        with SandboxServer(port=0, seed=1) as sandbox:
            monkeypatch.setenv("SOURCEDESK_WRITER_URL", sandbox.url)
            monkeypatch.setenv("PERPLEXITY_API_KEY", "pplx-dummy-key-0123456789")
            monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "0")
            settings = Settings(store_url=url, retrieval_enabled=False)
            loaded = load_memo(memo)
            store = PgMemoStore(memo, url)

            def progress(section: str, stage: str) -> None:
                if stage == "writing":  # the writer is at work: the server goes away now
                    server.stop("immediate")

            outcome = asyncio.run(run_section(loaded, "overview", store=store, settings=settings, progress=progress))
            store.close()
        assert outcome.status == "failed"
        assert f"the team store postgresql://postgres@127.0.0.1:{server.port}/postgres" in outcome.message
        assert "cannot be reached while" in outcome.message and "server closed the connection" in outcome.message
        assert not (memo / "sections").exists() or not list((memo / "sections").glob("*.md"))
        server.start()
        with PgMemoStore(memo, url) as again:
            assert again.runs() == []  # no record of a note that was never written
            assert again.section_state("overview").to_json() == {}
    finally:
        server.cleanup()
    shutil.rmtree(memo / ".sourcedesk", ignore_errors=True)


def test_the_roles_the_readme_sets_up_are_enough_for_an_analyst(pg_server, memo):
    """The README's owner role migrates; the analysts' role reads and writes, holds and listens."""
    import secrets

    tag = secrets.token_hex(4)
    owner, analyst, database = f"owner_{tag}", f"alice_{tag}", f"team_{tag}"
    pg_server.sql(f"CREATE ROLE {owner} LOGIN PASSWORD 'owner-pass-{tag}'")
    pg_server.sql(f"CREATE DATABASE {database} OWNER {owner}")
    pg_server.sql(f"CREATE ROLE analysts_{tag} NOLOGIN")
    pg_server.sql(f"CREATE ROLE {analyst} LOGIN PASSWORD 'alice-pass-{tag}' IN ROLE analysts_{tag}")
    host = f"127.0.0.1:{pg_server.port}/{database}"
    owner_url, analyst_url = (
        f"postgresql://{owner}:owner-pass-{tag}@{host}",
        f"postgresql://{analyst}:alice-pass-{tag}@{host}",
    )
    assert main(["store", "migrate", "--url", owner_url]) == 0
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(f"GRANT USAGE ON SCHEMA public TO analysts_{tag}")
        conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO analysts_{tag}")
    with pytest.raises(UserError):
        PgMemoStore(memo, f"postgresql://{analyst}:wrong-pass@{host}")
    with PgMemoStore(memo, analyst_url) as store:
        assert store.add_reject("nats.aero") and store.add_reject_name("Kestra Medical")
        saved = store.save_source_set(SourceSet(section="overview", fingerprint="a" * 16))
        run_id = store.save_run({"section": "overview", "status": "ok"}, section_state={"last_status": "ok"})
        store.add_learned_namesakes([LearnedNamesake(name="GNATS", origin="pin", host="gnats.io")])
        with store.hold_section("overview"):
            assert set(store.section_holders()) == {"overview"}
        assert store.latest_source_set("overview").id == saved.id and store.get_run(run_id).status == "ok"
