"""``sourcedesk facts``: the stored facts of each section's frozen set, and the memo's conflicts
(exit 1 when there is any), as a person reads them and as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.sources.extraction import EXTRACTION_VERSION, with_facts
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main

MEMO = """\
title: Ostrava Labs — profile
subject: {name: Ostrava Labs}
sections:
  - id: overview
    title: Overview
    include-sources: [{provider: exa, query: "ostrava labs"}]
  - id: funding
    title: Funding
    include-sources: [{provider: exa, query: "ostrava labs funding"}]
"""


def _memo(tmp_path: Path, funding_note: str) -> Path:
    (tmp_path / "memo.yaml").write_text(MEMO, encoding="utf-8")
    store = MemoStore(tmp_path)
    sets = {}
    for section, url, summary in (
        (
            "overview",
            "https://techcrunch.example.com/ostrava",
            "Ostrava Labs has raised $41 million to date. It was valued at $300 million.",
        ),
        ("funding", "https://crunchbase.example.com/ostrava", "Ostrava Labs has raised a total of $25 million."),
    ):
        source = Source(provider="exa", url=url, title=f"{section} page", summary=summary, marker="E1")
        sets[section] = store.save_source_set(
            with_facts(SourceSet(section=section, fingerprint="f" * 16, sources=[source]))
        )
    store.close()  # let the command open it
    notes = tmp_path / "sections"
    notes.mkdir()
    for i, (section, body) in enumerate(
        (("overview", "Ostrava Labs has raised $41M to date.[^E1]"), ("funding", funding_note)), start=1
    ):
        front = f"---\nsection: {section}\nsource_set: {{id: '{sets[section].id}'}}\n---\n"
        (notes / f"{i:02d}-{section}.md").write_text(f"{front}# {section}\n\n{body}\n", encoding="utf-8")
    return tmp_path


def test_facts_lists_each_sources_stored_facts_with_their_spans(tmp_path, capsys):
    memo = _memo(tmp_path, "In total Ostrava Labs has raised $41M.[^E1]")
    assert main(["facts", str(memo), "--section", "overview"]) == 0
    out = capsys.readouterr().out
    assert "overview: frozen set overview@v1" in out
    assert "valuation: $300 million" in out and "[summary @" in out
    assert "funding" not in out.split("overview: ", 1)[1].split("\n", 1)[0]  # one section asked for


def test_facts_json_marks_stored_facts(tmp_path, capsys):
    memo = _memo(tmp_path, "In total Ostrava Labs has raised $41M.[^E1]")
    assert main(["facts", str(memo), "--json"]) == 0
    sections = json.loads(capsys.readouterr().out)["sections"]
    assert [s["section"] for s in sections] == ["overview", "funding"]
    source = sections[0]["sources"][0]
    assert source["stored"] is True
    assert {"kind": "money", "value": "USD 41000000", "span": "$41 million", "measure": "raised"}.items() <= source[
        "facts"
    ][0].items()


def test_conflicts_exit_one_and_say_the_sources_disagree(tmp_path, capsys):
    memo = _memo(tmp_path, "In total Ostrava Labs has raised $25M.[^E1]")
    assert main(["facts", str(memo), "--conflicts"]) == 1
    out = capsys.readouterr().out
    assert "funding (total): $41M (overview, techcrunch.example.com) vs $25M (funding, crunchbase.example.com)" in out
    assert "sources disagree: techcrunch.example.com $41M, crunchbase.example.com $25M" in out


def test_no_conflict_exits_zero(tmp_path, capsys):
    memo = _memo(tmp_path, "In total Ostrava Labs has raised USD 41.0 million.[^E1]")
    assert main(["facts", str(memo), "--conflicts", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"conflicts": []}


def test_an_unknown_section_is_named_with_the_known_ones(tmp_path, capsys):
    memo = _memo(tmp_path, "x")
    assert main(["facts", str(memo), "--section", "nope"]) == 2
    err = capsys.readouterr().err
    assert "'nope'" in err and "overview" in err


def test_the_extraction_version_is_stored_with_the_set(tmp_path):
    _memo(tmp_path, "x")
    with MemoStore(tmp_path) as store:
        stored = store.latest_source_set("overview")
    assert stored is not None and stored.facts_version == EXTRACTION_VERSION and stored.sources[0].extracted


def test_export_ends_with_a_review_list_of_the_conflicts(tmp_path, capsys):
    memo = _memo(tmp_path, "In total Ostrava Labs has raised $25M.[^E1]")
    assert main(["export", str(memo)]) == 0
    text = (memo / "memo.md").read_text(encoding="utf-8")
    review = text.split("## Review before sending", 1)[1]
    assert (
        "funding (total): $41M (overview, techcrunch.example.com) vs $25M (funding, crunchbase.example.com)" in review
    )
    assert "review: funding (total)" in capsys.readouterr().err


def test_export_without_review_or_without_conflicts_has_no_list(tmp_path):
    memo = _memo(tmp_path, "In total Ostrava Labs has raised $25M.[^E1]")
    assert main(["export", str(memo), "--no-review"]) == 0
    assert "Review before sending" not in (memo / "memo.md").read_text(encoding="utf-8")
    (memo / "sections" / "02-funding.md").write_text(
        (memo / "sections" / "02-funding.md").read_text(encoding="utf-8").replace("$25M", "$41M"), encoding="utf-8"
    )
    assert main(["export", str(memo)]) == 0
    assert "Review before sending" not in (memo / "memo.md").read_text(encoding="utf-8")
