"""``sourcedesk run`` and ``sourcedesk export`` as an analyst types them (against the sandbox)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sourcedesk.core.net.urls import normalise_url
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.tui.cli import main

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "run" / "nats-memo"


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=1, fault_hold_s=5.0) as server:
        yield server


def _post(sandbox, path: str, payload) -> None:
    httpx.post(sandbox.url + path, json=payload, timeout=5).raise_for_status()


@pytest.fixture
def memo_dir(tmp_path, sandbox, monkeypatch) -> Iterator[Path]:
    _post(sandbox, "/_sandbox/reset", {})
    monkeypatch.setenv("SOURCEDESK_EXA_URL", sandbox.url)
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", sandbox.url)
    monkeypatch.setenv("EXA_API_KEY", "exa-dummy-key-0123456789")
    monkeypatch.setenv("PERPLEXITY_API_KEY", "pplx-dummy-key-0123456789")
    monkeypatch.setenv("SOURCEDESK_MAX_RETRIES", "1")
    monkeypatch.setenv("SOURCEDESK_RETRY_MAX_WAIT_S", "1")
    target = tmp_path / "memo"
    shutil.copytree(FIXTURE, target)
    yield target
    _post(sandbox, "/_sandbox/reset", {})


def test_run_prints_one_line_per_section_and_exits_0(memo_dir, capsys):
    assert main(["run", str(memo_dir), "--section", "overview", "--section", "funding"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert re.match(r"^overview: ok — \d+ verified.*\$\d+\.\d{4} → sections/01-overview\.md$", lines[0])
    assert any(re.match(r"^funding: ok — .*→ sections/03-funding\.md$", ln) for ln in lines)
    assert lines[-1].startswith("2 section(s), total $")
    assert (memo_dir / "sections" / "01-overview.md").is_file()
    assert not (memo_dir / "sections" / "02-competitors.md").exists()


def test_run_json_lists_outcomes(memo_dir, capsys):
    assert main(["run", str(memo_dir), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["section"] for d in data] == ["overview", "competitors", "funding", "notes"]
    for d in data:
        assert d["status"] == "ok"
        assert isinstance(d["report"]["verified"], int) and d["run_id"] and d["source_set_id"]
        assert Path(d["note_path"]).is_file()
        assert set(d["timings"]) == {"retrieval_s", "writer_s", "total_s"}


def test_run_exits_1_and_names_the_failed_section_and_why(memo_dir, capsys, sandbox):
    _post(sandbox, "/_sandbox/faults", ["writer:401"])
    assert main(["run", str(memo_dir), "--section", "overview"]) == 1
    captured = capsys.readouterr()
    assert "overview: FAILED" in captured.out
    assert re.search(r"section overview failed: writer failed: .*HTTP 401", captured.err)
    assert (captured.out + captured.err).count("HTTP 401") == 1  # the error is printed once (issue 19)
    assert "pplx-dummy-key" not in captured.out + captured.err
    assert not (memo_dir / "sections" / "01-overview.md").exists()


def test_unknown_section_is_a_user_error_with_exit_2(memo_dir, capsys):
    assert main(["run", str(memo_dir), "--section", "nope"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "overview" in err  # names the bad id and the valid ones
    assert "Traceback" not in err


def test_missing_memo_is_a_user_error(tmp_path, capsys):
    assert main(["run", str(tmp_path / "absent")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_export_after_run_gives_one_deduplicated_memo(memo_dir, capsys):
    assert main(["run", str(memo_dir)]) == 0
    capsys.readouterr()
    assert main(["export", str(memo_dir)]) == 0
    assert "wrote" in capsys.readouterr().out
    text = (memo_dir / "memo.md").read_text(encoding="utf-8")
    prose, _, sources = text.partition("\n## Sources\n")
    assert prose.startswith("# NATS / Synadia — company profile\n")
    assert list(re.findall(r"^## (.+)$", prose, re.M)) == [
        "Company overview",
        "Competitive landscape",
        "Funding and investors",
        "Call notes",
    ]
    definitions = dict(re.findall(r"^\[\^([^\]\s]+)\]:\s*(.*)$", sources, re.M))
    markers = re.findall(r"\[\^([^\]\s]+)\]", prose)
    assert set(markers) == set(definitions)  # no orphans, no unused definitions
    numbers = list(dict.fromkeys(int(m) for m in markers))
    assert numbers == list(range(1, len(numbers) + 1))  # numbered by first appearance
    urls = [
        normalise_url(m.group(1))
        for d in definitions.values()
        if (m := re.search(r"\]\((<?[^)\s>]+)>?\)", d)) and m.group(1).startswith("http")
    ]
    assert urls and len(urls) == len(set(urls))  # one definition per URL
