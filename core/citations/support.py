"""Does a source support a claim? A deterministic verdict with its evidence sentence.

No model call: it runs inline on every citation of every run. A claim (the clause a
marker binds to) is checked against everything stored for the source — title,
snippet, summary, highlights, facts and page text — split into passages (sentences;
a fact is one passage). Four things decide, in this order:

1. **Figures** (``sourcedesk.core.citations.figures``). Every figure in the claim must be
   stated somewhere in the evidence. When one is not, and the passage that best
   matches the claim gives the same quantity another value (``$150 million`` where
   the page says ``$125 million``, ``founded in 2015`` where it says 2017), the
   source contradicts the claim: ``unsupported``.
2. **Distinctive names.** Capitalised names in the claim (people, firms, products,
   places — in scripts with letter case), other than the subject's own names, must
   appear in the evidence: a page about a round led by Tiger Global does not
   support "led by Andreessen Horowitz".
3. **Relations** (``sourcedesk.core.citations.relations``). A claim that says who led a round, holds
   a role, founded or is based where, or bought whom is supported only when the source states
   the same relation with the same names; a conflicting one (the investor only participated,
   the person is another officer or at another company, another city, another buyer) is a
   contradiction: ``unsupported``.
4. **Relevance**: the share of the claim's terms found in its best passage (one
   sentence, or up to three adjacent ones of a field: a claim often restates what a
   source says over a few sentences), each term weighted by its rarity across the
   section's ground truth (a word every source uses says little; a term no source uses
   counts fully against the claim, as much as the rarest term some source uses — not
   more, or every paraphrased word would outweigh the words the claim shares with
   its source). Terms are script-aware
   (``sourcedesk.core.citations.tokens``), so CJK and Arabic claims are scored like any other.

Verdicts: ``supported`` (relevance at least ``SUPPORTED_MIN``, every figure, name and relation
found, and no "not" in the claim that its best passage lacks: the same words negated say the
reverse), ``partial`` (relevance at least ``PARTIAL_MIN``, something missing but
nothing contradicted), ``unsupported``, and ``unchecked`` (no stored text beyond a
title, or a claim with nothing to check). The thresholds and the substitution
margin are calibrated on data by ``python -m sourcedesk.sandbox.calibrate_support``, never
set by hand; the values below are its output.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import chain

from sourcedesk.core.citations.direction import movements, reversal
from sourcedesk.core.citations.figures import (
    Figure,
    amount,
    date_of,
    figures,
    less_precise,
    matches,
    same_quantity,
)
from sourcedesk.core.citations.lexicon import lexicon
from sourcedesk.core.citations.loose_numbers import loose_numbers
from sourcedesk.core.citations.measures import confirmed_in
from sourcedesk.core.citations.relation_model import BASED_IN, FOUNDED_IN, Relation
from sourcedesk.core.citations.relation_words import may_state_relations
from sourcedesk.core.citations.relations import check, lower_terms, relations, stated_relations
from sourcedesk.core.citations.support_checks import (
    _OPENING_WORD,
    _swapped_role,
    _within_bound,
    given_otherwise_in,
    negated,
    other_company,
    quarters,
)
from sourcedesk.core.citations.support_evidence import (
    PARTIAL,
    SUPPORTED,
    UNCHECKED,
    UNSUPPORTED,
    Claim,
    Evidence,
    Verdict,
    _excerpt,
    _named,
    verdict_rank,
)
from sourcedesk.core.citations.support_names import _names_in, distinctive_names, proper_terms
from sourcedesk.core.citations.tokens import normalise_text, term_set, terms

# Calibrated operating point (see the module docstring for how these are produced).
SUPPORTED_MIN = 0.6
PARTIAL_MIN = 0.25
SUBSTITUTION_MARGIN = 0.15
MIN_SHARED_TERMS = 2  # a claim of one word matches too much to be supported by it

# Figures too particular to be stated by chance (a year or a round letter is not).
_SPECIFIC = frozenset(["money", "percent", "date", "count", "number"])
_BARE_NUMBER = re.compile(r"\s*\d[\d,.]*\s*")  # a table cell holding only a number


class SupportScorer:
    """Judges claims against the sources of one section's ground truth.

    Rarity (inverse passage frequency) is computed once over every passage of every
    source, so "raised" in a funding-heavy section weighs little and "Forgepoint" a lot."""

    def __init__(
        self,
        evidence: Sequence[Evidence],
        subject: Iterable[str] = (),
        *,
        supported_min: float = SUPPORTED_MIN,
        partial_min: float = PARTIAL_MIN,
        strangers: Iterable[int] = (),
    ):
        """``strangers``: the sources known never to name the subject (their about verdict is
        "other"). The subject's name is no distinctive name — its own pages say "the startup" —
        but a claim about the subject is not supported by a page about another company that
        states the same figure: for those sources the subject's name must be there too."""
        self.evidence = list(evidence)
        self.strangers = frozenset(strangers)
        self.supported_min, self.partial_min = supported_min, partial_min
        passages = [p for ev in self.evidence for p in ev.passages]
        self._df: Counter[str] = Counter(chain.from_iterable(p.terms for p in passages))
        self._n = len(passages)
        self._idf: dict[str, float] = {}  # claims of one section share most of their terms
        subject = [" ".join(name.split()) for name in subject if name and name.strip()]
        self.subject = frozenset(t for name in subject for t in terms(name))
        self.subject_name = subject[0] if subject else ""
        self.proper = frozenset().union(
            *(ev.proper if ev.proper is not None else proper_terms(p.text for p in ev.passages) for ev in self.evidence)
        )
        self.known = self.proper | self.subject  # terms known as names
        # A name in most sources is the section's subject (or its field): not distinctive.
        source_df = Counter(chain.from_iterable(ev.terms for ev in self.evidence))
        many = len(self.evidence)
        self._ubiquitous = frozenset(t for t, k in source_df.items() if k * 2 > many) if many >= 4 else frozenset()
        self._claims: dict[str, Claim] = {}
        self._common: frozenset[str] | None = None
        self._names_known: frozenset[str] | None = None
        self._quarters: dict[int, frozenset[int]] = {}  # source → the quarters its text names
        self._used: frozenset[str] | None = None  # every term of the ground truth, and the subject's
        self._stated: dict[int, list[Relation]] = {}
        self._weights: dict[int, dict[str, float]] = {}  # id(claim) → term weights
        self._verdicts: dict[tuple[int, int], tuple[Claim, Verdict]] = {}  # (id(claim), source) → its verdict
        self._core_totals: dict[int, float] = {}  # id(claim) → the weight of its own terms
        self._holding: dict[str, list[int]] | None = None  # term → sources holding it (built when first needed)
        self._stating: dict[tuple[str, object], set[int]] | None = None  # coarse figure key → sources stating it

    @property
    def _sources_of(self) -> dict[str, list[int]]:
        """Term → the sources holding it (only claims without figures or names need it)."""
        if self._holding is None:
            self._holding = {}
            for i, ev in enumerate(self.evidence):
                for t in ev.terms:
                    self._holding.setdefault(t, []).append(i)
        return self._holding

    @property
    def _figures_at(self) -> dict[tuple[str, object], set[int]]:
        """Coarse figure key → the sources stating a figure under it (only claims with figures need it)."""
        if self._stating is None:
            self._stating = {}
            for i, ev in enumerate(self.evidence):
                for f in ev.figures:
                    for key in _figure_keys(f):
                        self._stating.setdefault(key, set()).add(i)
                for number in ev.numbers:
                    self._stating.setdefault(("amount", _amount_bin(number)), set()).add(i)
        return self._stating

    def idf(self, term: str) -> float:
        """Rarity of a term across every passage of the section (a term in none weighs as one in one)."""
        found = self._idf.get(term)
        if found is None:
            found = self._idf[term] = math.log(1.0 + (self._n + 1) / (max(self._df.get(term, 0), 1) + 0.5))
        return found

    def claim(self, text: str, context: str = "", *, row: str = "", unit: str = "") -> Claim:
        """A claim to judge; ``context`` holds labels that frame it (a table cell's row and column).

        A table cell's ``row`` label (its row's first cell) is who or what the cell is about: a
        name in it that the section's sources use must be in the evidence too, or the cited page
        about another company would support "| Gong | 2017 |" for saying Cresta was founded in
        2017. A cell that is a bare number takes its column header as its ``unit``: "400" under
        "Employees" is a count of 400 employees, a figure to find."""
        key = f"{context}\x00{row}\x00{unit}\x00{text}"
        found = self._claims.get(key)
        if found is None:
            skip = self.subject | self._ubiquitous
            opening = _OPENING_WORD.match(text)
            word = opening.group(1) if opening is not None else ""
            if word[:1].isupper() and not (term_set(word) & self.known) and term_set(word) & self._df.keys():
                spotted = _names_in(text, self.names_known)  # is the opening word a name the sources use?
            else:
                spotted = _names_in(text, self.known)
            names = tuple((name, t - skip) for name, t in spotted if t - skip)
            if row:
                if self._used is None:  # a label opening its cell is a name when the sources use it
                    self._used = self.known | frozenset(self._df)
                had = {t for _, t in names}
                names += tuple((n, t - skip) for n, t in _names_in(row, self._used) if t - skip and t - skip not in had)
            core = term_set(text)
            figs = figures(text)
            if not figs and unit and _BARE_NUMBER.fullmatch(text):
                figs = figures(f"{text.strip()} {unit}")
            rels = relations(text, self.known, self.common | lower_terms(text)) if (may_state_relations(text)) else ()
            loose = loose_numbers(text, figs)
            found = self._claims[key] = Claim(text, core, figs, names, term_set(context) - core, rels, loose)
        return found

    @property
    def names_known(self) -> frozenset[str]:
        """Terms known as names: written capitalised mid-sentence, the subject's, or used by the
        sources only ever capitalised (a name that opens every sentence naming it, "Observe.AI
        was founded …", is still a name when a claim opens with it)."""
        if self._names_known is None:
            self._names_known = self.known | (frozenset(self._df) - self.common)
        return self._names_known

    @property
    def common(self) -> frozenset[str]:
        """Terms written in lower case anywhere in the ground truth (computed when first needed)."""
        if self._common is None:
            self._common = frozenset().union(
                *(ev.lower if ev.lower is not None else _lower_of(ev) for ev in self.evidence)
            )
        return self._common

    def stated(self, index: int) -> list[Relation]:
        """The relations source ``index`` states (computed when a claim first needs them)."""
        found = self._stated.get(index)
        if found is None:
            passages = [(p.field, p.text) for p in self.evidence[index].passages]
            found = self._stated[index] = stated_relations(passages, self.known, self.common)
        return found

    def weights(self, claim: Claim) -> dict[str, float]:
        # Sums of weights use math.fsum (exact, so in any order the same): the terms are sets, whose
        # order follows hash randomisation, and a plain sum differed in its last bit between runs.
        found = self._weights.get(id(claim))
        if found is None:
            idf, known = self.idf, self._idf
            found = self._weights[id(claim)] = {t: known.get(t) or idf(t) for t in sorted(claim.terms | claim.context)}
            self._core_totals[id(claim)] = math.fsum(map(found.__getitem__, claim.terms))
        return found

    def judge(self, claim: Claim, index: int) -> Verdict:
        """The verdict of source ``index`` on ``claim``, judged once per scorer (its thresholds are
        fixed when it is built): a claim cited as retrieved is often the one a fabricated citation
        of the same claim is ranked for."""
        key = (id(claim), index)
        seen = self._verdicts.get(key)
        if seen is not None and seen[0] is claim:
            return seen[1]
        verdict = self._judge(claim, index)
        self._verdicts[key] = (claim, verdict)  # the claim is held, so its id is never reused meanwhile
        return verdict

    def _judge(self, claim: Claim, index: int) -> Verdict:
        ev = self.evidence[index]
        if not ev.has_text:
            return Verdict(UNCHECKED, 0.0, None, "the source has no stored text beyond its title")
        if not claim.checkable:
            return Verdict(UNCHECKED, 0.0, None, "the claim has nothing to check")
        score, best, matched = self._best_passages(claim, ev)
        passages = ev.passages
        if len(best) == 1:
            evidence: str | None = _excerpt(passages[best[0]].text)
        else:
            evidence = _excerpt(" ".join([passages[i].text for i in best])) if best else None
        missing = [f for f in claim.figures if not ev.states(f)] if claim.figures else []
        if missing:  # "over 400 employees" is stated by "450 employees", "about $125M" by "$126M"
            norm = normalise_text(claim.text)
            missing = [f for f in missing if not _within_bound(f, norm, ev.figures)]
        # A year or date the page states only as its own date ("published: 2024-12-02") is no
        # statement of when something happened: when the passage the claim matches gives another, it wins.
        dated = [f for f in claim.figures if f.kind in ("year", "date") and f not in missing] if ev.metadata else []
        dated = [
            f
            for f in dated
            if not any(matches(f, g) for i, p in enumerate(passages) if i not in ev.metadata for g in p.figures)
        ]
        window = [f for i in best for f in passages[i].figures] if missing or dated else []
        for f in missing + dated:
            conflicting = [g for g in window if same_quantity(f, g) and not matches(f, g) and not less_precise(f, g)]
            if conflicting:
                other = min(conflicting, key=lambda g: _distance(f, g))
                why = f"the source gives {other.text} where the claim says {f.text}"
                return Verdict(UNSUPPORTED, score, evidence, why, contradicted=True)
        contradiction = self._contradiction(claim, index, score, evidence)
        if isinstance(contradiction, Verdict):
            return contradiction
        unconfirmed = contradiction
        absent = [name for name, t in claim.names if not t <= ev.terms] if claim.names else []
        absent += [f"Q{q}" for q in sorted(self._missing_quarters(claim, index))]
        absent += [written for written, value in claim.loose if value not in ev.numbers]
        if index in self.strangers and self._names_subject(claim):
            absent.append(self.subject_name)
        complete = not missing and not absent and not unconfirmed
        # One shared word is a coincidence, not support: two terms, or a figure, must carry it.
        substantial = matched >= MIN_SHARED_TERMS or bool(claim.figures)
        if score >= self.supported_min and complete and substantial:
            if negated(claim.text) and not negated(" ".join(passages[i].text for i in best)):
                # Same words, opposite sense ("did not raise a Series D" against "raised a Series
                # D"): never support, and never a substitute — a drop is safer than a reversal.
                return Verdict(PARTIAL, score, evidence, "the claim says 'not' where the source does not", complete)
            return Verdict(SUPPORTED, score, evidence, complete=True)
        if complete and score >= self.partial_min and not negated(claim.text):
            # In other words, but on topic (the calibrated partial floor) and every figure stated as
            # the same measure ("valued at $2 billion" for "values the company at $2.0bn"): what
            # the claim says is what the source says.
            at = self._figures_confirmed(claim, index)
            if at is not None:
                return Verdict(SUPPORTED, score, _excerpt(passages[at].text), complete=True)
        why = "; ".join(
            [f"{f.text} not in the source" for f in missing]
            + [f"{_named(n)} not in the source" for n in absent]
            + [f"the source does not say {r.describe()}" for r in unconfirmed]
        )
        if score >= self.partial_min:
            return Verdict(PARTIAL, score, evidence, why or "only part of the claim is in the source", complete)
        specific = [f for f in claim.figures if f.kind in _SPECIFIC]
        if complete and specific:
            # Every figure, name and relation is there, in other words ("funding: USD 41.2M" for
            # "has raised USD 41.2M"): not a source about something else, if not support either.
            passage = next(
                (p.text for p in ev.passages if any(matches(f, g) for f in specific for g in p.figures)), None
            )
            why = f"states {', '.join(f.text for f in specific)}, in other words than the claim"
            return Verdict(PARTIAL, score, _excerpt(passage) if passage else evidence, why, complete)
        return Verdict(UNSUPPORTED, score, evidence, why or "the source is about something else", complete)

    def _contradiction(
        self, claim: Claim, index: int, score: float, evidence: str | None
    ) -> Verdict | tuple[Relation, ...]:
        """The ``unsupported`` verdict when the source contradicts the claim beyond its figures' values
        — an amount given as something else, a direction reversed, a relation the source states
        otherwise, a figure that is another company's — else the claim's relations it leaves
        unconfirmed."""
        ev = self.evidence[index]
        passages = ev.passages
        unconfirmed: tuple[Relation, ...] = ()
        swapped = _swapped_role(claim, ev) if claim.figures else None
        if swapped is not None:
            return Verdict(UNSUPPORTED, score, _excerpt(swapped[0]), swapped[1], contradicted=True)
        if movements(claim.text):  # "revenue fell" against "revenue rose": the same words, reversed
            names = self.subject | self.proper | frozenset(t for _, n in claim.names for t in n)
            names -= lexicon().names.keys()  # "ARR" is written like a name but is what moved
            flip = reversal(claim.text, [p.text for p in passages], names)
            if flip is not None:
                return Verdict(
                    UNSUPPORTED, score, _excerpt(passages[flip.passage].text), flip.reason(), contradicted=True
                )
        if claim.relations:
            found = check(claim.relations, self.stated(index), self.subject)
            if found.contradicted:
                said, stated = found.contradicted[0]
                where = _excerpt(ev.passages[stated.passage].text) if stated.passage >= 0 else evidence
                if stated.kind in (FOUNDED_IN, BASED_IN):
                    # Who a place belongs to is the weakest reading ("offices in Austria, based in
                    # Berlin" is no "Austria is based in Berlin"): the reason names the place only.
                    stated = replace(stated, agent=None)
                why = f"the source says {stated.describe()}, not that {said.describe()}"
                return Verdict(UNSUPPORTED, score, where, why, contradicted=True)
            unconfirmed = found.unconfirmed
        elsewhere = other_company(claim, ev, self._entity(claim)) if claim.figures else None
        if elsewhere is not None:  # the figure is another company's ("Molara, a Brisa rival, raised …")
            return Verdict(UNSUPPORTED, score, _excerpt(elsewhere[0]), elsewhere[1], contradicted=True)
        otherwise = given_otherwise_in(claim, self.evidence[index], self.subject) if claim.figures else None
        if otherwise is not None:  # "a 40% stake" where the stake is 60% (and 40% the seller's)
            return Verdict(UNSUPPORTED, score, _excerpt(otherwise[0]), otherwise[1], contradicted=True)
        return unconfirmed

    def _entity(self, claim: Claim) -> frozenset[str]:
        """The terms of the company a claim is about: the subject's when the claim names it, else
        those of the name that opens the claim ("Molara raised …"); none when neither (a name
        later in the claim may be an investor: "raised $125M in a round led by Tiger Global")."""
        if self._names_subject(claim):
            return self.subject
        if claim.names and claim.text.lstrip(" \"'“‘(*_").startswith(claim.names[0][0]):
            return claim.names[0][1]
        return frozenset()

    def _figures_confirmed(self, claim: Claim, index: int) -> int | None:
        """The passage of source ``index`` that states the claim's first specific figure as the same
        measure, when every specific figure of the claim (money, percent, date, count) is so stated;
        None otherwise, or when the claim has none."""
        specific = [f for f in claim.figures if f.kind in _SPECIFIC]
        if not specific:
            return None
        passages = [(p.text, p.figures) for p in self.evidence[index].passages]
        first: int | None = None
        for f in specific:
            at = confirmed_in(claim.text, f, passages, self.subject)
            if at is None:
                return None
            first = at if first is None else first
        return first

    def _best_passages(self, claim: Claim, ev: Evidence) -> tuple[float, list[int], int]:
        """The claim's best passage — one sentence, two or three adjacent ones of a field, or a sentence
        with the title — the rarity-weighted share of the claim's terms it holds, and how many it holds."""
        weights = self.weights(claim)
        core_total = self._core_totals[id(claim)]
        hits: dict[int, set[str]] = {}
        postings = ev.postings
        for t in weights:
            holding = postings.get(t)
            if holding is None:
                continue
            for i in holding:
                found_at = hits.get(i)
                if found_at is None:
                    hits[i] = {t}
                else:
                    found_at.add(t)
        context, claim_terms = claim.context, claim.terms
        weight = weights.__getitem__

        def score(found: set[str]) -> float:
            if not context:  # no labels: the share of the claim's own terms
                return math.fsum(map(weight, found)) / core_total if core_total > 0 else 0.0
            ctx = math.fsum(weights[t] for t in found if t in context)
            whole = core_total + ctx
            return (math.fsum(weights[t] for t in found if t in claim_terms) + ctx) / whole if whole > 0 else 0.0

        passages = ev.passages
        if not hits:
            for i, p in enumerate(passages):  # a claim that is only a figure: the passage stating it
                if any(matches(f, g) for f in claim.figures for g in p.figures):
                    return 0.0, [i], 0
            return 0.0, [], 0
        if len(ev.titles) == 1:  # the usual evidence: one title
            title: int | None = ev.titles[0] if ev.titles[0] in hits else None
        else:
            title = next((i for i in hits if passages[i].field == "title"), None)
        where: list[int] = []  # replaced by the first window: a score is never negative
        best, count = -1.0, 0
        for i in sorted(hits):
            found = hits[i]
            windows = [([i], found)]
            nxt = i + 1
            if nxt in hits:
                kind = passages[i].field
                if passages[nxt].field == kind and kind != "facts":
                    windows.append(([i, nxt], found | hits[nxt]))
                    if nxt + 1 in hits and passages[nxt + 1].field == kind:
                        windows.append(([i, nxt, nxt + 1], found | hits[nxt] | hits[nxt + 1]))
            if title is not None and i != title:
                windows.append(([title, i], found | hits[title]))
            for span, terms_found in windows:
                value = score(terms_found)
                if value > best + 1e-9:
                    best, where, count = value, span, len(terms_found & claim_terms)
        return best, where, count

    def rank(self, claim: Claim, candidates: Iterable[int]) -> list[tuple[Verdict, int]]:
        """Verdicts for the candidates that could support the claim, best first.

        A source that does not state one of the claim's figures or name one of its
        distinctive names cannot support it, and is no contender for it either (it supports
        the claim less than one that does): when the claim has figures or names, only sources
        with all of them are judged. Otherwise every source whose terms could reach
        ``PARTIAL_MIN`` is."""
        pool = list(candidates)
        if claim.figures or claim.names:
            stating: set[int] | None = None  # sources whose figures come near every claim figure
            figures_at = self._figures_at if claim.figures else {}
            for f in claim.figures:
                near: set[int] = set()
                for key in _lookup_keys(f):
                    indexed = figures_at.get(key)
                    if indexed:
                        near |= indexed
                stating = near if stating is None else stating & near
            pool = [i for i in pool if i in stating] if stating is not None else pool
            pool = [i for i in pool if self._states_all(claim, self.evidence[i], i)]
        else:
            bound = self._upper_bounds(claim)
            pool = [i for i in pool if bound.get(i, 0.0) >= self.partial_min]
        out = [(self.judge(claim, i), i) for i in pool]
        if len(out) > 1:
            out.sort(key=lambda vi: (verdict_rank(vi[0]), -vi[1]), reverse=True)
        return out

    def _missing_quarters(self, claim: Claim, index: int) -> frozenset[int]:
        """The quarters the claim names ("Q3 2024", "third quarter") that the source never does: a
        year alone does not say which quarter, and another quarter is another figure."""
        wanted = quarters(claim.text) if claim.figures else frozenset()
        if not wanted:
            return wanted
        have = self._quarters.get(index)
        if have is None:
            have = self._quarters[index] = quarters(" ".join(p.text for p in self.evidence[index].passages))
        return wanted - have

    def _names_subject(self, claim: Claim) -> bool:
        return bool(self.subject) and not self.subject.isdisjoint(claim.terms)

    def _states_all(self, claim: Claim, ev: Evidence, index: int) -> bool:
        """Whether a source states every figure and names every distinctive name of the claim
        (and the subject, for a source known never to name it)."""
        for f in claim.figures:
            if not ev.states(f):
                return False
        if index in self.strangers and self._names_subject(claim):
            return False
        if self._missing_quarters(claim, index):
            return False
        return not claim.names or all(t <= ev.terms for _, t in claim.names)

    def _upper_bounds(self, claim: Claim) -> dict[int, float]:
        """Per source, the share of the claim's terms it holds anywhere (no passage scores more)."""
        weights = self.weights(claim)
        core_total = math.fsum(weights[t] for t in claim.terms)
        core: dict[int, float] = {}
        ctx: dict[int, float] = {}
        for t, w in weights.items():
            into = core if t in claim.terms else ctx
            for i in self._sources_of.get(t, ()):
                into[i] = into.get(i, 0.0) + w
        out = {}
        for i in set(core) | set(ctx):
            whole = core_total + ctx.get(i, 0.0)
            out[i] = (core.get(i, 0.0) + ctx.get(i, 0.0)) / whole if whole > 0 else 0.0
        return out


def _lower_of(ev: Evidence) -> frozenset[str]:
    return frozenset().union(*(lower_terms(p.text) for p in ev.passages))


def _distance(a: Figure, b: Figure) -> float:
    """How far apart two figures of one quantity are (the closest one is the one a claim got wrong)."""
    x, y = amount(a), amount(b)
    return abs(math.log(x / y)) if x > 0 and y > 0 else 0.0


def _amount_bin(value: float) -> int:
    """Amounts in bins of about 0.5% (the tolerance of a figure match); 0 and negatives in bin 0."""
    return round(math.log10(value) * 460) if value > 0 else 0


def _figure_keys(f: Figure) -> list[tuple[str, object]]:
    """Coarse keys under which a figure of the evidence is indexed."""
    if f.kind in ("money", "number", "count"):
        return [("amount", _amount_bin(amount(f)))]
    if f.kind == "date":
        y, m, _ = date_of(f)
        return [("date", (y, m)), ("year", float(y))]
    return [(f.kind, f.value)]


def _lookup_keys(f: Figure) -> list[tuple[str, object]]:
    """Keys where evidence that could state the claim figure ``f`` is indexed (then checked exactly)."""
    if f.kind in ("money", "number", "count"):
        b = _amount_bin(amount(f))
        return [("amount", b - 1), ("amount", b), ("amount", b + 1)]
    if f.kind == "date":
        y, m, _ = date_of(f)
        return [("date", (y, m))]
    return [(f.kind, f.value)]


def clear_winner(
    ranked: Sequence[tuple[Verdict, int]], margin: float = SUBSTITUTION_MARGIN
) -> tuple[Verdict, int] | None:
    """The one candidate a fabricated citation may be substituted with: the only ``supported``
    one, ahead of every other contender (a ``partial`` source) by ``SUBSTITUTION_MARGIN``.
    Anything less is a drop. A source that contradicts the claim or is about something
    else is no contender, however many words it shares."""
    supported = [vi for vi in ranked if vi[0].supported]
    if len(supported) != 1:
        return None
    winner = supported[0]
    runner_up = max((v.score for v, i in ranked if i != winner[1] and v.support == PARTIAL), default=0.0)
    return winner if winner[0].score - runner_up >= margin else None


def supports_text(
    claim: str, passage: str, *, supported_min: float = SUPPORTED_MIN, partial_min: float = PARTIAL_MIN
) -> Verdict:
    """One claim against one passage of text, the passage being its own ground truth (benchmarks)."""
    scorer = SupportScorer([Evidence.build([("text", passage)])], supported_min=supported_min, partial_min=partial_min)
    return scorer.judge(scorer.claim(claim), 0)


# Named here so callers need one import for the whole check (they live in their own modules).
__all__ = [
    "PARTIAL",
    "SUPPORTED",
    "SUPPORTED_MIN",
    "UNCHECKED",
    "UNSUPPORTED",
    "Claim",
    "Evidence",
    "SupportScorer",
    "Verdict",
    "clear_winner",
    "distinctive_names",
    "negated",
    "quarters",
    "supports_text",
    "verdict_rank",
]
