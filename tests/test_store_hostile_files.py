"""Something other than a store file where the store expects one is a clear error, at once.

A FIFO in place of db.json hung every command on the memo; a link to /dev/zero was read until
memory ran out; a symlink loop, or a directory where the lock file belongs, ended in "unexpected
error" (exit 1, traceback in the log) instead of the exit-2 message naming the file."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main


@pytest.fixture
def memo_dir(tmp_path: Path) -> Path:
    d = tmp_path / "memo"
    d.mkdir()
    with MemoStore(d) as store:
        store.add_reject("kestra.com")
    return d


def _open_refused(memo_dir: Path) -> UserError:
    """MemoStore's error, given a few seconds (a FIFO used to block its open forever)."""
    outcome: list[object] = []

    def open_store() -> None:
        try:
            MemoStore(memo_dir).close()
            outcome.append("opened")
        except BaseException as exc:  # handed to the test thread to assert on
            outcome.append(exc)

    worker = threading.Thread(target=open_store, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        os.close(os.open(memo_dir / ".sourcedesk" / "db.json", os.O_WRONLY))  # unblock the open
        worker.join(10)
        pytest.fail("opening the store blocked")
    (result,) = outcome
    assert isinstance(result, UserError), result
    return result


def _replace_db(memo_dir: Path, make) -> Path:
    db = memo_dir / ".sourcedesk" / "db.json"
    db.unlink()
    make(db)
    return db


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (os.mkfifo, "it is not a regular file (a pipe, socket or device)"),
        (lambda p: p.symlink_to("/dev/zero"), "it is not a regular file (a pipe, socket or device)"),
        (lambda p: p.symlink_to(p.name), "it is a symbolic link that leads back to itself, not a store file"),
        (lambda p: p.mkdir(), "it is a directory, not a store file"),
    ],
    ids=["fifo", "dev-zero", "symlink-loop", "directory"],
)
def test_a_db_json_that_is_no_file_is_named_with_a_hint(memo_dir, make, what):
    db = _replace_db(memo_dir, make)
    err = _open_refused(memo_dir)
    assert f"cannot read memo store {db}: {what}" in str(err)
    assert "move db.json out of the way" in (err.hint or "")


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: p.mkdir(), "is a directory, not a lock file"),
        (lambda p: p.symlink_to(p.name), "is a symbolic link that leads back to itself"),
    ],
    ids=["directory", "symlink-loop"],
)
def test_a_lock_that_cannot_be_opened_is_named_with_a_hint(memo_dir, make, what):
    """Opening takes no lock any more (reading needs none); a write takes db.lock."""
    lock = memo_dir / ".sourcedesk" / "db.lock"
    lock.unlink(missing_ok=True)
    make(lock)
    with MemoStore(memo_dir) as store:
        assert store.rejects() == ["kestra.com"]  # reading is untouched
        with pytest.raises(UserError) as caught:
            store.add_reject("alcresta.com")
    err = caught.value
    assert f"{lock} {what}" in str(err)
    assert f"remove {lock}" in (err.hint or "")


def test_the_cli_reports_a_store_that_is_no_file_as_bad_input(memo_dir, capsys):
    (memo_dir / "memo.yaml").write_text("title: T\nsubject: {name: NATS, url: https://nats.io}\nsections: []\n")
    _replace_db(memo_dir, lambda p: p.symlink_to(p.name))
    assert main(["rejects", "--memo", str(memo_dir)]) == 2
    out = capsys.readouterr()
    assert "leads back to itself" in out.err and "unexpected error" not in out.err


def test_a_db_json_truncated_to_nothing_is_reported_not_taken_for_a_new_store(memo_dir):
    """A store always writes at least "{}"; an empty db.json lost its contents, silently until now."""
    (memo_dir / ".sourcedesk" / "db.json").write_bytes(b"")
    with MemoStore(memo_dir) as store:
        assert store.rejects() == []
        (notice,) = store.take_notices()
    assert "memo store db.json was empty (0 bytes): what it held was lost" in notice


@pytest.mark.parametrize(
    "make", [os.mkfifo, lambda p: p.mkdir(), lambda p: p.symlink_to(p.name)], ids=["fifo", "directory", "loop"]
)
def test_a_payload_that_is_no_file_is_treated_as_missing_and_replaced(memo_dir, make):
    """It hung (a FIFO) or crashed with a traceback (a directory, a loop) the first read of the section."""
    with MemoStore(memo_dir) as store:
        saved = store.save_source_set(_source_set())
    payloads = [p for p in (memo_dir / ".sourcedesk" / "payloads").rglob("*") if p.is_file()]
    assert payloads
    for payload in payloads:
        payload.unlink()
        make(payload)
    outcome: list[tuple[SourceSet | None, list[str]]] = []

    def read() -> None:
        with MemoStore(memo_dir) as store:
            outcome.append((store.get_source_set(saved.id), store.take_notices("overview")))

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        for payload in payloads:
            with contextlib.suppress(OSError):
                os.close(os.open(payload, os.O_WRONLY | os.O_NONBLOCK))  # unblock the open
        worker.join(10)
        pytest.fail("reading the source set blocked")
    ((found, notices),) = outcome
    assert found is None  # treated as missing: the section's sources are retrieved again
    assert notices and all("cannot be read" in n for n in notices), notices
    with MemoStore(memo_dir) as store:  # moved aside, so saving the sources again writes it anew
        again = store.save_source_set(_source_set())
        assert store.get_source_set(again.id) is not None


def _source_set() -> SourceSet:
    source = Source(provider="exa", url="https://a.io", text="x" * 5000)
    return SourceSet(section="overview", fingerprint="f00dfeedcafe1234", sources=[source])
