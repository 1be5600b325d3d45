"""The memo store and the global rejection list: what an analyst would notice if they broke.

Lost or half-written data after a crash, two windows writing one memo, a store
that balloons with page texts, an API key written to disk, a damaged file that
crashes the app or is silently emptied.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import OmittedSource, RunWarning, Source, SourceSet
from sourcedesk.core.files import atomic as atomic_file
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.memo_store import MemoStore

REPO = Path(__file__).resolve().parents[1]


def _set(section: str = "overview", fingerprint: str = "f00dfeedcafe1234", **kw) -> SourceSet:
    sources = kw.pop(
        "sources",
        [
            Source(
                provider="exa", url="https://nats.io/about", title="About NATS", summary="NATS is a messaging system."
            ),
            Source(provider="exa", url="https://synadia.com", title="Synadia", marker="E2"),
        ],
    )
    return SourceSet(section=section, fingerprint=fingerprint, sources=sources, **kw)


@pytest.fixture
def memo_dir(tmp_path: Path) -> Path:
    d = tmp_path / "memo"
    d.mkdir()
    return d


def _db(memo_dir: Path) -> Path:
    return memo_dir / ".sourcedesk" / "db.json"


# -- source sets -------------------------------------------------------------------------


def test_versions_increment_and_old_versions_stay_readable(memo_dir):
    with MemoStore(memo_dir) as store:
        v1 = store.save_source_set(_set(fingerprint="aaaaaaaa11112222"))
        v2 = store.save_source_set(
            _set(fingerprint="bbbbbbbb33334444", sources=[Source(provider="exa", url="https://x.io")])
        )
        other = store.save_source_set(_set(section="team"))
    assert v1.id == "overview@v1-aaaaaaaa" and v1.version == 1
    assert v2.id == "overview@v2-bbbbbbbb" and v2.version == 2
    assert other.id == "team@v1-f00dfeed"

    with MemoStore(memo_dir) as store:  # reopened: everything came from disk
        assert store.latest_source_set("overview").id == v2.id
        assert [s.version for s in store.source_set_versions("overview")] == [1, 2]
        old = store.get_source_set(v1.id)
        assert old is not None and [s.url for s in old.sources] == ["https://nats.io/about", "https://synadia.com"]
        assert old.sources[1].marker == "E2"
        assert store.latest_source_set("nope") is None
        assert store.get_source_set("overview@v9-00000000") is None


def test_saving_returns_a_copy_and_never_mutates_the_callers_set(memo_dir):
    original = _set()
    with MemoStore(memo_dir) as store:
        stored = store.save_source_set(original)
    assert original.id == "" and original.version == 0
    assert stored.id and stored.memo == "memo"


def test_large_texts_go_to_payload_files_and_come_back(memo_dir):
    page = "NATS JetStream persistence. " * 7200  # ~200 KB
    big = Source(provider="exa", url="https://docs.nats.io/jetstream", text=page, full_text=True)
    omitted = OmittedSource(source=Source(provider="exa", url="https://nats.io/blog", text=page + "!"), size=len(page))
    ss = _set(sources=[big], omitted=[omitted], warnings=[RunWarning(code="truncated", message="1 omitted")])
    with MemoStore(memo_dir) as store:
        saved = store.save_source_set(ss)
        store.save_source_set(ss)  # same text again: stored once
    assert _db(memo_dir).stat().st_size < 2_000
    payload_files = [p for p in (memo_dir / ".sourcedesk" / "payloads").rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in payload_files) < 2 * len(page) + 10_000  # each page once
    with MemoStore(memo_dir) as store:
        back = store.get_source_set(saved.id)
    assert back.sources[0].text == page
    assert back.omitted[0].source.text == page + "!"
    assert back.warnings[0].code == "truncated"
    assert back == saved


def test_a_missing_payload_file_sets_the_source_set_aside_with_a_notice(memo_dir):
    with MemoStore(memo_dir) as store:
        saved = store.save_source_set(_set(sources=[Source(provider="exa", url="https://a.io", text="x" * 5000)]))
    for p in (memo_dir / ".sourcedesk" / "payloads").rglob("*"):
        if p.is_file():
            p.unlink()
    with MemoStore(memo_dir) as store:
        # Treated as missing (the section retrieves again), never a traceback and never half a set.
        assert store.get_source_set(saved.id) is None
        assert store.latest_source_set("overview") is None
        notices = store.take_notices("overview")
    assert len(notices) == 1 and "payload" in notices[0] and "missing" in notices[0]
    kept = list((memo_dir / ".sourcedesk" / "quarantine").glob("source_sets-*.json"))
    assert len(kept) == 1 and saved.id in kept[0].read_text()


# -- atomic writes and damaged files -----------------------------------------------------


def test_crash_during_write_leaves_the_previous_file_byte_identical(memo_dir, monkeypatch):
    store = MemoStore(memo_dir)
    store.add_reject("kestra.com")
    store.save_source_set(_set())
    before = _db(memo_dir).read_bytes()

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)  # what the atomic write renames with
    with pytest.raises(OSError):
        store.add_reject("alcresta.com")
    with pytest.raises(OSError):
        store.save_source_set(_set())
    assert _db(memo_dir).read_bytes() == before
    leftovers = [p.name for p in (memo_dir / ".sourcedesk").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []

    monkeypatch.undo()
    # The failed writes did not leak into what this process sees either.
    assert store.rejects() == ["kestra.com"]
    assert [s.version for s in store.source_set_versions("overview")] == [1]
    assert store.add_reject("alcresta.com")
    store.close()
    with MemoStore(memo_dir) as again:
        assert again.rejects() == ["alcresta.com", "kestra.com"]


@pytest.fixture
def umask():
    """Set the process umask for one test (and put the old one back)."""
    old = os.umask(0o022)
    os.umask(old)
    try:
        yield os.umask
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640)])
def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path, umask, mask, expected):
    from sourcedesk.core.notes.note import write_note_atomic

    umask(mask)
    atomic_file.atomic_write_text(tmp_path / "memo.md", "# Memo\n")
    write_note_atomic(tmp_path / "sections" / "01-overview.md", "note\n")
    assert stat.S_IMODE((tmp_path / "memo.md").stat().st_mode) == expected  # not mkstemp's 0600
    assert stat.S_IMODE((tmp_path / "sections" / "01-overview.md").stat().st_mode) == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memo.md", "sections"]  # no temp files left


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o755, 0o444], ids=oct)
def test_replacing_a_file_keeps_its_mode(tmp_path, umask, mode):
    umask(0o077)  # the umask must not matter for a file that exists
    path = tmp_path / "memo.md"
    path.write_text("old\n")
    os.chmod(path, mode)
    atomic_file.atomic_write_text(path, "new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["memo.md"]


def test_damaged_db_is_reported_and_kept_not_emptied(memo_dir):
    with MemoStore(memo_dir) as store:
        store.add_reject("kestra.com")
    garbage = b'{"rejects": {"1": {"domain": "kestra.com"'  # cut off mid-document
    _db(memo_dir).write_bytes(garbage)
    with pytest.raises(UserError) as err:
        MemoStore(memo_dir)
    message = str(err.value)
    assert str(_db(memo_dir)) in message and "damaged" in message
    assert "Traceback" not in message and err.value.hint and "rename it back" in err.value.hint
    kept = list((memo_dir / ".sourcedesk").glob("db.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == garbage
    assert kept[0].name in message
    # The lock was released on the failed open, and the next open starts empty (the analyst was told).
    with MemoStore(memo_dir) as store:
        assert store.rejects() == []


def test_valid_json_of_the_wrong_shape_is_also_damaged(memo_dir):
    (memo_dir / ".sourcedesk").mkdir()
    _db(memo_dir).write_text("[1, 2, 3]")
    with pytest.raises(UserError, match="damaged"):
        MemoStore(memo_dir)


def test_store_from_a_newer_version_is_refused(memo_dir):
    (memo_dir / ".sourcedesk").mkdir()
    _db(memo_dir).write_text(json.dumps({"meta": {"1": {"key": "schema", "version": 99}}}))
    with pytest.raises(UserError, match="newer sourcedesk"):
        MemoStore(memo_dir)
    with pytest.raises(UserError, match="newer sourcedesk"):  # and the lock was not left behind
        MemoStore(memo_dir)


def test_missing_memo_folder_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        MemoStore(tmp_path / "nope")


def test_store_folder_ignores_itself_in_git(memo_dir):
    MemoStore(memo_dir).close()
    assert (memo_dir / ".sourcedesk" / ".gitignore").read_text().splitlines()[-1] == "*"


# -- locking: a memo is no longer owned by one process (sections are held instead; see
# tests/test_store_backends.py, which runs those tests on both backends) ---------------


def test_two_stores_on_one_memo_in_two_processes_both_read_and_write(memo_dir):
    child_code = textwrap.dedent(
        """
        import sys
        from sourcedesk.store.memo_store import MemoStore
        with MemoStore(sys.argv[1]) as store:
            store.add_reject("opened-by-child.com")
            print(",".join(store.rejects()), flush=True)
        """
    )
    with MemoStore(memo_dir) as store:
        store.add_reject("kestra.com")
        child = subprocess.run(
            [sys.executable, "-c", child_code, str(memo_dir)], cwd=REPO, capture_output=True, text=True, timeout=60
        )
        assert child.returncode == 0, child.stderr
        assert child.stdout.strip() == "kestra.com,opened-by-child.com"
        assert store.rejects() == ["kestra.com", "opened-by-child.com"]  # the child's write is seen at once
        assert store.add_reject("after-child.com")  # and ours does not overwrite it
    with MemoStore(memo_dir) as store:
        assert store.rejects() == ["after-child.com", "kestra.com", "opened-by-child.com"]


# -- threads -----------------------------------------------------------------------------


THREADS, ROUNDS = 6, 5


def test_concurrent_use_from_threads_loses_nothing(memo_dir):
    store = MemoStore(memo_dir)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(ROUNDS):
                store.add_reject(f"t{n}-{i}.example.com")
                store.save_source_set(_set(section=f"s{n % 3}"))
                store.save_run({"section": f"s{n % 3}", "n": n, "i": i})
                store.update_section_state(f"s{n % 3}", {f"k{n}": i})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.rejects()) == THREADS * ROUNDS
    for s in ("s0", "s1", "s2"):
        versions = [ss.version for ss in store.source_set_versions(s)]
        assert versions == list(range(1, len(versions) + 1))
    assert sum(len(store.source_set_versions(s)) for s in ("s0", "s1", "s2")) == THREADS * ROUNDS
    assert len({r.id for r in store.runs()}) == THREADS * ROUNDS
    assert store.section_state("s0").to_json() == {"k0": ROUNDS - 1, "k3": ROUNDS - 1}
    store.close()
    json.loads(_db(memo_dir).read_text())  # still one valid document


# -- rejections --------------------------------------------------------------------------


def test_memo_rejections_are_canonical_and_persist(memo_dir):
    with MemoStore(memo_dir) as store:
        assert store.add_reject("https://www.Kestra.com/about?x=1", note="medical namesake")
        assert not store.add_reject("kestra.com")
        assert not store.add_reject("KESTRA.COM.")
        assert store.add_reject("kestra.com.au")  # a different registrable domain
        assert store.add_reject("blogspot.com")  # a private suffix is fine to reject
    with MemoStore(memo_dir) as store:
        assert store.rejects() == ["blogspot.com", "kestra.com", "kestra.com.au"]
        assert store.reject_entries()[1]["note"] == "medical namesake"
        assert store.remove_reject("https://kestra.com/")
        assert not store.remove_reject("kestra.com")
        assert store.rejects() == ["blogspot.com", "kestra.com.au"]


@pytest.mark.parametrize(
    "junk", ["com", "co.uk", "www.co.uk", "not a domain", "", "http://", "exa mple.com", "-x-.com"]
)
def test_public_suffixes_and_junk_are_refused(memo_dir, junk):
    with MemoStore(memo_dir) as store:
        with pytest.raises(UserError):
            store.add_reject(junk)
        assert store.rejects() == []


def test_global_rejections_live_in_the_data_dir_and_scale(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCEDESK_DATA_DIR", str(tmp_path / "data"))
    store = GlobalStore()
    assert store.path == tmp_path / "data" / "global.json"
    domains = [f"namesake-{i}.example.com" for i in range(5000)]
    assert store.add_rejects(domains) == 5000  # how fast: `make bench` (sourcedesk.sandbox.bench_speed)
    assert store.add_reject("alcresta.com")
    assert not store.add_reject("namesake-42.example.com")
    assert store.remove_reject("namesake-7.example.com")
    listed = GlobalStore().rejects()  # a second instance (as another process would) sees it all
    assert len(listed) == 5000 and "alcresta.com" in listed and "namesake-7.example.com" not in listed


def test_global_store_sees_changes_made_by_another_instance(tmp_path):
    a, b = GlobalStore(tmp_path / "g.json"), GlobalStore(tmp_path / "g.json")
    assert a.add_reject("one.com")
    assert b.add_reject("two.com")
    assert a.rejects() == ["one.com", "two.com"]
    assert not b.add_reject("one.com")


def test_damaged_global_list_is_reported_and_kept(tmp_path):
    path = tmp_path / "global.json"
    path.write_text("not json")
    with pytest.raises(UserError) as err:
        GlobalStore(path).rejects()
    assert str(path) in str(err.value)
    assert [p.read_text() for p in tmp_path.glob("global.json.corrupt-*")] == ["not json"]


# -- runs, payloads, section state -------------------------------------------------------


def test_runs_newest_first_with_large_fields_in_payloads(memo_dir):
    prompt = "Write the overview. " * 500
    raw = {"choices": [{"message": {"content": "text " * 1000}}], "search_results": [{"url": "https://a.io"}] * 50}
    cost = {"retrieval": 0.0, "writer": 0.01, "total": 0.01}
    with MemoStore(memo_dir) as store:
        first = store.save_run({"section": "overview", "prompt": prompt, "raw_response": raw, "cost": cost})
        second = store.save_run({"section": "team", "prompt": "short"})
        third = store.save_run({"section": "overview", "status": "degraded"})
    assert len({first, second, third}) == 3
    assert _db(memo_dir).stat().st_size < 4_000
    with MemoStore(memo_dir) as store:
        assert [r.id for r in store.runs()] == [third, second, first]
        assert [r.id for r in store.runs("overview")] == [third, first]
        run = store.get_run(first)
        assert run.prompt == prompt and run.raw_response == raw and run.cost == cost
        assert run.created_at
        assert run.writer_results() == [{"url": "https://a.io"}] * 50
        cheap = store.runs("overview", with_payloads=False)[1]
        assert cheap.prompt is None and cheap.raw_response is None and cheap.cost == cost
        assert store.get_run("nope") is None


def test_payloads_round_trip_and_are_content_addressed(memo_dir):
    with MemoStore(memo_dir) as store:
        key = store.put_payload("página")
        assert store.put_payload("página".encode()) == key
        assert store.get_payload(key) == "página".encode()
        with pytest.raises(UserError):
            store.get_payload("../../etc/passwd")
        with pytest.raises(UserError):
            store.get_payload("0" * 64)


def test_section_state_is_small_key_value_that_persists(memo_dir):
    with MemoStore(memo_dir) as store:
        assert store.section_state("overview").to_json() == {}
        store.set_section_state("overview", {"pin": "none", "collapsed": True})
        new = store.update_section_state("overview", {"pin": "entity", "last_status": "ok"})
        assert new.to_json() == {"pin": "entity", "collapsed": True, "last_status": "ok"}
        assert new.last_status == "ok"
        store.set_section_state("team", {"x": 1})
    with MemoStore(memo_dir) as store:
        assert store.section_state("overview").to_json() == {"pin": "entity", "collapsed": True, "last_status": "ok"}
        store.set_section_state("overview", {})
        assert store.section_state("overview").to_json() == {}
        assert store.section_state("team").to_json() == {"x": 1}


# -- secrets -----------------------------------------------------------------------------


def test_api_keys_never_reach_the_disk(memo_dir, monkeypatch):
    exa_key = "exa-3f9c2e71-aaaa-bbbb-cccc-1234567890ab"
    pplx_key = "pplx-Zq8vN4kL2mR7tY1x"
    monkeypatch.setenv("EXA_API_KEY", exa_key)
    monkeypatch.setenv("PERPLEXITY_API_KEY", pplx_key)
    leaked = f"Authorization: Bearer {pplx_key}"
    with MemoStore(memo_dir) as store:
        store.save_source_set(
            _set(
                request={"headers": {"x-api-key": exa_key}},
                sources=[Source(provider="exa", url="https://a.io", title=exa_key, text=("page " * 1000) + exa_key)],
            )
        )
        run_id = store.save_run({"section": "overview", "prompt": leaked, "raw_response": {"echo": leaked * 200}})
        store.set_section_state("overview", {exa_key: "as a key"})
        store.add_reject("a.io", note=f"key {exa_key}")
        store.put_payload(f"raw {exa_key} bytes".encode())
        run = store.get_run(run_id)
    assert run.prompt == "Authorization: Bearer [redacted]"
    for path in (memo_dir / ".sourcedesk").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert exa_key.encode() not in data, path
            assert pplx_key.encode() not in data, path
    assert b"[redacted]" in _db(memo_dir).read_bytes()


def test_short_env_values_are_not_treated_as_keys(memo_dir, monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", "nats")  # < 8 chars: redacting would mangle ordinary text
    with MemoStore(memo_dir) as store:
        store.set_section_state("overview", {"note": "nats"})
        assert store.section_state("overview").to_json() == {"note": "nats"}


# -- the in-memory copy ------------------------------------------------------------------


def test_writes_never_parse_the_file_again_and_reads_cost_no_io(memo_dir):
    with MemoStore(memo_dir) as store:
        storage = store._storage
        parsed = storage.reads
        for i in range(5):
            store.add_reject(f"n{i}.example.com")
            store.save_run({"section": "overview", "status": "ok"}, section_state={"last_status": "ok"})
        assert store.rejects() and store.section_state("overview").last_status == "ok"
        assert storage.reads == parsed  # nothing written was read back
    with MemoStore(memo_dir) as again:
        assert len(again.rejects()) == 5 and len(again.runs("overview")) == 5


def test_a_file_replaced_by_another_process_is_read_again(tmp_path):
    from sourcedesk.store.json_storage import AtomicJSONStorage

    path = tmp_path / "global.json"
    mine = AtomicJSONStorage(path)
    mine.write({"rejects": {"1": {"domain": "one.com"}}})
    assert mine.read() == {"rejects": {"1": {"domain": "one.com"}}}
    theirs = AtomicJSONStorage(path)  # as another process: its own copy, its own atomic replace
    theirs.write({"rejects": {"1": {"domain": "one.com"}, "2": {"domain": "two.com"}}})
    assert mine.read() == {"rejects": {"1": {"domain": "one.com"}, "2": {"domain": "two.com"}}}
    reads = mine.reads
    mine.read()
    assert mine.reads == reads  # unchanged since: no parsing


def test_runs_saved_together_from_threads_are_one_write_and_each_gets_its_own_record(memo_dir):
    store = MemoStore(memo_dir)
    writes = store._storage.writes
    ids: dict[int, str] = {}
    raw = {"search_results": [{"url": "https://a.io", "snippet": "s" * 300}] * 20}

    def save(n: int) -> None:
        ids[n] = store.save_run(
            {"section": f"s{n}", "status": "ok", "raw_response": {**raw, "n": n}},
            section_state={"last_status": "ok", "note_sha256": f"{n:064x}"},
        )

    queued = threading.Semaphore(0)

    class Queue(list):  # tells the test each time a record joins the queue
        def append(self, item):
            super().append(item)
            queued.release()

    store._queue = Queue()
    with store._mutex:  # a write in progress: everyone who finishes meanwhile queues behind it
        threads = [threading.Thread(target=save, args=(n,)) for n in range(10)]
        for t in threads:
            t.start()
        assert all(queued.acquire(timeout=30) for _ in threads)  # all ten queued behind the write
    for t in threads:
        t.join()
    assert store._storage.writes == writes + 1  # ten records, one rewrite of db.json
    assert len(set(ids.values())) == 10
    store.close()
    with MemoStore(memo_dir) as again:
        for n, run_id in ids.items():
            run = again.get_run(run_id)
            assert run.section == f"s{n}" and run.raw_response["n"] == n
            state = again.section_state(f"s{n}")
            assert state.last_status == "ok" and state.note_sha256 == f"{n:064x}"


def test_a_store_written_by_an_older_version_still_reads(memo_dir):
    """Before this version: each source set inline in db.json, each large run field its own
    payload, the report inside the outcome too, no row-level ``degraded``."""
    from sourcedesk.store.payloads import PayloadDir, payload_ref

    payloads = PayloadDir(memo_dir / ".sourcedesk" / "payloads")
    raw = json.dumps({"search_results": [{"url": "https://nats.io/blog", "title": "Blog"}], "pad": "x" * 3000})
    raw_ref = payload_ref(payloads.put(raw), "json", len(raw))
    report = {"verified": 2, "dropped": 1, "citations": [{"key": "1", "status": "verified", "claim": "NATS is fast."}]}
    old_set = _set().model_dump(mode="json") | {"id": "overview@v1-f00dfeed", "version": 1, "memo": "memo"}
    old = {
        "meta": {"1": {"key": "schema", "version": 1}},
        "source_sets": {
            "1": {
                "id": "overview@v1-f00dfeed",
                "section": "overview",
                "version": 1,
                "fingerprint": "f00dfeedcafe1234",
                "created_at": old_set["created_at"],
                "data": old_set,
            }
        },
        "runs": {
            "1": {
                "id": "run-20260101T000000-abcdef",
                "section": "overview",
                "status": "ok",
                "message": "",
                "raw_response": raw_ref,
                "report": report,
                "outcome": {"status": "ok", "report": report, "warnings": ["w1"], "source_set_reused": True},
                "cost": {"total": 0.02},
                "created_at": "2026-01-01T00:00:00+00:00",
            }
        },
        "section_state": {"1": {"section": "overview", "state": {"last_run": "run-20260101T000000-abcdef", "x": 1}}},
    }
    _db(memo_dir).write_text(json.dumps(old))
    with MemoStore(memo_dir) as store:
        assert store.latest_source_set("overview", degraded=False).id == "overview@v1-f00dfeed"
        [listed] = store.runs("overview", with_payloads=False)
        assert listed.report_counts["verified"] == 2 and listed.reused and listed.raw_response is None
        run = store.get_run("run-20260101T000000-abcdef")
        assert run.writer_results() == [{"url": "https://nats.io/blog", "title": "Blog"}]
        assert run.the_report.citations[0].claim == "NATS is fast." and run.warnings == ["w1"]
        state = store.section_state("overview")
        assert state.last_run == "run-20260101T000000-abcdef" and state.to_json()["x"] == 1
        store.save_run({"section": "overview", "status": "failed"}, section_state={"last_status": "failed"})
        assert store.section_state("overview").to_json()["x"] == 1  # unknown keys survive a write
