"""``sourcedesk.core.verify`` as the workbench uses it: grounding alone (no network at all), the
memo's already open store, and progress while URLs are fetched.

Memos are built as in test_check_urls (house-format notes, a real memo store);
HTTP is respx (an unexpected request fails the test), DNS a resolver table.
"""

from __future__ import annotations

import asyncio
import random

import respx

from sourcedesk.core.verify.check import CheckOptions, check_notes, check_path, ground_notes, prepare_path
from sourcedesk.store.memo_store import MemoStore, open_existing
from tests.test_check_urls import GROUNDED_BODY, GROUNDED_CITES, Cite, Resolver, _grounding, make_memo, public

OPTIONS = CheckOptions(timeout_s=2.0)


async def _no_sleep(_seconds: float) -> None:
    return None


def test_grounding_alone_sends_no_request_and_no_dns_and_agrees_with_the_full_check(tmp_path):
    memo = make_memo(tmp_path, GROUNDED_BODY + " See <https://example.com/x>.", GROUNDED_CITES)
    resolver = Resolver({})
    with respx.mock() as mock:  # no routes: any request would fail the test
        alone = asyncio.run(check_path(memo, OPTIONS, liveness=False, open_store=open_existing, resolve=resolver))
        assert not mock.calls
    assert resolver.calls == [] and alone.requests == 0
    assert alone.liveness is False and alone.urls == []
    with respx.mock() as mock:
        mock.get(url__regex=r".*").respond(200, text="x" * 3000)
        full = asyncio.run(
            check_path(
                memo,
                OPTIONS,
                open_store=open_existing,
                resolve=public("synadia.com", "nats.io", "market.site"),
                sleep=_no_sleep,
                rng=random.Random(0),
            )
        )
    assert full.liveness is True and full.urls
    assert _grounding(alone) == _grounding(full)
    assert alone.problems == sum(g.status == "not_found" for g in alone.grounding) == 2
    assert alone.counts()["urls"]["total"] == 0


def test_check_notes_with_liveness_false_is_ground_notes(tmp_path):
    memo = make_memo(tmp_path, GROUNDED_BODY, GROUNDED_CITES)
    prepared = prepare_path(memo, open_store=open_existing)
    with respx.mock():
        report = asyncio.run(
            check_notes(prepared.notes, prepared.evidence, OPTIONS, liveness=False, resolve=Resolver({}))
        )
    assert _grounding(report) == _grounding(ground_notes(prepared.notes, prepared.evidence))


def test_the_open_store_of_the_workbench_is_used_as_it_is(tmp_path):
    memo = make_memo(tmp_path, GROUNDED_BODY, GROUNDED_CITES)
    note = memo / "sections" / "01-overview.md"
    with MemoStore(memo) as store:  # held open, as the workbench holds it for the whole session
        # A reader opens it too (issue 19: read-only commands work while the workbench is open).
        beside = prepare_path(note, open_store=open_existing)
        assert beside.warnings == [] and beside.evidence
        assert _grounding(ground_notes(beside.notes, beside.evidence))[("E1", "$1.5B")] == "supported"
        shared = prepare_path(note, store=store, name=note.name)
        assert shared.warnings == [] and [n.name for n in shared.notes] == ["01-overview.md"]
        report = ground_notes(shared.notes, shared.evidence)
        assert report.grounding and all(g.note == "01-overview.md" for g in report.grounding)
        assert _grounding(report)[("E1", "$1.5B")] == "supported"
        store.save_run({"section": "overview"})  # still open, still ours
    # the store was left open by the check and closed by its owner: it opens again
    MemoStore(memo).close()


def test_progress_counts_distinct_urls_as_they_are_fetched(tmp_path):
    body = "A [^E1]. B [^E2]. C [^E3]. D [^E4]."
    cites = [
        Cite("E1", "https://a.site/1"),
        Cite("E2", "https://a.site/1"),
        Cite("E3", "https://b.site/2"),
        Cite("E4", "https://example.com/placeholder"),
    ]
    memo = make_memo(tmp_path, body, cites)
    seen: list[tuple[int, int]] = []
    with respx.mock() as mock:
        mock.get(url__regex=r".*").respond(200, text="x" * 3000)
        report = asyncio.run(
            check_path(
                memo,
                OPTIONS,
                open_store=open_existing,
                resolve=public("a.site", "b.site"),
                sleep=_no_sleep,
                progress=lambda done, total: seen.append((done, total)),
            )
        )
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and {t for _, t in seen} == {3}
    assert {r.status for r in report.urls} == {"ok", "placeholder"}
