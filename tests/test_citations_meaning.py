"""Claims judged by meaning: direction words, figures stated as the same measure in other words,
dates at another precision, and the places a reason names (the examples are the issue's)."""

from __future__ import annotations

import pytest

from sourcedesk.core.citations import reconcile
from sourcedesk.core.citations.direction import movements, reversal
from sourcedesk.core.citations.support import PARTIAL, SUPPORTED, UNSUPPORTED, supports_text

RESULTS = (
    "Calder Systems reported revenue of $40 million for 2024, up from $31 million. Gross margin expanded "
    "to 72%, from 64% a year earlier, while monthly active users dropped to 1.2 million."
)


@pytest.mark.parametrize(
    "claim",
    [
        "Calder Systems' revenue fell to $40 million in 2024.",
        "Calder Systems' gross margin declined to 64%.",
        "Calder Systems' monthly active users grew to 1.2 million.",
    ],
)
def test_a_claim_whose_direction_its_source_reverses_is_unsupported(claim):
    v = supports_text(claim, RESULTS)
    assert v.support == UNSUPPORTED and v.contradicted
    assert "the source says" in v.reason and "where the claim says" in v.reason


@pytest.mark.parametrize(
    "claim",
    [
        "Calder Systems' revenue rose to $40 million in 2024.",
        "Calder Systems' gross margin widened to 72% from 64%.",
        "Calder Systems' monthly active users fell to 1.2 million.",
    ],
)
def test_the_same_direction_in_other_words_is_supported(claim):
    assert supports_text(claim, RESULTS).support == SUPPORTED


def test_a_movement_of_another_quantity_is_no_contradiction():
    calder = frozenset({"calder", "system"})  # the subject's name says nothing about which figure moved
    assert reversal("Calder's headcount fell to 300.", [RESULTS], calder) is None
    assert reversal("Calder's revenue fell to $40 million.", [RESULTS], calder) is not None


def test_movements_name_their_quantity():
    found = movements("Revenue rose to $212 million, while adjusted gross margin expanded to 31%.")
    assert [(m.way, m.verb) for m in found] == [("up", "rose"), ("up", "expanded")]
    assert "margin" in found[1].terms and "margin" not in found[0].terms
    assert [m.verb for m in movements("Prices are up to 40% lower.")] == ["lower"]  # "up to" is a bound


def test_a_month_is_found_in_a_full_date_and_a_rounded_amount_in_another_spelling():
    source = "On Jan. 14, 2025 the deal valued the Lisbon-based company at $2.0bn."
    assert supports_text("The company was valued at $2 billion in January 2025.", source).support == SUPPORTED


def test_the_same_value_as_another_measure_is_not_support_in_other_words():
    source = "Ferrow closed a $48 million round last year. Its customers include three airlines."
    v = supports_text("Ferrow's annual recurring revenue is $48 million.", source)
    assert v.support != SUPPORTED


def test_a_headcount_cut_in_other_words():
    source = "In March 2024 Pelham let go of 55 people, about 15% of its staff, and closed its Lyon office."
    v = supports_text("Pelham cut 55 jobs in March 2024, about 15% of its workforce.", source)
    assert v.support == SUPPORTED


def test_a_cjk_claim_in_other_words_from_a_cjk_source():
    source = "星衡智能成立于2020年，总部位于深圳，员工约350人。"
    assert supports_text("星衡智能约有350名员工。", source).support in (SUPPORTED, PARTIAL)
    assert supports_text("星衡智能约有900名员工。", source).support == UNSUPPORTED


def test_a_place_in_a_reason_is_never_given_to_the_wrong_owner():
    source = "Vollmer has offices in Austria, based in Berlin since 2019."
    v = supports_text("Vollmer is based in Vienna.", source)
    assert "Austria is based" not in v.reason


def test_a_contradicted_claim_is_never_substituted():
    sources = [
        {"marker": "E1", "url": "https://news.example.com/calder", "title": "Calder results", "summary": RESULTS},
        {
            "marker": "E2",
            "url": "https://calder.example.com/about",
            "title": "About Calder",
            "summary": "Calder makes sensors.",
        },
    ]
    draft = "Calder Systems' revenue fell to $40 million in 2024.[^1]\n\n[^1]: [x](https://invented.example.net/a)\n"
    record = reconcile(draft, sources).report.citations[0]
    assert record.status == "dropped"


def test_an_abbreviation_written_like_a_name_still_moves():
    from sourcedesk.core.citations.support import Evidence, SupportScorer

    scorer = SupportScorer(
        [Evidence.build([("summary", "Annual recurring revenue reached $48 million, up 70%.")])], ["Ferrow"]
    )
    v = scorer.judge(scorer.claim("Ferrow's ARR fell to $48 million."), 0)
    assert v.support == UNSUPPORTED and v.contradicted


def test_a_figure_stated_only_of_another_company_is_no_support():
    from sourcedesk.core.citations.support import Evidence, SupportScorer

    text = "Molara, a Brisa rival based in Madrid, raised €18 million in a Series B led by Kestrel Fund."
    scorer = SupportScorer([Evidence.build([("summary", text)])], ["Brisa"])
    v = scorer.judge(scorer.claim("Brisa raised €18 million in a Series B led by Kestrel Fund."), 0)
    assert v.support == UNSUPPORTED and "for Molara" in v.reason
    assert scorer.judge(scorer.claim("Molara raised €18 million in a Series B."), 0).support == SUPPORTED
    # an investor opening the sentence is who funded, not whose round it was
    lead = SupportScorer(
        [Evidence.build([("summary", "Sequoia, an early backer, led the $40 million round of Brisa.")])], ["Brisa"]
    )
    assert not lead.judge(lead.claim("Brisa raised $40 million."), 0).contradicted


def test_a_cjk_headquarters_elsewhere_is_a_contradiction():
    source = "星衡智能成立于2020年，总部位于深圳，员工约350人。"
    v = supports_text("星衡智能总部位于上海。", source)
    assert v.support == UNSUPPORTED and "深圳" in v.reason
