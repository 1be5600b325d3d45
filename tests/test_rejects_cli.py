"""``sourcedesk reject`` / ``unreject`` / ``rejects`` through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.global_store import GlobalStore
from store.memo_store import MemoStore
from tui.cli import main


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("SOURCEDESK_DATA_DIR", str(d))
    return d


@pytest.fixture
def memo(tmp_path, data_dir) -> Path:
    d = tmp_path / "kestra"
    assert main(["init", str(d), "--subject", "Kestra", "--url", "https://kestra.io"]) == 0
    return d


def _json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["rejects", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_reject_for_a_memo_and_list_it(memo, capsys):
    assert main(["reject", "https://www.KestraMedical.com/products", "--memo", str(memo), "--note", "namesake"]) == 0
    out = capsys.readouterr().out
    assert "Rejected kestramedical.com" in out
    assert main(["reject", "kestramedical.com", "--memo", str(memo)]) == 0
    assert "already rejected" in capsys.readouterr().out
    listed = _json(capsys, "--memo", str(memo))
    assert [e["domain"] for e in listed["memo"]["rejects"]] == ["kestramedical.com"]
    assert listed["memo"]["rejects"][0]["note"] == "namesake"
    assert listed["memo"]["dir"] == str(memo.resolve())
    assert "global" not in listed
    with MemoStore(memo) as store:  # the same list the app uses
        assert store.rejects() == ["kestramedical.com"]


def test_global_rejections_go_to_the_data_dir(memo, data_dir, capsys):
    assert main(["reject", "kestrafinancial.com", "--global"]) == 0
    assert "globally" in capsys.readouterr().out
    assert (data_dir / "global.json").is_file()
    assert GlobalStore().rejects() == ["kestrafinancial.com"]
    listed = _json(capsys, "--global")
    assert [e["domain"] for e in listed["global"]["rejects"]] == ["kestrafinancial.com"]
    assert "memo" not in listed
    with MemoStore(memo) as store:
        assert store.rejects() == []  # scopes are separate


def test_default_scope_is_the_memo_in_the_current_folder(memo, capsys, monkeypatch):
    monkeypatch.chdir(memo)
    assert main(["reject", "kestra.com.au"]) == 0
    assert main(["reject", "alcresta.com", "--global"]) == 0
    listed = _json(capsys)  # no flags: this memo's list and the global one
    assert [e["domain"] for e in listed["memo"]["rejects"]] == ["kestra.com.au"]
    assert [e["domain"] for e in listed["global"]["rejects"]] == ["alcresta.com"]
    capsys.readouterr()
    assert main(["rejects"]) == 0
    text = capsys.readouterr().out
    assert "kestra.com.au" in text and "alcresta.com" in text and "global" in text


def test_no_scope_outside_a_memo_is_an_error_with_a_hint(tmp_path, data_dir, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["reject", "kestra.com"]) == 2
    err = capsys.readouterr().err
    assert "no memo.yaml" in err and "--memo DIR" in err and "--global" in err
    assert GlobalStore().rejects() == []


def test_memo_and_global_together_are_refused(memo, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["reject", "kestra.com", "--memo", str(memo), "--global"])
    assert exit_.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_memo_flag_must_point_at_a_memo(tmp_path, data_dir, capsys):
    assert main(["reject", "kestra.com", "--memo", str(tmp_path)]) == 2
    assert "not a memo folder" in capsys.readouterr().err
    assert not (tmp_path / ".sourcedesk").exists()


@pytest.mark.parametrize("junk, message", [
    ("com", "public suffix"),
    ("co.uk", "public suffix"),
    ("not a domain", "not a domain name"),
    ("localhost", "no dot"),
])
def test_public_suffixes_and_junk_are_refused(memo, capsys, junk, message):
    assert main(["reject", junk, "--memo", str(memo)]) == 2
    err = capsys.readouterr().err
    assert message in err and "example.com" in err and "Traceback" not in err
    assert main(["reject", junk, "--global"]) == 2
    with MemoStore(memo) as store:
        assert store.rejects() == []
    assert GlobalStore().rejects() == []


def test_unreject(memo, capsys):
    main(["reject", "kestramedical.com", "--memo", str(memo)])
    main(["reject", "kestrafinancial.com", "--global"])
    capsys.readouterr()
    assert main(["unreject", "https://www.kestramedical.com/", "--memo", str(memo)]) == 0
    assert "Un-rejected kestramedical.com" in capsys.readouterr().out
    assert main(["unreject", "kestramedical.com", "--memo", str(memo)]) == 2
    assert "is not rejected" in capsys.readouterr().err
    assert main(["unreject", "kestrafinancial.com", "--global"]) == 0
    assert GlobalStore().rejects() == []


def test_a_memo_open_elsewhere_is_a_clear_error(memo, capsys, monkeypatch):
    import tui.commands.rejects as rejects_cmd

    monkeypatch.setattr(rejects_cmd, "STORE_WAIT_S", 0.0)
    with MemoStore(memo):
        assert main(["reject", "kestra.com", "--memo", str(memo)]) == 2
    err = capsys.readouterr().err
    assert "is already open" in err or "is open elsewhere" in err
    assert "Traceback" not in err


def test_a_damaged_store_is_reported_not_a_traceback(memo, capsys):
    main(["reject", "kestramedical.com", "--memo", str(memo)])
    (memo / ".sourcedesk" / "db.json").write_text("{ nope")
    capsys.readouterr()
    assert main(["rejects", "--memo", str(memo)]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "db.json" in err and "Traceback" not in err


def test_many_global_rejections_list_fine(data_dir, capsys):
    GlobalStore().add_rejects(f"n{i}.example.com" for i in range(5000))
    listed = _json(capsys, "--global")
    assert len(listed["global"]["rejects"]) == 5000
