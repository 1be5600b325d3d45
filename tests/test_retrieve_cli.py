"""``sourcedesk retrieve``: what the analyst sees, and that it never blocks or crashes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from sourcedesk.tui.cli import main
from tests.conftest import EXA_KEY as KEY
from tests.conftest import exa_requests

FIXTURES = Path(__file__).parent / "fixtures" / "memos"


def memo(tmp_path, name="cresta-profile") -> str:
    return str(shutil.copytree(FIXTURES / name, tmp_path / name))


def retrieve(capsys, *argv):
    code = main(["retrieve", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def retrieve_json(capsys, *argv):
    code, out, err = retrieve(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out), err


def test_json_document_for_an_entity_pinned_profile(exa, tmp_path, capsys):
    doc, err = retrieve_json(capsys, memo(tmp_path))
    assert err == ""
    (sec,) = doc["sections"]
    assert sec["section"] == "overview" and sec["source_set_id"].startswith("overview@v1-")
    assert sec["reused"] is False and sec["degraded"] is False and sec["requests"] >= 1
    assert sec["cost_dollars"] > 0 and doc["requests"] == sec["requests"]
    assert [s["marker"] for s in sec["sources"]] == [f"E{i}" for i in range(1, len(sec["sources"]) + 1)]
    assert all(s["host"] == "cresta.com" for s in sec["sources"])
    assert {n["host"].removeprefix("www.") for n in sec["namesakes"]} == {
        "alcresta.com",
        "codecresta.com",
        "ridgecresta.com",
        "cresta.com.au",
        "grupocresta.com.gt",
    }
    assert {"code", "message", "entry"} <= set(sec["warnings"][0])


def test_text_output_shows_kept_namesakes_and_hosts_for_blank_titles(exa, tmp_path, capsys):
    code, out, err = retrieve(capsys, memo(tmp_path))
    assert code == 0 and err == ""
    assert "== overview" in out and "namesakes removed (5):" in out
    assert "Alcresta Therapeutics" in out
    assert "E1 " in out and "requests this run: 1" in out


def test_second_retrieve_makes_no_request_and_refresh_makes_a_new_version(exa, tmp_path, capsys):
    d = memo(tmp_path)
    first, _ = retrieve_json(capsys, d)
    before = exa_requests(exa)
    second, _ = retrieve_json(capsys, d)
    assert exa_requests(exa) == before
    assert second["requests"] == 0 and second["sections"][0]["reused"] is True
    assert second["sections"][0]["source_set_id"] == first["sections"][0]["source_set_id"]
    assert second["sections"][0]["set_requests"] == first["sections"][0]["requests"]
    refreshed, _ = retrieve_json(capsys, d, "--refresh")
    sec = refreshed["sections"][0]
    assert sec["reused"] is False and sec["requests"] > 0 and sec["version"] == 2
    assert exa_requests(exa) == before + sec["requests"]


FAULTS = {
    "exa:429": "429",
    "exa:429-retry-after": "429",
    "exa:500": "server error (500)",
    "exa:502-html": "server error (502)",
    "exa:timeout": "did not answer within 0.5 s",
    "exa:malformed": "instead of search results",
    "exa:401": "rejected the API key (401)",
    "exa:402": "no credits left (402)",
    "exa:empty": "returned no results",
}


@pytest.mark.parametrize("fault", FAULTS)
def test_every_fault_degrades_with_a_plain_warning_and_exit_0(exa, tmp_path, capsys, fault):
    httpx.post(f"{exa.url}/_sandbox/faults", json=[fault]).raise_for_status()
    doc, err = retrieve_json(capsys, memo(tmp_path))
    sec = doc["sections"][0]
    assert sec["degraded"] is True and sec["sources"] == []
    messages = [w["message"] for w in sec["warnings"] if w["code"] == "degraded"]
    assert messages and FAULTS[fault] in messages[0]
    assert "writer-only" in messages[0]
    assert "Traceback" not in err and KEY not in json.dumps(doc) + err
    assert "<html" not in json.dumps(doc).lower()


def test_missing_key_degrades_and_never_prints_a_key(exa, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("EXA_API_KEY")
    doc, _err = retrieve_json(capsys, memo(tmp_path))
    sec = doc["sections"][0]
    assert sec["degraded"] and "EXA_API_KEY" in sec["warnings"][-1]["message"]
    assert doc["requests"] == 0 and exa_requests(exa) == 0


def test_unknown_section_lists_the_valid_ids(exa, tmp_path, capsys):
    code, out, err = retrieve(capsys, memo(tmp_path), "--section", "overveiw")
    assert code == 2 and out == ""
    assert "'overveiw'" in err and "valid section ids: overview" in err
    assert exa_requests(exa) == 0


def test_missing_memo_is_a_clean_error(exa, tmp_path, capsys):
    code, _out, err = retrieve(capsys, str(tmp_path / "nowhere"))
    assert code == 2 and "Traceback" not in err and "nowhere" in err and "Hint:" in err


def test_untrusted_titles_cannot_drive_the_terminal():
    from sourcedesk.tui.commands.retrieve import render_text

    doc = {
        "sections": [
            {
                "section": "s",
                "source_set_id": "s@v1",
                "reused": False,
                "kept_previous": False,
                "degraded": False,
                "requests": 1,
                "cost_dollars": 0.0,
                "used_chars": 0,
                "budget_chars": 100,
                "sources": [{"marker": "E1", "title": "Evil\x1b[2J\x1b]0;pwned\x07 title", "host": "evil.test"}],
                "omitted": [],
                "namesakes": [],
                "excluded": [],
                "warnings": [],
            }
        ],
        "requests": 1,
        "cost_dollars": 0.0,
    }
    text = render_text(doc)
    # Whole sequences go, payload included: the title the terminal would have received is gone too.
    assert "\x1b" not in text and "\x07" not in text and "Evil title" in text and "pwned" not in text
