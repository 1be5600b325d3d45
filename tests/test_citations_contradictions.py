"""Contradictions the third held-out set (tests/heldout3) found read as `supported`, each in its
own small case: a quantity held flat, a direction or an exchange in Japanese, a unit at another
scale, a share given as something else, a year the page states only as its own date, a rival
whose name shares a word with the subject, the target of a deal said to buy its buyer."""

from __future__ import annotations

import pytest

from sourcedesk.core.citations import reconcile
from sourcedesk.core.citations.direction import movements
from sourcedesk.core.citations.figures import figures
from sourcedesk.core.citations.relations import sentence_relations
from sourcedesk.core.citations.support import PARTIAL, SUPPORTED, UNSUPPORTED, Evidence, SupportScorer, supports_text

RESULTS = "Revenue declined 6% to €212 million, while EBITDA was stable at €58 million."


@pytest.mark.parametrize("claim", ["Ombrelle's EBITDA fell to €58 million.", "Ombrelle's EBITDA rose to €58 million."])
def test_a_quantity_the_source_says_held_flat_did_not_move(claim):
    v = supports_text(claim, RESULTS)
    assert v.support == UNSUPPORTED and v.contradicted and "(flat)" in v.reason


def test_flat_words_count_only_after_a_linking_verb():
    assert supports_text("Ombrelle's EBITDA was stable at €58 million.", RESULTS).support == SUPPORTED
    assert movements("They charge a flat fee and own a stable of brands.") == ()
    assert [m.way for m in movements("Prices were unchanged.")] == ["flat"]


def test_a_japanese_direction_reversed_is_a_contradiction():
    source = "湊精機は2024年3月期の売上高が前期比12%増の850億円になったと発表した。営業利益は64億円に減少した。"
    assert supports_text("湊精機の2024年3月期の売上高は前期比12%減少した。", source).contradicted
    assert supports_text("湊精機の2024年3月期の売上高は850億円で、前期より12%増えた。", source).support == SUPPORTED


def test_another_exchange_or_head_office_in_japanese_is_a_contradiction():
    source = "本社は大阪市にあり、東京証券取引所プライム市場に上場している。"
    listed = supports_text("湊精機は名古屋証券取引所に上場している。", source)
    assert listed.contradicted and "東京証券取引所" in listed.reason
    assert supports_text("湊精機の本社は名古屋市にある。", source).support != SUPPORTED
    assert supports_text("湊精機は東京証券取引所に上場している。", source).support == SUPPORTED


def test_japanese_particles_do_not_hide_a_paraphrase():
    source = "湊精機は1962年に設立された。従業員数は約1,200名。"
    assert supports_text("湊精機は1962年設立で、約1,200名の従業員がいる。", source).support == SUPPORTED


def test_a_unit_at_another_scale_is_another_value():
    source = "Installed capacity reached 640 megawatts at the end of 2024."
    v = supports_text("Ombrelle had 640 gigawatts of installed capacity at the end of 2024.", source)
    assert v.support == UNSUPPORTED and "640 megawatts" in v.reason
    assert (
        supports_text("Ombrelle's installed capacity reached 640 MW at the end of 2024.", source).support == SUPPORTED
    )


def test_a_share_written_in_words_is_a_percentage():
    assert [(f.kind, f.value) for f in figures("about a quarter of its workforce")] == [("percent", 25.0)]
    assert [(f.kind, f.value) for f in figures("two thirds of revenue")] == [("percent", 66.67)]
    assert all(f.kind == "year" for f in figures("in the first half of 2024 and the first quarter of 2025"))
    source = "Quorra Health has cut 48 jobs, about a quarter of its workforce."
    assert supports_text("Quorra Health let go of 48 employees, roughly 25% of its staff.", source).support == SUPPORTED
    assert supports_text("Quorra Health cut 48 jobs, 40% of its workforce.", source).contradicted


def test_a_value_the_source_gives_as_something_else_is_no_support():
    source = (
        "Ombrelle bought a 60% stake in Vento Solare for €47 million. "
        "The seller, the investment firm Carrow Partners, keeps the remaining 40%."
    )
    v = supports_text("Ombrelle bought a 40% stake in Vento Solare.", source)
    assert v.support == UNSUPPORTED and "60%" in v.reason
    assert supports_text("Carrow Partners keeps the remaining 40% of Vento Solare.", source).support == SUPPORTED
    # a period is no measure: "first half" shared with another figure decides nothing
    h1 = "Total payment volume in the first half rose to £14.2bn. The net loss narrowed to £9 million from £21 million."
    assert (
        supports_text("The net loss shrank to £9 million in the first half, from £21 million.", h1).support == SUPPORTED
    )


def test_a_year_stated_only_as_the_pages_date_loses_to_the_passage_the_claim_matches():
    source = {
        "marker": "E1",
        "url": "https://news.example.com/tallow-pinecrest",
        "title": "Tallow to buy Pinecrest",
        "date": "2024-12-02",
        "summary": "Tallow agreed to acquire Pinecrest for $95 million. The deal is expected to close in the first "
        "quarter of 2025.",
    }

    def cite(claim: str) -> str | None:
        draft = f"{claim}[^1]\n\n[^1]: [t]({source['url']})\n"
        return reconcile(draft, [source], subject=["Tallow"]).report.citations[0].support

    assert cite("Tallow expects the Pinecrest deal to close in the first quarter of 2024.") == UNSUPPORTED
    assert cite("Tallow expects the Pinecrest deal to close in the first quarter of 2025.") == SUPPORTED
    assert cite("In 2024, Tallow agreed to acquire Pinecrest for $95 million.") == SUPPORTED  # the page's date


def test_a_rival_sharing_a_word_of_the_subjects_name_is_another_company():
    text = "Tandry Robotics, a Toronto company that competes with Corvane, raised $70 million in a Series C."
    scorer = SupportScorer([Evidence.build([("summary", text)])], ["Corvane Robotics", "Corvane"])
    v = scorer.judge(scorer.claim("Corvane Robotics raised $70 million in a Series C."), 0)
    assert v.support == UNSUPPORTED and "for Tandry Robotics" in v.reason


def test_the_target_said_to_buy_its_buyer_is_a_contradiction():
    source = "Orbis Interactive, the Tokyo-listed publisher, is buying Fennick Games for $260 million."
    v = supports_text("Fennick Games is buying Orbis Interactive for $260 million.", source)
    assert v.support == UNSUPPORTED and v.contradicted
    assert supports_text("Orbis Interactive is acquiring Fennick Games for $260 million.", source).support == SUPPORTED


def relation(text: str) -> list[tuple[str, str | None, str | None]]:
    found = sentence_relations(text)[0]
    return [(r.kind, r.agent.text if r.agent else None, r.theme.text if r.theme else None) for r in found]


def test_relations_read_as_a_reader_would():
    assert relation("Hollis Pay is acquiring Dublin's Ledgerly for £38 million.") == [
        ("acquired", "Hollis Pay", "Ledgerly")
    ]
    assert relation("Verdance was acquired by Halvorsen Group.") == [("acquired", "Halvorsen Group", "Verdance")]
    assert ("founder", "Aino Lahti", "Fennick Games") in relation("Fennick Games was started in 2015 by Aino Lahti.")
    assert relation("The company started trading in 2019.") == []
    assert relation("Ombrelle acquired 60% of the Bari-based developer Vento Solare.") == [
        ("based_in", "Vento Solare", "Bari")
    ]
    assert ("based_in", "Vento Solare", "Bari") in relation(
        "It bought Vento Solare, an Italian developer based in Bari."
    )
    assert relation("Declan Moyes is leaving his post as Hollis Pay's chief financial officer.") == [
        ("cfo", "Declan Moyes", "Hollis Pay")
    ]


def test_the_successor_said_to_be_leaving_is_not_supported():
    source = (
        "Amara Quist, chief financial officer of Hollis Pay since 2020, will leave the company at the end of March. "
        "Hollis has hired Declan Moyes from a rival lender to succeed her."
    )
    claim = "Declan Moyes is leaving his post as Hollis Pay's chief financial officer."
    assert supports_text(claim, source).support in (PARTIAL, UNSUPPORTED)
