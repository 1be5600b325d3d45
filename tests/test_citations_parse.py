"""Parsing drafts: where markers and definitions are, and what is never a citation."""

from __future__ import annotations

import pytest

from sourcedesk.core.citations.dates import PartialDate, find_dates, parse_date
from sourcedesk.core.citations.ground import GroundTruth
from sourcedesk.core.citations.parse import parse
from sourcedesk.core.citations.placeholders import is_placeholder_url
from sourcedesk.core.domain.errors import UserError


def found(text: str) -> list[tuple[str, str]]:
    doc = parse(text)
    for m in doc.markers:
        assert doc.source[m.start : m.end] == m.text
    return [(m.kind, m.label) for m in doc.markers]


def test_markers_in_every_container_map_to_exact_source_offsets():
    text = (
        "| a | b [^1] |\n|---|---|\n| x \\| y [2] | z[3] |\n\n> quote [^2]\n> lazy [1] `[4]`\n\n"
        "- item [^3]\n   more [6]\n\nHeading [^4]\n---\n\n## ATX [5] ##\n"
    )
    assert found(text) == [
        ("footnote", "1"),
        ("bare", "2"),
        ("bare", "3"),
        ("footnote", "2"),
        ("bare", "1"),
        ("footnote", "3"),
        ("bare", "6"),
        ("footnote", "4"),
        ("bare", "5"),
    ]


def test_bare_numbers_only_in_prose():
    text = (
        "Prose [1] and `[2]` and [link [3]](http://x.org) and <http://x.org/[4]> and \\[5] and &#91;6] "
        "and <b>[7]</b> and ![alt [8]](i.png).\n\n```\n[9]\n```\n\n    [10]\n\n[11]: http://ref.org\n"
    )
    assert found(text) == [("bare", "1"), ("bare", "7")]


def test_footnote_refs_in_notes_and_image_alt():
    doc = parse("Text ^[note with [^a] and https://x.org] and ![alt [^b]](i.png) [^c].\n")
    assert [m.label for m in doc.markers] == ["a", "c"]
    assert doc.link_text_refs == ["b"] and doc.inline_notes == ["note with [^a] and https://x.org"]


def test_definitions_keep_their_line_ranges_without_trailing_blank_lines():
    text = "A [^1].\n\n[^1]: first line\n  continued\n\n\n[^long]: para\n\n    second para\n\nAfter.\n"
    doc = parse(text)
    assert [(d.label, d.line_start, d.line_end) for d in doc.definitions] == [("1", 2, 4), ("long", 6, 9)]
    assert doc.source[doc.definitions[0].start : doc.definitions[0].end] == "[^1]: first line\n  continued\n"


def test_undefined_refs_are_still_markers_and_spaces_break_them():
    assert found("A [^undefined] and [^ no] and [^]\n") == [("footnote", "undefined")]


def test_crlf_and_nul_are_normalised_before_offsets():
    doc = parse("A [^1]\r\nB [2]\0\r\n")
    assert doc.source == "A [^1]\nB [2]\ufffd\n"
    assert [doc.source[m.start : m.end] for m in doc.markers] == ["[^1]", "[2]"]


def test_dates():
    assert find_dates("2024, Mar 05. Published: 2024-03-05 · Updated: 2024-04-01 · 5 March 2024") == [
        PartialDate(2024, 3, 5),
        PartialDate(2024, 3, 5),
        PartialDate(2024, 4, 1),
        PartialDate(2024, 3, 5),
    ]
    assert find_dates("Report 2024 and v2024-13-45") == []
    assert parse_date("2023-11-16T01:36:32.547Z") == PartialDate(2023, 11, 16)
    assert parse_date("2019") == PartialDate(2019) and parse_date("soon") is None
    assert PartialDate(2024, 3).agrees_with(PartialDate(2024, 3, 9))
    assert not PartialDate(2024, 3, 8).agrees_with(PartialDate(2024, 3, 9))


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/a",
        "http://www.example.org",
        "https://sub.example.net/x",
        "https://cnbc.com/XXXX/story",
        "https://a.com/path/to/file",
        "https://a.com/{id}",
    ],
)
def test_placeholders(url):
    assert is_placeholder_url(url)


@pytest.mark.parametrize("url", ["https://nats.io/about", "https://examples.com/x", "https://xx.com/2024/05"])
def test_not_placeholders(url):
    assert not is_placeholder_url(url)


def test_ground_truth_namespaces_and_canonical_sources():
    truth = GroundTruth.build(
        [
            {"url": "https://a.org/x", "title": "A", "marker": "E1"},
            {"url": "https://b.org", "title": "B"},
            {"url": "http://www.a.org/x/", "title": "A again"},
            "https://c.org",
        ]
    )
    assert [s.marker for s in truth.sources] == ["E1", None, None, None]
    assert [s.url for s in truth.indexed] == ["https://b.org", "https://a.org/x", "https://c.org"]
    assert truth.indexed[1] is truth.by_marker["E1"]  # same page, one source
    assert truth.is_marker_label("E7") and truth.is_marker_label("V1") and not truth.is_marker_label("X1")
    explicit = GroundTruth.build([{"url": "https://z.org", "title": "Z"}], search_results=[{"url": "https://w.org"}])
    assert [s.url for s in explicit.indexed] == ["https://w.org"] and explicit.lookup_url("z.org") is not None


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([{"title": "no url"}], "sources[0]: missing 'url'"),
        ([{"url": "https://a.org", "title": ["x"]}], "sources[0].title: expected text, got list"),
        ([{"url": "https://a.org", "marker": "E-1"}], "sources[0].marker"),
        ([{"url": "https://a.org", "marker": "E1"}, {"url": "https://b.org", "marker": "E1"}], "E1 is used twice"),
        ([{"url": "https://a.org", "highlights": [1]}], "sources[0].highlights"),
        ([3], "sources[0]: expected an object"),
        ({"url": "x"}, "expected a list"),
    ],
)
def test_bad_sources_name_the_field(items, message):
    with pytest.raises(UserError) as err:
        GroundTruth.build(items)
    assert message in str(err.value)
