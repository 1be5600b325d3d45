"""What a run reads from the memo store: each section's frozen set once, and the short lists
(rejected names, learned namesakes, rejected domains) without copying the database.

An analyst notices this as speed: a frozen re-run of a 20-section memo used to read 420
frozen sets (every section's about-judge read every section's set) and copied the whole
database three times per section to list the rejected names.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import httpx
import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.sources.judge import RunSets, subject_pages
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.store.json_storage import AtomicJSONStorage
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.headless import run_memo_folder

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "run" / "nats-memo"
EXA_KEY = "exa-dummy-key-0123456789"
WRITER_KEY = "pplx-dummy-key-0123456789"


def _set(section: str, url: str, title: str) -> SourceSet:
    source = Source(provider="exa", url=url, title=title, summary=f"{title}: a page about the subject.")
    return SourceSet(section=section, fingerprint=f"{section}-fp-0000000", sources=[source])


@pytest.fixture
def memo_dir(tmp_path: Path) -> Path:
    target = tmp_path / "nats-memo"
    shutil.copytree(FIXTURE, target)
    return target


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=1) as server:
        yield server


def test_a_frozen_rerun_reads_each_sections_set_at_most_twice(sandbox, memo_dir, monkeypatch):
    httpx.post(f"{sandbox.url}/_sandbox/reset").raise_for_status()
    monkeypatch.setenv("SOURCEDESK_EXA_URL", sandbox.url)
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", sandbox.url)
    monkeypatch.setenv("EXA_API_KEY", EXA_KEY)
    monkeypatch.setenv("PERPLEXITY_API_KEY", WRITER_KEY)
    first = asyncio.run(run_memo_folder(memo_dir, None, settings=Settings()))
    assert all(o.ok for o in first), [o.message for o in first]
    sections = len(first)

    reads: list[str] = []
    real = MemoStore.latest_source_set

    def counted(self, section, **kw):
        reads.append(section)
        return real(self, section, **kw)

    monkeypatch.setattr(MemoStore, "latest_source_set", counted)
    again = asyncio.run(run_memo_folder(memo_dir, None, settings=Settings()))
    assert all(o.ok and o.source_set_reused for o in again), [o.message for o in again]
    # One read to find the section's frozen set, one for the judge's view of the memo (once per
    # run, not once per section per section).
    assert len(reads) <= 2 * sections, f"{len(reads)} set reads for {sections} sections"
    assert sorted(set(reads)) == sorted(o.section for o in first)


def test_the_run_sees_a_set_it_resolved_not_the_one_read_before(memo_dir):
    memo = load_memo(memo_dir).memo
    with MemoStore(memo_dir) as store:
        store.save_source_set(_set("overview", "https://nats.io/old", "Old NATS page"))
        sets = RunSets(memo, store)
        assert [s.sources[0].url for s in sets.all() if s is not None] == ["https://nats.io/old"]
        newer = store.save_source_set(_set("overview", "https://nats.io/new", "New NATS page"))
        sets.note(newer)
        assert [s.sources[0].url for s in sets.all() if s is not None] == ["https://nats.io/new"]
        # the judge's context (the subject's own pages) is the run's view of the sets
        # (title, text) pairs since issue 17: the profile reads names in the text, not only the summary
        assert subject_pages(["nats.io"], sets.all()) == [("New NATS page", "New NATS page: a page about the subject.")]


def test_listing_names_and_rejects_reads_without_copying_the_database(memo_dir, monkeypatch):
    with MemoStore(memo_dir) as store:
        store.add_reject("kestramedical.com", "a device maker")
        store.add_reject_name("Kestra Medical")
        copies = 0
        real = AtomicJSONStorage.read

        def counted(self):
            nonlocal copies
            copies += 1
            return real(self)

        monkeypatch.setattr(AtomicJSONStorage, "read", counted)
        assert store.reject_names() == ["Kestra Medical"]
        assert [e["name"] for e in store.reject_name_entries()] == ["Kestra Medical"]
        assert [e["domain"] for e in store.reject_entries()] == ["kestramedical.com"]
        assert store.learned_namesakes() == []
        assert copies == 0
        # and what they list is current: a name added now is listed at once
        store.add_reject_name("Kestra Financial")
        assert store.reject_names() == ["Kestra Financial", "Kestra Medical"]
