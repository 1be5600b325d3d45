"""``url_citation`` offsets are read in the unit that lines the answer's spans up with its text (issue 20).

Perplexity documents ``start_index``/``end_index`` only as a "character index". A server
may count code points (Python), UTF-16 units (JavaScript) or UTF-8 bytes (Go): after an
emoji, a CJK character or a combining accent the three disagree, and the wrong one binds a
citation to the wrong words while ``end <= len(text)`` still holds. Each answer below puts
such characters before the cited spans and sends the offsets counted in one unit.
"""

from __future__ import annotations

import pytest

from sourcedesk.core.writing.agent import read_response

URL_A, URL_B = "https://acme.example/robots", "https://acme.example/funding"
PREFIXES = {
    "emoji": "🚀🤖 Launch notes. ",
    "cjk": "中文资料：概要。 ",
    "combining": "Cafe\u0301 Société de\u0301mo. ",
}
UNITS = ("code points", "utf-16", "utf-8")


def _count(text: str, unit: str) -> int:
    if unit == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    if unit == "utf-8":
        return len(text.encode("utf-8"))
    return len(text)


def _annotation(text: str, span: str, url: str, unit: str) -> dict:
    at = text.index(span)
    start = _count(text[:at], unit)
    return {"type": "url_citation", "url": url, "start_index": start, "end_index": start + _count(span, unit)}


def _answer(text: str, annotations: list[dict]) -> dict:
    results = [{"id": 1, "url": URL_A, "title": "Robots"}, {"id": 2, "url": URL_B, "title": "Funding"}]
    return {
        "status": "completed",
        "output": [
            {"type": "search_results", "results": results},
            {"type": "message", "content": [{"type": "output_text", "text": text, "annotations": annotations}]},
        ],
    }


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("prefix", list(PREFIXES), ids=list(PREFIXES))
def test_spans_after_multibyte_characters_bind_the_words_they_cite_in_every_unit(prefix, unit):
    text = PREFIXES[prefix] + "Acme builds warehouse robots for retailers. It raised 12 million dollars in 2024."
    annotations = [
        _annotation(text, "Acme builds warehouse robots", URL_A, unit),
        _annotation(text, "It raised 12 million dollars", URL_B, unit),
    ]
    response = read_response(_answer(text, annotations), secrets=[])
    # the first unit that counts the text the same way (CJK and accents are one UTF-16 unit each)
    same = next(u for u in UNITS if _count(text, u) == _count(text, unit))
    assert response.offset_unit == same
    body = response.content
    assert "Acme builds warehouse robots [1] for retailers." in body, body
    assert "It raised 12 million dollars [2] in 2024." in body, body
    assert [r["action"] for r in response.annotations] == ["marker_added", "marker_added"]
    assert not any("line up" in w for w in response.warnings)


def test_the_unit_used_is_the_one_that_fits_and_it_is_recorded():
    text = "🚀 Acme builds warehouse robots. It raised money."
    for unit in UNITS:
        response = read_response(
            _answer(text, [_annotation(text, "Acme builds warehouse robots", URL_A, unit)]), secrets=[]
        )
        assert response.offset_unit == unit, unit


def test_offsets_that_fit_no_unit_leave_the_markers_alone_with_a_warning():
    text = "🚀 Acme builds warehouse robots for retailers. [1] It raised money."
    wrong = {"type": "url_citation", "url": URL_B, "start_index": 5, "end_index": 19}  # mid-word in every unit
    response = read_response(_answer(text, [wrong]), secrets=[])
    assert response.offset_unit == "none"
    assert response.content == text  # nothing was inserted from the spans; the writer's own [1] stays
    assert any("neither as characters, nor as UTF-16 units, nor as UTF-8 bytes" in w for w in response.warnings)


def test_one_unit_must_fit_the_whole_answer_not_each_span_its_own():
    text = "🚀 Acme builds warehouse robots. Its robots pick orders."
    first = _annotation(text, "Acme builds warehouse robots", URL_A, "utf-8")
    second = _annotation(text, "Its robots pick orders", URL_B, "code points")
    response = read_response(_answer(text, [first, second]), secrets=[])
    assert response.offset_unit == "none" and "[1]" not in response.content and "[2]" not in response.content


def test_an_ascii_answer_reads_as_code_points_and_no_annotation_records_no_unit():
    text = "Acme builds warehouse robots. It raised money."
    response = read_response(
        _answer(text, [_annotation(text, "Acme builds warehouse robots", URL_A, "utf-8")]), secrets=[]
    )
    assert response.offset_unit == "code points" and "robots [1]." in response.content
    assert read_response(_answer(text, []), secrets=[]).offset_unit is None
