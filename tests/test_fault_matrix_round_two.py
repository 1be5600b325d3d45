"""The fault matrix, issue 20's hostile inputs that are not one server's answer.

Each finishes inside its deadline with a clear message, loses nothing (the previous note
byte-identical, the store readable) and leaks no control character or key: the same
promise as every row of ``tests/test_fault_matrix.py``, whose fixtures and checks these use.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

import sourcedesk.core.pipeline.run as pipeline_run
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main
from tests.fault_cases import GOOD, JSON, _agent
from tests.fault_cases_issue20 import TWO_HOSTS
from tests.hostile_server import HostileServer, Reply
from tests.test_fault_matrix import (
    CHECK_URL_S,
    HANG,
    MEMO_YAML,
    RETRIEVAL_S,
    WRITER_S,
    Observed,
    _assert_no_leaks,
    _environment,
    _files,
    _invoke,
    _stored_sets,
)


@pytest.fixture(scope="module")
def hostile():
    with HostileServer() as server:
        yield server


@pytest.fixture(scope="module")
def writer_sandbox():
    with SandboxServer(port=0, seed=3, exa_key=None, fault_hold_s=1.0) as server:
        yield server


@pytest.fixture(scope="module")
def baseline(hostile, writer_sandbox, tmp_path_factory):
    """A memo that has run once against well-behaved servers: a good frozen set and a note."""
    base = tmp_path_factory.mktemp("round-two-baseline")
    memo = base / "memo"
    memo.mkdir()
    (memo / "memo.yaml").write_text(MEMO_YAML, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        _environment(mp, base, hostile.url, writer_sandbox.url)
        hostile.reset()
        hostile.serve("exa", GOOD)
        assert main(["run", str(memo)]) == 0
    hostile.reset()
    return memo


def _copy(baseline: Path, tmp_path: Path) -> tuple[Path, Path, bytes]:
    memo = tmp_path / "memo"
    shutil.copytree(baseline, memo)
    note = memo / "sections" / "01-overview.md"
    return memo, note, note.read_bytes()


# ---------------------------------------------------------------- 1: two URL parsers, two hosts


def test_check_urls_never_requests_a_url_that_browsers_and_httpx_read_as_two_hosts(
    hostile, tmp_path, monkeypatch, capsys, caplog
):
    """``http://93.184.216.34\\@127.0.0.1:PORT/x`` was vetted as the public address and fetched from loopback."""
    _environment(monkeypatch, tmp_path, hostile.url, hostile.url)
    hostile.reset()
    port = hostile.url.rsplit(":", 1)[1]
    hostile.route("/x", Reply(200, b"<html><title>internal</title></html>", (("Content-Type", "text/html"),)))
    url = TWO_HOSTS.replace(":9/", f":{port}/")
    note = tmp_path / "memo" / "sections" / "01-overview.md"
    note.parent.mkdir(parents=True)
    # an autolink keeps the backslash as written (a markdown link would unescape it into one host)
    note.write_text(
        f"# O\n\nAcme builds robots. [^1] See <{url}>.\n\n## Sources (retrieved)\n\n[^1]: <{url}>\n", "utf-8"
    )
    for extra in ([], ["--allow-private"]):  # refused either way: it is not a private address, it is two
        code, elapsed, out, err, log = _invoke(["check-urls", str(note), "--json", *extra], capsys, caplog)
        rows = json.loads(out)["urls"]
        assert hostile.hits("/x") == 0 and rows
        for row in rows:
            assert row["status"] == "error" and "the HTTP client would connect to 127.0.0.1" in row["detail"], row
        assert elapsed < HANG * CHECK_URL_S and "Traceback" not in err + log
        _assert_no_leaks(Observed(code, elapsed, out, err, log, tmp_path / "memo", _files(tmp_path / "memo")))


# ---------------------------------------------------------------- url_citation offsets: the unit is recorded

_OFFSET_TEXT = "🚀 中文 Acme Robotics builds warehouse robots for retailers. It raised a Series A in 2024."


def _span_in(unit: str, span: str) -> dict:
    def count(text: str) -> int:
        return (
            len(text.encode("utf-16-le")) // 2
            if unit == "utf-16"
            else len(text.encode())
            if unit == "utf-8"
            else len(text)
        )

    at = _OFFSET_TEXT.index(span)
    start = count(_OFFSET_TEXT[:at])
    return {"start_index": start, "end_index": start + count(span)}


@pytest.mark.parametrize("unit", ["utf-16", "utf-8", "none"])
def test_the_run_record_names_the_unit_the_url_citation_offsets_were_read_in(
    hostile, writer_sandbox, baseline, tmp_path, monkeypatch, capsys, caplog, unit
):
    """After an emoji and CJK, offsets counted by a JavaScript (UTF-16) or Go (UTF-8) server bind
    the words they cite; the run record says which unit was used, and "none" (with a warning) when
    no unit lines the spans up, the markers alone then deciding."""
    memo, note, _ = _copy(baseline, tmp_path)
    _environment(monkeypatch, tmp_path, writer_sandbox.url, hostile.url)
    memo_yaml = memo / "memo.yaml"
    memo_yaml.write_text(memo_yaml.read_text().replace("web-search: false", "web-search: true"))
    results = [{"id": 1, "url": "https://acme-robotics.io/about", "title": "About Acme", "snippet": "Robots."}]
    span = _span_in("utf-8" if unit == "none" else unit, "Acme Robotics builds warehouse robots")
    if unit == "none":  # mid-word in every unit
        span = {"start_index": span["start_index"] + 3, "end_index": span["end_index"] - 2}
    annotation = {"type": "url_citation", "url": results[0]["url"], "title": "About Acme", **span}
    hostile.reset()
    hostile.serve("writer", Reply(200, _agent(_OFFSET_TEXT, results=results, annotations=[annotation]), JSON))
    code, _, out, err, _ = _invoke(["run", str(memo), "--json"], capsys, caplog)
    assert code == 0, err
    (outcome,) = json.loads(out)
    (record,) = MemoStore(memo).runs("overview", limit=1)
    assert record.annotation_offsets == unit
    body = note.read_text(encoding="utf-8")
    if unit == "none":
        assert any("nor as UTF-8 bytes" in w for w in outcome["warnings"]), outcome["warnings"]
        assert "[^" not in body.split("\n## ")[0].split("---\n")[-1]  # no span was trusted: no marker placed
    else:  # the marker lands after the cited words, not mid-sentence
        assert "Acme Robotics builds warehouse robots [^" in body, body


# ---------------------------------------------------------------- 4: Ctrl-C while reconciling


def test_ctrl_c_while_a_section_is_reconciled_ends_the_run_within_two_seconds_and_keeps_the_note(
    hostile, writer_sandbox, baseline, tmp_path, monkeypatch, capsys, caplog
):
    """SIGINT at 8 s once exited only after 119 s, said ``ok`` and rewrote the note. The reconciler here
    stands for a long one: it spins until it is stopped, and the run must not wait for it."""
    memo, note, before = _copy(baseline, tmp_path)
    _environment(monkeypatch, tmp_path, writer_sandbox.url, hostile.url)
    hostile.reset()
    hostile.serve("writer", Reply(200, _agent(), JSON))
    started = threading.Event()
    interrupted_at: list[float] = []

    def endless_reconcile(*args, **kwargs):
        started.set()
        deadline = time.monotonic() + 60  # far past the bound below: a run that waits for it fails the test
        while time.monotonic() < deadline:
            pass
        raise AssertionError("the reconciler was never stopped")

    def interrupt_once_reconciling() -> None:
        if started.wait(30):
            interrupted_at.append(time.monotonic())
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(pipeline_run, "reconcile", endless_reconcile)
    threading.Thread(target=interrupt_once_reconciling, daemon=True).start()
    code, elapsed, out, err, log = _invoke(["run", str(memo), "--json"], capsys, caplog)
    finished = time.monotonic()
    assert interrupted_at, "the run never started reconciling"
    # The reconciler would spin 60 s: a run that waited for it misses this hang guard (10x the 2 s promised).
    took = finished - interrupted_at[0]
    print(f"Ctrl-C ended the run {took:.2f} s after SIGINT")
    assert took < HANG * 2.0, f"Ctrl-C took {took:.1f} s to end the run"
    assert code == 130
    (outcome,) = json.loads(out)
    assert outcome["status"] == "cancelled" and "previous note is unchanged" in outcome["message"]
    assert note.read_bytes() == before
    _stored_sets(memo)  # the store still reads, nothing quarantined
    _assert_no_leaks(Observed(code, elapsed, out, err, log, memo, _files(memo)))


# ---------------------------------------------------------------- 7: a YAML alias bomb


def _bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["                x0: &x0 [" + ", ".join(['"lol"'] * width) + "]"]
    lines += [f"                x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines)


def test_a_yaml_alias_bomb_in_a_free_form_field_is_refused_at_load_before_anything_expands_it(
    hostile, baseline, tmp_path, monkeypatch, capsys, caplog
):
    """A 700-byte ``contents.summary.schema`` ran 110 s to 5 GB; a smaller one sent a 7 MB body to Exa."""
    memo, note, before = _copy(baseline, tmp_path)
    text = (memo / "memo.yaml").read_text(encoding="utf-8")
    text += (
        "        contents:\n          summary:\n            schema:\n              type: object\n"
        "              bomb:\n" + _bomb() + "\n"
    )
    (memo / "memo.yaml").write_text(text, encoding="utf-8")
    _environment(monkeypatch, tmp_path, hostile.url, hostile.url)
    hostile.reset()
    hostile.serve("exa", GOOD)
    code, elapsed, out, err, log = _invoke(["retrieve", str(memo), "--refresh", "--json"], capsys, caplog, peak_mb=64)
    assert code == 2 and elapsed < HANG * RETRIEVAL_S  # refused at load: before any request
    assert "expands to" in err and "through YAML aliases" in err and "memo.yaml:" in err
    assert hostile.hits("/search") == 0 and note.read_bytes() == before
    _assert_no_leaks(Observed(code, elapsed, out, err, log, memo, _files(memo)))


# ---------------------------------------------------------------- 10: reconcile and tidy read regular files


@pytest.mark.parametrize("command", ["reconcile", "tidy"])
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "over-the-cap"])
def test_reconcile_and_tidy_read_regular_files_only_and_no_more_than_the_memo_cap(
    tmp_path, monkeypatch, capsys, caplog, command, kind
):
    """``reconcile /dev/zero`` grew to 3.8 GB in 3.6 s, and a FIFO hung both commands."""
    _environment(monkeypatch, tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9")
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps([{"url": "https://acme-robotics.io/about", "title": "About"}]), "utf-8")
    if kind == "dev-zero":
        path = Path("/dev/zero")
    elif kind == "fifo":
        path = tmp_path / "draft.md"
        os.mkfifo(path)
    else:
        path = tmp_path / "draft.md"
        path.write_text("Acme builds robots. [^E1]\n" * 90_000, encoding="utf-8")  # 2.3 MB
    args = ["reconcile", str(path), "--sources", str(sources)] if command == "reconcile" else ["tidy", str(path)]
    code, elapsed, _, err, log = _invoke(args, capsys, caplog, peak_mb=32)
    assert code == 2 and elapsed < HANG * 1.0, err  # a FIFO that hangs would never return
    expected = "larger than 2 MB" if kind == "over-the-cap" else "not a regular file"
    assert expected in err and "Traceback" not in err + log
    if kind == "over-the-cap":
        assert path.read_text(encoding="utf-8").count("\n") == 90_000  # tidy did not touch it


# ---------------------------------------------------------------- 12: leftovers


def test_a_run_removes_stale_temporaries_and_refuses_a_note_that_is_a_symbolic_link(
    writer_sandbox, hostile, baseline, tmp_path, monkeypatch, capsys, caplog
):
    """A kill -9 left a hidden ``.tmp`` that no later run removed; a note that was a symlink had its
    target's text copied into the store."""
    memo, note, _ = _copy(baseline, tmp_path)
    _environment(monkeypatch, tmp_path, writer_sandbox.url, writer_sandbox.url)
    shard = memo / ".sourcedesk" / "payloads" / "ab"
    shard.mkdir(parents=True, exist_ok=True)
    stale = [
        memo / "sections" / ".01-overview.md.0a1b2c3d.tmp",
        memo / ".memo.md.0a1b2c3d.tmp",
        shard / ".ab12.0a1b2c3d.tmp",  # a payload's, two folders down
    ]
    fresh = memo / "sections" / ".01-overview.md.99999999.tmp"  # another writer's, this very moment
    for path in [*stale, fresh]:
        path.write_text("half a note", encoding="utf-8")
    hour_ago = time.time() - 3600
    for path in stale:
        os.utime(path, (hour_ago, hour_ago))
    code, _, _, err, _ = _invoke(["run", str(memo), "--json"], capsys, caplog)
    assert code == 0, err
    assert not any(p.exists() for p in stale) and fresh.exists()

    outside = tmp_path / "outside.md"
    outside.write_text("TEXT-OUTSIDE-THE-MEMO\n", encoding="utf-8")
    note.unlink()
    note.symlink_to(outside)
    code, elapsed, out, err, _ = _invoke(["run", str(memo), "--json"], capsys, caplog)
    assert code == 1 and elapsed < HANG * WRITER_S
    (outcome,) = json.loads(out)
    assert "is a symbolic link" in outcome["message"]
    assert note.is_symlink() and outside.read_text(encoding="utf-8") == "TEXT-OUTSIDE-THE-MEMO\n"
    stored = [p for p in (memo / ".sourcedesk").rglob("*") if p.is_file() and b"TEXT-OUTSIDE" in p.read_bytes()]
    assert stored == []
    code, _, _, err, _ = _invoke(["export", str(memo)], capsys, caplog)
    assert code == 2 and "is a symbolic link" in err
