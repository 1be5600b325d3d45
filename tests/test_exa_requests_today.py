"""Exa requests that Exa accepts today (issue 20): category constraints, limits, search types.

Exa's reference: ``company`` and ``people`` answer 400 to published-date filters,
``includeText``, ``excludeText`` and ``excludeDomains``; ``people`` takes only LinkedIn
domains in ``includeDomains``; ``financial report`` refuses ``excludeText``; text and
highlights return at most 10,000 characters; the search types are ``auto``, ``fast``,
``instant``, ``neural``, ``deep-lite``, ``deep``, ``deep-reasoning`` and ``lite``. The
sandbox's stand-in answers 400 at exactly those places, so every body the product builds
is sent to it here: a regression in either table meets a refusal.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from sourcedesk.core.config.settings import Settings
from sourcedesk.core.domain.errors import MemoError
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.memo.spec import ExaEntry
from sourcedesk.core.sources.providers import ProviderContext
from sourcedesk.core.sources.providers.exa.plan import plan_entry
from sourcedesk.core.sources.providers.exa.request import SEARCH_TYPES, build_search_body
from sourcedesk.sandbox.exa_api import BadRequest, parse_search

MEMO = """\
title: t
subject: {name: Acme Robotics, url: https://acme-robotics.io, domains: [acme.ai]}
sections: [{id: a, title: A}]
"""


def _ctx(tmp_path: Path, *, names=(), rejects=()) -> ProviderContext:
    (tmp_path / "memo.yaml").write_text(MEMO, encoding="utf-8")
    loaded = load_memo(tmp_path)
    return ProviderContext(
        memo=loaded.memo,
        section=loaded.memo.sections[0],
        variables={},
        settings=Settings(),
        memo_dir=tmp_path,
        memo_name_rejects=list(names),
        memo_rejects=list(rejects),
    )


def _entry(**kw) -> ExaEntry:
    return ExaEntry(provider="exa", query="Acme Robotics", **kw)


# ---------------------------------------------------------------- category constraints


def test_a_people_section_pinned_to_the_entity_keeps_the_pin_on_our_side(tmp_path):
    plan = plan_entry(_entry(category="people", pin="entity"), _ctx(tmp_path))
    body = plan.body(10)
    assert "includeDomains" not in body  # acme-robotics.io is not LinkedIn's: Exa would answer 400
    assert plan.pins == ["acme-robotics.io", "acme.ai"] and plan.filters_locally  # still enforced on results
    [note] = [w.message for w in plan.warnings if "instead of being sent" in w.message]
    assert "the entity pin (acme-robotics.io, acme.ai)" in note and "category people" in note


def test_a_people_section_pinned_to_linkedin_sends_its_pin(tmp_path):
    entry = _entry(category="people", pin="entity", domains=["linkedin.com"])
    ctx = _ctx(tmp_path)
    ctx.memo.subject.url = None
    ctx.memo.subject.domains = []
    plan = plan_entry(entry, ctx)
    assert plan.body(10)["includeDomains"] == ["linkedin.com"]
    assert not any("instead of being sent" in w.message for w in plan.warnings)


@pytest.mark.parametrize("category", ["company", "people"])
def test_company_and_people_keep_dates_names_and_exclusions_off_the_request_with_one_note(tmp_path, category):
    ctx = _ctx(tmp_path, names=["Acme Medical"], rejects=["acme-robotics.com"])
    entry = _entry(category=category, pin="none", start_published_date="2024-01-01", exclude_domains=["x.io"])
    plan = plan_entry(entry, ctx)
    body = plan.body(10)
    for field in ("startPublishedDate", "excludeText", "excludeDomains", "includeDomains"):
        assert field not in body, field
    notes = [w.message for w in plan.warnings if "instead of being sent" in w.message]
    assert len(notes) == 1  # one note for the entry, naming everything moved
    assert "domain exclusion" in notes[0] and "rejected names" in notes[0] and "published-date window" in notes[0]
    assert plan.client_dates == ("2024-01-01", None) and plan.names and plan.filters_locally


def test_financial_reports_keep_rejected_names_on_our_side_but_send_dates(tmp_path):
    plan = plan_entry(
        _entry(category="financial report", pin="none", start_published_date="2024-01-01"),
        _ctx(tmp_path, names=["Acme Medical"]),
    )
    body = plan.body(10)
    assert "excludeText" not in body and body["startPublishedDate"] == "2024-01-01"
    assert any("the rejected names was applied" in w.message for w in plan.warnings)


def test_a_body_exa_would_refuse_cannot_be_built():
    with pytest.raises(ValueError, match="refuses startPublishedDate with category 'company'"):
        build_search_body("q", category="company", start_published_date="2024-01-01")
    with pytest.raises(ValueError, match="only LinkedIn domains"):
        build_search_body("q", category="people", include_domains=["acme.ai"])
    with pytest.raises(ValueError, match="at most 10,000"):
        build_search_body("q", text={"maxCharacters": 10_001})
    with pytest.raises(ValueError, match="not an Exa search type"):
        build_search_body("q", type="keyword")


CATEGORIES = [None, "company", "people", "news", "publication", "personal site", "financial report"]


@pytest.mark.parametrize(
    ("category", "pin"), list(itertools.product(CATEGORIES, ["entity", "none"])), ids=lambda v: str(v)
)
def test_every_body_the_product_builds_is_accepted_by_the_stand_in_exa(tmp_path, category, pin):
    entry = _entry(
        category=category,
        pin=pin,
        start_published_date="2024-01-01",
        end_published_date="2025-01-01",
        exclude_domains=["x.io"],
        contents={"text": {"max-characters": 10_000}, "highlights": {"num-sentences": 50}},
    )
    plan = plan_entry(entry, _ctx(tmp_path, names=["Acme Medical"], rejects=["acme-robotics.com"]))
    params = parse_search(plan.body(20))  # BadRequest would be Exa's 400
    assert params.highlights["maxCharacters"] == 10_000  # 50 sentences, capped


@pytest.mark.parametrize(
    "body",
    [
        {"category": "company", "startPublishedDate": "2024-01-01"},
        {"category": "company", "excludeText": ["Acme Medical"]},
        {"category": "company", "includeText": ["robots"]},
        {"category": "company", "excludeDomains": ["x.io"]},
        {"category": "people", "endPublishedDate": "2024-01-01"},
        {"category": "people", "includeDomains": ["acme-robotics.io"]},
        {"category": "financial report", "excludeText": ["Acme Medical"]},
        {"type": "keyword"},
        {"type": "hybrid"},
        {"contents": {"text": {"maxCharacters": 10_001}}},
        {"contents": {"highlights": {"maxCharacters": 20_000}}},
    ],
    ids=lambda b: ",".join(f"{k}" for k in b) + ":" + str(next(iter(b.values())))[:20],
)
def test_the_stand_in_exa_answers_400_where_exa_does(body):
    with pytest.raises(BadRequest):
        parse_search({"query": "Acme", **body})


def test_the_stand_in_exa_takes_what_exa_takes():
    bodies: list[dict[str, Any]] = [
        {"category": "people", "includeDomains": ["linkedin.com", "www.linkedin.com/in"]},
        {"category": "financial report", "startPublishedDate": "2024-01-01", "excludeDomains": ["x.io"]},
        {"category": "news", "excludeText": ["Acme Medical"], "includeText": ["robots"]},
        *({"type": t} for t in SEARCH_TYPES),
        {"contents": {"text": {"maxCharacters": 10_000}, "highlights": {"maxCharacters": 10_000}}},
    ]
    for body in bodies:
        parse_search({"query": "Acme", **body})


# ---------------------------------------------------------------- load-time limits and search types


def _load(tmp_path: Path, entry: str) -> MemoError | None:
    (tmp_path / "memo.yaml").write_text(
        "title: t\nsubject: {name: Acme, url: https://acme.io}\nsections:\n  - id: a\n    title: A\n"
        f"    include-sources:\n      - {entry}\n",
        encoding="utf-8",
    )
    try:
        load_memo(tmp_path)
    except MemoError as exc:
        return exc
    return None


def test_max_characters_over_ten_thousand_is_a_load_error_with_its_line_and_the_limit(tmp_path):
    err = _load(tmp_path, "{provider: exa, query: q, contents: {text: {max-characters: 10001}}}")
    assert err is not None and "memo.yaml:7:" in err.message and "between 100 and 10000" in err.message
    err = _load(tmp_path, "{provider: exa, query: q, contents: {highlights: {max-characters: 20000}}}")
    assert err is not None and "memo.yaml:7:" in err.message and "over the 10,000 characters" in err.message
    assert _load(tmp_path, "{provider: exa, query: q, contents: {text: {max-characters: 10000}}}") is None


@pytest.mark.parametrize(
    ("old", "closest"), [("keyword", "auto"), ("hybrid", "auto"), ("deeep", "deep"), ("fsat", "fast")]
)
def test_a_search_type_exa_no_longer_takes_names_the_closest_current_one(tmp_path, old, closest):
    err = _load(tmp_path, f"{{provider: exa, query: q, type: {old}}}")
    assert err is not None and "memo.yaml:7:" in err.message and "is not an Exa search type" in err.message
    assert f"did you mean {closest!r}?" in (err.hint or "")


def test_num_sentences_is_converted_and_capped_with_a_notice(tmp_path):
    (tmp_path / "memo.yaml").write_text(
        "title: t\nsubject: {name: Acme, url: https://acme.io}\nsections:\n  - id: a\n    title: A\n"
        "    include-sources:\n      - {provider: exa, query: q, contents: {highlights: {num-sentences: 50}}}\n",
        encoding="utf-8",
    )
    loaded = load_memo(tmp_path)
    assert any("sent as maxCharacters 10,000" in n and "capped at Exa's 10,000" in n for n in loaded.notices)
    body = build_search_body("q", highlights={"numSentences": 50})
    assert body["contents"]["highlights"] == {"maxCharacters": 10_000}
    assert build_search_body("q", highlights={"numSentences": 3})["contents"]["highlights"] == {"maxCharacters": 3999}


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ("max-characters: '99999'", "got '99999'"),  # quoted: text, so no number check caught it
        ("max_characters: 20000", "over the 10,000"),
        ("maxCharacters: 1.0e+6", "got 1000000.0"),
        ("max-characters: true", "got True"),
        ("max-characters: 0", "from 1 to 10,000, got 0"),
        ("max-characters: -1", "got -1"),
        ("num-sentences: 0", "sentences, 1 or more, got 0"),
        ("num-sentences: '5'", "got '5'"),
        ("query: [a, b]", "expected text"),
    ],
)
def test_a_highlights_value_exa_would_refuse_is_a_load_error_with_its_line(tmp_path, option, words):
    err = _load(tmp_path, f"{{provider: exa, query: q, contents: {{highlights: {{{option}}}}}}}")
    assert err is not None and "memo.yaml:7:" in err.message and words in err.message, err


def test_num_sentences_beside_max_characters_is_not_sent_and_the_notice_says_so(tmp_path):
    (tmp_path / "memo.yaml").write_text(
        "title: t\nsubject: {name: Acme, url: https://acme.io}\nsections:\n  - id: a\n    title: A\n"
        "    include-sources:\n      - {provider: exa, query: q, contents: {highlights: "
        "{num-sentences: 50, max-characters: 2000}}}\n",
        encoding="utf-8",
    )
    loaded = load_memo(tmp_path)
    assert any("num-sentences is deprecated by Exa; not sent (max-characters is given)" in n for n in loaded.notices)
    body = build_search_body("q", highlights={"numSentences": 50, "maxCharacters": 2000})
    assert body["contents"]["highlights"] == {"maxCharacters": 2000}
