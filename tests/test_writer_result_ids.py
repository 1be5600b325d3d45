"""``[N]`` maps to a search result the way Perplexity's own MCP server maps it (issue 20).

``formatAgentResponseText`` in perplexityai/modelcontextprotocol keys inline references by
the numeric ``id`` of each search result; the same id coming back with the same URL is the
same result; only ids that truly conflict (one id, two URLs) — or that are missing or not
numbers — make it number the unique URLs by position instead.
"""

from __future__ import annotations

import pytest

from sourcedesk.core.writing.agent import read_response
from sourcedesk.core.writing.results import read_results

A, B, C = "https://a.example/1", "https://b.example/2", "https://c.example/3"


def _answer(results: list, text: str) -> dict:
    return {
        "status": "completed",
        "output": [
            {"type": "search_results", "results": results},
            {"type": "message", "content": [{"type": "output_text", "text": text}]},
        ],
    }


def test_a_repeated_id_at_the_same_url_is_the_same_result_and_ids_keep_their_meaning():
    web = read_results([{"id": 1, "url": A}, {"id": 2, "url": B}, {"id": 1, "url": A}, {"id": 3, "url": C}], secrets=[])
    assert web.numbering == "id" and not web.warnings
    assert {r.number: r.url for r in web.results} == {1: A, 2: B, 3: C}  # [3] is c, not a again
    assert [r["url"] for r in web.indexed()] == [A, B, C]


def test_the_same_url_repeated_under_a_tracking_parameter_is_still_the_same_result():
    web = read_results([{"id": 1, "url": A}, {"id": 1, "url": A + "?utm_source=x"}, {"id": 2, "url": B}], secrets=[])
    assert web.numbering == "id" and {r.number: r.url for r in web.results} == {1: A, 2: B}


def test_conflicting_ids_number_the_unique_urls_by_position_and_the_warning_names_the_conflict():
    web = read_results([{"id": 1, "url": A}, {"id": 1, "url": B}, {"id": 1, "url": A}, {"id": 2, "url": C}], secrets=[])
    assert web.numbering == "position"
    assert {r.number: r.url for r in web.results} == {1: A, 2: B, 3: C}  # a's repeat takes no number
    [warning] = web.warnings
    assert f"id 1 is given to {A} and to {B}" in warning and "N-th different page" in warning


@pytest.mark.parametrize(
    ("bad", "shown"),
    [(None, "missing"), (1.5, "1.5"), ("2", "'2'"), (True, "True"), (0, "0"), (1000, "1000")],
    ids=["missing", "fraction", "text", "boolean", "zero", "past-999"],
)
def test_missing_or_non_integer_ids_number_the_unique_urls_by_position(bad, shown):
    second = {"url": B} if bad is None else {"id": bad, "url": B}
    web = read_results([{"id": 1, "url": A}, second, {"id": 3, "url": C}], secrets=[])
    assert web.numbering == "position"
    assert {r.number: r.url for r in web.results} == {1: A, 2: B, 3: C}
    assert any("carry no id a marker can name" in w and shown in w for w in web.warnings), web.warnings


def test_a_citation_in_the_answer_resolves_to_the_page_its_id_names():
    results = [{"id": 1, "url": A, "title": "A"}, {"id": 2, "url": B, "title": "B"}, {"id": 1, "url": A}]
    results.append({"id": 3, "url": C, "title": "C"})
    response = read_response(_answer(results, "Claim three. [3]"), secrets=[])
    assert [(r["n"], r["url"]) for r in response.search_results] == [(1, A), (2, B), (3, C)]


def test_malformed_items_keep_their_ids_reserved_and_never_decide_the_numbering():
    web = read_results([{"id": 1, "url": A}, {"id": 2, "title": "no url"}, "text", {"id": 3, "url": C}], secrets=[])
    assert web.numbering == "id"
    assert {r.number: r.url for r in web.results} == {1: A, 3: C}
    assert web.skipped_numbers() == {2: "no url"}
    assert web.indexed()[1]["url"].startswith("https://skipped-result.invalid/")
