"""Every test runs with its own config and data dirs and no real keys.

A developer's real ~/.config/sourcedesk or EXA_API_KEY must never leak into a
test (or a test's writes into theirs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTDATA = Path(__file__).resolve().parents[2] / "shared" / "testdata"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, tmp_path_factory):
    base = tmp_path_factory.mktemp("sourcedesk-env")
    monkeypatch.setenv("SOURCEDESK_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("SOURCEDESK_DATA_DIR", str(base / "data"))
    for name in ("EXA_API_KEY", "PERPLEXITY_API_KEY", "SOURCEDESK_EXA_URL", "SOURCEDESK_WRITER_URL"):
        monkeypatch.delenv(name, raising=False)
    yield
