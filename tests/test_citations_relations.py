"""Relations decide support: who led and who joined a round, who holds which role where, where a company
was founded or is based, who bought whom. Every name and figure of these claims is in the source; only the
relation between them is wrong (or right)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourcedesk.core.citations import reconcile
from sourcedesk.core.citations.relations import relations, stated_relations
from sourcedesk.core.citations.support import PARTIAL, SUPPORTED, UNSUPPORTED, Evidence, SupportScorer, supports_text
from tests.conftest import examples_per_pass

ROUND = (
    "Quillstone, a maker of warehouse robots, raised $42 million in a Series B round led by Marlow Ventures. "
    "Harbor Peak Capital and Fenwick Partners also participated. Its $9 million Series A in 2021 was led by "
    "Fenwick Partners."
)
PEOPLE = (
    "Quillstone was founded in Leeds in 2019 by Amara Osei, its chief executive, and Jonas Brandt, its chief "
    "technology officer. The company moved its headquarters to Manchester in 2022."
)
RIVAL = (
    "Trellix Robotics, which competes with Quillstone, named Hana Ito its chief executive. Ito previously ran "
    "operations at Corlan. Trellix Robotics is based in Bristol."
)
DEAL = "Ostrava Logistics has acquired Pickwell, a small robotics startup, for $15 million."


def judge(claim: str, *sources: str) -> tuple[str, str]:
    scorer = SupportScorer([Evidence.build([("summary", s)]) for s in sources], ["Quillstone"])
    v = scorer.judge(scorer.claim(claim), 0)
    return v.support, v.reason


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("Marlow Ventures led Quillstone's $42 million Series B.", ROUND),
        ("Harbor Peak Capital participated in Quillstone's $42 million Series B.", ROUND),
        ("Quillstone's Series A was led by Fenwick Partners.", ROUND),
        ("Amara Osei, Quillstone's chief executive, co-founded the company in 2019.", PEOPLE),
        ("Quillstone was founded in Leeds and is now headquartered in Manchester.", PEOPLE),
        ("Hana Ito is the chief executive of Trellix Robotics.", RIVAL),
        ("Pickwell was acquired by Ostrava Logistics for $15 million.", DEAL),
        # a headline's passive, "was" left out: the company was founded, it founded nothing
        ("Quillstone founded in Leeds by Amara Osei.", PEOPLE),
    ],
)
def test_the_same_relation_with_the_same_arguments_is_supported(claim, source):
    assert judge(claim, source)[0] == SUPPORTED


@pytest.mark.parametrize(
    ("claim", "source", "says"),
    [
        # a participant named as the lead
        ("Harbor Peak Capital led Quillstone's $42 million Series B.", ROUND, "Harbor Peak Capital participated"),
        # the lead of one round named as the lead of another
        ("Quillstone's Series B was led by Fenwick Partners.", ROUND, "Fenwick Partners participated"),
        # another chief-officer role for the same person
        ("Jonas Brandt is Quillstone's chief executive.", PEOPLE, "chief technology officer"),
        # the role at another company
        ("Hana Ito, Quillstone's chief executive, previously ran operations at Corlan.", RIVAL, "Trellix Robotics"),
        # the headquarters city as the founding city, and the other way round
        ("Quillstone was founded in Manchester in 2019.", PEOPLE, "founded in Leeds"),
        ("Quillstone is headquartered in Leeds.", PEOPLE, "based in Manchester"),
        # buyer and bought swapped, and another buyer
        ("Pickwell acquired Ostrava Logistics for $15 million.", DEAL, "Ostrava Logistics acquired Pickwell"),
        ("Quillstone bought Pickwell for $15 million.", DEAL, "Ostrava Logistics acquired Pickwell"),
    ],
)
def test_a_conflicting_relation_is_a_contradiction(claim, source, says):
    support, reason = judge(claim, source)
    assert support == UNSUPPORTED and says in reason


def test_a_relation_the_source_does_not_state_is_not_support():
    # Every name and figure is there, but nothing says who led the round.
    source = "Quillstone raised $42 million in a Series B. Marlow Ventures and Fenwick Partners are investors."
    support, reason = judge("Marlow Ventures led Quillstone's $42 million Series B.", source)
    assert support == PARTIAL and "does not say Marlow Ventures led" in reason


def test_a_stake_is_not_the_company():
    deal = "Ostrava Logistics has acquired Pickwell for $15 million."
    assert judge("Ostrava Logistics bought a minority stake in Pickwell.", deal)[0] != SUPPORTED
    stake = "Ostrava Logistics bought a 20% stake in Pickwell."
    assert judge("Ostrava Logistics acquired Pickwell.", stake)[0] != SUPPORTED
    assert judge("Ostrava Logistics bought a 20% stake in Pickwell last year.", stake)[0] == SUPPORTED


def test_titles_and_hyphenated_backers_read_as_written_out():
    assert (
        judge(
            "Quillstone, which is backed by Marlow Ventures, builds robots.",
            "Marlow Ventures-backed Quillstone builds robots.",
        )[0]
        == SUPPORTED
    )
    assert (
        judge("Amara Osei is Quillstone's chief executive officer.", "Quillstone CEO Amara Osei spoke.")[0] == SUPPORTED
    )


def test_a_plural_title_names_everyone_it_lists():
    source = "Quillstone's founders, Amara Osei and Jonas Brandt, met at university."
    assert judge("Jonas Brandt co-founded Quillstone.", source)[0] == SUPPORTED
    assert {r.describe() for r in relations("Co-founders Amara Osei and Jonas Brandt started Quillstone.")} == {
        "Amara Osei is founder of Quillstone",
        "Jonas Brandt is founder of Quillstone",
    }


def test_a_role_held_before_does_not_contradict_one_held_now():
    source = "Jonas Brandt, formerly Quillstone's chief technology officer, now advises the board."
    support, reason = judge("Jonas Brandt is Quillstone's chief executive.", source)
    assert support == PARTIAL and "does not say" in reason
    assert judge("Jonas Brandt is Quillstone's chief executive.", "Jonas Brandt is Quillstone's CTO.")[0] == UNSUPPORTED


def test_a_former_headquarters_does_not_contradict_the_current_one():
    source = "Quillstone was headquartered in Leeds until 2022, when it moved to Manchester."
    assert judge("Quillstone is headquartered in Manchester.", source)[0] != UNSUPPORTED
    assert judge("Quillstone is headquartered in York.", "Quillstone is headquartered in Leeds.")[0] == UNSUPPORTED


def test_running_a_company_is_no_lead_investor():
    assert [r.kind for r in relations("Amara Osei, who leads Quillstone as chief executive, said so.")] == ["ceo"]
    assert judge("Amara Osei, who leads Quillstone as chief executive", PEOPLE)[0] == SUPPORTED


def test_pronouns_stand_for_the_company_of_their_sentence_or_the_one_before():
    found = {
        r.describe() for r in relations("Trellix Robotics, which competes with Quillstone, named Hana Ito its CEO.")
    }
    assert found == {"Hana Ito is chief executive of Trellix Robotics"}
    # "Ito previously ran …" carries no company; the source's next sentence still knows whose CEO she is.
    assert judge("Hana Ito is Quillstone's chief executive.", RIVAL)[0] == UNSUPPORTED


def test_cjk_lead_and_follow_on_investors():
    source = "星桥科技完成2亿元B轮融资，由远山资本领投，青禾创投跟投。"
    assert supports_text("星桥科技的B轮融资由远山资本领投。", source).support == SUPPORTED
    v = supports_text("星桥科技的B轮融资由青禾创投领投。", source)
    assert v.support == UNSUPPORTED and v.contradicted


def test_a_retrieved_source_cited_for_the_wrong_relation_is_flagged_weak():
    sources = [
        {"marker": "E1", "url": "https://news.example.com/quillstone-b", "title": "Quillstone", "summary": ROUND}
    ]
    draft = "Harbor Peak Capital led Quillstone's Series B.[^E1] Marlow Ventures led Quillstone's Series B.[^E1]\n"
    weak = reconcile(draft.split("[^E1] ")[0] + "[^E1]\n", sources, subject=["Quillstone"]).report.citations[0]
    assert weak.status == "verified" and weak.weak and "participated" in (weak.reason or "")
    fine = reconcile(draft.split("[^E1] ")[1], sources, subject=["Quillstone"]).report.citations[0]
    assert fine.status == "verified" and not fine.weak and fine.support == SUPPORTED


def test_a_fabricated_citation_is_never_substituted_with_a_source_stating_another_relation():
    sources = [
        {"marker": "E1", "url": "https://news.example.com/quillstone-b", "title": "Series B", "summary": ROUND},
        {"marker": "E2", "url": "https://quillstone.example.com/about", "title": "About", "summary": PEOPLE},
    ]
    draft = "Jonas Brandt is Quillstone's chief executive.[^1]\n\n[^1]: [CEO](https://example.org/brandt-ceo)\n"
    result = reconcile(draft, sources, subject=["Quillstone"])
    assert result.report.citations[0].status == "dropped"
    right = draft.replace("Jonas Brandt", "Amara Osei")
    assert reconcile(right, sources, subject=["Quillstone"]).report.citations[0].status == "substituted"


WORDS = [
    "led",
    "by",
    "co-led",
    "Sequoia",
    "Capital",
    ",",
    "and",
    "its",
    "the",
    "company",
    "chief",
    "executive",
    "CEO",
    "founded",
    "in",
    "Austin",
    "acquired",
    "bought",
    "was",
    "headquarters",
    ":",
    "-based",
    "Acme's",
    "of",
    "at",
    "领投",
    "由",
    "跟投",
    "C轮",
    "融资",
    "(",
    ")",
    ";",
    "[^1]",
    "Series",
    "B",
    "seed",
    "round",
    "who",
    "leads",
    "as",
]


@settings(max_examples=examples_per_pass(300), deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=16).map(" ".join))
def test_any_text_reads_without_error_and_every_relation_names_someone(text):
    for r in relations(text) + tuple(stated_relations([("summary", text), ("summary", text[::-1])])):
        assert r.agent is not None or r.theme is not None
        assert r.describe()


def test_a_facts_headquarters_is_the_pages_own_company_not_the_state_after_the_city():
    """'headquarters: Pleasanton, CA' (an Exa company fact) says where the page's company is based;
    'CA' is no company. A claim that the subject is based there is supported; another city contradicts."""
    scorer = SupportScorer(
        [
            Evidence.build(
                [
                    ("title", "Synadia | The company behind NATS"),
                    ("summary", "Synadia builds NATS."),
                    ("facts", "headquarters: Pleasanton, CA"),
                ]
            )
        ],
        ["NATS", "Synadia"],
    )
    assert scorer.judge(scorer.claim("NATS is headquartered in Pleasanton."), 0).support == SUPPORTED
    denver = scorer.judge(scorer.claim("Synadia is headquartered in Denver."), 0)
    assert denver.support == UNSUPPORTED and denver.contradicted
