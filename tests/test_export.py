"""``memo.md`` export: one numbering by first appearance, one definition per URL."""

from __future__ import annotations

import re
import textwrap
from datetime import UTC, datetime

import pytest

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.notes.export import SectionText, assemble_memo, definition_url, export_memo
from sourcedesk.core.notes.note import NoteRecord, render_note, write_note_atomic

MARKER = re.compile(r"\[\^([^\]\s]+)\](?!:)")
DEFINITION = re.compile(r"^\[\^([^\]\s]+)\]:\s*(.*)$", re.M)


def _note(section_id: str, title: str, body: str, web=(), retrieved=()) -> str:
    record = NoteRecord(
        section=section_id,
        title=title,
        run_id="r1",
        model="sonar-pro",
        generated_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    return render_note(record, textwrap.dedent(body), web_definitions=web, retrieved_definitions=retrieved)


def _body_of(note: str) -> str:
    return note.split("---\n", 2)[2]


def _split(memo: str) -> tuple[str, dict[str, str]]:
    prose, _, sources = memo.partition("\n## Sources\n")
    return prose, dict(DEFINITION.findall(sources))


OVERVIEW = _note(
    "overview",
    "Overview",
    """\
    NATS is a messaging system. [^E2] Synadia maintains it. [^3]

    It raised a Series B. [^E1] [^deck]
    """,
    web=["[^3]: 2024, Jan 02. [About Synadia](https://synadia.com/about). synadia.com"],
    retrieved=[
        "[^E1]: [Funding news](https://news.example.org/synadia-b?utm_source=x). news.example.org",
        "[^E2]: [NATS docs](https://docs.nats.io/). docs.nats.io",
        "[^deck]: Company deck, slide 4",
    ],
)
COMPETITORS = _note(
    "competitors",
    "Competitive landscape",
    """\
    Kafka is the incumbent. [^1] Synadia positions NATS as simpler. [^E1]

    The docs compare them. [^2]
    """,
    web=[
        "[^1]: [Kafka](https://kafka.apache.org). kafka.apache.org",
        "[^2]: [NATS docs, again](http://www.docs.nats.io). docs.nats.io",
        "[^9]: [Never cited](https://unused.example.net/x). unused.example.net",
    ],
    retrieved=["[^E1]: [About](https://synadia.com/about/). synadia.com"],
)


def _assemble(*sections: SectionText) -> tuple[str, int, list[str]]:
    return assemble_memo("Synadia — profile", list(sections), protected=["deck", "dataroom"])


def test_footnotes_are_renumbered_by_first_appearance_across_the_memo():
    memo, count, _ = _assemble(
        SectionText("overview", "Overview", _body_of(OVERVIEW)),
        SectionText("competitors", "Competitors", _body_of(COMPETITORS)),
    )
    prose, _definitions = _split(memo)
    numeric = [m for m in MARKER.findall(prose) if m.isdigit()]
    # first appearances are 1, 2, 3, ... in reading order
    firsts = list(dict.fromkeys(numeric))
    assert firsts == [str(i) for i in range(1, len(firsts) + 1)]
    assert count == len(firsts) == 4
    assert "NATS is a messaging system. [^1] Synadia maintains it. [^2]" in prose
    assert "It raised a Series B. [^3] [^deck]" in prose
    assert "Kafka is the incumbent. [^4] Synadia positions NATS as simpler. [^2]" in prose
    assert "The docs compare them. [^1]" in prose


def test_the_same_url_in_two_sections_shares_one_number_and_one_definition():
    memo, _, _ = _assemble(
        SectionText("overview", "Overview", _body_of(OVERVIEW)),
        SectionText("competitors", "Competitors", _body_of(COMPETITORS)),
    )
    _, definitions = _split(memo)
    urls = [normalise_url(definition_url(text)) for key, text in definitions.items() if key != "deck"]
    assert len(urls) == len(set(urls))  # one definition per URL
    assert definitions["2"] == "2024, Jan 02. [About Synadia](https://synadia.com/about). synadia.com"
    assert normalise_url(definition_url(definitions["1"])) == "docs.nats.io"


def test_no_orphan_markers_and_no_unused_definitions():
    memo, _, _ = _assemble(
        SectionText("overview", "Overview", _body_of(OVERVIEW)),
        SectionText("competitors", "Competitors", _body_of(COMPETITORS)),
    )
    prose, definitions = _split(memo)
    used = set(MARKER.findall(prose))
    assert used == set(definitions)
    assert "unused.example.net" not in memo


def test_protected_keys_pass_through_unchanged_with_their_definition():
    memo, _, _ = _assemble(SectionText("overview", "Overview", _body_of(OVERVIEW)))
    prose, definitions = _split(memo)
    assert "[^deck]" in prose
    assert definitions["deck"] == "Company deck, slide 4"


def test_a_marker_without_definition_is_removed_with_its_space_and_reported():
    body = "# Risks\n\nChurn is low. [^7] Margins are high. [^1]\n\n## Sources (web search)\n\n[^1]: [A](https://a.io/x). a.io\n"
    memo, count, warnings = _assemble(SectionText("risks", "Risks", body))
    assert "Churn is low. Margins are high. [^1]" in memo
    assert count == 1
    assert any("[^7]" in w for w in warnings)


def test_a_source_repeated_in_one_paragraph_stays_on_every_claim():
    body = (
        "# S\n\nA grew. [^1] B shrank. [^E1] C held. [^1]\n\n"
        "[^1]: [X](https://x.io/p). x.io\n[^E1]: [X again](https://www.x.io/p/). x.io\n"
    )
    memo, count, _ = _assemble(SectionText("s", "S", body))
    assert "A grew. [^1] B shrank. [^1] C held. [^1]" in memo
    assert count == 1


def test_code_is_never_touched_and_headings_nest_under_the_section():
    body = (
        "# Section\n\n## Detail\n\nUse `arr[^1]` here. [^1]\n\n```\nx = y[^1]\n# not a heading\n```\n\n"
        "[^1]: [D](https://d.io). d.io\n"
    )
    memo, _, _ = _assemble(SectionText("s", "Section", body))
    assert "### Detail" in memo
    assert "Use `arr[^1]` here. [^1]" in memo
    assert "x = y[^1]\n# not a heading\n" in memo


def test_never_run_sections_are_shown_not_silently_skipped():
    memo, _, _ = _assemble(
        SectionText("overview", "Overview", _body_of(OVERVIEW)),
        SectionText("risks", "Risks", None),
    )
    assert memo.startswith("# Synadia — profile\n\n## Overview\n")
    risks = memo.split("## Risks\n", 1)[1]
    assert "not been written yet" in risks.split("## Sources")[0]
    assert "--section risks" in risks


def test_export_memo_writes_memo_md_in_memo_order(tmp_path):
    (tmp_path / "memo.yaml").write_text(
        textwrap.dedent(
            """\
            title: Synadia — profile
            subject: {name: NATS, url: https://nats.io}
            sections:
              - {id: overview, title: Overview}
              - {id: risks, title: Risks}
              - {id: competitors, title: Competitive landscape}
            """
        ),
        encoding="utf-8",
    )
    write_note_atomic(tmp_path / "sections" / "01-overview.md", OVERVIEW)
    write_note_atomic(tmp_path / "sections" / "03-competitors.md", COMPETITORS)
    result = export_memo(tmp_path)
    text = (tmp_path / "memo.md").read_text(encoding="utf-8")
    assert result.path == tmp_path / "memo.md" and result.text == text
    assert result.missing == ["risks"] and result.sections == 2 and result.footnotes == 4
    assert text.index("## Overview") < text.index("## Risks") < text.index("## Competitive landscape")
    assert text.index("## Competitive landscape") < text.index("## Sources")
    assert "run_id" not in text  # frontmatter stripped
    assert text.count("## Sources") == 1
    again = export_memo(tmp_path, tmp_path / "out" / "copy.md")
    assert (tmp_path / "out" / "copy.md").read_text(encoding="utf-8") == text == again.text


def test_definition_url_reads_every_house_link_form():
    assert definition_url(r"2024. [a \](b) c](https://x.io/p). x.io") == "https://x.io/p"
    assert definition_url("[t](<https://x.io/a(b)>). x.io") == "https://x.io/a(b)"
    assert definition_url("see https://y.io/z.") == "https://y.io/z"
    assert definition_url("Company deck, slide 4") is None


def test_same_url_spelled_differently_across_sections_shares_a_number():
    a = "# A\n\nOne. [^E1]\n\n[^E1]: [P](<https://x.io/a(b)>). x.io\n"
    b = "# B\n\nTwo. [^4]\n\n[^4]: [P again](http://www.x.io/a(b)/?utm_source=feed#top). x.io\n"
    memo, count, _ = _assemble(SectionText("a", "A", a), SectionText("b", "B", b))
    assert count == 1
    assert "One. [^1]" in memo and "Two. [^1]" in memo
    assert memo.count("[^1]:") == 1


def test_unwritable_output_is_a_user_error(tmp_path):
    (tmp_path / "memo.yaml").write_text(
        "title: T\nsubject: {name: NATS}\nsections:\n  - {id: a, title: A}\n", encoding="utf-8"
    )
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(UserError) as err:
        export_memo(tmp_path, blocker / "memo.md")
    assert "cannot write" in str(err.value)
