"""Facts: what each source states, typed, each with its verbatim span.

The seeds' orchestrator extracts the verified spans of every source before writing; here the
same step runs when a frozen set is made, offline, once per set (never per run), and the
result is stored with the set. A person can read it (``sourcedesk facts``, the source reader),
and the memo ledger compares claims by it. A fact is one of:

* ``money``, ``percent``, ``count``, ``headcount`` — a figure with its value and unit, and what
  it measures (``measure``: "valuation", "ARR", "raised", …, from the words around it);
* ``date`` and ``year`` — with what happened then when the words say so ("founded", "IPO");
* ``round`` — a funding round: its stage, its amount and its lead investors when the sentence
  gives them;
* ``person`` — a person with a role ("CEO") and the company, when a sentence says so;
* ``product`` and ``organisation`` — named products (launched, introduced, "its product X")
  and named organisations (investors, buyers, the bought, the companies people work for).

With the facts, each source's **support evidence** is indexed (``sourcedesk.core.citations.evidence_index``:
its passages' terms and figures, the names it capitalises): the support check of every later
run reads that index instead of the text, so reading is paid once per set, not per run.

Spans are the source's own words (after Unicode normalisation), with the field they are in and
their offset there, so whoever reads a fact can find it in the stored text. Extraction reads
each figure once from a field's whole text and tries relations only in sentences that hold a
cue word: a 10,000-character page takes a few milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from sourcedesk.core.citations.evidence_index import index_of, index_version
from sourcedesk.core.citations.figures import Figure, amount, date_of, figures
from sourcedesk.core.citations.ground import coerce_source
from sourcedesk.core.citations.lexicon import lexicon
from sourcedesk.core.citations.measures import measure_by_distance
from sourcedesk.core.citations.relation_model import ACQUIRED, FUNDING, LEAD, ROLES, STAKE, Carry
from sourcedesk.core.citations.relation_words import may_state_relations
from sourcedesk.core.citations.relations import sentence_relations
from sourcedesk.core.citations.support_evidence import SENTENCE_BREAK
from sourcedesk.core.citations.tokens import normalise_text, term_set
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.models import Source, SourceSet

EXTRACTION_VERSION = 2  # bump when what is extracted changes: stored facts of older versions are redone
KINDS = ("money", "percent", "count", "headcount", "date", "year", "round", "person", "product", "organisation")
FIELDS = ("title", "snippet", "summary", "highlights", "facts", "text")


@dataclass(frozen=True)
class Fact:
    kind: str  # one of KINDS
    value: str  # canonical value: "USD 125000000", "12%", "350", "2023-11-14", "Series D", a name
    span: str  # the source's words for it
    field: str  # where: title | snippet | summary | highlights | facts | text
    start: int  # offset of the span in that field's (normalised) text
    measure: str = ""  # what a figure measures ("valuation"), or a person's role ("CEO")
    of: str = ""  # the company a role is at, or a round's company when named
    amount: str = ""  # a round's amount, canonical
    leads: tuple[str, ...] = ()  # a round's lead investors

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["leads"] = list(self.leads)
        return {k: v for k, v in out.items() if v not in ("", [], ())} | {"start": self.start}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fact:
        return cls(
            kind=str(data.get("kind", "")),
            value=str(data.get("value", "")),
            span=str(data.get("span", "")),
            field=str(data.get("field", "")),
            start=int(data.get("start", 0) or 0),
            measure=str(data.get("measure", "")),
            of=str(data.get("of", "")),
            amount=str(data.get("amount", "")),
            leads=tuple(str(x) for x in data.get("leads") or ()),
        )

    def describe(self) -> str:
        """One line a person reads: ``valuation: $1.6 billion``, ``CEO: Priya Raman (Lumora)``."""
        if self.kind == "person":
            return f"{self.measure or 'person'}: {self.value}" + (f" ({self.of})" if self.of else "")
        if self.kind == "round":
            extra = [self.amount_text] if self.amount else []
            extra += [f"led by {', '.join(self.leads)}"] if self.leads else []
            return f"round: {self.value}" + (f" ({'; '.join(extra)})" if extra else "")
        label = self.measure or self.kind
        return f"{label}: {self.span}"

    @property
    def amount_text(self) -> str:
        return self.amount


# What a figure measures, by the terms around it: the first label whose term is there.
_MEASURES = [
    ("valuation", "valuation"),
    ("ARR", "arr"),
    ("MRR", "mrr"),
    ("GMV", "gmv"),
    ("revenue", "revenue"),
    ("raised", "raise"),
    ("raised", "funding"),
    ("layoffs", "layoffs"),
    ("headcount", "headcount"),
    ("customers", "customers"),
    ("margin", "margin"),
    ("IPO", "ipo"),
    ("acquired", "acquire"),
    ("founded", "founded"),
    ("launched", "launched"),
    ("market size", "market"),
]
_MEASURE_TERMS = [(label, next(iter(term_set(word)))) for label, word in _MEASURES]
# What each kind of figure can measure: a year is no headcount, an amount no founding.
_MEASURES_OF = {
    "money": frozenset(["valuation", "ARR", "MRR", "GMV", "revenue", "raised", "acquired", "market size"]),
    "number": frozenset(
        ["valuation", "ARR", "MRR", "GMV", "revenue", "raised", "acquired", "market size", "customers"]
    ),
    "percent": frozenset(["layoffs", "margin", "ARR", "MRR", "GMV", "revenue", "valuation", "market size"]),
    "count": frozenset(["headcount", "customers", "layoffs"]),
    "year": frozenset(["founded", "launched", "IPO", "acquired", "raised"]),
    "date": frozenset(["founded", "launched", "IPO", "acquired", "raised", "layoffs"]),
}
_PRODUCT_AFTER = re.compile(
    r"\b(?:launched|launches|introduced|introduces|introducing|unveiled|unveils|released|releases|debuted)\s+"
    r"(?:its\s+|the\s+|a\s+|an\s+)?(?:new\s+)?(?:product|platform|app|service|tool)?,?\s*"
    r"(?P<name>[A-Z][\w.+-]*(?:\s+[A-Z0-9][\w.+-]*){0,3})"
)
_PRODUCT_APPOSITION = re.compile(
    r"\b(?:product|platform|app|service|tool)s?,?\s+(?:called\s+|named\s+)?"
    r"(?P<name>[A-Z][\w.+-]*(?:\s+[A-Z0-9][\w.+-]*){0,3})"
)
_PRODUCT_HINT = re.compile(r"(?i)launch|introduc|unveil|releas|debut|product|platform|app\b|service|tool")
# The last word of many organisations' names: the name is it and the capitalised words before it.
_ORG_WORD = re.compile(
    r"\b(?:Capital|Ventures|Partners|Group|Holdings|Labs|Technologies|Fund|Management|Inc|Ltd|LLC|GmbH|Corp"
    r"|Corporation|Bank|Research|Systems|Investments)\b"
)
_CAPITALISED_BEFORE = re.compile(r"(?:[A-Z][\w&.'-]*\s+){1,3}\Z")


def _org_before(sentence: str, m: re.Match[str]) -> str:
    """The organisation whose name ends with the word ``m`` ("Tiger Global Management"), or ""."""
    before = _CAPITALISED_BEFORE.search(sentence, max(0, m.start() - 60), m.start())
    if before is None:
        return ""
    words = before.group().split()
    while words and words[0].lower() in ("the", "a", "an", "its", "and", "by", "from", "with"):
        words.pop(0)
    return " ".join([*words, m.group()]) if words else ""


# A headcount given as a bare number ("a headcount of 520", "staff: 350", "employs 90"): no
# counted word follows it, so the figure pattern reads none.
_BARE_HEADCOUNT = re.compile(
    r"(?i)\b(?:head\s*count|staff|workforce|employees|team)\s*(?:of|is|was|stands\s+at|at|:|=)\s*"
    r"(?:about|around|some|roughly|nearly|approximately|over|more\s+than)?\s*(?P<n>\d{1,3}(?:,\d{3})+|\d+)\b(?![.,]?\d|\s*%)"
    r"|\bemploy(?:s|ed|ing)?\s+(?:about|around|some|roughly|nearly|approximately|over|more\s+than)?\s*"
    r"(?P<m>\d{1,3}(?:,\d{3})+|\d+)\b(?![.,]?\d|\s*%)"
)
_PEOPLE = frozenset(term_set("people person persons employees staff workers staffers"))


def headcounts(text: str) -> list[Figure]:
    """Headcounts ``text`` gives: counts of people ("350 people", "410 employees") and bare numbers
    after a headcount word ("a headcount of 520"), as count figures with the unit "headcount"."""
    norm = normalise_text(text)
    out = [
        f._replace(unit=_HEADCOUNT)
        for f in figures(norm)
        if f.kind == "count" and (term_set(f.unit) & _PEOPLE or f.unit == _HEADCOUNT)
    ]
    for m in _BARE_HEADCOUNT.finditer(norm):
        group = "n" if m.group("n") else "m"
        start, end = m.start(group), m.end(group)
        if not any(f.start <= start < f.end for f in out):
            value = float(m.group(group).replace(",", ""))
            out.append(Figure("count", value, _HEADCOUNT, norm[start:end], start, end))
    return sorted(out, key=lambda f: f.start)


def measure_of(text: str, f: Figure, offset: int = 0) -> str:
    """The label of what the figure ``f`` measures, or "" when the words do not say. ``text`` holds
    the figure at ``f.start - offset`` (a sentence of the text the figure was read from)."""
    around = measure_by_distance(text, f.start - offset, f.end - offset)
    if f.kind == "count" and (f.unit == _HEADCOUNT or term_set(f.unit) & _PEOPLE):
        return "layoffs" if "layoffs" in around else "headcount"
    labels = _LABELS_OF.get(f.kind, {})
    return next((labels[t] for t in around if t in labels), "")


_HEADCOUNT = next(iter(term_set("headcount")))
# Per kind of figure, the term that names each measure it can have (the first listed wins).
_LABELS_OF = {
    kind: {term: label for label, term in reversed(_MEASURE_TERMS) if label in allowed}
    for kind, allowed in _MEASURES_OF.items()
}


def canonical(f: Figure) -> str:
    """A figure's value as stored: one spelling per value."""
    if f.kind == "money":
        value = amount(f)
        return f"{f.unit or '?'} {value:.0f}" if value >= 1 else f"{f.unit or '?'} {value:g}"
    if f.kind == "number":
        return f"{amount(f):.0f}"
    if f.kind == "percent":
        return f"{amount(f):g}%"
    if f.kind in ("count",):
        return f"{amount(f):g}"
    if f.kind == "year":
        return f"{int(amount(f))}"
    if f.kind == "date":
        y, m, d = date_of(f)
        return f"{y:04d}-{m:02d}-{d:02d}" if d else f"{y:04d}-{m:02d}"
    if f.kind == "round":
        letter = str(f.value)
        return letter.title() if letter in ("seed", "pre-seed") else f"Series {letter.upper()}"
    return str(f.value)


def _kind(f: Figure, label: str) -> str:
    if f.kind == "count":
        return "headcount" if label == "headcount" else "count"
    if f.kind == "number":
        return "money" if label in ("valuation", "ARR", "MRR", "GMV", "revenue", "raised") else "count"
    return f.kind


def _sentences(text: str) -> Iterator[tuple[int, int]]:
    pos = 0
    for m in SENTENCE_BREAK.finditer(text):
        if m.start() > pos:
            yield pos, m.start()
        pos = m.end()
    if pos < len(text):
        yield pos, len(text)


def extract(fields: Iterable[tuple[str, str]]) -> list[Fact]:
    """Every fact the fields state, in order (see the module docstring). ``fields``: (name, text)."""
    out: list[Fact] = []
    seen: set[tuple[str, str, str]] = set()
    for name, raw in fields:
        if not raw or raw.isspace():
            continue
        text = normalise_text(raw)
        for fact in _field_facts(name, text):
            key = (
                fact.kind,
                fact.value,
                "" if fact.kind == "organisation" else f"{fact.measure}{fact.amount}{fact.leads}",
            )
            if key not in seen:
                seen.add(key)
                out.append(fact)
    return out


def _field_facts(name: str, text: str) -> Iterator[Fact]:
    found = figures(text)
    carry = Carry()
    at = 0  # figures are in order: each sentence takes the next ones
    for lo, hi in _sentences(text):
        sentence = text[lo:hi]
        while at < len(found) and found[at].start < lo:
            at += 1
        end = at
        while end < len(found) and found[end].start < hi:
            end += 1
        here = found[at:end]
        money = [f for f in here if f.kind == "money"]
        leads: tuple[str, ...] = ()
        if may_state_relations(sentence):
            stated, carry = sentence_relations(sentence, carry=carry)
            leads = tuple(dict.fromkeys(r.agent.text for r in stated if r.kind == LEAD and r.agent))
            yield from _relation_facts(name, text, lo, sentence, stated)
        else:
            carry = Carry()
        for f in here:
            label = measure_of(sentence, f, lo)
            span = text[f.start : f.end]
            if f.kind == "round":
                amount_fig = min(money, key=lambda g: abs(g.start - f.start), default=None)
                yield Fact(
                    "round", canonical(f), span, name, f.start, "", "",
                    canonical(amount_fig) if amount_fig else "", leads,
                )  # fmt: skip
                continue
            yield Fact(_kind(f, label), canonical(f), span, name, f.start, label)
        if _PRODUCT_HINT.search(sentence):
            for m in (*_PRODUCT_AFTER.finditer(sentence), *_PRODUCT_APPOSITION.finditer(sentence)):
                product = m.group("name").rstrip(".,")
                yield Fact("product", product, product, name, lo + m.start("name"))
        for m in _ORG_WORD.finditer(sentence):
            org = _org_before(sentence, m)
            if org:
                yield Fact("organisation", org, org, name, lo + m.end() - len(org))


def _relation_facts(name: str, text: str, lo: int, sentence: str, stated: list[Any]) -> Iterator[Fact]:
    for r in stated:
        if r.kind in ROLES and r.agent is not None:
            at = sentence.find(r.agent.text)
            role = lexicon().names.get(r.kind, r.kind.upper() if len(r.kind) == 3 else r.kind)
            yield Fact(
                "person", r.agent.text, r.agent.text, name, lo + max(at, 0), role, r.theme.text if r.theme else ""
            )
        elif r.kind in FUNDING and r.agent is not None:
            at = sentence.find(r.agent.text)
            yield Fact("organisation", r.agent.text, r.agent.text, name, lo + max(at, 0), "investor")
        elif r.kind in (ACQUIRED, STAKE):
            for arg, role in ((r.agent, "buyer"), (r.theme, "acquired")):
                if arg is not None:
                    at = sentence.find(arg.text)
                    yield Fact("organisation", arg.text, arg.text, name, lo + max(at, 0), role)


def source_fields(source: Any) -> list[tuple[str, str]]:
    """The stored text of a source (a ``Source`` model or a mapping), as (field, text) in order."""

    def get(key: str) -> Any:
        return source.get(key) if isinstance(source, dict) else getattr(source, key, None)

    out: list[tuple[str, str]] = []
    for key in FIELDS:
        value = get(key)
        if key == "highlights" and isinstance(value, list):
            out += [(key, str(v)) for v in value if isinstance(v, str)]
        elif key == "facts" and isinstance(value, dict):
            out += [(key, f"{k.replace('_', ' ')}: {v}") for k, v in value.items() if isinstance(v, (str, int, float))]
        elif isinstance(value, str):
            out.append((key, value))
    return out


def with_facts(source_set: SourceSet) -> SourceSet:
    """``source_set`` with every source's facts extracted and its support evidence indexed (kept
    sources and those the budget omitted), stamped with this extraction's version. Sources that
    already carry facts and an index of this version keep them: a curated set (a source dropped
    or kept) pays only for what is new."""
    current = source_set.facts_version == EXTRACTION_VERSION
    version = index_version()

    def extracted(source: Source) -> Source:
        update: dict[str, Any] = {}
        if not (current and source.extracted):
            update["extracted"] = [f.to_json() for f in extract(source_fields(source))]
        if source.evidence_index.get("version") != version:
            # Exactly the fields reconcile will check claims against (the same reader builds them).
            try:
                update["evidence_index"] = index_of(coerce_source(source, "source").evidence_fields())
            except UserError:
                update["evidence_index"] = {}  # no reconcile can read it either (no URL): nothing to store
        return source.model_copy(update=update) if update else source

    omitted = [o.model_copy(update={"source": extracted(o.source)}) for o in source_set.omitted]
    return source_set.model_copy(
        update={
            "sources": [extracted(s) for s in source_set.sources],
            "omitted": omitted,
            "facts_version": EXTRACTION_VERSION,
        }
    )


def facts_of(source: Source, facts_version: int) -> tuple[list[Fact], bool]:
    """A source's facts as the source reader and ``sourcedesk facts`` show them, and whether they
    were stored with its set (False: the set predates extraction, so they were read now)."""
    if facts_version == EXTRACTION_VERSION and source.extracted:
        return [Fact.from_json(f) for f in source.extracted], True
    return extract(source_fields(source)), False


def fact_lines(source: Source, facts_version: int) -> list[str]:
    """A source's facts as lines of plain text, for the source reader: what each fact is and the
    source's own words for it ("valuation: $1.6 billion  — summary: “$1.6 billion”"); a set frozen
    before extraction says its facts were read now."""
    facts, stored = facts_of(source, facts_version)
    lines = [f"{f.describe()}  — {f.field}: “{f.span}”" for f in facts]
    if not stored and facts:
        lines.append("(read now: this frozen set predates fact extraction)")
    return lines
