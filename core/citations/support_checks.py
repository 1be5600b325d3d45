"""Checks of a claim against its evidence beyond words and figures (``sourcedesk.core.citations.support``):
the quarter it names, a bound ("over 400"), what an amount is (raised, a valuation, revenue), and negation."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sourcedesk.core.citations.figures import (
    Figure,
    amount,
    matches,
    same_quantity,
)
from sourcedesk.core.citations.measures import given_otherwise
from sourcedesk.core.citations.support_evidence import Claim, Evidence
from sourcedesk.core.citations.tokens import normalise_text, terms

_OPENING_WORD = re.compile(r"[\s\"'“‘«(\[*_]*([^\W\d_][\w'’.-]*)")
_NEGATION = re.compile(r"(?i)\b(?:not|never|neither|nor|cannot|none|nobody|nothing|no(?=\s+[a-z]))\b|\w[’']t\b")


_QUARTER = re.compile(
    r"(?i)\b(?:q([1-4])(?=$|\W|fy)|([1-4])q(?=\d\d\b)|(first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+(?:fiscal\s+)?quarter)"
)
_QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}


def quarters(text: str) -> frozenset[int]:
    """The quarters ``text`` names: Q3, 3Q24, "third quarter"."""
    if "q" not in text and "Q" not in text:
        return frozenset()
    found = set()
    for m in _QUARTER.finditer(text):
        found.add(int(m.group(1) or m.group(2)) if (m.group(1) or m.group(2)) else _QUARTER_WORDS[m.group(3).lower()])
    return frozenset(found)


# Words before a figure that make it a bound or an approximation, and what they admit.
_BOUND = re.compile(
    r"(?i)(?:\b(?P<above>over|more\s+than|above|exceeding|in\s+excess\s+of|at\s+least|upwards\s+of)"
    r"|\b(?P<below>under|less\s+than|fewer\s+than|below|up\s+to|at\s+most)"
    r"|\b(?P<near>nearly|almost|close\s+to|just\s+under)"
    r"|(?P<about>\babout|\baround|\bapproximately|\broughly|\bsome|\bcirca|~))\s*\Z"
)
APPROXIMATION = 0.10  # "about $125M" admits what rounds to it: within 10%


def _within_bound(figure: Figure, norm: str, evidence: Sequence[Figure]) -> bool:
    """Whether the claim (``norm``, normalised once by the caller: a claim may carry thousands of
    figures) writes ``figure`` as a bound or an approximation ("over 400 employees",
    "about $125 million") that a figure of the same quantity in the evidence satisfies."""
    if figure.kind not in ("money", "number", "count", "percent"):
        return False  # a year or a date is no amount to be over or about
    m = _BOUND.search(norm, max(0, figure.start - 30), figure.start)
    if m is None:
        return False
    value = amount(figure)
    if value <= 0:
        return False
    for g in evidence:
        if not same_quantity(figure, g):
            continue
        x = amount(g)
        if m.group("above") and x >= value:
            return True
        if m.group("below") and 0 < x <= value:
            return True
        if m.group("near") and value * (1 - APPROXIMATION) <= x <= value:
            return True
        if m.group("about") and abs(x - value) <= APPROXIMATION * value:
            return True
    return False


# What an amount of money is, by the word nearest it: raised, a valuation, revenue.
_ROLE_CUES = {
    "raised": "raise raised raises raising funding funded round secured secures closed closes investment "
    "invested series",
    "valuation": "valuation valued valuing values value worth",
    "revenue": "revenue revenues sales arr turnover income earnings bookings",
}
_ROLE_OF = {word: role for role, words in _ROLE_CUES.items() for word in words.split()}
_ROLE_NAMES = {"raised": "the amount raised", "valuation": "the valuation", "revenue": "revenue"}
_WORD = re.compile(r"[A-Za-z]+")
_PHRASE_END = re.compile(r"[,;:]|\.(?!\d)")
ROLE_WINDOW = (5, 3)  # words looked at before and after an amount


def _role(text: str, start: int, end: int) -> str | None:
    """The role of the amount at [start, end) of ``text`` (normalised): the role of its nearest cue
    word within ``ROLE_WINDOW``, one before it winning a tie."""
    lo = max(0, start - 80)
    stop = max(text.rfind(";", lo, start), text.rfind(". ", lo, start))
    before = list(_WORD.finditer(text, max(lo, stop + 1), start))[-ROLE_WINDOW[0] :]
    cut = _PHRASE_END.search(text, end, end + 60)  # "valued at $1.6 billion, raised …": the comma ends it
    after = list(_WORD.finditer(text, end, cut.start() if cut else min(len(text), end + 60)))[: ROLE_WINDOW[1]]
    best: tuple[int, str] | None = None
    for distance, m in enumerate(reversed(before)):
        role = _ROLE_OF.get(m.group().lower())
        if role is not None:
            best = (distance * 2, role)
            break
    for distance, m in enumerate(after):
        role = _ROLE_OF.get(m.group().lower())
        if role is not None:
            if best is None or distance * 2 + 3 < best[0]:  # a cue before the amount weighs more
                best = (distance * 2 + 3, role)
            break
    return best[1] if best is not None else None


def _swapped_role(claim: Claim, ev: Evidence) -> tuple[str, str] | None:
    """A claim amount the source states as something else ("raised $1.6 billion" where the page
    gives $1.6 billion as the valuation): ``(the passage, why)``, or None. Only when both sides say
    what the amount is and no mention in the source agrees."""
    norm = normalise_text(claim.text)
    passage_norms: dict[int, str] = {}
    for f in claim.figures:
        if f.kind != "money":
            continue
        said = _role(norm, f.start, f.end)
        if said is None:
            continue
        roles: list[tuple[str, str]] = []
        for i, p in enumerate(ev.passages):
            for g in p.figures:
                if g.kind == "money" and matches(f, g):
                    if i not in passage_norms:  # once per passage, not per figure: a page may state thousands
                        passage_norms[i] = normalise_text(p.text)
                    role = _role(passage_norms[i], g.start, g.end)
                    if role is None or role == said:
                        return None  # the source also states it as the claim does, or does not say
                    roles.append((p.text, role))
        if roles:
            passage, role = roles[0]
            return passage, f"the source gives {f.text} as {_ROLE_NAMES[role]}, not as {_ROLE_NAMES[said]}"
    return None


_NEGATION_WORDS = frozenset(["not", "never", "neither", "nor", "cannot", "none", "nobody", "nothing", "no"])
_LOWER_WORD = re.compile(r"[a-z]+")


def negated(text: str) -> bool:
    """Whether ``text`` says something is not so (English negation words)."""
    low = text.lower()
    if "'t" in low or "’t" in low or not _NEGATION_WORDS.isdisjoint(_LOWER_WORD.findall(low)):
        return _NEGATION.search(text) is not None  # the words are there: read them in place ("No. 1")
    return False


# The company a sentence is about, when it opens the sentence as a name followed by an apposition
# ("Molara, a Brisa rival based in Madrid, raised …") or directly by what it did ("Haulmark
# reported …"). A name followed by an investor's verb is who funded, not whose figure it is.
_TOPIC = re.compile(
    r"^[\s\"'“‘(]*(?P<name>[A-Z][\w&.'’-]*(?:\s+[A-Z][\w&.'’-]*){0,3})"
    r"(?:,\s+(?:a|an|the|its|which|one)\b[^,]{1,90},\s*(?P<next>[a-z]+)"
    r"|\s+(?P<verb>raised|raises|reported|reports|posted|posts|said|says|announced|announces|recorded|records"
    r"|ended|closed|closes|secured|secures|lands|landed|grew|grows|employs|has|had)\b)"
)
_FUNDER_VERBS = frozenset(["led", "co-led", "invested", "backed", "joined", "participated", "funded", "also"])
_SPECIFIC_KINDS = frozenset(["money", "percent", "count", "number"])
_PRONOUNS = frozenset(
    ["it", "its", "they", "their", "this", "that", "these", "those", "he", "she", "we", "our", "there", "which", "who"]
)
_PRONOUN: tuple[str, frozenset[str]] = ("", frozenset())  # a sentence opening with a pronoun


def _topic(passage: str) -> tuple[str, frozenset[str]] | None:
    m = _TOPIC.match(normalise_text(passage))
    if m is None or (m.group("next") and m.group("next") in _FUNDER_VERBS):
        return None
    name = m.group("name")
    if name.split()[0].casefold() in _PRONOUNS:
        return _PRONOUN  # "It has 190 employees": whose figure the sentence before says
    return name, frozenset(
        terms(name)[:1]
    )  # a company is named by its first word: "Tandry Robotics" is no Corvane Robotics


def other_company(claim: Claim, ev: Evidence, entity: frozenset[str]) -> tuple[str, str] | None:
    """``(passage, why)`` when a figure of the claim — about ``entity`` (the terms of the subject's
    or the claim's own company) — is stated by the source only in sentences about another
    company the claim never names ("Molara, a Brisa rival, raised €18 million" does not say
    Brisa raised it); None otherwise."""
    if not entity:
        return None
    seen: set[tuple[str, object, str]] = set()
    for f in claim.figures:
        if f.kind not in _SPECIFIC_KINDS or (f.kind, f.value, f.unit) in seen:
            continue  # a value repeated thousands of times is checked once
        seen.add((f.kind, f.value, f.unit))
        foreign: tuple[str, str] | None = None
        for at, p in enumerate(ev.passages):
            if not any(matches(f, g) for g in p.figures):
                continue
            topic = _topic(p.text)
            if topic is _PRONOUN:  # the company of the sentence before, if it names one
                before = _topic(ev.passages[at - 1].text) if at else None
                topic = None if before is _PRONOUN else before
            if topic is None:
                if p.terms & entity:
                    foreign = None  # a sentence that may state it of the claim's company
                    break
                continue  # says nothing of whose figure it is ("Molara raises €18M", a title)
            if topic[1] & entity or topic[1] & claim.terms:
                foreign = None  # a sentence states it of the claim's company
                break
            foreign = foreign or (p.text, f"the source gives {f.text} for {topic[0]}, not for the claim's company")
        if foreign is not None:
            return foreign
    return None


_MEASURED = frozenset(["money", "percent", "count"])  # amounts a sentence says what of


def given_otherwise_in(claim: Claim, ev: Evidence, subject: frozenset[str]) -> tuple[str, str] | None:
    """(passage, why) when the source gives one of the claim's amounts, for what the claim says it
    measures, another value, and the claim's value only as something else ("a 40% stake" where
    the stake is 60% and 40% what the seller keeps); see ``measures.given_otherwise``."""
    pairs = [(p.text, p.figures) for p in ev.passages]
    for f in claim.figures:
        if f.kind not in _MEASURED:
            continue
        found = given_otherwise(claim.text, f, pairs, subject)
        if found is not None:
            at, g = found
            return ev.passages[at].text, f"the source gives {g.text} where the claim says {f.text}"
    return None
