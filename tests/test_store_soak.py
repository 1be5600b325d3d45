"""Four analysts on one memo at once, on the team store (the short form of ``make soak-store``).

The same code as the 60-second soak CI runs (``sourcedesk.sandbox.store_soak``), for a few
seconds, on both backends: four processes reject, un-reject and run sections of one memo through the command
line; afterwards every reject that succeeded is present (unless its own worker lifted it
later), no set version is lost or duplicated, and every note matches its recorded set.
"""

from __future__ import annotations

import pytest

from sourcedesk.sandbox.store_soak import soak


@pytest.mark.parametrize("backend", ["tinydb", "postgresql"])
def test_four_processes_on_one_memo_lose_nothing(backend, request, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCEDESK_DATA_DIR", str(tmp_path / "data"))
    server = request.getfixturevalue("pg_server") if backend == "postgresql" else None
    result = soak(backend, seconds=5, server=server)
    assert result["reject"] + result["unreject"] > 0 and result["run_ok"] > 0, result  # the checks had work
    assert result["failed"] == 0, result
    assert result["notes"] == result["sections"]
