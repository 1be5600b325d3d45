"""The section note file: frontmatter that records the run, grouped sources, atomic writes."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

import pytest

from sourcedesk.core.citations.house import RETRIEVED_HEADING, WEB_HEADING
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.memo.spec import Memo
from sourcedesk.core.notes.note import (
    NoteRecord,
    find_note,
    note_path,
    parse_note,
    render_note,
    write_note_atomic,
)

WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def _record(**kw: Any) -> NoteRecord:
    base: dict[str, Any] = {
        "section": "overview",
        "title": "Company overview",
        "run_id": "run-0001",
        "model": "sonar-pro",
        "generated_at": WHEN,
        "status": "degraded",
        "web_search": False,
        "source_set_id": "overview@v2-abcdef12",
        "source_set_version": 2,
        "source_set_fingerprint": "abcdef1234567890",
        "counts": {"verified": 3, "retitled": 1, "substituted": 2, "dropped": 4, "out_of_range": 1, "protected": 1},
        "warnings": ["degraded: Exa answered 402\n(no credits)", "truncated: 2 sources omitted"],
        "cost_retrieval": 0.023,
        "cost_writer": 0.0061,
    }
    base.update(kw)
    return NoteRecord(**base)


BODY = "NATS is a messaging system. [^E1] It was founded in 2018. [^1]\n"
WEB = ["[^1]: 2024, Jan 02. [NATS docs](https://docs.nats.io/). docs.nats.io. Published: 2024-01-02"]
RETRIEVED = ["[^E1]: [Synadia](https://synadia.com/about). synadia.com"]


def test_frontmatter_round_trips_every_recorded_field():
    text = render_note(_record(), BODY, web_definitions=WEB, retrieved_definitions=RETRIEVED)
    front, body = parse_note(text)
    assert front["section"] == "overview"
    assert front["title"] == "Company overview"
    assert front["run_id"] == "run-0001"
    assert front["status"] == "degraded"
    assert front["source_set"] == {"id": "overview@v2-abcdef12", "version": 2, "fingerprint": "abcdef12"}
    assert front["model"] == "sonar-pro"
    assert front["generated_at"] == "2026-03-04T05:06:07Z"
    assert front["web_search"] is False
    assert front["counts"] == {
        "verified": 3,
        "retitled": 1,
        "substituted": 2,
        "dropped": 4,
        "out_of_range": 1,
        "protected": 1,
        "links_removed": 0,  # every count key is recorded, zero when the report has none
        "supported": 0,
        "partial": 0,
        "unsupported": 0,
        "unchecked": 0,
        "weak": 0,
        "uncited": 0,
    }
    # warnings are short single-line strings
    assert front["warnings"] == ["degraded: Exa answered 402 (no credits)", "truncated: 2 sources omitted"]
    assert front["cost"] == {"retrieval": 0.023, "writer": 0.0061, "total": 0.0291}
    assert body.startswith("# Company overview\n\nNATS is a messaging system. [^E1]")


def test_frontmatter_counts_support_verdicts_weak_citations_and_uncited_claims():
    report = {
        "verified": 2,
        "substituted": 1,
        "support": {"supported": 2, "partial": 0, "unsupported": 1, "unchecked": 0, "weak": 1},
        "uncited": [{"claim": "Revenue was $3M.", "reason": "states $3M with no citation"}],
    }
    front, _ = parse_note(render_note(_record(counts=report), BODY))
    counts = front["counts"]
    assert (counts["supported"], counts["unsupported"], counts["weak"], counts["uncited"]) == (2, 1, 1, 1)
    assert (counts["verified"], counts["substituted"]) == (2, 1)


def test_sources_are_grouped_web_then_retrieved_after_the_body():
    text = render_note(_record(), BODY, web_definitions=WEB, retrieved_definitions=RETRIEVED)
    _, body = parse_note(text)
    web_at, retrieved_at = body.index(WEB_HEADING), body.index(RETRIEVED_HEADING)
    assert body.index("founded in 2018") < web_at < body.index("[^1]: 2024") < retrieved_at
    assert body.index("[^E1]: [Synadia]") > retrieved_at
    assert body.endswith("[^E1]: [Synadia](https://synadia.com/about). synadia.com\n")


def test_an_empty_group_is_left_out():
    only_retrieved = render_note(_record(), BODY, web_definitions=[], retrieved_definitions=RETRIEVED)
    assert WEB_HEADING not in only_retrieved and RETRIEVED_HEADING in only_retrieved
    nothing = render_note(_record(), "No sources here.\n")
    assert "## Sources" not in nothing
    assert nothing.endswith("# Company overview\n\nNo sources here.\n")


def test_rendering_is_deterministic_and_ignores_key_order_of_counts():
    a = render_note(_record(), BODY, web_definitions=WEB, retrieved_definitions=RETRIEVED)
    b = render_note(
        _record(
            counts={"protected": 1, "out_of_range": 1, "dropped": 4, "substituted": 2, "retitled": 1, "verified": 3}
        ),
        BODY,
        web_definitions=WEB,
        retrieved_definitions=RETRIEVED,
    )
    assert a.encode() == b.encode()
    keys = [line.split(":")[0] for line in a.split("---\n")[1].splitlines() if not line.startswith((" ", "-"))]
    assert keys == [
        "section",
        "title",
        "run_id",
        "status",
        "source_set",
        "model",
        "generated_at",
        "web_search",
        "counts",
        "warnings",
        "cost",
    ]


def test_untrusted_strings_cannot_break_the_frontmatter():
    nasty = _record(title="Overview: ---\nfake: yes", warnings=["---", "key: value # not a comment", "null"])
    front, body = parse_note(render_note(nasty, BODY))
    assert front["title"] == "Overview: --- fake: yes"
    assert front["warnings"] == ["---", "key: value # not a comment", "null"]
    assert "fake" not in front
    assert body.startswith("# Overview: --- fake: yes\n")


def test_note_without_frontmatter_parses_as_body_only():
    assert parse_note("# Hand written\n\ntext\n") == ({}, "# Hand written\n\ntext\n")


def test_broken_frontmatter_is_a_user_error_naming_the_file(tmp_path):
    with pytest.raises(UserError) as err:
        parse_note("---\ntitle: [unclosed\n---\n# T\n", path=tmp_path / "01-x.md")
    assert "01-x.md" in str(err.value) and "frontmatter" in str(err.value)


def _memo() -> Memo:
    return Memo.model_validate(
        {
            "title": "T",
            "subject": {"name": "NATS", "url": "https://nats.io"},
            "sections": [{"id": "overview", "title": "Overview"}, {"id": "competitors", "title": "Competitors"}],
        }
    )


def test_note_path_numbers_sections_in_memo_order(tmp_path):
    memo = _memo()
    assert note_path(tmp_path, memo, "overview") == tmp_path / "sections" / "01-overview.md"
    assert note_path(tmp_path, memo, "competitors") == tmp_path / "sections" / "02-competitors.md"
    assert find_note(tmp_path, memo, "competitors") is None
    moved = tmp_path / "sections" / "05-competitors.md"
    moved.parent.mkdir()
    moved.write_text("x")
    assert find_note(tmp_path, memo, "competitors") == moved


def test_atomic_write_replaces_the_file_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "sections" / "01-overview.md"
    write_note_atomic(path, "first\n")
    write_note_atomic(path, "second ✓\n")
    assert path.read_bytes() == "second ✓\n".encode()
    assert sorted(p.name for p in path.parent.iterdir()) == ["01-overview.md"]


def test_failed_replace_leaves_the_old_note_byte_identical(tmp_path, monkeypatch):
    path = tmp_path / "01-overview.md"
    old = render_note(_record(), BODY, web_definitions=WEB).encode()
    path.write_bytes(old)

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_note_atomic(path, "new text that must not land\n")
    assert path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["01-overview.md"]


def test_frontmatter_is_parsed_with_libyaml_when_it_is_installed(monkeypatch):
    import yaml

    import sourcedesk.core.notes.note

    if not getattr(yaml, "__with_libyaml__", False):
        assert sourcedesk.core.notes.note._FRONTMATTER_LOADER is yaml.SafeLoader
        return
    assert sourcedesk.core.notes.note._FRONTMATTER_LOADER is yaml.CSafeLoader
    used = []

    class Spy(yaml.CSafeLoader):
        def __init__(self, stream):
            used.append(stream)
            super().__init__(stream)

    monkeypatch.setattr(sourcedesk.core.notes.note, "_FRONTMATTER_LOADER", Spy)
    data, body = sourcedesk.core.notes.note.parse_note(
        "---\nrun_id: run-1\ngenerated_at: 2026-01-02T03:04:05+00:00\n---\n# T\n"
    )
    assert used and data["run_id"] == "run-1" and data["generated_at"].year == 2026 and body == "# T\n"
