"""``sourcedesk reconcile`` and ``sourcedesk tidy`` through the real CLI entry point."""

from __future__ import annotations

import json
import os
import stat

import pytest

from sourcedesk.core.text.safety import UNSAFE_CHARACTER
from sourcedesk.tui.cli import main
from tests.conftest import API_FIXTURES

SOURCES = [
    {"marker": "E1", "url": "https://nats.io/about", "title": "About NATS", "summary": "NATS messaging system"},
    {
        "url": "https://www.synadia.com/blog/series-a",
        "title": "Synadia raises $25M",
        "date": "2022-03-01",
        "last_updated": "2022-04-01",
        "snippet": "Synadia, founded by Derek Collison, raised $25M in a Series A.",
        "source": "web",
    },
]
DRAFT = (
    "NATS is a messaging system[^E1]. Synadia was founded by Derek Collison and raised $25M [^7]. "
    "Margins exceed eighty percent [^8]. Weather [1] and [^E4] and [9].\n\n"
    "[^7]: [Invented](https://synadia.com/news/invented)\n[^8]: [Fake](https://example.com/fake)\n"
)


@pytest.fixture
def files(tmp_path):
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps(SOURCES), encoding="utf-8")
    return draft, sources


def test_reconcile_prints_text_and_summary(files, capsys):
    draft, sources = files
    assert main(["reconcile", str(draft), "--sources", str(sources)]) == 0
    out, err = capsys.readouterr()
    # [^7] is substituted by the web result that bare [1] also cites: one source, one key, and
    # each claim keeps its own marker.
    assert out.startswith(
        "NATS is a messaging system. [^E1] Synadia was founded by Derek Collison and raised $25M. [^1]"
        " Margins exceed eighty percent. Weather [^1] and and.\n"
    )
    assert "## Sources (web search)" in out and "## Sources (retrieved)" in out
    assert "reconcile: 2 verified (0 retitled), 1 substituted, 1 dropped, 2 out of range, 0 protected" in err
    assert "[^E4]" in err and "[9]" in err and "placeholder" in err
    assert draft.read_text(encoding="utf-8") == DRAFT  # the draft itself is never rewritten


def test_reconcile_json_has_the_section_6_shape(files, capsys):
    draft, sources = files
    assert main(["reconcile", str(draft), "--sources", str(sources), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert list(payload) == ["text", "report"]
    report = payload["report"]
    assert {k: report[k] for k in ("verified", "retitled", "substituted", "dropped", "out_of_range", "protected")} == {
        "verified": 2,
        "retitled": 0,
        "substituted": 1,
        "dropped": 1,
        "out_of_range": 2,
        "protected": 0,
    }
    by_key = {c["key"]: c for c in report["citations"]}
    assert by_key["7"]["status"] == "substituted" and by_key["7"]["resolved_url"] == SOURCES[1]["url"]
    assert by_key["7"]["cited_url"] == "https://synadia.com/news/invented" and by_key["7"]["score"] > 0.2
    assert by_key["E4"]["status"] == by_key["9"]["status"] == "out_of_range"


def test_reconcile_removes_unretrieved_links_and_says_how_many(files, capsys):
    draft, sources = files
    draft.write_text(
        "NATS is a messaging system [^E1], see [the docs](https://nats.io/about) and "
        "[a review](https://fabricated.io/review) and <https://bloomberg.com/news/fake>.\n",
        encoding="utf-8",
    )
    assert main(["reconcile", str(draft), "--sources", str(sources)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("NATS is a messaging system [^E1], see [the docs](https://nats.io/about) and a review and.\n")
    assert "fabricated.io" not in out and "bloomberg" not in out
    assert (
        "reconcile: 1 verified (0 retitled), 0 substituted, 0 dropped, 0 out of range, 0 protected; "
        "0 weak, 0 uncited claim(s); 2 unretrieved link(s) removed" in err
    )
    assert "warning: removed the link to https://fabricated.io/review (never retrieved)" in err
    assert "warning: removed https://bloomberg.com/news/fake (never retrieved)" in err
    assert main(["reconcile", str(draft), "--sources", str(sources), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["report"]
    assert report["links_removed"] == 2 and report["verified"] == 1


def test_reconcile_accepts_a_whole_perplexity_response(tmp_path, capsys):
    recorded = API_FIXTURES / "sonar-chat-completion.json"
    draft = tmp_path / "d.md"
    draft.write_text(json.loads(recorded.read_text())["choices"][0]["message"]["content"], encoding="utf-8")
    assert main(["reconcile", str(draft), "--sources", str(recorded), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["report"]
    assert report["verified"] == 5 and report["dropped"] == report["out_of_range"] == 0


def test_reconcile_accepts_a_whole_agent_api_response(tmp_path, capsys):
    recorded = API_FIXTURES / "agent-response-completed.json"
    draft = tmp_path / "d.md"
    draft.write_text(
        "NATS is a connective technology [1]. JetStream is its persistence engine [3]. See [6].\n", encoding="utf-8"
    )
    assert main(["reconcile", str(draft), "--sources", str(recorded), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["report"]
    keys = {c["key"]: (c["status"], c["resolved_url"]) for c in report["citations"]}
    assert keys["1"] == ("verified", "https://nats.io/about/")
    assert keys["3"] == ("verified", "https://docs.nats.io/nats-concepts/jetstream")
    assert keys["6"][0] == "out_of_range"  # five results across the two search_results items


def test_protect_option(files, tmp_path, capsys):
    draft, sources = files
    draft.write_text("Revenue is $3M [^crm].\n\n[^crm]: CRM export\n", encoding="utf-8")
    assert main(["reconcile", str(draft), "--sources", str(sources), "--protect", "crm"]) == 0
    assert capsys.readouterr().out == "Revenue is $3M. [^crm]\n\n[^crm]: CRM export\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{not json", "invalid JSON at line 1, column 2"),
        ('{"url": "https://a.org"}', "expected a JSON list of sources, got dict"),
        ('[{"url": 5, "title": "x"}]', "sources[0].url: expected text, got int"),
        ('[{"url": "https://a.org", "title": "x", "date": 2024}]', "sources[0].date: expected text, got int"),
        ('[{"title": "x"}]', "sources[0]: missing 'url'"),
        (b"\xff\xfe[]", "not UTF-8"),
    ],
)
def test_bad_sources_file_is_a_clean_error(files, capsys, content, message):
    draft, sources = files
    if content is None:
        sources.unlink()
    elif isinstance(content, bytes):
        sources.write_bytes(content)
    else:
        sources.write_text(content, encoding="utf-8")
    assert main(["reconcile", str(draft), "--sources", str(sources)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err and str(sources) in err and "Traceback" not in err


def test_missing_draft_is_a_clean_error(files, capsys):
    _, sources = files
    assert main(["reconcile", "/nonexistent/draft.md", "--sources", str(sources)]) == 2
    err = capsys.readouterr().err
    assert "/nonexistent/draft.md: no such file" in err and "Hint:" in err


def test_tidy_rewrites_in_place_and_reports(tmp_path, capsys):
    note = tmp_path / "note.md"
    note.write_text("A[^3]. B [^3]. C[^5][^1].\n\n`x[^3].`\n\n[^1]: one\n[^3]: three\n[^5]: five\n", encoding="utf-8")
    os.chmod(note, 0o640)
    assert main(["tidy", str(note)]) == 0
    # each sentence keeps its citation: [^3] stays on both A and B
    assert note.read_text(encoding="utf-8") == (
        "A. [^1] B. [^1] C. [^2] [^3]\n\n`x[^3].`\n\n[^1]: three\n[^2]: five\n[^3]: one\n"
    )
    out = capsys.readouterr().out
    assert "tidied" in out and "duplicate" not in out and "renumbered" in out and "[^3]→[^1]" in out
    assert stat.S_IMODE(note.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]  # no temp file left behind
    assert main(["tidy", str(note)]) == 0 and "already tidy" in capsys.readouterr().out


def test_tidy_check_does_not_write(tmp_path, capsys):
    note = tmp_path / "note.md"
    note.write_text("Claim[^1].\r\n\r\n[^1]: x\r\n", encoding="utf-8")
    assert main(["tidy", "--check", str(note)]) == 1
    assert "would change" in capsys.readouterr().out
    assert note.read_bytes() == b"Claim[^1].\r\n\r\n[^1]: x\r\n"
    assert main(["tidy", str(note)]) == 0
    assert note.read_bytes() == b"Claim. [^1]\r\n\r\n[^1]: x\r\n"  # line endings kept
    assert main(["tidy", "--check", str(note)]) == 0


def test_tidy_errors_are_clean(tmp_path, capsys):
    assert main(["tidy", str(tmp_path / "missing.md")]) == 2
    assert "missing.md: no such file" in capsys.readouterr().err
    assert main(["tidy", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_reconcile_json_carries_support_weak_and_uncited(files, capsys):
    draft, sources = files
    draft.write_text(
        "NATS is a messaging system. [^E1] Weather in 2023 was wild.\n\nSynadia raised $25M in a Series A. [^x]\n\n"
        "[^x]: [Invented](https://synadia.com/news/invented)\n",
        encoding="utf-8",
    )
    assert main(["reconcile", str(draft), "--sources", str(sources), "--json", "--subject", "Synadia"]) == 0
    report = json.loads(capsys.readouterr().out)["report"]
    by_key = {c["key"]: c for c in report["citations"]}
    assert by_key["x"]["status"] == "substituted" and by_key["x"]["support"] == "supported"
    assert by_key["x"]["evidence"] and by_key["E1"]["weak"] is False
    assert report["uncited"] == [{"claim": "Weather in 2023 was wild.", "reason": "states 2023 with no citation"}]


HOSTILE_DRAFT = (
    "NATS is a \x1b]0;PWNED\x07messaging \x1b[2Jsystem\u202e[^E1].\x07 Key: pplx-draft-SECRET-4411.\n\n"
    "\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07\n"
)


def test_reconcile_cleans_the_draft_and_the_sources_before_reading_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PERPLEXITY_API_KEY", "pplx-draft-SECRET-4411")
    draft = tmp_path / "draft.md"
    draft.write_text(HOSTILE_DRAFT, encoding="utf-8")
    sources = tmp_path / "sources.json"
    hostile = [{**SOURCES[0], "title": "About \x1b[31mNATS\x1b[0m", "summary": "NATS \x9b2J messaging system"}]
    sources.write_text(json.dumps(hostile), encoding="utf-8")
    for args in ([], ["--json"]):
        assert main(["reconcile", str(draft), "--sources", str(sources), *args]) == 0
        out, err = capsys.readouterr()
        for text in (out, *([] if not args else [json.dumps(json.loads(out), ensure_ascii=False)])):
            assert UNSAFE_CHARACTER.search(text) is None, repr(text)
            assert "pplx-draft-SECRET-4411" not in text and "PWNED" not in text
        assert "NATS is a messaging system" in out and "About NATS" in out
        assert f"{draft}: removed terminal control sequences" in err
        assert f"{sources}: removed terminal control sequences" in err
    assert draft.read_text(encoding="utf-8") == HOSTILE_DRAFT  # the draft itself is never rewritten


def test_tidy_takes_control_sequences_out_of_a_note(tmp_path, capsys):
    note = tmp_path / "note.md"
    raw = "Claim \x1b]0;PWNED\x07one\x1b[2J[^1].\r\nTwo \u202eover.\r\n\r\n[^1]: x\r\n"
    note.write_text(raw, encoding="utf-8", newline="")
    assert main(["tidy", "--check", "--json", str(note)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["changed"] and report["cleaned"] and not report["written"]
    assert main(["tidy", str(note)]) == 0
    assert "control sequences removed" in capsys.readouterr().out
    assert note.read_bytes() == b"Claim one. [^1]\r\nTwo over.\r\n\r\n[^1]: x\r\n"  # line endings kept
    assert main(["tidy", "--check", "--json", str(note)]) == 0
    assert json.loads(capsys.readouterr().out)["cleaned"] is False
