"""The right company on a new memo: namesakes found with nothing declared, the subject known
from others' writing, and sites judged as sites — measured on a labelled set.

``fixtures/about/cold/``: 165 results for seven subjects (Kestra, NATS and Cresta, also in
the sandbox corpus; Ramp, Notion, Apollo and Linear, not in it — Ramp, Notion and Linear are
common words), labelled by the rule in its README before any classifier read them. Each file
is one memo's first run: the subject block, a few of the subject's own pages (an
entity-pinned section's set) and one wide section's results. The judge is built the way the
product builds it for a memo (``memo_judge``: the subject's profile from its pages, namesakes
found cold in the results) and judges the section as one (``judge_section``).

``python -m pytest tests/test_about_cold.py -s`` prints the figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.memo.spec import Memo
from sourcedesk.core.sources.about import About
from sourcedesk.core.sources.judge import memo_judge
from sourcedesk.core.sources.namesakes import LearnedNamesake

FIXTURES = Path(__file__).parent / "fixtures" / "about"
Mode = str  # "cold" | "bare" | "declared"


class FixtureStore:
    """The memo store as the judge reads it: two frozen sets, nothing learned or rejected."""

    def __init__(self, sets: dict[str, SourceSet]) -> None:
        self.sets = sets

    def latest_source_set(self, section: str) -> SourceSet | None:
        return self.sets.get(section)

    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]:
        return []

    def reject_names(self) -> list[str]:
        return []


def _source(item: dict[str, Any], rank: int) -> Source:
    return Source(
        provider="exa",
        url=item["url"],
        title=item.get("title", ""),
        summary=item.get("summary") or item.get("snippet", ""),
        text=item.get("text", ""),
        rank=rank,
    )


def _memo(data: dict[str, Any], mode: Mode) -> Memo:
    subject = dict(data["subject"])
    if mode == "bare":  # as `sourcedesk init` writes it: a name and a URL
        subject.update(description="", aliases=[])
    if mode == "declared":
        subject["namesakes"] = data["namesakes"]
    sections = [{"id": "overview", "title": "Overview"}, {"id": "news", "title": "News"}]
    return Memo.model_validate({"title": "t", "subject": subject, "sections": sections})


def judge_file(path: Path, mode: Mode) -> list[tuple[str, About, str]]:
    """``(label, verdict, url)`` for every labelled result of one subject's file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    own = [_source(p, i) for i, p in enumerate(data["own_pages"])]
    results = [_source(r, i) for i, r in enumerate(data["results"])]
    sets = {
        "overview": SourceSet(section="overview", fingerprint="o", sources=own),
        "news": SourceSet(section="news", fingerprint="n", sources=results),
    }
    judge = memo_judge(_memo(data, mode), FixtureStore(sets))
    verdicts = judge.judge_section(results)
    return [(r["label"], v, r["url"]) for r, v in zip(data["results"], verdicts, strict=True)]


def scores(folder: Path, mode: Mode) -> dict[str, Any]:
    rows = [row for path in sorted(folder.glob("*.json")) for row in judge_file(path, mode)]
    out: dict[str, Any] = {"n": len(rows)}
    for verdict in ("namesake", "subject"):
        said = [label for label, about, _ in rows if about.verdict == verdict]
        truth = [about.verdict for label, about, _ in rows if label == verdict]
        out[f"{verdict}_precision"] = round(said.count(verdict) / len(said), 3) if said else 0.0
        out[f"{verdict}_recall"] = round(truth.count(verdict) / len(truth), 3)
    counted = {"subject", "namesake"}
    out["wrong"] = [
        (label, a.verdict, url) for label, a, url in rows if label != a.verdict and {label, a.verdict} & counted
    ]
    return out


def test_the_labelled_set_is_what_the_issue_asks_for():
    files = sorted((FIXTURES / "cold").glob("*.json"))
    subjects = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in files}
    assert sum(len(d["results"]) for d in subjects.values()) >= 150
    assert len(subjects) >= 6
    assert {"ramp", "notion", "apollo", "linear"} <= set(subjects)  # not in the sandbox corpus
    for data in subjects.values():
        assert {r["label"] for r in data["results"]} <= {"subject", "namesake", "other", "unclear"}
        assert data["own_pages"] and all(r.get("text") or r.get("snippet") for r in data["results"])


@pytest.mark.parametrize("mode", ["cold", "bare"])
def test_on_a_cold_memo_namesakes_are_found_and_the_subject_known_from_others_writing(mode):
    got = scores(FIXTURES / "cold", mode)
    print(f"\n{mode}: { ({k: v for k, v in got.items() if k != 'wrong'}) }")
    for row in got["wrong"]:
        print("   ", row)
    assert got["namesake_precision"] >= 0.95 and got["namesake_recall"] >= 0.90
    assert got["subject_precision"] >= 0.95 and got["subject_recall"] >= 0.85


def test_declaring_the_namesakes_is_no_worse_than_finding_them():
    cold = scores(FIXTURES / "cold", "cold")
    declared = scores(FIXTURES / "cold", "declared")
    print(f"\ndeclared: { ({k: v for k, v in declared.items() if k != 'wrong'}) }")
    for key in ("namesake_precision", "namesake_recall", "subject_precision", "subject_recall"):
        assert declared[key] >= cold[key], key


def test_subjects_written_after_the_rules_still_meet_the_precision_targets():
    """Held out: Harvey and Mercury, labelled after the rules were written (recall printed)."""
    got = scores(FIXTURES / "cold_holdout", "cold")
    print(f"\nholdout: { ({k: v for k, v in got.items() if k != 'wrong'}) }")
    assert got["n"] >= 30
    assert got["namesake_precision"] >= 0.95 and got["subject_precision"] >= 0.95


def test_a_fifty_source_section_is_judged_offline(monkeypatch):
    """No network: the profile, the cold namesakes and the verdicts read stored text only. The
    time is printed, not asserted (the machine is shared); see the 50 ms test in test_about.py."""
    import socket
    import time

    from sourcedesk.core.sources.about import _page_words

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the about verdict tried to open a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    data = json.loads((FIXTURES / "cold" / "kestra.json").read_text(encoding="utf-8"))
    own = [_source(p, i) for i, p in enumerate(data["own_pages"])]
    pages = (data["results"] * 2)[:50]
    results = [_source({**r, "url": f"{r['url']}#{i}"}, i) for i, r in enumerate(pages)]
    sets = {
        "overview": SourceSet(section="overview", fingerprint="o", sources=own),
        "news": SourceSet(section="news", fingerprint="n", sources=results),
    }
    best = float("inf")
    for _ in range(5):
        _page_words.cache_clear()
        started = time.perf_counter()
        verdicts = memo_judge(_memo(data, "cold"), FixtureStore(sets)).judge_section(results)
        best = min(best, time.perf_counter() - started)
    print(f"\n50 sources, cold (profile, namesakes found, verdicts): {best * 1000:.1f} ms")
    assert len(verdicts) == 50 and {v.verdict for v in verdicts} >= {"subject", "namesake"}
