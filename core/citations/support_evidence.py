"""What the support check works on (``sourcedesk.core.citations.support``): a source's stored text split into
passages with a term index, a claim as it is judged, and the verdict."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from sourcedesk.core.citations.figures import (
    Figure,
    date_of,
    figures,
    found_in,
    plain_numbers,
)
from sourcedesk.core.citations.relation_model import Relation
from sourcedesk.core.citations.tokens import term_set

SUPPORTED, PARTIAL, UNSUPPORTED, UNCHECKED = "supported", "partial", "unsupported", "unchecked"
VERDICTS = (SUPPORTED, PARTIAL, UNSUPPORTED, UNCHECKED)
MAX_EVIDENCE_CHARS = 400
# Which kinds of evidence figure can state a claim figure of a kind (see ``figures.matches``); two each.
_COMPARABLE = {
    "money": ("money", "number"),
    "number": ("money", "number"),
    "count": ("count", "number"),
    "year": ("year", "date"),
}
# A full stop after an abbreviation ends no sentence: "Jan. 14, 2025", "Acme Inc. said".
_NO_BREAK = (
    r"(?<!\b(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Inc|Ltd|Mrs)\.)(?<!\b(?:Sept|Corp)\.)"
    r"(?<!\b(?:Mr|Ms|Dr|St|Co|No|vs)\.)"
)
SENTENCE_BREAK = re.compile(r"(?<=[.!?])" + _NO_BREAK + r"[\"'”’)\]]*\s+(?=[^\s])|(?<=[。！？])|\n+")
_SPLIT = SENTENCE_BREAK
# What every split point above needs: a text without one is one passage (and costs no split).
_MAY_SPLIT = re.compile(r"[.!?][\"'”’)\]]*\s|[。！？\n]")


_METADATA = ("published: ", "updated: ")  # how ground.GroundSource.evidence_fields gives a page's dates


class Passage(NamedTuple):
    text: str
    field: str  # title | snippet | summary | highlights | facts | text
    terms: frozenset[str]
    figures: tuple[Figure, ...]


@dataclass
class Evidence:
    """Everything stored for one source, split into passages, with a term index."""

    passages: list[Passage] = field(default_factory=list)
    terms: frozenset[str] = frozenset()
    figures: tuple[Figure, ...] = ()
    numbers: frozenset[float] = frozenset()
    has_text: bool = False  # something beyond a title
    postings: dict[str, list[int]] = field(default_factory=dict)
    by_kind: dict[str, tuple[Figure, ...]] = field(default_factory=dict)
    titles: tuple[int, ...] = ()  # the passages that are a title
    metadata: frozenset[int] = frozenset()  # the passages that are the page's own date ("published: …")

    stated: dict[Figure, bool] = field(default_factory=dict)

    def states(self, figure: Figure) -> bool:
        """Whether this source states the claim figure (checked only against figures that could)."""
        found = self.stated.get(figure)
        if found is None:
            by_kind = self.by_kind
            kinds = _COMPARABLE.get(figure.kind)
            if kinds is None:
                candidates = by_kind.get(figure.kind, ())
            else:
                candidates = by_kind.get(kinds[0], ()) + by_kind.get(kinds[1], ())
            years = {date_of(f)[0] for f in by_kind.get("year", ()) + by_kind.get("date", ())}
            found = self.stated[figure] = found_in(figure, candidates, self.numbers, years)
        return found

    # Known names and lower-case words of the source (unions over its passages), when stored with
    # its set (``evidence_index``); otherwise the scorer reads them from the passages.
    proper: frozenset[str] | None = None
    lower: frozenset[str] | None = None

    @classmethod
    def build(cls, fields: Iterable[tuple[str, str]]) -> Evidence:
        """Read from the text: every passage's terms, figures and numbers (what a stored index keeps)."""
        chunks, has_text = passage_texts(fields)
        read = [(name, chunk, term_set(chunk), figures(chunk)) for name, chunk in chunks]
        numbers = frozenset().union(*(plain_numbers(chunk) for _, chunk in chunks)) if chunks else frozenset()
        return cls.assemble(read, numbers, has_text)

    @classmethod
    def assemble(
        cls,
        read: list[tuple[str, str, frozenset[str], tuple[Figure, ...]]],
        numbers: frozenset[float],
        has_text: bool,
        proper: frozenset[str] | None = None,
        lower: frozenset[str] | None = None,
    ) -> Evidence:
        """The evidence of passages already read: (field, text, terms, figures) each."""
        passages: list[Passage] = []
        postings: dict[str, list[int]] = {}
        all_terms: set[str] = set()
        figs: list[Figure] = []
        titles: list[int] = []
        metadata: list[int] = []
        for name, chunk, chunk_terms, chunk_figures in read:
            index = len(passages)
            passages.append(Passage(chunk, name, chunk_terms, chunk_figures))
            for t in chunk_terms:
                holding = postings.get(t)
                if holding is None:
                    postings[t] = [index]
                else:
                    holding.append(index)
            if name == "title":
                titles.append(index)
            elif name == "facts" and chunk.startswith(_METADATA):
                metadata.append(index)
            all_terms |= chunk_terms
            figs += chunk_figures
        kinds: dict[str, list[Figure]] = {}
        for f in figs:
            kinds.setdefault(f.kind, []).append(f)
        return cls(
            passages=passages,
            terms=frozenset(all_terms),
            figures=tuple(figs),
            numbers=numbers,
            has_text=has_text,
            postings=postings,
            by_kind={k: tuple(v) for k, v in kinds.items()},
            titles=tuple(titles),
            metadata=frozenset(metadata),
            proper=proper,
            lower=lower,
        )


def passage_texts(fields: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], bool]:
    """A source's fields cut into passages, (field, text) each — sentences, a title or a fact line
    whole — and whether it holds anything beyond a title."""
    out: list[tuple[str, str]] = []
    has_text = False
    for name, text in fields:
        if not text or text.isspace():
            continue
        if name != "title":
            has_text = True
        chunks = [text] if name in ("title", "facts") or not _MAY_SPLIT.search(text) else _SPLIT.split(text)
        for chunk in chunks:
            chunk = " ".join(chunk.split())
            if chunk:
                out.append((name, chunk))
    return out, has_text


class Claim(NamedTuple):  # a named tuple: built for every marker of every run
    text: str
    terms: frozenset[str]
    figures: tuple[Figure, ...]
    names: tuple[tuple[str, frozenset[str]], ...]  # (name as written, its terms minus the subject's)
    context: frozenset[str] = frozenset()  # labels (a table's row and column): count when found, never against
    relations: tuple[Relation, ...] = ()  # who led, holds a role, is based, bought (core.citations.relations)
    loose: tuple[tuple[str, float], ...] = ()  # numbers no figure holds ("increased to 4,150"): must be in the source

    @property
    def checkable(self) -> bool:
        return bool(self.terms or self.figures)


class Verdict(NamedTuple):
    support: str
    score: float  # rarity-weighted share of the claim's terms in its best passage
    evidence: str | None = None  # that passage
    reason: str = ""
    complete: bool = False  # every figure and distinctive name of the claim is in the evidence
    contradicted: bool = False  # the evidence gives one of the claim's quantities another value

    @property
    def supported(self) -> bool:
        return self.support == SUPPORTED


# Words that reverse what a sentence says; "no" only before a word ("no longer", "no revenue"),


def verdict_rank(v: Verdict) -> tuple[int, float]:
    return ({SUPPORTED: 3, PARTIAL: 2, UNSUPPORTED: 1}.get(v.support, 0), v.score)


def _excerpt(text: str) -> str:
    return text if len(text) <= MAX_EVIDENCE_CHARS else text[: MAX_EVIDENCE_CHARS - 1].rstrip() + "…"


_POSSESSIVE_RE = re.compile(r"(?:['\u2019]s?)$")


def _named(name: str) -> str:
    """A name in a reason, quoted and without the possessive it was written with ("NATS
    Holdings' revenue" → 'NATS Holdings'); a quarter ("Q3") stays as it is."""
    if re.fullmatch(r"Q[1-4]", name):
        return name
    return f"'{_POSSESSIVE_RE.sub('', name) or name}'"
