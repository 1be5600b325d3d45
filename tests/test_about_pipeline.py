"""The about verdict where scripts read it: retrieve --json, run --json, reconcile --json —
and a namesake source is never used to substitute a citation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sourcedesk.core.citations import reconcile
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main

DEMO = Path(__file__).resolve().parent.parent / "tui" / "demo" / "nats-profile"
VERDICTS = {"subject", "namesake", "other", "unclear"}

IPO = {
    "url": "https://www.fiercebiotech.com/medtech/kestra-ipo",
    "title": "Kestra Medical Technologies prices $202M IPO",
    "snippet": "Kestra raised USD 202 million in its Nasdaq IPO to expand sales of its wearable defibrillator.",
}
DRAFT = "Kestra raised USD 202 million in its Nasdaq IPO to expand sales of its wearable defibrillator. [^1]\n\n[^1]: https://invented.example.org/kestra-ipo\n"


def test_a_namesake_source_is_never_substituted_however_well_it_matches():
    plain = reconcile(DRAFT, [IPO])
    assert plain.report.citations[0].status == "substituted"  # the claim matches the snippet word for word
    flagged = {
        **IPO,
        "about": {"verdict": "namesake", "reason": "names 'Kestra Medical Technologies', never kestra.io"},
    }
    result = reconcile(DRAFT, [flagged])
    row = result.report.citations[0]
    assert row.status == "dropped" and row.resolved_url is None
    assert "invented.example.org" not in result.text


def test_a_citation_of_a_namesake_source_carries_its_verdict_and_a_warning():
    about = {"verdict": "namesake", "reason": "names 'Kestra Medical Technologies', never kestra.io"}
    result = reconcile("Kestra went public. [^E1]\n", [{**IPO, "marker": "E1", "about": about}])
    report = result.report.to_json()
    assert report["citations"][0]["about"] == about and report["citations"][0]["status"] == "verified"
    assert any("[^E1] cites" in w and "a source about a namesake" in w for w in report["warnings"])


def test_reconcile_cli_passes_an_about_given_on_a_source_through(tmp_path, capsys):
    (tmp_path / "draft.md").write_text("Kestra went public. [^E1] It also sells software. [1]\n")
    about = {"verdict": "namesake", "reason": "names 'Kestra Medical Technologies'"}
    sources = [{**IPO, "marker": "E1", "about": about}, {"url": "https://kestra.io/", "title": "Kestra"}]
    (tmp_path / "sources.json").write_text(json.dumps(sources))
    assert main(["reconcile", str(tmp_path / "draft.md"), "--sources", str(tmp_path / "sources.json"), "--json"]) == 0
    cites = {c["key"]: c for c in json.loads(capsys.readouterr().out)["report"]["citations"]}
    assert cites["E1"]["about"] == about
    assert cites["1"]["about"] is None  # none was given for it
    (tmp_path / "sources.json").write_text(json.dumps([{**IPO, "marker": "E1", "about": {"verdict": "maybe"}}]))
    assert main(["reconcile", str(tmp_path / "draft.md"), "--sources", str(tmp_path / "sources.json")]) == 2
    err = capsys.readouterr().err
    assert "sources[0].about" in err and "Traceback" not in err


def _demo(tmp_path) -> Path:
    return Path(shutil.copytree(DEMO, tmp_path / "nats-profile"))


def test_retrieve_json_gives_every_source_its_verdict(tmp_path, exa, capsys):
    d = _demo(tmp_path)
    assert main(["retrieve", str(d), "--section", "news", "--json"]) == 0
    news = json.loads(capsys.readouterr().out)["sections"][0]
    abouts = {s["url"]: s["about"] for s in [*news["sources"], *news["held_out"]]}
    assert all(set(a) == {"verdict", "reason"} and a["verdict"] in VERDICTS and a["reason"] for a in abouts.values())
    guardian = next(a for u, a in abouts.items() if "theguardian.com" in u)
    assert guardian["verdict"] == "namesake" and "air" in guardian["reason"]
    infoq = next(a for u, a in abouts.items() if "infoq.com" in u)
    assert infoq["verdict"] == "subject"
    # The namesake's pages are held out of the writer's set (issue 17), the subject's stay in it.
    assert [s["url"] for s in news["sources"]] == [u for u, a in abouts.items() if a["verdict"] != "namesake"]
    held = {h["url"]: h for h in news["held_out"]}
    assert any("theguardian.com" in u for u in held) and all(h["namesake"] == "NATS Holdings" for h in held.values())
    assert main(["retrieve", str(d), "--section", "news"]) == 0  # the text view says it too
    assert "held out: about NATS Holdings" in capsys.readouterr().out


def test_run_json_gives_sources_and_web_results_their_verdict(tmp_path, exa, monkeypatch, capsys):
    monkeypatch.setenv("SOURCEDESK_WRITER_URL", exa.url)
    monkeypatch.setenv("PERPLEXITY_API_KEY", "sandbox")
    d = _demo(tmp_path)
    assert main(["run", str(d), "--section", "news", "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)[0]
    assert outcome["sources"] and all(s["about"]["verdict"] in VERDICTS for s in outcome["sources"])
    assert [s["marker"] for s in outcome["sources"]] == [f"E{i}" for i in range(1, len(outcome["sources"]) + 1)]
    assert outcome["web_results"] and all(r["about"]["verdict"] in VERDICTS for r in outcome["web_results"])
    # Issue 17: the namesake's pages are held out of the writer's set, and its own results about
    # the namesake are not ground truth, so the note cites none (before, they were cited and flagged).
    assert all(s["about"]["verdict"] != "namesake" for s in outcome["sources"])
    flagged = [c for c in outcome["report"]["citations"] if (c.get("about") or {}).get("verdict") == "namesake"]
    assert not [c for c in flagged if c["status"] in ("verified", "substituted")]
    assert outcome["namesake_citations"] == []
    with MemoStore(d) as store:
        assert all(s.about is None for s in store.latest_source_set("news").sources)  # never persisted


def test_a_reject_made_elsewhere_makes_the_set_stale_and_the_next_run_curates_it(tmp_path, exa, monkeypatch):
    from sourcedesk.core.config.settings import Settings
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.core.pipeline.section_state import describe_section
    from sourcedesk.store.global_store import GlobalStore
    from tests.conftest import exa_requests

    monkeypatch.setenv("SOURCEDESK_WRITER_URL", exa.url)
    monkeypatch.setenv("PERPLEXITY_API_KEY", "sandbox")
    d = _demo(tmp_path)
    assert main(["run", str(d), "--section", "news"]) == 0
    loaded = load_memo(d)

    def view():
        with MemoStore(d) as store:
            return describe_section(
                loaded,
                "news",
                store=store,
                settings=Settings(),
                global_rejects=GlobalStore().rejects(),
                global_name_rejects=GlobalStore().reject_names(),
            )

    assert view().status == "fresh"
    GlobalStore().add_reject_name("air traffic control")  # e.g. from another memo's window
    stale = view()
    assert stale.status == "stale" and "covered by a rejection made since" in stale.why
    searches = exa_requests(exa)
    assert main(["run", str(d), "--section", "news"]) == 0
    assert exa_requests(exa) == searches  # curated on our side, no new search
    with MemoStore(d) as store:
        news = store.latest_source_set("news")
    assert not any("theguardian.com" in s.url for s in news.sources)
    assert any(r.rule == "global-name:air traffic control" for r in news.excluded)
    assert view().status == "fresh"
