"""The relations the support check reads (``sourcedesk.core.citations.relations``): kinds, arguments, and
what one sentence hands the next."""

from __future__ import annotations

from dataclasses import dataclass

LEAD, PARTICIPANT, INVESTOR = "lead", "participant", "investor"
FOUNDED_IN, BASED_IN, ACQUIRED, STAKE = "founded_in", "based_in", "acquired", "stake"
FOUNDER = "founder"
LISTED_ON = "listed_on"  # a company and the stock exchange its shares trade on (read in CJK text)
FUNDING = frozenset([LEAD, PARTICIPANT, INVESTOR])
# A company has one of each of these at a time, and a person holds one of them there.
CHIEF_OFFICERS = frozenset(["ceo", "cto", "cfo", "coo", "cmo", "cpo"])
ROLES = CHIEF_OFFICERS | {"president", "chair", FOUNDER}

_ROLE_NAMES = {
    "ceo": "chief executive",
    "cto": "chief technology officer",
    "cfo": "chief financial officer",
    "coo": "chief operating officer",
    "cmo": "chief marketing officer",
    "cpo": "chief product officer",
    "president": "president",
    "chair": "chair",
    FOUNDER: "founder",
}


@dataclass(frozen=True)
class Arg:
    """One argument of a relation: a name as written and its terms."""

    text: str
    terms: frozenset[str]


@dataclass(frozen=True)
class Relation:
    kind: str  # lead | participant | investor | a role | founded_in | based_in | acquired
    agent: Arg | None  # investor / person / company (places) / buyer
    theme: Arg | None  # company (funding, roles) / place / the bought company
    round: str | None = None  # a funding round: a letter, "seed" or "pre-seed"
    passage: int = -1  # where a source states it
    past: bool = False  # a role held before ("former CEO", "previously CTO", "CTO until 2020")

    def describe(self) -> str:
        a = self.agent.text if self.agent else "someone"
        t = self.theme.text if self.theme else None
        rnd = f" {_round_text(self.round)}" if self.round else ""
        if self.kind == LEAD:
            return f"{a} led the{rnd or ''} round" + (f" of {t}" if t else "")
        if self.kind == PARTICIPANT:
            return f"{a} participated in the{rnd} round" + (f" of {t}" if t else "")
        if self.kind == INVESTOR:
            return f"{a} invested" + (f" in {t}" if t else "")
        if self.kind in ROLES:
            return f"{a} is {_ROLE_NAMES[self.kind]}" + (f" of {t}" if t else "")
        if self.kind == FOUNDED_IN:
            return f"{a if self.agent else 'it'} was founded in {t}"
        if self.kind == BASED_IN:
            return f"{a if self.agent else 'it'} is based in {t}"
        if self.kind == LISTED_ON:
            return f"{a if self.agent else 'it'} is listed on {t}"
        if self.kind == STAKE:
            return f"{a} bought a stake in {t or 'it'}"
        return f"{a} acquired {t or 'it'}"


def _round_text(letter: str) -> str:
    return letter if letter in ("seed", "pre-seed") else f"Series {letter.upper()}"


@dataclass(frozen=True)
class Carry:
    """What one sentence of a source hands the next in its field: the company its pronouns stand
    for, the round it was about, and whether it was about funding at all."""

    topic: Arg | None = None
    round: str | None = None
    funding: bool = False
