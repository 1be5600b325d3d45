"""Every test runs with its own config and data dirs and no real keys.

A developer's real ~/.config/sourcedesk or EXA_API_KEY must never leak into a
test (or a test's writes into theirs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sourcedesk.core.memo.spec import ExaEntry

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
    yield


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


# -- the browser test says so when it cannot run ---------------------------------------------

BROWSER_NOT_RUN = "browser test not run"  # the start of tests/test_serve_browser.py's skip reason


def pytest_terminal_summary(terminalreporter) -> None:
    """One line when the browser test was skipped for want of a Chromium (-q hides skips)."""
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if BROWSER_NOT_RUN in reason:
            terminalreporter.write_line(reason.removeprefix("Skipped: "), yellow=True, bold=True)
            return
