"""The support evidence stored with a frozen set: made once by with_facts, read back by every
reconcile instead of the text, and never trusted for another text or another reader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sourcedesk.core.citations import reconcile
from sourcedesk.core.citations import support_evidence as support_evidence_module
from sourcedesk.core.citations.evidence_index import evidence_of, index_of, index_version
from sourcedesk.core.citations.ground import coerce_source
from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.sources.extraction import with_facts

HELDOUT = Path(__file__).resolve().parent / "heldout3"


def frozen(world: dict) -> list[Source]:
    """A world of tests/heldout3 as a frozen set passed through JSON, as the store keeps it."""
    sources = [
        Source(
            provider="exa",
            url=s["url"],
            title=s["title"],
            published_date=s.get("date"),
            summary=s["summary"],
            marker=s["marker"],
        )
        for s in world["sources"]
    ]
    stored = with_facts(SourceSet(section="s", fingerprint="f", sources=sources)).model_dump(mode="json")
    return SourceSet.model_validate(stored).sources


def verdicts(draft: str, sources: list[Source], subject: list[str]) -> list[tuple]:
    report = reconcile(draft, sources, subject=subject).report
    return [(c.status, c.support, c.reason, c.evidence, c.resolved_url) for c in report.citations]


def test_every_frozen_source_carries_an_index_of_this_version():
    worlds = yaml.safe_load((HELDOUT / "worlds.yaml").read_text(encoding="utf-8"))
    for source in frozen(worlds["corvane"]):
        assert source.evidence_index["version"] == index_version()
        assert len(source.evidence_index["terms"]) == len(source.evidence_index["figures"]) > 0


def test_a_reconcile_reads_the_index_not_the_text(monkeypatch):
    worlds = yaml.safe_load((HELDOUT / "worlds.yaml").read_text(encoding="utf-8"))
    sources = frozen(worlds["hollis"])
    read: list[str] = []
    real = support_evidence_module.figures  # type: ignore[attr-defined]

    def counted(text: str):
        read.append(text)
        return real(text)

    monkeypatch.setattr(support_evidence_module, "figures", counted)
    draft = "Hollis Pay floated in London in June 2022, raising £180 million.[^E1]\n"
    assert verdicts(draft, sources, ["Hollis Pay", "Hollis"])[0][1] == "supported"
    assert read == []  # no passage of the set was read for its figures
    verdicts(draft, [s.model_copy(update={"evidence_index": {}}) for s in sources], ["Hollis Pay"])
    assert read  # without the index, the text is read


@pytest.mark.parametrize("world", ["corvane", "hollis", "ombrelle", "quorra", "fennick", "minato"])
def test_the_index_gives_the_same_verdicts_as_the_text(world):
    worlds = yaml.safe_load((HELDOUT / "worlds.yaml").read_text(encoding="utf-8"))
    pairs = [p for p in yaml.safe_load((HELDOUT / "pairs.yaml").read_text(encoding="utf-8")) if p["world"] == world]
    sources = frozen(worlds[world])
    bare = [s.model_copy(update={"evidence_index": {}}) for s in sources]
    subject = worlds[world]["subject"]
    draft = "\n\n".join(f"{p['claim']}[^{p['source']}]" for p in pairs)
    draft += "\n\n" + "\n\n".join(f"{p['claim']}[^x{p['id']}]" for p in pairs) + "\n\n"
    draft += "\n".join(f"[^x{p['id']}]: [A page](https://invented.example.net/{p['id']})" for p in pairs) + "\n"
    assert verdicts(draft, sources, subject) == verdicts(draft, bare, subject)


def test_an_index_of_another_text_or_reader_is_not_used():
    source = {"url": "https://example.com/a", "title": "Acme", "summary": "Acme raised $10 million in 2024."}
    fields = coerce_source(source, "s").evidence_fields()
    index = index_of(fields)
    assert evidence_of(fields, index).proper is not None  # used: it carries the stored names
    other = coerce_source({**source, "summary": "Acme raised $99 million in 2024."}, "s").evidence_fields()
    assert evidence_of(other, index).proper is None  # another text: read from the text
    assert any(f.value == 99e6 for f in evidence_of(other, index).figures)
    assert evidence_of(fields, {**index, "version": "0:old"}).proper is None  # another reader's


@pytest.mark.parametrize(
    "damage",
    [
        {"terms": "nope"},
        {"figures": [[["money", {"x": 1}, "", "", 0, 0]]]},
        {"terms": [[10_000]]},
        {"vocabulary": None},
        {"figures": [[["date", ["a", 1, 2], "", "", 0, 0]]]},
        {"numbers": ["many"]},
    ],
)
def test_a_damaged_index_is_read_from_the_text_without_error(damage):
    source = {"url": "https://example.com/a", "title": "Acme", "summary": "Acme raised $10 million in 2024."}
    fields = coerce_source(source, "s").evidence_fields()
    ev = evidence_of(fields, {**index_of(fields), **damage})
    assert ev.proper is None and any(f.value == 10e6 for f in ev.figures)
    draft = "Acme raised $10 million in 2024.[^1]\n\n[^1]: [Acme](https://example.com/a)\n"
    item = {**source, "evidence_index": {**index_of(fields), **damage}}
    assert reconcile(draft, [item]).report.citations[0].support == "supported"
