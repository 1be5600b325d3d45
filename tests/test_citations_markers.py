"""Marker look-alikes and definition URLs with parentheses (review rules 4 and 5)."""

from __future__ import annotations

from sourcedesk.core.citations import reconcile, tidy
from sourcedesk.core.citations.parse import parse

SOURCES = [
    {
        "marker": "E1",
        "url": "https://nats.io/about",
        "title": "About NATS",
        "summary": "NATS is an open source messaging system for cloud native applications.",
    },
    {
        "marker": "E2",
        "url": "https://en.wikipedia.org/wiki/NATS_(company)",
        "title": "NATS (company)",
        "summary": "NATS Holdings provides air traffic control services in the United Kingdom.",
    },
    {"url": "https://news.org/storms", "title": "Storms", "snippet": "Storms hit the coast."},
    {"url": "https://news.org/funding", "title": "Funding", "snippet": "Synadia raised money."},
]


def rows(result) -> dict[str, dict]:
    return {c["key"]: c for c in result.report.to_json()["citations"]}


def finished(result) -> None:
    assert tidy(result.text) == result.text
    assert reconcile(result.text, SOURCES).text == result.text


# -- rule 4: a bare URL with parentheses in a definition ----------------------------------------


def test_a_bare_definition_url_with_parentheses_is_read_whole_and_verifies():
    result = reconcile(
        "NATS runs UK air traffic control [^2].\n\n[^2]: https://en.wikipedia.org/wiki/NATS_(company)\n", SOURCES
    )
    r = rows(result)["2"]
    assert (r["status"], r["cited_url"]) == ("verified", "https://en.wikipedia.org/wiki/NATS_(company)")
    assert result.body == "NATS runs UK air traffic control. [^E2]\n"
    finished(result)


def test_a_definition_url_in_parentheses_does_not_take_the_closing_one():
    result = reconcile("Storms hit [^a].\n\n[^a]: Storm report (https://news.org/storms), 2024\n", SOURCES)
    assert rows(result)["a"]["cited_url"] == "https://news.org/storms"
    assert rows(result)["a"]["status"] == "verified"


def test_an_unbalanced_parenthesis_url_fails_safe():
    result = reconcile("Air traffic [^2].\n\n[^2]: https://en.wikipedia.org/wiki/NATS_(company\n", SOURCES)
    assert rows(result)["2"]["status"] != "verified"


# -- rule 5: look-alikes ---------------------------------------------------------------------------


def test_retrieved_markers_are_case_insensitive():
    result = reconcile("NATS is an open source messaging system [^e1].\n", SOURCES)
    assert result.body == "NATS is an open source messaging system. [^E1]\n"
    r = rows(result)["e1"]
    assert (r["status"], r["resolved_url"]) == ("verified", "https://nats.io/about")
    finished(result)


def test_a_lower_case_marker_out_of_range_is_named_as_written():
    result = reconcile("Claim [^e9].\n", SOURCES)
    assert rows(result)["e9"]["status"] == "out_of_range" and result.body == "Claim.\n"
    assert any("[^e9]" in w and "2 E-sources" in w for w in result.report.to_json()["warnings"])


def test_number_groups_are_bare_citations_in_house_form():
    for group in ("[1,2]", "[1, 2]", "[1][2]", "[1] [2]"):
        result = reconcile(f"Storms hit and Synadia raised money {group}.\n", SOURCES)
        assert result.body == "Storms hit and Synadia raised money. [^1] [^2]\n", group
        assert [(c["key"], c["status"]) for c in result.report.to_json()["citations"]] == [
            ("1", "verified"),
            ("2", "verified"),
        ]
        finished(result)


def test_a_group_with_one_number_out_of_range_keeps_the_other():
    result = reconcile("Storms hit [1, 9].\n", SOURCES)
    assert result.body == "Storms hit. [^1]\n"
    assert rows(result)["9"]["status"] == "out_of_range"


def test_a_group_in_tidy_is_left_for_the_reconciler():
    text = "Storms hit [1,2].\n"
    assert tidy(text) == text


def test_a_space_after_the_caret_is_read_as_the_marker_and_named():
    result = reconcile("NATS is an open source messaging system [^ E1]. Storms [^E2 ].\n", SOURCES)
    assert result.body == "NATS is an open source messaging system. [^E1] Storms. [^E2]\n"
    assert rows(result)["E1"]["status"] == "verified"
    warnings = [w.message for w in result.report.warnings if w.code == "malformed_marker"]
    assert warnings == [
        "[^ E1] is not footnote syntax (a space inside the brackets); read as [^E1]",
        "[^E2 ] is not footnote syntax (a space inside the brackets); read as [^E2]",
    ]
    finished(result)


def test_a_malformed_marker_with_a_definition_uses_it():
    result = reconcile("Storms hit the coast [^ s].\n\n[^s]: https://news.org/storms\n", SOURCES)
    assert result.body == "Storms hit the coast. [^1]\n" and rows(result)["s"]["status"] == "verified"


def test_malformed_markers_are_markers_only_for_the_reconciler():
    text = "A [^ E1] and [^E2 ] and `[^ E3]` and [^ two words].\n"
    assert [m.text for m in parse(text).markers] == []
    assert [(m.label, m.text) for m in parse(text, malformed=True).markers] == [("E1", "[^ E1]"), ("E2", "[^E2 ]")]
    assert tidy(text) == text  # tidy does not guess


def test_group_and_link_markers_keep_their_source_text():
    doc = parse("A [1, 2] and [3](https://x.org/a) and [4][].\n\n[4]: https://y.org\n")
    assert [(m.label, m.text, m.url) for m in doc.markers] == [
        ("1", "[1, 2]", None),
        ("2", "[1, 2]", None),
        ("3", "[3](https://x.org/a)", "https://x.org/a"),
        ("4", "[4][]", "https://y.org"),
    ]
    for m in doc.markers:
        assert doc.source[m.start : m.end] == m.text


def test_a_marker_glued_to_the_last_word_can_be_removed():
    # used to raise IndexError (removal looked one character past the end of the block)
    assert reconcile("Synadia[^gone]\n", SOURCES).text == "Synadia\n"
    assert reconcile("A [^gone]B and C[^gone]D.\n", SOURCES).text == "A B and C D.\n"


def test_number_ranges_are_bare_citations_in_house_form():
    for group in ("[1-2]", "[1–2]", "[1 - 2]"):
        result = reconcile(f"Storms hit and Synadia raised money {group}.\n", SOURCES)
        assert result.body == "Storms hit and Synadia raised money. [^1] [^2]\n", group
        assert [c["key"] for c in result.report.to_json()["citations"]] == ["1", "2"]
        finished(result)


def test_a_span_of_years_in_brackets_is_prose_not_a_citation_range():
    for text in ("Revenue doubled [2019-2024].\n", "Storms hit [2-1].\n", "Storms hit [1-20].\n"):
        result = reconcile(text, SOURCES)
        assert result.body == text and result.report.to_json()["citations"] == [], text


def test_a_bracketed_year_is_prose_while_a_two_digit_number_is_still_a_citation():
    text = "Synadia was founded in [2017] by Derek Collison.\n"
    result = reconcile(text, SOURCES)
    assert result.body == text and result.report.to_json()["citations"] == []
    result = reconcile("Storms hit the coast [12].\n", SOURCES)
    assert result.body == "Storms hit the coast.\n" and rows(result)["12"]["status"] == "out_of_range"
