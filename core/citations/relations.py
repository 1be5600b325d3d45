"""Relations a claim asserts between names, checked against the relations its source states.

Words, figures and names cannot tell "led by Tiger Global; Sequoia also participated"
from "led by Sequoia": every word and every name is there. For the facts an analyst
writes most — who led a round, who holds which role where, where a company was
founded or is based, who bought whom — the arguments decide:

* funding: ``lead`` (led or co-led a round), ``participant`` (joined it), ``investor``
  (invested or backed, no more said), each with its round when the sentence names one;
* roles: ``ceo``, ``cto``, ``cfo``, ``coo``, ``cmo``, ``cpo``, ``president``, ``chair``,
  ``founder`` — a person and the company;
* places: ``founded_in`` and ``based_in`` — a company and a place;
* ``acquired`` — the buyer and the bought (``stake`` when only a stake or shares were bought).

They are read with cue-word windows, not a parser: a cue (``led by``, ``chief
executive``, ``headquartered in``, ``acquired``) binds the capitalised names around it
by position — the list after ``led by``, the name right before ``, its chief
executive``, the subject of the clause before ``acquired``. ``its`` and ``the company``
stand for the sentence's first company-like name (or the previous sentence's topic in
the same field of a source). Funding cues count only in a sentence about funding, so
"who leads Corvane as chief executive" is no lead investor.

A claim's relation is **confirmed** by a stated relation of the same kind with the same
arguments (an argument either side leaves unknown matches). It is **contradicted** by
a stated relation about the same names that cannot be true with it: the investor only
participating in the round the claim says it led; the person in another chief-officer
role, or in that role at another company, or founder of another company; another
founding place, headquarters or (in CJK text) stock exchange for the company; another buyer of the same company, or
buyer and bought swapped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from sourcedesk.core.citations.relation_model import (
    ACQUIRED,
    BASED_IN,
    CHIEF_OFFICERS,
    FOUNDED_IN,
    FOUNDER,
    FUNDING,
    LEAD,
    LISTED_ON,
    PARTICIPANT,
    ROLES,
    STAKE,
    Arg,
    Carry,
    Relation,
)
from sourcedesk.core.citations.relation_reading import _cjk, _extract_tokens, _resolve, _Sentence
from sourcedesk.core.citations.relation_words import _RAW, _funding_context, _round_of, _tokens
from sourcedesk.core.citations.tokens import normalise_text, term_set

NO_CARRY = Carry()


def sentence_relations(
    sentence: str,
    known: frozenset[str] = frozenset(),
    common: frozenset[str] | None = None,
    carry: Carry = NO_CARRY,
) -> tuple[list[Relation], Carry]:
    """The relations one sentence states, given what the previous sentence ``carry``-ies; and what
    it carries on. ``known`` holds terms seen capitalised mid-sentence, ``common`` terms seen in
    lower case (by default, the sentence's own)."""
    norm = normalise_text(sentence)
    if common is None:
        common = lower_terms(norm)
    s = _Sentence(_tokens(norm, known, common))
    own_funding = _funding_context(s.toks, norm)
    pending = _extract_tokens(s, norm, own_funding or carry.funding)
    found, topic = _resolve(s, pending, carry.topic)
    rnd = _round_of(norm)
    found += _cjk(norm, rnd)
    if rnd is None and (own_funding or carry.funding):
        rnd = carry.round
    found = [replace(r, round=rnd) if r.kind in FUNDING and r.round is None else r for r in found]
    return found, Carry(topic, rnd if own_funding or carry.funding else None, own_funding)


@lru_cache(maxsize=16384)
def lower_terms(text: str) -> frozenset[str]:
    """Terms of the words written in lower case in ``text`` (a capitalised one of these opening a
    sentence is an ordinary word, not a name)."""
    return frozenset(t for w in _RAW.findall(normalise_text(text)) if w[:1].islower() for t in term_set(w))


def relations(
    text: str, known: frozenset[str] = frozenset(), common: frozenset[str] | None = None
) -> tuple[Relation, ...]:
    """The relations a claim asserts (one sentence or clause; no topic carried in)."""
    return tuple(dict.fromkeys(sentence_relations(text, known, common)[0]))


def stated_relations(
    passages: Iterable[tuple[str, str]], known: frozenset[str] = frozenset(), common: frozenset[str] | None = None
) -> list[Relation]:
    """Relations stated in a source's passages, given as (field, text) in order. Within a field,
    a pronoun's topic and a funding sentence's round carry from one sentence to the next
    ("… a Series B led by Northwind. Halcyon also participated."). Each relation records the
    index of its passage."""
    items = list(passages)
    if common is None:
        common = frozenset().union(*(lower_terms(text) for _, text in items)) if items else frozenset()
    out: list[Relation] = []
    carry = Carry()
    field: str | None = None
    for index, (name, text) in enumerate(items):
        if name != field:
            carry, field = Carry(), name
        found, carry = sentence_relations(text, known, common, carry)
        if name == "facts":
            # "headquarters: Pleasanton, CA" is about the page's own company, named nowhere in it:
            # the place has no agent ("CA" is the state, not who is based there).
            found = [replace(r, agent=None) if r.kind in (FOUNDED_IN, BASED_IN, LISTED_ON) else r for r in found]
        out += [replace(r, passage=index) for r in found]
    return out


# ---------------------------------------------------------------- checking


def _same(a: Arg | None, b: Arg | None, subject: frozenset[str]) -> bool | None:
    """Whether two arguments name the same thing (None: one of them is unknown)."""
    if a is None or b is None or not a.terms or not b.terms:
        return None
    if a.terms & subject and b.terms & subject:
        return True
    return a.terms <= b.terms or b.terms <= a.terms


def _compatible(a: Arg | None, b: Arg | None, subject: frozenset[str]) -> bool:
    return _same(a, b, subject) is not False


def _rounds_compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def _confirms(claim: Relation, stated: Relation, subject: frozenset[str]) -> bool:
    if claim.kind in FUNDING:
        if stated.kind not in FUNDING or (claim.kind == LEAD and stated.kind != LEAD):
            return False
        return _same(claim.agent, stated.agent, subject) is True and _rounds_compatible(claim.round, stated.round)
    if claim.kind != stated.kind:
        return False
    if claim.kind in ROLES:
        return _same(claim.agent, stated.agent, subject) is True and _compatible(claim.theme, stated.theme, subject)
    if claim.kind in (FOUNDED_IN, BASED_IN, LISTED_ON):
        return _same(claim.theme, stated.theme, subject) is True and _compatible(claim.agent, stated.agent, subject)
    buyer, target = _same(claim.agent, stated.agent, subject), _same(claim.theme, stated.theme, subject)
    if claim.kind == STAKE:
        return target is True and buyer is not False
    return buyer is not False and target is not False and (buyer is True or target is True)


def _contradicts(claim: Relation, stated: Relation, subject: frozenset[str]) -> bool:
    same_agent = _same(claim.agent, stated.agent, subject)
    if claim.kind == LEAD:
        return stated.kind == PARTICIPANT and same_agent is True and _rounds_compatible(claim.round, stated.round)
    if claim.kind in CHIEF_OFFICERS or claim.kind == FOUNDER:
        if same_agent is not True or claim.past or stated.past:
            return False  # a role held before says nothing against one held now, or the other way
        if stated.kind in CHIEF_OFFICERS and claim.kind in CHIEF_OFFICERS and stated.kind != claim.kind:
            return _compatible(claim.theme, stated.theme, subject)
        return stated.kind == claim.kind and _same(claim.theme, stated.theme, subject) is False
    if claim.kind in (FOUNDED_IN, BASED_IN, LISTED_ON):
        return (
            stated.kind == claim.kind
            and not claim.past
            and not stated.past
            and _compatible(claim.agent, stated.agent, subject)
            and _same(claim.theme, stated.theme, subject) is False
        )
    if claim.kind == ACQUIRED and stated.kind == ACQUIRED:
        if _same(claim.theme, stated.theme, subject) is True and same_agent is False:
            return True  # another buyer
        return (
            _same(claim.agent, stated.theme, subject) is True and _same(claim.theme, stated.agent, subject) is True
        )  # buyer and bought swapped
    return False


@dataclass(frozen=True)
class RelationCheck:
    contradicted: tuple[tuple[Relation, Relation], ...]  # (the claim's, the source's)
    unconfirmed: tuple[Relation, ...]


def check(claimed: Sequence[Relation], stated: Sequence[Relation], subject: frozenset[str]) -> RelationCheck:
    """Each claimed relation against everything the source states (see the module docstring)."""
    contradicted: list[tuple[Relation, Relation]] = []
    unconfirmed: list[Relation] = []
    for c in claimed:
        if any(_confirms(c, s, subject) for s in stated):
            continue
        conflict = next((s for s in stated if _contradicts(c, s, subject)), None)
        if conflict is not None:
            contradicted.append((c, conflict))
        else:
            unconfirmed.append(c)
    return RelationCheck(tuple(contradicted), tuple(unconfirmed))
