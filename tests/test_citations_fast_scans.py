"""Quick scans standing in for large patterns must find exactly what those patterns find: the
figure scanner tries its pattern only where a figure can begin, and the relation cue test reads
ASCII text lower-cased (a claim's verdict rests on both)."""

from __future__ import annotations

import random

import pytest

from sourcedesk.core.citations import figures as figures_module
from sourcedesk.core.citations.figures import figures

TRICKY = [
    "often 5 employees",  # "ten" ends "often": a number word glued to a word
    "Caesar 5 customers",  # "sar 5" is a currency code glued to a word
    "the A380 seats 500 people; v2019 shipped",
    "US$5 million, s$3bn, HK$ 20m and nz$ 4 thousand",
    "twenty-five offices, one hundred engineers, one of two, no one",
    "may 2021 it may grow; Mar. 3, 2020; 14th of November 2023; 2023-11-14; sept 2020",
    "a Series B, round C, 12%, 12 percent, 3 per cent and 2 percentage points",
    "revenue of eur 20m (usd5 bn) in 2Q24 and Q3 FY2025",
    "",
    "no figure here at all",
]


def _reference(text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in figures_module._FIGURE_ASCII.finditer(text.lower())]


def _scanned(text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in figures_module._scan_ascii(text.lower())]


@pytest.mark.parametrize("text", TRICKY)
def test_the_scan_finds_what_the_whole_pattern_finds(text):
    assert _scanned(text) == _reference(text)


def test_the_scan_agrees_on_random_mixtures_of_figure_words():
    words = [w for text in TRICKY for w in text.split()] + ["x", "-", "5", "one", "ten", "$"]
    rnd = random.Random(3)
    for _ in range(3000):
        text = rnd.choice(["", " ", "x"]).join(rnd.choice(words) for _ in range(rnd.randint(1, 10)))
        assert _scanned(text) == _reference(text), text


def test_glued_figures_are_still_skipped_and_the_rest_read():
    # "sar 5" inside "Caesar 5" is glued to a word: skipped, and its 5 is not a count either;
    # "ten" inside "often" reads as nothing, so "7 offices" still does
    found = figures("Caesar 5 customers and often 7 offices, a $3M seed")
    assert [(f.kind, f.value) for f in found] == [("count", 7.0), ("money", 3e6)]


RELATION_CUES = [
    "Founded by Priya Raman, the Pleasanton-based company",
    "The round was LED by Sequoia; Accel participated.",
    "a Sequoia-backed startup",
    "its Chief  Executive\tOfficer, Sam Lee",
    "the ledger was co-founded in 2017",
    "Company 3 raised 3 million in a funding round",  # no cue at all
    "misled investors and pre_led nothing",
    "",
]


@pytest.mark.parametrize("text", RELATION_CUES)
def test_the_quick_relation_cue_test_agrees_with_the_case_blind_pattern(text):
    from sourcedesk.core.citations import relation_words as relations  # the cue words and their fast test live there

    assert relations.may_state_relations.__wrapped__(text) == (relations._HINT.search(text) is not None)
    assert (relations._HINT_ASCII.search(text.lower()) is None) == (relations._HINT.search(text) is None)


def test_counts_years_and_scaled_numbers_are_read_without_trying_the_other_kinds(monkeypatch):
    """Most figures in prose are counts, years and scaled numbers: they are read straight away."""
    monkeypatch.setattr(figures_module, "_early_figure", lambda *_: pytest.fail("not a money or date figure"))
    found = figures.__wrapped__("40 employees in 2017 and 2.3 million users")
    assert [(f.kind, f.value) for f in found] == [("count", 40.0), ("year", 2017.0), ("number", 2.3e6)]
    monkeypatch.undo()
    found = figures.__wrapped__("$125M in a Series D on 14 November 2023, up 12%")
    assert [f.kind for f in found] == ["money", "round", "date", "percent"]


def test_the_figure_start_alternation_is_grouped_by_letters_and_finds_the_same_places():
    import re

    words = ["sep", "sept", "september", "series", "s$", "six", "seven", "seventeen", "a$", "aud", "august"]
    grouped = re.compile(figures_module._trie(words))
    assert grouped.pattern.startswith(r"a(?:") and "|s(?:" in grouped.pattern  # one branch per first letter
    plain = re.compile("|".join(map(re.escape, words)))
    for text in ["seventh sept", "x s$ 5", "asept", "augustus", "serious", "nothing"]:
        for pos in range(len(text) + 1):
            found, expected = grouped.search(text, pos), plain.search(text, pos)
            assert (found and found.start()) == (expected and expected.start()), (text, pos)
    assert all(grouped.fullmatch(w) for w in words) and not grouped.fullmatch("se")


def test_ascii_text_is_already_normal_and_other_text_is_still_normalised(monkeypatch):
    import unicodedata

    from sourcedesk.core.citations import tokens

    def refuse(_form: str, _text: str) -> str:
        raise AssertionError("ASCII text needs no Unicode normalisation")

    monkeypatch.setattr(unicodedata, "normalize", refuse)  # the module tokens normalises with
    assert tokens.normalise_text("Raised $41.2M in 2023 (Series B).") == "Raised $41.2M in 2023 (Series B)."
    monkeypatch.undo()
    assert tokens.normalise_text("ＵＳＤ ٤١ million, ۲۰۲۳") == "USD 41 million, 2023"  # full-width, Arabic digits
