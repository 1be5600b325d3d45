"""The memo's ledger: every section's claims side by side, and where two of them disagree.

Each section's check looks only at its own note, so a memo can say "$41M raised" in one
section and "$25M raised" in another with every check passing. The ledger reads the cited
claims of every note, takes what each states about a **quantity** — what a figure measures
(funding, valuation, revenue in a year, ARR, headcount, founding year, a launch or IPO date),
a funding round (the latest one, the one an investor led), who holds a chief-officer role,
where the company is based — for an **entity** (the memo's subject unless the sentence is
about another named company), and lists as a **conflict** every two claims that give the same
quantity of the same entity different values. A less precise date is no conflict ("March
2023" and "7 March 2023"), nor are two figures within the rounding a writer applies.

A conflict names both claims, both sections and both sources. When each claim is what its own
source says, the sources disagree, and the ledger says so ("sources disagree: …"): the analyst
has a choice to make, not a typo to fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sourcedesk.core.citations.figures import Figure, date_of, figures, found_in, less_precise, matches
from sourcedesk.core.citations.parse import parse
from sourcedesk.core.citations.relation_model import BASED_IN, CHIEF_OFFICERS, LEAD
from sourcedesk.core.citations.relations import relations
from sourcedesk.core.citations.sentences import ClaimIndex
from sourcedesk.core.citations.support import distinctive_names, quarters
from sourcedesk.core.citations.tokens import term_set, terms
from sourcedesk.core.domain.models import SourceSet
from sourcedesk.core.domain.storage import SourceSetStore
from sourcedesk.core.memo.loader import LoadedMemo
from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.notes.note import find_note, parse_note, read_note_text
from sourcedesk.core.sources.extraction import headcounts, measure_of

# What a measure is called in a conflict, and whether a year in the sentence makes it a quantity
# of that year ("revenue 2023"), not the same one.
_LABELS = {
    "raised": ("funding", False),
    "valuation": ("valuation", False),
    "revenue": ("revenue", True),
    "ARR": ("ARR", True),
    "MRR": ("MRR", True),
    "GMV": ("GMV", True),
    "headcount": ("headcount", False),
    "layoffs": ("layoffs", True),
    "customers": ("customers", True),
    "founded": ("founded", False),
    "launched": ("launched", False),
    "IPO": ("IPO", False),
    "market size": ("market size", True),
}
_TOTAL = re.compile(r"(?i)\b(?:in\s+total|total|to\s+date|so\s+far|in\s+all|altogether|cumulative)\b")
_LATEST = re.compile(r"(?i)\b(?:latest|most\s+recent|last|newest)\b")
_ROLE_TITLES = {"ceo": "CEO", "cto": "CTO", "cfo": "CFO", "coo": "COO", "cmo": "CMO", "cpo": "CPO"}
_NOT_ENTITY_BEFORE = re.compile(r"(?i)\b(?:led\s+by|by|from|with|including|investors?|backed\s+by)\s*$")


@dataclass(frozen=True)
class Statement:
    """What one cited claim says about one quantity."""

    section: str
    claim: str  # the sentence, as the note has it
    quantity: str  # "funding", "revenue 2023", "CEO", "round led by Ridgeway Capital", …
    entity: str
    value: str  # as the claim writes it ("$41M", "Series B", "Maren Holt")
    source: str  # who the claim cites: the source's host, or "uncited"
    url: str = ""
    stated: bool = False  # the cited source states this value
    figure: Figure | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.entity.casefold(), self.quantity.casefold())


@dataclass(frozen=True)
class Conflict:
    a: Statement
    b: Statement

    @property
    def disagree(self) -> bool:
        """Each claim is what its own source says: the sources disagree."""
        return self.a.stated and self.b.stated and self.a.url != self.b.url

    def describe(self) -> str:
        a, b = self.a, self.b
        label = a.quantity if a.entity == b.entity and a.entity == _SUBJECT_PLACEHOLDER else f"{a.entity} {a.quantity}"
        return f"{label}: {a.value} ({a.section}, {a.source}) vs {b.value} ({b.section}, {b.source})"

    def verdict(self) -> str:
        """What the analyst is to do about it, in one line."""
        a, b = self.a, self.b
        if self.disagree:
            return f"sources disagree: {a.source} {a.value}, {b.source} {b.value}"
        wrong = [s for s in (a, b) if not s.stated and s.url]
        if len(wrong) == 1:
            w = wrong[0]
            return f"{w.section} says {w.value}, which its source ({w.source}) does not state"
        return "the two claims disagree"

    def to_json(self) -> dict[str, object]:
        def side(s: Statement) -> dict[str, object]:
            return {"section": s.section, "claim": s.claim, "value": s.value, "source": s.source, "url": s.url,
                    "stated_by_source": s.stated}  # fmt: skip

        return {
            "quantity": self.a.quantity,
            "entity": self.a.entity,
            "a": side(self.a),
            "b": side(self.b),
            "sources_disagree": self.disagree,
            "summary": self.describe(),
            "verdict": self.verdict(),
        }


_SUBJECT_PLACEHOLDER = "the subject"
_HEADCOUNT_UNIT = next(iter(term_set("headcount")))


@dataclass
class NoteClaims:
    """One section's note as the ledger reads it: its body and the sources its markers cite."""

    section: str
    body: str
    sources: Sequence[object] = ()  # Source models or mappings with url, marker, title, text fields


@dataclass
class Ledger:
    statements: list[Statement] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)


def _get(source: object, key: str) -> object:
    return source.get(key) if isinstance(source, dict) else getattr(source, key, None)


def _source_text(source: object) -> str:
    parts = [_get(source, k) for k in ("title", "snippet", "summary", "text")]
    highlights = _get(source, "highlights")
    if isinstance(highlights, list):
        parts += highlights
    facts = _get(source, "facts")
    if isinstance(facts, dict):
        parts += [f"{k}: {v}" for k, v in facts.items() if isinstance(v, (str, int, float))]
    return "\n".join(str(p) for p in parts if isinstance(p, (str, int, float)) and str(p).strip())


def _cited(note: NoteClaims) -> list[tuple[str, object | None]]:
    """Each cited sentence of the note with the source it cites (None: not in the frozen set)."""
    doc = parse(note.body)
    index = ClaimIndex(doc)
    by_marker = {str(_get(s, "marker") or "").upper(): s for s in note.sources if _get(s, "marker")}
    by_url = {normalise_url(str(_get(s, "url"))): s for s in note.sources if _get(s, "url")}
    urls: dict[str, str] = {}
    for d in doc.definitions:
        link = re.search(r"https?://[^\s)>\]]+", doc.source[d.start : d.end])
        if link:
            urls[d.label] = link.group()
    out: list[tuple[str, object | None]] = []
    seen: set[tuple[str, int]] = set()
    for i, m in enumerate(doc.markers):
        if m.definition is not None:
            continue
        source = by_marker.get(m.label.upper())
        if source is None and m.label in urls:
            source = by_url.get(normalise_url(urls[m.label]))
        sentence = " ".join(index.sentence(i).split())
        key = (sentence, id(source))
        if sentence and key not in seen:
            seen.add(key)
            out.append((sentence, source))
    return out


def statements(note: NoteClaims, subject: Sequence[str] = ()) -> list[Statement]:
    """What every cited claim of one note states (see the module docstring)."""
    subject_terms = frozenset(t for name in subject for t in terms(name))
    out: list[Statement] = []
    for sentence, source in _cited(note):
        text = _source_text(source) if source is not None else ""
        cited = host_of(str(_get(source, "url") or "")) or "" if source is not None else ""
        where = (note.section, sentence, cited.removeprefix("www.") or "uncited", str(_get(source, "url") or ""))
        out += _figure_statements(sentence, subject_terms, text, where)
        out += _relation_statements(sentence, subject_terms, text, where)
    return out


def _entity(sentence: str, start: int, subject_terms: frozenset[str]) -> str:
    """Who the figure at ``start`` is about: the last name before it that is not the subject's,
    not an investor ("led by X") and not a person's role; the subject otherwise."""
    for name, t in reversed(distinctive_names(sentence[:start])):
        if t & subject_terms or not t:
            return _SUBJECT_PLACEHOLDER
        at = sentence.find(name)
        if at >= 0 and _NOT_ENTITY_BEFORE.search(sentence[:at]):
            continue
        return name
    return _SUBJECT_PLACEHOLDER


def _figure_statements(
    sentence: str, subject_terms: frozenset[str], text: str, where: tuple[str, str, str, str]
) -> list[Statement]:
    people = headcounts(sentence)
    found = sorted({*figures(sentence), *people}, key=lambda f: f.start)
    if not found:
        return []
    evidence = (*figures(text), *headcounts(text)) if text else ()
    years = [f for f in found if f.kind in ("year", "date")]
    rounds = [f for f in found if f.kind == "round"]
    out: list[Statement] = []
    for f in found:
        if f.kind == "round":
            if _LATEST.search(sentence):
                entity = _entity(sentence, f.start, subject_terms)
                out.append(_statement(where, "latest round", entity, f, evidence))
            continue
        label = measure_of(sentence, f)
        if f.kind == "count" and f.unit != _HEADCOUNT_UNIT and label == "headcount":
            continue  # "a staff of 350 spread over three offices": the offices are no headcount
        if f.kind == "count" and label not in ("headcount", "customers", "layoffs"):
            continue
        if f.kind in ("year", "date") and label not in ("founded", "launched", "IPO"):
            continue
        if label not in _LABELS:
            continue
        name, by_year = _LABELS[label]
        if label == "raised":
            if rounds:
                name = f"funding ({_round_name(rounds[0])})"
            elif _TOTAL.search(sentence):
                name = "funding (total)"
        elif by_year:
            period = [p for p in years if p is not f]
            if not period:
                continue  # "revenue of $88 million" in no year: which year's is unknown
            name = f"{name} {date_of(period[0])[0]}" + "".join(f" Q{q}" for q in sorted(quarters(sentence)))
        entity = _entity(sentence, f.start, subject_terms)
        out.append(_statement(where, name, entity, f, evidence))
    return out


def _round_name(f: Figure) -> str:
    letter = str(f.value)
    return letter if letter in ("seed", "pre-seed") else f"Series {letter.upper()}"


def _statement(
    where: tuple[str, str, str, str], quantity: str, entity: str, f: Figure, evidence: Sequence[Figure]
) -> Statement:
    section, claim, source, url = where
    stated = found_in(f, tuple(evidence))
    return Statement(section, claim, quantity, entity, f.text, source, url, stated, f)


def _relation_statements(
    sentence: str, subject_terms: frozenset[str], text: str, where: tuple[str, str, str, str]
) -> list[Statement]:
    section, claim, source, url = where
    found = relations(sentence)
    if not found:
        return []
    source_terms = term_set(text) if text else frozenset()
    source_rounds = {str(f.value) for f in figures(text) if f.kind == "round"} if text else set()
    out: list[Statement] = []
    for r in found:
        if r.kind in CHIEF_OFFICERS and r.agent is not None and not r.past:
            entity = _SUBJECT_PLACEHOLDER if r.theme is None or r.theme.terms & subject_terms else r.theme.text
            stated = bool(r.agent.terms) and r.agent.terms <= source_terms
            out.append(Statement(section, claim, _ROLE_TITLES[r.kind], entity, r.agent.text, source, url, stated))
        elif r.kind == LEAD and r.agent is not None and r.round:
            stated = r.round in source_rounds and r.agent.terms <= source_terms
            quantity = f"round led by {r.agent.text}"
            value = _round_name(Figure("round", r.round))
            out.append(Statement(section, claim, quantity, _SUBJECT_PLACEHOLDER, value, source, url, stated))
        elif r.kind == BASED_IN and r.theme is not None and not r.past:
            entity = _SUBJECT_PLACEHOLDER if r.agent is None or r.agent.terms & subject_terms else r.agent.text
            stated = r.theme.terms <= source_terms
            out.append(Statement(section, claim, "headquarters", entity, r.theme.text, source, url, stated))
    return out


def _same_value(a: Statement, b: Statement) -> bool:
    if a.figure is not None and b.figure is not None:
        f, g = a.figure, b.figure
        return matches(f, g) or matches(g, f) or less_precise(f, g) or less_precise(g, f)
    ta, tb = term_set(a.value), term_set(b.value)
    return ta <= tb or tb <= ta


def build(notes: Iterable[NoteClaims], subject: Sequence[str] = ()) -> Ledger:
    """The ledger of a memo's notes: their statements, and the conflicts among them."""
    ledger = Ledger()
    for note in notes:
        ledger.statements += statements(note, subject)
    groups: dict[tuple[str, str], list[Statement]] = {}
    for s in ledger.statements:
        groups.setdefault(s.key, []).append(s)
    for group in groups.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if a.claim == b.claim and a.section == b.section:
                    continue
                if not _same_value(a, b):
                    ledger.conflicts.append(Conflict(a, b))
    return ledger


@dataclass
class SectionFacts:
    """One section as ``sourcedesk facts`` and the memo screen show it: its frozen set (the one its
    note was written against, else the newest), and its note's body for the ledger."""

    section: str
    title: str
    source_set: SourceSet | None
    body: str | None  # None: no note yet


def memo_sections(loaded: LoadedMemo, store: SourceSetStore | None, only: Sequence[str] = ()) -> list[SectionFacts]:
    """Every section of the memo (or those in ``only``) with its frozen set and note body."""
    out: list[SectionFacts] = []
    for section in loaded.memo.sections:
        if only and section.id not in only:
            continue
        path = find_note(loaded.dir, loaded.memo, section.id)
        meta: dict[str, Any] = {}
        body: str | None = None
        if path is not None:
            meta, body = parse_note(read_note_text(path), path=path)
        source_set = None
        if store is not None:
            set_id = (meta.get("source_set") or {}).get("id") if isinstance(meta.get("source_set"), dict) else None
            source_set = store.get_source_set(str(set_id)) if set_id else None
            source_set = source_set or store.latest_source_set(section.id)
        out.append(SectionFacts(section.id, section.title, source_set, body))
    return out


def memo_ledger(loaded: LoadedMemo, sections: Sequence[SectionFacts]) -> Ledger:
    """The ledger over every written section's note, its claims checked against its own frozen set."""
    subject = [loaded.memo.subject.name, *loaded.memo.subject.aliases]
    notes = [
        NoteClaims(s.section, s.body, s.source_set.sources if s.source_set else ())
        for s in sections
        if s.body is not None
    ]
    return build(notes, subject)
