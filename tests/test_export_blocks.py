"""``memo.md`` export on the product's markdown structure (review defects 1–5) and its properties.

Every assertion here is about text an analyst reads in memo.md: which claim keeps
which citation, what the definition behind a number says, and that code,
prose and numbering survive assembly.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sourcedesk.core.notes.export
from sourcedesk.core.citations import tidy
from sourcedesk.core.citations.parse import Definition, parse
from sourcedesk.core.citations.written import read_definition
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.notes.export import SectionText, assemble_memo, export_memo
from sourcedesk.tui.cli import main
from tests.conftest import examples_per_pass

PROTECTED = ("deck", "dataroom", "internal")
DEFINITION = re.compile(r"^\[\^([^\]\s]+)\]:[ \t]*(.*)$", re.M)


def _assemble(*bodies: str, protected=PROTECTED) -> tuple[str, int, list[str]]:
    sections = [SectionText(f"s{i}", f"Section {i}", body) for i, body in enumerate(bodies, 1)]
    return assemble_memo("Memo", sections, protected=protected)


def _definitions(memo: str) -> dict[str, str]:
    return dict(DEFINITION.findall(memo.partition("\n## Sources\n")[2]))


def _write_memo(tmp_path, *notes: tuple[str, str]) -> None:
    lines = ["title: Memo", "subject: {name: NATS, url: https://nats.io}", "sections:"]
    (tmp_path / "sections").mkdir()
    for i, (sid, body) in enumerate(notes, 1):
        lines.append(f"  - {{id: {sid}, title: {sid.title()}}}")
        (tmp_path / "sections" / f"{i:02d}-{sid}.md").write_text(body, encoding="utf-8")
    (tmp_path / "memo.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


# --- 1. de-duplication is per inline block, as tidy does ------------------------------------


def test_each_table_row_keeps_its_citation():
    body = textwrap.dedent(
        """\
        # Funding

        | Round | Amount |
        |---|---|
        | Seed | $5M [^1] |
        | Series A | $11M [^1] |

        ## Sources (web search)

        [^1]: [Alpha](https://a.com/x). a.com.
        """
    )
    memo, _, warnings = _assemble(body)
    assert "| Seed | $5M [^1] |\n| Series A | $11M [^1] |" in memo
    assert warnings == []


def test_a_citation_repeated_on_two_claims_of_a_table_cell_stays_on_both_like_tidy():
    body = "# F\n\n| Round | Amount |\n|---|---|\n| Seed | $5M [^1] then $6M [^1][^1] |\n\n[^1]: [A](https://a.com/x). a.com.\n"
    memo, _, _ = _assemble(body)
    assert "| Seed | $5M [^1] then $6M [^1] |" in memo  # only the repeat inside one cluster goes
    assert "| Seed | $5M [^1] then $6M [^1] |" in tidy(body)


def test_each_list_item_keeps_its_citation():
    body = textwrap.dedent(
        """\
        # Customers

        - First item. [^1]
        - Second item. [^E1]
        - Third item. [^1]

        ## Sources (web search)

        [^1]: [Alpha](https://a.com/x). a.com.

        ## Sources (retrieved)

        [^E1]: [Beta](https://b.com/y). b.com.
        """
    )
    memo, count, _ = _assemble(body)
    assert "- First item. [^1]\n- Second item. [^2]\n- Third item. [^1]" in memo
    assert count == 2


def test_a_paragraph_before_a_heading_without_blank_line_keeps_its_citation():
    body = "# Overview\n\nPara one. [^E1]\n### Sub\nPara two. [^E1]\n\n[^E1]: [Beta](https://b.com/y). b.com.\n"
    memo, _, _ = _assemble(body)
    assert "Para one. [^1]\n#### Sub\nPara two. [^1]" in memo


def test_two_keys_for_one_url_become_one_number_and_every_claim_keeps_it():
    body = (
        "# S\n\nA grew. [^1] B shrank. [^E1] C held. [^1]\n\n- Item. [^1] More. [^E1] [^1]\n\n"
        "[^1]: [X](https://x.io/p). x.io\n[^E1]: [X again](https://www.x.io/p/). x.io\n"
    )
    memo, count, _ = _assemble(body)
    assert "A grew. [^1] B shrank. [^1] C held. [^1]" in memo
    assert "- Item. [^1] More. [^1]" in memo  # the two keys of one cluster are one citation
    assert count == 1


# --- 2. a definition's URL is its link destination ------------------------------------------


def test_a_url_in_a_link_title_does_not_decide_the_source():
    body = textwrap.dedent(
        """\
        # Sources in titles

        Claim about C. [^2] Claim about B. [^E1]

        ## Sources (web search)

        [^2]: [See https://b.com/y for more](https://c.com/z). c.com.

        ## Sources (retrieved)

        [^E1]: [B page](https://b.com/y). b.com.
        """
    )
    memo, count, _ = _assemble(body)
    assert "Claim about C. [^1] Claim about B. [^2]" in memo
    defs = _definitions(memo)
    assert defs["1"] == "[See https://b.com/y for more](https://c.com/z). c.com."
    assert defs["2"] == "[B page](https://b.com/y). b.com."
    assert count == 2


def test_definition_url_is_the_link_destination_not_a_url_in_the_title():
    assert (
        sourcedesk.core.notes.export.definition_url("[See https://b.com/y for more](https://c.com/z). c.com.")
        == "https://c.com/z"
    )


# --- 3. protected keys across sections -----------------------------------------------------


DECK_A = "# A\n\nRevenue doubled. [^deck]\n\n[^deck]: Deck v1, p. 4\n"
DECK_B = "# B\n\nChurn fell. [^deck]\n\n[^deck]: Deck v2, p. 9\n"


def test_one_protected_key_defined_two_ways_gets_two_keys_and_a_warning():
    memo, _, warnings = _assemble(DECK_A, DECK_B)
    assert "Revenue doubled. [^deck]" in memo
    assert "Churn fell. [^deck-2]" in memo
    defs = _definitions(memo)
    assert defs["deck"] == "Deck v1, p. 4"
    assert defs["deck-2"] == "Deck v2, p. 9"
    assert len(warnings) == 1 and "[^deck-2]" in warnings[0] and "s2" in warnings[0]


def test_identical_protected_definitions_merge_without_warning():
    same = "# B\n\nChurn fell. [^deck]\n\n[^deck]: Deck  v1, p. 4\n"
    memo, _, warnings = _assemble(DECK_A, same)
    assert "Churn fell. [^deck]" in memo and "deck-2" not in memo
    assert _definitions(memo) == {"deck": "Deck v1, p. 4"}
    assert warnings == []


def test_a_renamed_protected_key_never_takes_a_key_already_in_the_memo():
    c = "# C\n\nBurn is low. [^deck-2]\n\n[^deck-2]: Board pack, p. 2\n"
    memo, _, _ = _assemble(DECK_A, DECK_B, c, protected=("deck", "deck-2"))
    defs = _definitions(memo)
    assert defs == {"deck": "Deck v1, p. 4", "deck-3": "Deck v2, p. 9", "deck-2": "Board pack, p. 2"}
    assert "Churn fell. [^deck-3]" in memo and "Burn is low. [^deck-2]" in memo


def test_export_cli_prints_the_protected_key_warning(tmp_path, capsys):
    _write_memo(tmp_path, ("a", DECK_A), ("b", DECK_B))
    assert main(["export", str(tmp_path)]) == 0
    _out, err = capsys.readouterr()
    assert "warning:" in err and "[^deck-2]" in err
    assert "Churn fell. [^deck-2]" in (tmp_path / "memo.md").read_text(encoding="utf-8")


# --- 4. code is never edited ---------------------------------------------------------------


def test_indented_fenced_and_inline_code_are_left_byte_identical():
    body = (
        "# Code\n\nSee below. [^1]\n\n    indented code [^9]\n    arr[^1] = 2\n\n"
        "```python\nx = y[^1]  # [^E1]\n# not a heading\n```\n\nUse `arr[^1]` here. [^1]\n\n"
        "[^1]: [D](https://d.io/a). d.io\n"
    )
    memo, _, warnings = _assemble(body)
    assert "\n    indented code [^9]\n    arr[^1] = 2\n" in memo
    assert "```python\nx = y[^1]  # [^E1]\n# not a heading\n```" in memo
    assert "Use `arr[^1]` here. [^1]" in memo
    assert warnings == []


def test_an_unclosed_fence_does_not_swallow_the_next_section():
    a = "# A\n\nIntro. [^1]\n\n```\nlast line [^1]\n\n[^1]: [D](https://d.io/a). d.io\n"
    b = "# B\n\nNext. [^1]\n\n[^1]: [E](https://e.io/b). e.io\n"
    memo, _, _ = _assemble(a, b)
    assert "```\nlast line [^1]\n\n[^1]: [D](https://d.io/a). d.io\n```\n\n## B\n\nNext. [^1]" in memo
    comment = "# C\n\nSeen. [^1]\n\n<!-- draft, never closed\n\n[^1]: [D](https://d.io/a). d.io\n"
    memo, _, _ = _assemble(comment, b)
    # the note hides everything after "<!--" (its definition too); memo.md hides no more than that
    assert "<!-- draft, never closed\n\n[^1]: [D](https://d.io/a). d.io\n-->\n\n## B\n\nNext. [^1]" in memo


# --- 5. one normaliser, determinism, tidy, CRLF --------------------------------------------


def test_urls_are_compared_with_the_product_normaliser(monkeypatch):
    seen: list[str] = []

    def spy(url: str) -> str:
        seen.append(url)
        return normalise_url(url)

    monkeypatch.setattr(sourcedesk.core.notes.export, "normalise_url", spy)
    a = "# A\n\nOne. [^E1]\n\n[^E1]: [P](https://x.io/a). x.io\n"
    b = "# B\n\nTwo. [^4]\n\n[^4]: [P again](HTTP://WWW.x.io/a/?utm_source=feed#top). x.io\n"
    memo, count, _ = _assemble(a, b)
    assert count == 1 and "One. [^1]" in memo and "Two. [^1]" in memo
    assert seen == ["https://x.io/a", "HTTP://WWW.x.io/a/?utm_source=feed#top"]


def test_crlf_notes_export_exactly_like_lf_notes():
    body = (
        "# Overview\n\n| Round | Amount |\n|---|---|\n| Seed | $5M [^1] |\n| A | $11M [^1] |\n\n"
        "- One. [^E1]\n- Two. [^E1]\n\n    code [^1]\n\nEnd. [^deck]\n\n"
        "## Sources (web search)\n\n[^1]: [A](https://a.com/x). a.com.\n\n"
        "## Sources (retrieved)\n\n[^E1]: [B](https://b.com/y). b.com.\n[^deck]: Deck v1, p. 4\n"
    )
    lf = _assemble(body, DECK_B)
    crlf = _assemble(body.replace("\n", "\r\n"), DECK_B.replace("\n", "\r\n"))
    assert crlf == lf
    assert "\r" not in lf[0]
    assert "| Seed | $5M [^1] |\n| A | $11M [^1] |" in lf[0]


def test_export_is_deterministic_and_already_tidy(tmp_path, capsys):
    a = "# A\n\nGrew. [^2] Fast.[^1]\n\n- X [^1]\n- Y [^1]\n\n[^1]: [A](https://a.com/x). a.com.\n[^2]: [B](https://b.com/y). b.com.\n"
    _write_memo(tmp_path, ("a", a), ("b", DECK_B))
    assert main(["export", str(tmp_path)]) == 0
    first = (tmp_path / "memo.md").read_bytes()
    assert main(["export", str(tmp_path)]) == 0
    assert (tmp_path / "memo.md").read_bytes() == first
    capsys.readouterr()
    assert main(["tidy", str(tmp_path / "memo.md")]) == 0
    assert "already tidy" in capsys.readouterr().out
    assert "Grew. [^1] Fast. [^2]" in first.decode()


def test_setext_and_nested_headings_move_one_level_down():
    body = "Overview\n========\n\nText. [^1]\n\nDetail\n------\n\nMore. [^1]\n\n> ## Quoted\n\n[^1]: [A](https://a.com/x). a.com.\n"
    memo, _, _ = _assemble(body)
    assert memo.startswith("# Memo\n\n## Overview\n\nText. [^1]\n\n### Detail\n\nMore. [^1]\n\n> ### Quoted\n")


def test_export_memo_reads_notes_from_disk(tmp_path):
    _write_memo(tmp_path, ("a", DECK_A.replace("\n", "\r\n")))
    result = export_memo(tmp_path)
    assert result.text.startswith("# Memo\n\n## A\n\nRevenue doubled. [^deck]\n")


# --- property: generated multi-section memos -----------------------------------------------

# Three pages, several spellings each (normalise_url makes them one), titles that hold URLs.
PAGES = [
    ["https://a.com/x", "http://www.a.com/x/", "https://a.com/x?utm_source=feed#top"],
    ["https://b.com/y", "https://www.b.com/y/"],
    ["https://c.com/z"],
]
TITLES = ["Alpha", "See https://b.com/y for more", r"Gamma \[draft\]", "Notes on https://a.com/x"]
KEYS = ["1", "2", "3", "E1", "E2"]
DECKS = ["Deck v1, p. 4", "Deck v2, p. 9"]
WORDS = ["revenue", "grew", "NATS", "churn", "fell", "$5M", "Synadia", "edge"]
CODE = ["```\nx = arr[^1]  # [^E1]\n```", "```py\n# not a heading [^2]\n```"]
INDENTED = ["    indented [^9]", "    y[^1] = 2\n    z"]
SPANS = ["`arr[^1]`", "`[^E2]`"]


@st.composite
def _definition(draw, key: str) -> str:
    page = draw(st.sampled_from(PAGES))
    url = draw(st.sampled_from(page))
    if draw(st.booleans()):
        return f"[^{key}]: <{url}>"
    return f"[^{key}]: [{draw(st.sampled_from(TITLES))}]({url}). host."


@st.composite
def _sentence(draw, keys: list[str]) -> str:
    words = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
    marks = draw(st.lists(st.sampled_from(keys), max_size=2)) if keys else []
    return words + "." + "".join(f" [^{k}]" for k in marks)


@st.composite
def _block(draw, keys: list[str]) -> str:
    kind = draw(st.sampled_from(["para", "list", "table", "heading", "fence", "indented", "span"]))
    sentence = _sentence(keys)
    if kind == "para":
        return " ".join(draw(st.lists(sentence, min_size=1, max_size=3)))
    if kind == "list":
        return "\n".join("- " + s for s in draw(st.lists(sentence, min_size=2, max_size=3)))
    if kind == "table":
        rows = draw(st.lists(sentence, min_size=1, max_size=3))
        return "| Round | Amount |\n|---|---|\n" + "\n".join(f"| r{i} | {s} |" for i, s in enumerate(rows))
    if kind == "heading":  # a heading directly followed by a paragraph (no blank line)
        return f"### {draw(sentence)}\n{draw(sentence)}"
    if kind == "fence":
        return draw(st.sampled_from(CODE))
    if kind == "indented":  # a paragraph first: after a list, indented text would join the item
        return f"{draw(sentence)}\n\n{draw(st.sampled_from(INDENTED))}"
    return f"Use {draw(st.sampled_from(SPANS))} here. {draw(sentence)}"


@st.composite
def _note(draw, index: int) -> str:
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=0, max_size=4, unique=True))
    definitions = [draw(_definition(k)) for k in keys]
    cited = list(keys)
    if draw(st.booleans()):
        cited.append("deck")
        definitions.append(f"[^deck]: {draw(st.sampled_from(DECKS))}")
    if draw(st.integers(0, 4)) == 0:
        cited.append("7")  # an orphan marker: removed
    blocks = draw(st.lists(_block(cited), min_size=1, max_size=4))
    web = [d for d in definitions if DEFINITION.match(d).group(1).isdigit()]
    retrieved = [d for d in definitions if d not in web]
    parts = [f"# Title {index}", *blocks]
    if web:
        parts.append("## Sources (web search)\n\n" + "\n".join(web))
    if retrieved:
        parts.append("## Sources (retrieved)\n\n" + "\n".join(retrieved))
    return "\n\n".join(parts) + "\n"


_MARKER = re.compile(r"\[\^[^\]\s]+\](?!:)")
_NOT_PROSE = re.compile(r"^(\[\^[^\]\s]+\]:.*|## Sources.*)$", re.M)


def _prose_words(markdown: str) -> list[str]:
    text = _MARKER.sub(" ", _NOT_PROSE.sub("", markdown))
    return [w for w in text.split() if set(w) != {"#"}]


def _block_citations(markdown: str) -> list[frozenset]:
    """Per inline block (headings, paragraphs, list items, table cells), which sources it cites."""
    doc = parse(markdown)
    defs: dict[str, Definition] = {}
    for d in doc.definitions:
        defs.setdefault(d.label, d)
    out = []
    for block in doc.blocks:
        if block.definition is not None or (block.heading and block.content.startswith("Sources")):
            continue
        cited: set[object] = set()  # a URL, or ("deck", text) for a protected key
        for i in block.markers:
            m = doc.markers[i]
            d = defs.get(m.label)
            if m.kind != "footnote" or d is None:
                continue
            if m.label.startswith("deck"):
                cited.add(("deck", " ".join(doc.source[d.start : d.end].split(":", 1)[1].split())))
            else:
                cited.add(normalise_url(read_definition(doc, d).url))
        out.append(frozenset(cited))
    return out


@settings(max_examples=examples_per_pass(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notes=st.integers(1, 3).flatmap(lambda n: st.tuples(*[_note(i) for i in range(n)])))
def test_export_properties(notes):
    memo, count, _ = _assemble(*notes)
    doc = parse(memo)
    body_markers = [m for m in doc.markers if m.kind == "footnote" and m.definition is None]
    labels = [d.label for d in doc.definitions]

    # (a) every marker has exactly one definition, every definition is cited
    assert Counter(labels) == Counter(set(labels))
    assert {m.label for m in body_markers} == set(labels)

    # (b) one definition per normalised URL
    urls = [normalise_url(read_definition(doc, d).url) for d in doc.definitions if not d.label.startswith("deck")]
    assert len(urls) == len(set(urls)) == count

    # (c) numbers 1, 2, 3… in reading order
    firsts = list(dict.fromkeys(m.label for m in body_markers if m.label.isdigit()))
    assert firsts == [str(i) for i in range(1, count + 1)]

    # (d) prose unchanged except for markers; no block lost or gained a source
    assert _prose_words(memo.split("\n", 1)[1]) == _prose_words("\n\n".join(notes))
    assert _block_citations(memo)[1:] == [c for note in notes for c in _block_citations(note)]

    # (e) tidy has nothing left to do; same input, same bytes (CRLF included)
    assert tidy(memo) == memo
    assert _assemble(*notes)[0] == memo
    assert _assemble(*(n.replace("\n", "\r\n") for n in notes))[0] == memo

    # (f) code is unchanged
    for snippet in CODE + INDENTED + SPANS:
        assert memo.count(snippet) == sum(n.count(snippet) for n in notes), snippet
