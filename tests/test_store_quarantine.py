"""Damaged store data and damaged notes: moved aside or named, never a traceback, never used silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.domain.records import SectionState
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main
from tests.conftest import exa_requests

FIXTURES = Path(__file__).parent / "fixtures" / "memos"


def _memo(tmp_path: Path) -> Path:
    return shutil.copytree(FIXTURES / "cresta-profile", tmp_path / "cresta-profile")


def _retrieve(capsys, memo: Path, *extra: str) -> tuple[int, dict, str]:
    code = main(["retrieve", str(memo), "--json", *extra])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def _db(memo: Path) -> Path:
    return memo / ".sourcedesk" / "db.json"


def _edit_db(memo: Path, edit) -> None:
    data = json.loads(_db(memo).read_text(encoding="utf-8"))
    edit(data)
    _db(memo).write_text(json.dumps(data), encoding="utf-8")


def _quarantined(memo: Path) -> list[Path]:
    folder = memo / ".sourcedesk" / "quarantine"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_a_document_that_is_not_an_object_is_moved_aside_and_the_run_goes_on(exa, tmp_path, capsys):
    memo = _memo(tmp_path)
    code, first, _ = _retrieve(capsys, memo)
    assert code == 0
    _edit_db(memo, lambda d: d["source_sets"].update({"99": "not a document", "x": {"id": "bad id"}}))

    code, doc, err = _retrieve(capsys, memo)
    assert code == 0 and "Traceback" not in err
    section = doc["sections"][0]
    assert section["reused"] and section["source_set_id"] == first["sections"][0]["source_set_id"]
    notices = [w["message"] for w in section["warnings"] if w["code"] == "quarantined"]
    assert notices and "2 damaged document(s) in source_sets" in notices[0] and "quarantine/" in notices[0]
    assert "not a document" not in _db(memo).read_text(encoding="utf-8")  # out of the store…
    (kept,) = _quarantined(memo)
    assert "not a document" in kept.read_text(encoding="utf-8")  # …and kept, not deleted

    code, again, _ = _retrieve(capsys, memo)  # said once, not on every run
    assert not [w for w in again["sections"][0]["warnings"] if w["code"] == "quarantined"]


def test_a_source_set_that_no_longer_validates_is_set_aside_and_retrieved_again(exa, tmp_path, capsys):
    memo = _memo(tmp_path)
    assert _retrieve(capsys, memo)[0] == 0
    before = exa_requests(exa)

    def damage(data: dict) -> None:
        (doc,) = data["source_sets"].values()
        doc["data"] = {"sources": "not a list"}  # the row now points at data that is not a source set

    _edit_db(memo, damage)
    code, doc, err = _retrieve(capsys, memo)
    section = doc["sections"][0]
    assert code == 0 and "Traceback" not in err
    assert not section["reused"] and exa_requests(exa) > before  # treated as missing: fetched again
    assert section["sources"] and not section["degraded"]
    assert any(w["code"] == "quarantined" and "does not validate" in w["message"] for w in section["warnings"])
    assert len(_quarantined(memo)) == 1


def test_a_payload_that_fails_its_hash_is_quarantined_and_treated_as_missing(tmp_path):
    memo = tmp_path / "memo"
    memo.mkdir()
    big = "page text " * 500
    with MemoStore(memo) as store:
        saved = store.save_source_set(
            SourceSet(
                section="overview", fingerprint="f" * 64, sources=[Source(provider="exa", url="https://a.io", text=big)]
            )
        )
        run_id = store.save_run({"section": "overview", "status": "ok", "raw_response": {"text": big}})
    payloads = [p for p in (memo / ".sourcedesk" / "payloads").rglob("*") if p.is_file()]
    assert len(payloads) >= 2
    for p in payloads:
        p.write_bytes(p.read_bytes()[:-10] + b"tampered!!")  # same length, different bytes

    with MemoStore(memo) as store:
        assert store.get_source_set(saved.id) is None  # never half a set, never damaged text
        run = store.get_run(run_id)
        assert run is not None and run.raw_response is None and run.status == "ok"
        notices = store.take_notices("overview")
    assert any("damaged" in n and "hash" in n for n in notices), notices
    assert any(n.startswith(f"run {run_id}") for n in notices), notices
    names = [p.name for p in _quarantined(memo)]
    assert sum(n.startswith("payload-") for n in names) >= 2 and any(n.startswith("source_sets-") for n in names)
    assert sum(not p.exists() for p in payloads) >= 2  # the ones read were moved, not left to be read again


def test_damaged_state_rejections_and_run_documents_do_not_stop_the_store(tmp_path):
    memo = tmp_path / "memo"
    memo.mkdir()
    with MemoStore(memo) as store:
        store.add_reject("kestra.com")
        store.set_section_state("overview", {"last_status": "ok"})
    _edit_db(
        memo,
        lambda d: (
            d["section_state"]["1"].update({"state": ["not", "a", "mapping"]}),
            d["rejects"].update({"7": {"note": "no domain here"}}),
            d.setdefault("runs", {}).update({"3": 42}),
        ),
    )
    with MemoStore(memo) as store:
        assert store.section_state("overview") == SectionState()
        assert store.rejects() == ["kestra.com"]
        assert store.runs() == []
        notices = store.take_notices() + store.take_notices("overview")
    assert len(notices) == 3, notices
    assert len(_quarantined(memo)) == 3


# ---------------------------------------------------------------- notes that cannot be read


def _export(capsys, memo: Path) -> tuple[int, str]:
    code = main(["export", str(memo)])
    return code, capsys.readouterr().err


def test_export_names_a_note_that_is_not_utf8(tmp_path, capsys):
    memo = _memo(tmp_path)
    note = memo / "sections" / "01-overview.md"
    note.parent.mkdir()
    note.write_bytes(b"---\nsection: overview\n---\n# Overview\n\nCaf\xe9 latin-1 text.\n")
    code, err = _export(capsys, memo)
    assert code == 2 and "Traceback" not in err
    assert f"{note}:6: not valid UTF-8" in err and "Hint:" in err
    assert not (memo / "memo.md").exists()


def test_an_unterminated_frontmatter_is_an_error_naming_the_note(tmp_path, capsys):
    memo = _memo(tmp_path)
    note = memo / "sections" / "01-overview.md"
    note.parent.mkdir()
    note.write_text("---\nsection: overview\ntitle: Overview\n\n# Overview\n\nBody text.\n", encoding="utf-8")
    code, err = _export(capsys, memo)
    assert code == 2 and "Traceback" not in err
    assert str(note) in err and "never closed" in err and "Hint:" in err
    assert not (memo / "memo.md").exists()
