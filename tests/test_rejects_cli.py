"""``sourcedesk reject`` / ``unreject`` / ``rejects`` through the real CLI entry point."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sourcedesk.core.net.hosts import excluded_by
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.holders import whoami
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main
from tests.conftest import exa_requests


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


def test_memo_flag_must_point_at_a_memo(tmp_path, data_dir, capsys):
    assert main(["reject", "kestra.com", "--memo", str(tmp_path)]) == 2
    assert "not a memo folder" in capsys.readouterr().err
    assert not (tmp_path / ".sourcedesk").exists()


@pytest.mark.parametrize(
    "junk, message",
    [
        ("com", "public suffix"),
        ("co.uk", "public suffix"),
        ("not a domain", "not a domain name"),
        ("localhost", "no dot"),
    ],
)
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
    assert main(["unreject", "kestramedical.com", "--memo", str(memo)]) == 0  # as reject of a rejected one
    assert "kestramedical.com is not rejected for memo" in capsys.readouterr().out
    assert main(["unreject", "kestrafinancial.com", "--global"]) == 0
    assert GlobalStore().rejects() == []


def test_a_memo_open_elsewhere_still_takes_a_reject(memo, capsys):
    """A memo is no longer owned by one window (issue 19): the reject is made while another
    store has it open and holds a section; that section's set is left to its holder."""
    from sourcedesk.core.domain.models import Source, SourceSet

    with MemoStore(memo) as other:
        other.save_source_set(
            SourceSet(
                section="overview", fingerprint="f" * 16, sources=[Source(provider="exa", url="https://kestra.com/a")]
            )
        )
        other.hold_section("overview")
        assert main(["reject", "kestra.com", "--memo", str(memo)]) == 0
        out = capsys.readouterr().out
        assert "Rejected kestra.com" in out
        assert f"section overview of memo {memo.name} is held by {whoami()} (pid {os.getpid()}) since " in out
        assert "its frozen set was left as it is" in out
        assert other.rejects() == ["kestra.com"]
        assert other.latest_source_set("overview").version == 1  # the holder's set, untouched


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


# ---------------------------------------------------------------- the frozen source sets follow

NEWS_MEMO = """\
title: NATS — news check
subject:
  name: NATS
  url: https://nats.io
  domains: [synadia.com]
sections:
  - id: overview
    title: Company overview
    questions: ["What does NATS do?"]
    include-sources:
      - provider: exa
        query: "{{subject}} {{url}} overview product"
        num-results: 4
        pin: entity
  # searched wide: "NATS" is also UK air traffic services (nats.aero)
  - id: news
    title: Recent news
    questions: ["What happened lately?"]
    include-sources:
      - provider: exa
        query: "{{subject}} news 2025 outages reliability"
        num-results: 6
        pin: none
"""


@pytest.fixture
def retrieved(tmp_path, data_dir, exa, capsys) -> Path:
    """A memo whose ``news`` set holds nats.aero pages (the namesake) after one retrieval — held
    out of the writer's part of the set since issue 17, but in the set."""
    d = tmp_path / "nats-news"
    d.mkdir()
    (d / "memo.yaml").write_text(NEWS_MEMO, encoding="utf-8")
    assert main(["retrieve", str(d)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    with MemoStore(d) as store:
        assert any(_on(h.source.url, "nats.aero") for h in store.latest_source_set("news").held_out)  # precondition
    return d


def _on(url: str, domain: str) -> bool:
    return excluded_by(url, [domain]) is not None


def _sets(memo_dir: Path) -> dict:
    with MemoStore(memo_dir) as store:
        return {sid: store.source_set_versions(sid) for sid in ("overview", "news")}


def _retrieve_requests(exa, memo_dir: Path, capsys) -> int:
    before = exa_requests(exa)
    assert main(["retrieve", str(memo_dir)]) == 0
    capsys.readouterr()
    return exa_requests(exa) - before


def test_reject_takes_the_domains_sources_out_of_the_frozen_sets_and_says_which(retrieved, exa, capsys):
    news_v1 = _sets(retrieved)["news"][-1]
    held = [h.source for h in news_v1.held_out if _on(h.source.url, "nats.aero")]
    assert main(["reject", "https://www.nats.aero/news/", "--memo", str(retrieved)]) == 0
    out = capsys.readouterr().out
    assert "Rejected nats.aero for memo" in out
    # The namesake's pages were held out of the writer's part (issue 17): the reject drops them
    # from the set and says so; the writer's part, and its markers, stay as they were.
    assert f"{len(held)} source(s) outside the writer's set" in out and "were dropped too" in out
    assert "--section overview" not in out

    sets = _sets(retrieved)
    news = sets["news"][-1]
    everything = [*news.sources, *(h.source for h in news.held_out)]
    assert news.version == 2 and not any(_on(s.url, "nats.aero") for s in everything)
    assert [s.url for s in news.sources] == [s.url for s in news_v1.sources if not _on(s.url, "nats.aero")]
    assert [s.marker for s in news.sources] == [f"E{i}" for i in range(1, len(news.sources) + 1)]
    assert {r.rule for r in news.excluded if r.reason == "rejected"} == {"memo:nats.aero"}
    with MemoStore(retrieved) as store:
        assert store.rejects() == ["nats.aero"]
    # nothing is searched again, and a set the reject did not touch keeps its version
    assert _retrieve_requests(exa, retrieved, capsys) == 0
    assert [v.version for v in _sets(retrieved)["news"]] == [1, 2]
    assert [v.version for v in _sets(retrieved)["overview"]] == [1]


def test_unreject_puts_the_sources_back_with_their_markers(retrieved, exa, capsys):
    news_v1 = _sets(retrieved)["news"][-1]
    main(["reject", "nats.aero", "--memo", str(retrieved)])
    capsys.readouterr()
    assert main(["unreject", "nats.aero", "--memo", str(retrieved)]) == 0
    out = capsys.readouterr().out
    assert "Un-rejected nats.aero" in out and "put back into its frozen set" in out
    news = _sets(retrieved)["news"][-1]
    assert [(s.marker, s.url) for s in news.sources] == [(s.marker, s.url) for s in news_v1.sources]
    assert [h.source.url for h in news.held_out] == [h.source.url for h in news_v1.held_out]  # back where they were
    assert _retrieve_requests(exa, retrieved, capsys) == 0


def test_global_with_a_memo_also_curates_that_memo(retrieved, exa, capsys):
    """Decision: ``--global --memo DIR`` = the global list plus that memo's frozen sets."""
    assert main(["reject", "nats.aero", "--global", "--memo", str(retrieved)]) == 0
    out = capsys.readouterr().out
    assert "Rejected nats.aero globally" in out and "were dropped too" in out  # held out before (issue 17)
    assert GlobalStore().rejects() == ["nats.aero"]
    with MemoStore(retrieved) as store:
        assert store.rejects() == []
    news = _sets(retrieved)["news"][-1]
    assert not any(_on(s.url, "nats.aero") for s in news.sources)
    assert {r.rule for r in news.excluded if r.reason == "rejected"} == {"global:nats.aero"}
    assert _retrieve_requests(exa, retrieved, capsys) == 0
    assert main(["unreject", "nats.aero", "--global", "--memo", str(retrieved)]) == 0
    assert GlobalStore().rejects() == []
    assert any(_on(h.source.url, "nats.aero") for h in _sets(retrieved)["news"][-1].held_out)


def test_global_alone_edits_only_the_list_and_the_next_retrieve_curates_without_a_search(retrieved, exa, capsys):
    assert main(["reject", "nats.aero", "--global"]) == 0
    assert "not changed now" in capsys.readouterr().out
    assert [v.version for v in _sets(retrieved)["news"]] == [1]
    # The next retrieve applies the global reject to the frozen sets: no search, and only
    # the set that held nats.aero pages gets a new version.
    assert _retrieve_requests(exa, retrieved, capsys) == 0
    sets = _sets(retrieved)
    assert [v.version for v in sets["news"]] == [1, 2] and [v.version for v in sets["overview"]] == [1]
    assert not any(_on(s.url, "nats.aero") for s in sets["news"][-1].sources)
    assert {r.rule for r in sets["news"][-1].excluded if r.reason == "rejected"} == {"global:nats.aero"}


def test_a_memo_yaml_that_does_not_load_still_gets_its_list_edited(retrieved, capsys):
    (retrieved / "memo.yaml").write_text("title: [unclosed\n", encoding="utf-8")
    assert main(["reject", "nats.aero", "--memo", str(retrieved)]) == 0
    out, err = capsys.readouterr()
    assert "Rejected nats.aero" in out
    assert "memo.yaml" in err and "frozen source sets were not changed" in err and "Traceback" not in err
    with MemoStore(retrieved) as store:
        assert store.rejects() == ["nats.aero"]
    assert [v.version for v in _sets(retrieved)["news"]] == [1]
