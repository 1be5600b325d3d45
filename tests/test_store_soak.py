"""Four analysts on one memo at once, on the team store (the short form of ``make soak-store``).

The same code as the 60-second soak CI runs (``sourcedesk.sandbox.store_soak``), for a few
seconds: four processes reject, un-reject and run sections of one memo through the command
line; afterwards every reject that succeeded is present (unless its own worker lifted it
later), no set version is lost or duplicated, and every note matches its recorded set.
"""

from __future__ import annotations

from sourcedesk.sandbox.store_soak import soak


def test_four_processes_on_one_memo_lose_nothing(pg_server, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCEDESK_DATA_DIR", str(tmp_path / "data"))
    result = soak("postgresql", seconds=5, server=pg_server)
    assert result["reject"] + result["unreject"] > 0 and result["run_ok"] > 0  # the checks below had work to check
    assert result["failed"] == 0
    assert result["notes"] == result["sections"]
