"""Namesakes: declared in memo.yaml, learned from what the pin removed and from rejected domains,
shown as learned, removable — and never the subject's own name or a publication's."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.errors import MemoError
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.sources.curation import reject_domain
from sourcedesk.core.sources.namesakes import LearnedNamesake, TitleSeen, learn, names_in_title
from sourcedesk.store.global_store import GlobalStore
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main
from sourcedesk.tui.headless import retrieve_memo_folder
from tests.conftest import exa_requests

FIXTURES = Path(__file__).parent / "fixtures" / "memos"


@pytest.mark.parametrize(
    "title, subject, expected",
    [
        ("Alcresta Therapeutics | Enteral nutrition innovation", "Cresta", ["Alcresta Therapeutics"]),
        ("CodeCresta – Software development & AI chatbot studio", "Cresta", ["CodeCresta"]),
        ("Grupo Cresta | Guatemala", "Cresta", ["Grupo Cresta"]),
        ("GNATS.io — hosted issue tracking for small engineering teams", "NATS", ["GNATS"]),
        ("NATS Holdings Annual Report and Accounts 2025", "NATS", ["NATS Holdings"]),
        ("Kestra Medical Technologies reports fiscal 2025 results", "Kestra", ["Kestra Medical Technologies"]),
        ("Leadership | Kestra Financial", "Kestra", ["Kestra Financial"]),
        ("ZOLL sues Kestra Medical over wearable defibrillator patents", "Kestra", ["Kestra Medical"]),
        # the subject's own name is never learned, nor a publication's name
        ("About NATS | UK air traffic control", "NATS", []),
        ("Train to be an air traffic controller | NATS Careers", "NATS", []),
        ("Nats air traffic control failure: what went wrong | The Guardian", "NATS", []),
        ("Kestra shares fall after wearable defibrillator maker trims outlook | Reuters", "Kestra", []),
    ],
)
def test_organisation_names_in_titles(title, subject, expected):
    assert names_in_title(title, [subject]) == expected


def test_an_alias_is_never_learned():
    assert names_in_title("Synadia Communications | Pricing", ["NATS", "Synadia Communications"]) == []


def test_from_the_pin_only_impostor_hosts_teach_and_they_mark_their_own_site():
    seen = [
        TitleSeen("https://www.alcresta.com/", "Alcresta Therapeutics | Enteral nutrition"),
        TitleSeen("https://www.itnews.com.au/cresta-wins", "Cresta Communications wins a contract"),  # a publisher
    ]
    learned = learn(seen, origin="pin", subject_name="Cresta", subject_hosts=["cresta.com"])
    assert [(n.name, n.host, n.own_site) for n in learned] == [("Alcresta Therapeutics", "www.alcresta.com", True)]
    assert learned[0].ref().host == "www.alcresta.com" and learned[0].ref().learned


def test_a_rejected_publishers_titles_teach_the_namesake_but_not_the_site():
    seen = [TitleSeen("https://www.fiercebiotech.com/x", "Kestra Medical Technologies prices $202M IPO")]
    learned = learn(seen, origin="reject", subject_name="Kestra", subject_hosts=["kestra.io"])
    assert [(n.name, n.own_site) for n in learned] == [("Kestra Medical Technologies", False)]
    assert learned[0].ref().host is None  # fiercebiotech.com pages are not all about Kestra Medical


def test_memo_yaml_refuses_the_subjects_own_name_as_a_namesake(tmp_path):
    (tmp_path / "memo.yaml").write_text(
        "title: t\nsubject:\n  name: Kestra\n  aliases: [Kestra Technologies]\n"
        "  namesakes: [Kestra Medical, KESTRA-Technologies]\nsections: [{id: a, title: A}]\n",
        encoding="utf-8",
    )
    with pytest.raises(MemoError) as err:
        load_memo(tmp_path)
    assert "memo.yaml:2" in str(err.value) and "KESTRA-Technologies" in str(err.value) and "own name" in str(err.value)


def test_an_entity_pinned_retrieval_learns_the_impostors_it_removed(exa, tmp_path):
    d = Path(shutil.copytree(FIXTURES / "cresta-profile", tmp_path / "cresta"))
    asyncio.run(retrieve_memo_folder(d, settings=Settings()))
    with MemoStore(d) as store:
        learned = {n.name: n for n in store.learned_namesakes()}
    assert {"Alcresta Therapeutics", "CodeCresta", "Grupo Cresta"} <= set(learned)
    assert all(n.origin == "pin" and n.own_site for n in learned.values())
    assert "Cresta" not in learned and "Cresta AI" not in learned


def test_rejecting_a_domain_teaches_its_namesake_and_a_removed_one_stays_removed(exa, tmp_path, capsys):
    d = tmp_path / "kestra"
    assert main(["init", str(d), "--subject", "Kestra", "--url", "https://kestra.io"]) == 0
    assert main(["retrieve", str(d), "--section", "risks"]) == 0
    # Issue 17: the results teach it first, cold (kestramedical.com is its site), so the reject adds nothing.
    assert main(["reject", "kestramedical.com", "--memo", str(d)]) == 0
    assert "Learned namesake(s)" not in capsys.readouterr().out
    assert main(["rejects", "--memo", str(d), "--json"]) == 0
    listed = __import__("json").loads(capsys.readouterr().out)["memo"]["namesakes"]
    medical = next(n for n in listed if n["name"] == "Kestra Medical Technologies")
    assert {"learned": True}.items() <= medical.items() and "kestramedical.com" in medical["from"]
    # the analyst removes it; it is not learned again
    assert main(["unreject", "--namesake", "kestra medical technologies", "--memo", str(d)]) == 0
    assert "Forgot the learned namesake 'Kestra Medical Technologies'" in capsys.readouterr().out
    with MemoStore(d) as store:
        loaded = load_memo(d)
        reject_domain(loaded, store, "kestramedical.com", scope="memo", global_store=GlobalStore())
        assert "Kestra Medical Technologies" not in [n.name for n in store.learned_namesakes()]
        removed = [n.name for n in store.learned_namesakes(include_removed=True) if n.removed]
        assert removed == ["Kestra Medical Technologies"]
    # nor found again by the next retrieval
    assert main(["retrieve", str(d), "--section", "risks", "--refresh"]) == 0
    with MemoStore(d) as store:
        assert "Kestra Medical Technologies" not in [n.name for n in store.learned_namesakes()]


def test_forgetting_a_declared_namesake_points_at_memo_yaml(tmp_path, capsys):
    d = tmp_path / "k"
    assert main(["init", str(d), "--subject", "Kestra", "--url", "https://kestra.io"]) == 0
    text = (d / "memo.yaml").read_text().replace("  namesakes: []", "  namesakes: [Kestra Financial]")
    (d / "memo.yaml").write_text(text)
    capsys.readouterr()
    assert main(["unreject", "--namesake", "Kestra Financial", "--memo", str(d)]) == 2
    err = capsys.readouterr().err
    assert "declared in memo.yaml" in err and "Traceback" not in err
    assert main(["rejects", "--memo", str(d)]) == 0
    assert "Kestra Financial  (memo.yaml)" in capsys.readouterr().out


def test_the_judge_for_a_memo_uses_what_the_store_learned(exa, tmp_path):
    from sourcedesk.core.sources.about import SourceText
    from sourcedesk.core.sources.judge import memo_judge

    d = Path(shutil.copytree(FIXTURES / "cresta-profile", tmp_path / "cresta"))
    loaded = load_memo(d)
    with MemoStore(d) as store:
        before = memo_judge(loaded.memo, store).judge(SourceText("https://codecresta.com/blog", "Our studio", ""))
    asyncio.run(retrieve_memo_folder(d, settings=Settings()))
    with MemoStore(d) as store:
        store.add_learned_namesakes([LearnedNamesake(name="Ridge Cresta", origin="reject", host="x.example")])
        judge = memo_judge(loaded.memo, store)
    after = judge.judge(SourceText("https://codecresta.com/blog", "Our studio", ""))
    assert before.verdict == "other" and after.verdict == "namesake"
    assert "Ridge Cresta" in [n.name for n in judge.namesake_refs]
    assert exa_requests(exa) >= 1
