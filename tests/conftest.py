"""Every test runs with its own config and data dirs, no real keys, and the real clock
(moved only by SOURCEDESK_CLOCK_SHIFT_DAYS, which `make test`'s second pass sets).

A developer's real ~/.config/sourcedesk or EXA_API_KEY must never leak into a
test (or a test's writes into theirs).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from sourcedesk.core.domain import clock
from sourcedesk.core.memo.spec import ExaEntry


def examples_per_pass(total: int) -> int:
    """Hypothesis examples for one pass of a property test drawing ``total`` per `make test`.

    `make test` runs the whole suite twice (today's date, then the clock moved), and each
    pass draws fresh random examples: half per pass is as many per `make test` as before."""
    return max(total // 2, 10)


# Hypothesis times nothing: its per-example deadline and its "input generation is slow" check
# read the wall clock, so on a busy machine they failed property tests that were right (a
# 1.08 s generation under a load of 16). A property's bound is its examples, never a speed.
settings.register_profile("sourcedesk", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("sourcedesk")


# External suites (with their licences) and the project's own API fixtures: both in the repo.
TESTDATA = Path(__file__).resolve().parent / "data"
API_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "api"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, tmp_path_factory):
    base = tmp_path_factory.mktemp("sourcedesk-env")
    monkeypatch.setenv("SOURCEDESK_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("SOURCEDESK_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("SOURCEDESK_LOG_DIR", str(base / "logs"))
    for name in ("EXA_API_KEY", "PERPLEXITY_API_KEY", "SOURCEDESK_EXA_URL", "SOURCEDESK_WRITER_URL"):
        monkeypatch.delenv(name, raising=False)
    # SOURCEDESK_CLOCK_SHIFT_DAYS stays: `make test`'s second pass moves every test's clock with it.
    yield
    clock.use(None)  # a clock a test set never outlives it


def exa_entry(entry: object) -> ExaEntry:
    """``entry`` as the Exa include-sources entry the test expects it to be."""
    assert isinstance(entry, ExaEntry), entry
    return entry


def exa_entries(entries: list[object] | list[ExaEntry] | object) -> list[ExaEntry]:
    """Every entry of a section's include-sources, each expected to be an Exa entry."""
    assert isinstance(entries, list)
    return [exa_entry(e) for e in entries]


# -- a real Exa sandbox on loopback, shared by the retrieval tests of one module -----------

EXA_KEY = "sandbox-exa-key-7d41c9"


@pytest.fixture(scope="module")
def sandbox():
    from sourcedesk.sandbox.server import SandboxServer

    with SandboxServer(port=0, exa_key=EXA_KEY, fault_hold_s=3) as sb:
        yield sb


@pytest.fixture
def exa(sandbox, monkeypatch):
    """The sandbox, reset, with the product's settings pointing at it (fast retries and timeouts)."""
    import httpx

    httpx.post(f"{sandbox.url}/_sandbox/reset")
    monkeypatch.setenv("SOURCEDESK_EXA_URL", sandbox.url)
    monkeypatch.setenv("EXA_API_KEY", EXA_KEY)
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "1")
    monkeypatch.setenv("SOURCEDESK_REQUEST_TIMEOUT_S", "0.5")
    return sandbox


def exa_stats(sandbox) -> dict:
    import httpx

    return httpx.get(f"{sandbox.url}/_sandbox/stats").json()["exa"]


def exa_requests(sandbox) -> int:
    return exa_stats(sandbox)["requests"]


# -- a real PostgreSQL server (pgserver's binaries), one per test process --------------------


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server on loopback for the team-store tests, stopped at the end. It comes
    from the pgserver package (a dev dependency): a test that needs it and cannot have it fails."""
    from sourcedesk.sandbox.pg_server import PgServer

    server = PgServer()
    try:
        server.start()
        yield server
    finally:
        server.cleanup()


def fresh_pg_url(server, *, migrate: bool = True) -> str:
    """A URL to a schema of its own on ``server`` (tests never see each other's memos or locks)."""
    import secrets

    schema = f"t_{secrets.token_hex(6)}"
    server.sql(f"CREATE SCHEMA {schema}")
    url = server.url(options=f"options=-csearch_path%3D{schema}")
    if migrate:
        from sourcedesk.store.postgres.connection import Database
        from sourcedesk.store.postgres.opening import migrate_database

        migrate_database(Database(url))
    return url


@pytest.fixture
def pg_url(pg_server) -> str:
    return fresh_pg_url(pg_server)


@pytest.fixture(params=["tinydb", "postgresql"])
def store_url(request) -> str:
    """Each store test runs twice: on TinyDB (URL "") and on a real PostgreSQL server."""
    if request.param == "tinydb":
        return ""
    return fresh_pg_url(request.getfixturevalue("pg_server"))
