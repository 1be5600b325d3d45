"""The store as a team meets it, on both backends: TinyDB (one analyst) and a real PostgreSQL.

Every test here runs twice (the ``store_url`` fixture: "" for TinyDB, a fresh schema on the
session's PostgreSQL server): the same memo opened by two windows or two analysts must keep
every version and every reject, refuse a held section naming its holder, let readers read
while someone runs, and announce a colleague's change to the other window.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.sources.namesakes import LearnedNamesake
from sourcedesk.store.backend import open_global_store, open_memo_store
from sourcedesk.store.holders import SectionLocked, whoami

REPO = Path(__file__).resolve().parents[1]


def _set(section: str = "overview", fingerprint: str = "f00dfeedcafe1234", **kw) -> SourceSet:
    sources = kw.pop(
        "sources",
        [
            Source(provider="exa", url="https://nats.io/about", title="About NATS", summary="NATS is messaging."),
            Source(provider="exa", url="https://synadia.com", title="Synadia", marker="E2"),
        ],
    )
    return SourceSet(section=section, fingerprint=fingerprint, sources=sources, **kw)


@pytest.fixture
def memo_dir(tmp_path: Path) -> Path:
    d = tmp_path / "synadia"
    d.mkdir()
    return d


def _open(memo_dir: Path, url: str, origin: str = "window-a"):
    store = open_memo_store(memo_dir, url=url)
    store.origin = origin  # two windows of one test are two origins (as two processes would be)
    return store


# -- what is kept ------------------------------------------------------------------------


def test_versions_increment_and_every_version_stays_readable(memo_dir, store_url):
    with _open(memo_dir, store_url) as store:
        v1 = store.save_source_set(_set(fingerprint="aaaaaaaa11112222"))
        v2 = store.save_source_set(
            _set(fingerprint="bbbbbbbb33334444", sources=[Source(provider="exa", url="https://x.io")])
        )
        other = store.save_source_set(_set(section="team"))
    assert (v1.id, v1.version, v2.id, other.id) == (
        "overview@v1-aaaaaaaa",
        1,
        "overview@v2-bbbbbbbb",
        "team@v1-f00dfeed",
    )
    with _open(memo_dir, store_url) as store:  # reopened: everything came from the store
        assert store.latest_source_set("overview").id == v2.id
        assert store.latest_source_set("overview", fingerprint="aaaaaaaa11112222").id == v1.id
        assert [s.version for s in store.source_set_versions("overview")] == [1, 2]
        assert store.get_source_set(v1.id).sources[1].marker == "E2"
        assert store.latest_source_set("nope") is None and store.get_source_set("overview@v9-0") is None
        assert store.sections() == ["overview", "team"]


def test_two_windows_saving_one_section_get_consecutive_versions(memo_dir, store_url):
    a, b = _open(memo_dir, store_url, "a"), _open(memo_dir, store_url, "b")
    errors: list[BaseException] = []

    def save(store, n: int) -> None:
        try:
            for i in range(8):
                store.save_source_set(_set(fingerprint=f"{n}{i:07d}abcdefgh"))
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(s, n)) for n, s in enumerate((a, b, a, b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    versions = [s.version for s in b.source_set_versions("overview")]
    assert versions == list(range(1, 33))  # none lost, none twice
    a.close()
    b.close()


def test_saving_returns_a_copy_and_never_mutates_the_callers_set(memo_dir, store_url):
    original = _set()
    with _open(memo_dir, store_url) as store:
        stored = store.save_source_set(original)
    assert original.id == "" and original.version == 0
    assert stored.id and stored.version == 1


def test_threads_of_one_window_lose_nothing(memo_dir, store_url):
    threads, rounds = 4, 6
    errors: list[BaseException] = []
    with _open(memo_dir, store_url) as store:

        def work(n: int) -> None:
            try:
                for i in range(rounds):
                    store.add_reject(f"t{n}-{i}.example.com")
                    store.save_source_set(_set(section=f"s{n % 2}"))
                    store.save_run({"section": f"s{n % 2}", "n": n, "i": i})
                    store.update_section_state(f"s{n % 2}", {f"k{n}": i})
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        assert errors == []
    with _open(memo_dir, store_url) as store:
        assert len(store.rejects()) == threads * rounds
        for s in ("s0", "s1"):
            assert [ss.version for ss in store.source_set_versions(s)] == list(range(1, threads * rounds // 2 + 1))
        assert len({r.id for r in store.runs()}) == threads * rounds
        assert store.section_state("s0").to_json() == {"k0": rounds - 1, "k2": rounds - 1}


@pytest.mark.parametrize("junk", ["com", "co.uk", "not a domain", "", "http://", "exa mple.com", "-x-.com"])
def test_public_suffixes_and_junk_are_refused(memo_dir, store_url, junk):
    with _open(memo_dir, store_url) as store:
        with pytest.raises(UserError):
            store.add_reject(junk)
        assert store.rejects() == []


def test_short_env_values_are_not_treated_as_keys(memo_dir, store_url, monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", "nats")  # < 8 chars: redacting would mangle ordinary text
    with _open(memo_dir, store_url) as store:
        store.set_section_state("overview", {"note": "nats"})
        store.add_reject("nats.io", note="nats")
    with _open(memo_dir, store_url) as store:
        assert store.section_state("overview").to_json() == {"note": "nats"}
        assert store.reject_entries()[0]["note"] == "nats"


def test_large_texts_come_back_whole(memo_dir, store_url):
    page = "NATS JetStream persistence. " * 7200  # ~200 KB
    big = Source(provider="exa", url="https://docs.nats.io/jetstream", text=page, full_text=True)
    with _open(memo_dir, store_url) as store:
        saved = store.save_source_set(_set(sources=[big]))
        store.save_source_set(_set(sources=[big]))
        key = store.put_payload("página")
        assert store.get_payload(key) == "página".encode()
        with pytest.raises(UserError):
            store.get_payload("../../etc/passwd")
    with _open(memo_dir, store_url) as store:
        back = store.get_source_set(saved.id)
    assert back == saved and back.sources[0].text == page


def test_rejections_are_canonical_say_who_and_persist(memo_dir, store_url):
    with _open(memo_dir, store_url) as store:
        assert store.add_reject("https://www.Kestra.com/about?x=1", note="medical namesake")
        assert not store.add_reject("KESTRA.COM.")
        assert store.add_rejects(["nats.aero", "kestra.com", "kestra.com.au"]) == 2
        with pytest.raises(UserError):
            store.add_reject("co.uk")
        assert store.add_reject_name("Kestra  Medical")
        assert not store.add_reject_name("kestra medical!")
    with _open(memo_dir, store_url) as store:
        assert store.rejects() == ["kestra.com", "kestra.com.au", "nats.aero"]
        entry = store.reject_entries()[0]
        assert entry["note"] == "medical namesake" and entry["by"] == whoami() and entry["added_at"]
        assert store.reject_names() == ["Kestra Medical"]
        assert store.reject_name_entries()[0]["by"] == whoami()
        assert store.remove_reject("https://kestra.com/") and not store.remove_reject("kestra.com")
        assert store.remove_reject_name("KESTRA MEDICAL") and store.reject_names() == []
        assert store.rejects() == ["kestra.com.au", "nats.aero"]


def test_global_lists_are_apart_from_the_memos_and_shared(memo_dir, store_url):
    first, second = open_global_store(url=store_url), open_global_store(url=store_url)
    try:
        assert first.add_reject("alcresta.com") and second.add_reject_name("Grupo Cresta")
        assert second.rejects() == ["alcresta.com"] and first.reject_names() == ["Grupo Cresta"]
        with _open(memo_dir, store_url) as store:
            assert store.rejects() == [] and store.reject_names() == []
        assert not second.add_reject("alcresta.com")
    finally:
        first.close()
        second.close()


def test_learned_namesakes_are_kept_removed_and_not_learned_again(memo_dir, store_url):
    cresta = LearnedNamesake(name="Alcresta Therapeutics", origin="pin", host="alcresta.com", own_site=True)
    with _open(memo_dir, store_url) as store:
        assert store.add_learned_namesakes([cresta, cresta.model_copy(update={"name": "alcresta  therapeutics"})]) == 1
        assert store.remove_learned_namesake("Alcresta Therapeutics")
        assert store.learned_namesakes() == []
        assert store.add_learned_namesakes([cresta]) == 0  # removed: never learned again
    with _open(memo_dir, store_url) as store:
        [kept] = store.learned_namesakes(include_removed=True)
        assert kept.removed and kept.own_site and kept.host == "alcresta.com"
        assert store.restore_learned_namesake("alcresta therapeutics")
        assert [n.name for n in store.learned_namesakes()] == ["Alcresta Therapeutics"]


def test_runs_newest_first_with_their_bodies_and_state(memo_dir, store_url):
    prompt = "Write the overview. " * 500
    raw = {"choices": [{"message": {"content": "text " * 1000}}], "search_results": [{"url": "https://a.io"}] * 50}
    with _open(memo_dir, store_url) as store:
        first = store.save_run(
            {"id": "run-1", "section": "overview", "prompt": prompt, "raw_response": raw, "cost": {"total": 0.01}},
            section_state={"last_run": "run-1", "last_status": "ok"},
        )
        second = store.save_run({"section": "team", "prompt": "short"})
        third = store.save_run({"id": "run-1", "section": "overview", "status": "degraded"})  # id taken: a new one
        again = store.save_run({"id": first, "section": "overview", "status": "failed"}, replace=True)
    assert first == "run-1" and again == first and len({first, second, third}) == 3
    with _open(memo_dir, store_url) as store:
        assert [r.id for r in store.runs()] == [third, second, first]
        assert [r.id for r in store.runs("overview", limit=1)] == [third]
        run = store.get_run(first)
        assert run.status == "failed" and run.prompt is None  # replaced whole
        cheap = store.runs("team", with_payloads=False)[0]
        assert cheap.section == "team"
        assert store.section_state("overview").last_run == "run-1"
        store.update_section_state("overview", {"pin": "none"})
        assert store.section_state("overview").to_json() == {"last_run": "run-1", "last_status": "ok", "pin": "none"}
        store.set_section_state("overview", {})
        assert store.section_state("overview").to_json() == {}
        big = store.save_run({"section": "overview", "prompt": prompt, "raw_response": raw})
        assert store.get_run(big).raw_response == raw and store.get_run(big).prompt == prompt


def test_api_keys_never_reach_the_store(memo_dir, store_url, monkeypatch):
    exa_key = "exa-3f9c2e71-aaaa-bbbb-cccc-1234567890ab"
    monkeypatch.setenv("EXA_API_KEY", exa_key)
    with _open(memo_dir, store_url) as store:
        store.save_source_set(
            _set(sources=[Source(provider="exa", url="https://a.io", title=exa_key, text="p " * 2000 + exa_key)])
        )
        run_id = store.save_run(
            {"section": "overview", "prompt": f"Bearer {exa_key}", "raw_response": {"e": exa_key * 300}}
        )
        store.add_reject("a.io", note=f"key {exa_key}")
        store.set_section_state("overview", {"k": exa_key})
        assert store.get_run(run_id).prompt == "Bearer [redacted]"
    assert exa_key.encode() not in _everything_stored(memo_dir, store_url)


def _everything_stored(memo_dir: Path, url: str) -> bytes:
    """Every byte the backend holds for the test (files, or every row of every table)."""
    if not url:
        return b"".join(p.read_bytes() for p in (memo_dir / ".sourcedesk").rglob("*") if p.is_file())
    import psycopg

    out = []
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        for table in tables:
            for row in conn.execute(f"SELECT * FROM {table}"):
                out.append(repr(row).encode())
                out += [bytes(v) for v in row if isinstance(v, (bytes, memoryview))]
    return b"".join(out)


# -- sections held -----------------------------------------------------------------------


def test_two_windows_hold_different_sections_and_the_second_on_one_is_told_who(memo_dir, store_url):
    a, b = _open(memo_dir, store_url, "a"), _open(memo_dir, store_url, "b")
    try:
        overview = a.hold_section("overview", purpose="running it")
        team = b.hold_section("team")  # another section of the same memo: at once
        with pytest.raises(SectionLocked) as refused:
            b.hold_section("overview")
        message = refused.value.message
        assert f"section overview of memo synadia is held by {whoami()} (pid {os.getpid()}) since " in message
        assert message.endswith(", running it") and refused.value.hint
        assert set(b.section_holders()) >= {"overview", "team"}
        # reading and writing the memo need no section: a reject while both are held
        assert b.add_reject("nats.aero") and a.rejects() == ["nats.aero"]
        overview.release()
        b.hold_section("overview").release()
        team.release()
    finally:
        a.close()
        b.close()
    with _open(memo_dir, store_url) as c:
        c.hold_section("team").release()  # closing let go of everything


def test_a_holder_that_leaves_frees_the_section_and_a_waiter_gets_it(memo_dir, store_url):
    a, b = _open(memo_dir, store_url, "a"), _open(memo_dir, store_url, "b")
    a.hold_section("overview")  # released by closing a
    told: queue.Queue = queue.Queue()
    got: queue.Queue = queue.Queue()

    def wait_for_it() -> None:
        try:
            got.put(b.hold_section("overview", wait_s=60, on_wait=told.put))
        except BaseException as exc:  # handed to the test thread
            got.put(exc)

    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    holder = told.get(timeout=30)  # the waiter said whom it waits for, before getting it
    assert holder is not None and holder.pid == os.getpid()
    a.close()  # closing lets go of what it held
    taken = got.get(timeout=30)
    waiter.join()
    assert not isinstance(taken, BaseException) and taken.held
    b.close()


_HOLDER = textwrap.dedent(
    """
    import sys
    from sourcedesk.store.backend import open_memo_store
    store = open_memo_store(sys.argv[1], url=sys.argv[2])
    store.hold_section("overview")
    print("ready", flush=True)
    sys.stdin.readline()
    """
)


def test_a_crashed_holder_does_not_leave_the_section_locked(memo_dir, store_url):
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(memo_dir), store_url],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
        with _open(memo_dir, store_url) as store:
            with pytest.raises(SectionLocked, match=f"pid {holder.pid}"):
                store.hold_section("overview")
    finally:
        holder.kill()  # no clean release: the kernel (or the server) drops the lock
        holder.communicate(timeout=60)
    with _open(memo_dir, store_url) as store:
        store.hold_section("overview", wait_s=30).release()


# -- a colleague's change reaches the other window ---------------------------------------


def _watching(store, global_store=None):
    """Start watching ``store`` in a thread; returns (changes queue, stop event)."""
    changes: queue.Queue = queue.Queue()
    stop = threading.Event()
    ready = threading.Event()

    def watch() -> None:
        iterator = store.watch_changes(stop, global_store=global_store, poll_s=0.1)
        ready.set()
        for change in iterator:
            changes.put(change)

    threading.Thread(target=watch, daemon=True).start()
    ready.wait(10)
    return changes, stop


def test_a_reject_in_one_window_is_announced_in_the_other_with_who(memo_dir, store_url):
    a, b = _open(memo_dir, store_url, "a"), _open(memo_dir, store_url, "b")
    everywhere = open_global_store(url=store_url)
    everywhere.origin = "c"
    changes, stop = _watching(b, everywhere)
    try:
        b.latest_source_set("overview")  # a read of the watcher's own: nothing to announce
        b.add_reject("own.example.com")  # its own change: not announced back
        a.add_reject("nats.aero")
        a.save_source_set(_set())
        everywhere.add_reject_name("Kestra Medical")
        a.remove_reject("nats.aero")
        seen = [changes.get(timeout=10) for _ in range(4)]
    finally:
        stop.set()
        a.close()
        b.close()
        everywhere.close()
    memo_changes = [(c.kind, c.what) for c in seen if c.scope == "memo"]
    assert memo_changes == [("reject", "nats.aero"), ("source_set", "overview"), ("unreject", "nats.aero")]  # in order
    [named] = [c for c in seen if c.scope == "global"]  # the global list is another file for TinyDB: order apart
    assert (named.kind, named.what) == ("reject_name", "Kestra Medical")
    assert named.describe() == f"{whoami()} rejected the name 'Kestra Medical' (every memo)"
    assert seen[0].by == whoami() and seen[0].describe() == f"{whoami()} rejected nats.aero"
