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
founding place or headquarters for the company; another buyer of the same company, or
buyer and bought swapped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from sourcedesk.core.citations.figures import figures
from sourcedesk.core.citations.tokens import UNSPACED_RE, normalise_text, term_set

LEAD, PARTICIPANT, INVESTOR = "lead", "participant", "investor"
FOUNDED_IN, BASED_IN, ACQUIRED, STAKE = "founded_in", "based_in", "acquired", "stake"
FOUNDER = "founder"
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
        if self.kind == STAKE:
            return f"{a} bought a stake in {t or 'it'}"
        return f"{a} acquired {t or 'it'}"


def _round_text(letter: str) -> str:
    return letter if letter in ("seed", "pre-seed") else f"Series {letter.upper()}"


# ---------------------------------------------------------------- tokens


@dataclass(frozen=True)
class _Tok:
    kind: str  # name | word | punct | num | ref
    low: str  # lower-cased text (a word, a punctuation mark, "its", "the company", …)
    text: str = ""
    terms: frozenset[str] = frozenset()
    possessive: bool = False


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_RAW = re.compile(r"[^\W\d_](?:[\w'’&-]*[\w'’])?|\d+(?:[.,]\d+)*|[,;:()&]")
# Capitalised words that are never part of a name: titles, calendar words, determiners.
_NOT_NAMES = _words(
    """
    the a an in on at for of and or but by to with from as it its this that these those he she they we our
    their his her i its its' there here after before during while when where which who whom whose what how
    january february march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday series round
    seed ceo cto cfo coo cmo cpo chief executive officer technology technical financial operating marketing
    product president vice chairman chairwoman chair founder co-founder cofounder founders co-founders
    managing director head general partner ai api saas ipo usd eur gbp us u.s uk eu inc ltd llc corp co plc
    gmbh sa mr mrs ms dr q1 q2 q3 q4 h1 h2 fy according founded headquartered based investors investor
    existing earlier later today yesterday former current interim acting ex
    """
)
_REF_NOUNS = frozenset(["company", "firm", "startup", "start-up", "business", "group", "platform", "maker"])
_PREPOSITIONS = _words(
    """
    of at in from with by for to on into over than like about against behind under within across through
    between among near inside outside beyond
    """
)
_BE = frozenset(["was", "were", "is", "are", "been", "being", "be", "get", "got", "gets"])


def _tokens(sentence: str, known: frozenset[str], common: frozenset[str]) -> list[_Tok]:
    """Words, punctuation and names (runs of capitalised words; a possessive ends one).

    A capitalised word that opens the sentence is a name when the next word is one too,
    it is possessive, ``known`` holds it (seen capitalised mid-sentence), or it is no
    word of ``common`` (terms seen written in lower case): "Paystream names …" but not
    "Analysts expect …" when "analysts" appears in lower case somewhere."""
    raw = _RAW.findall(sentence)
    parts: list[_Tok] = []  # single words, names not yet joined
    for w in raw:
        if w[0].isdigit():
            parts.append(_Tok("num", w, w))
            continue
        if len(w) == 1 and not w.isalpha():
            parts.append(_Tok("punct", w, w))
            continue
        if UNSPACED_RE.search(w):
            parts.append(_Tok("word", w.lower(), w))
            continue
        possessive = w.endswith(("'s", "’s"))
        base = w[:-2] if possessive else w.rstrip("'’")
        low = base.lower()
        if "-" in base:
            head, _, tail = base.rpartition("-")
            if tail.lower() in ("led", "backed", "based", "headquartered") and head[:1].isupper():
                parts.append(_Tok("name", head.lower(), head, term_set(head)))
                parts.append(_Tok("word", "-" + tail.lower(), "-" + tail))
                continue
        if base[:1].isupper() and low not in _NOT_NAMES:
            parts.append(_Tok("name", low, base, term_set(base), possessive))
        else:
            parts.append(_Tok("word", low, base, possessive=possessive))
    # The sentence's first word: a name only when something says so.
    first = next((i for i, t in enumerate(parts) if t.kind != "punct"), None)
    if first is not None and parts[first].kind == "name" and not parts[first].possessive:
        nxt = parts[first + 1] if first + 1 < len(parts) else None
        t = parts[first]
        if not (nxt is not None and nxt.kind == "name") and not (t.terms & known) and t.terms <= common:
            t = parts[first]
            parts[first] = _Tok("word", t.low, t.text)
    out: list[_Tok] = []
    i = 0
    while i < len(parts):
        t = parts[i]
        if t.kind == "name":
            words = [t.text]
            possessive = t.possessive
            j = i + 1
            while not possessive and j < len(parts):
                nxt = parts[j]
                if nxt.kind == "name":
                    words.append(nxt.text)
                    possessive = nxt.possessive
                    j += 1
                elif nxt.low == "&" and j + 1 < len(parts) and parts[j + 1].kind == "name":
                    words.append("&")
                    j += 1
                else:
                    break
            text = " ".join(words)
            out.append(_Tok("name", text.lower(), text, term_set(text), possessive))
            i = j
            continue
        if t.kind == "word" and t.low in ("it", "its", "their"):
            out.append(_Tok("ref", t.low, t.text, possessive=t.low != "it"))
        elif t.kind == "word" and t.low == "the" and i + 1 < len(parts) and parts[i + 1].low in _REF_NOUNS:
            noun = parts[i + 1]
            out.append(_Tok("ref", "the " + noun.low, "the " + noun.text, possessive=noun.possessive))
            i += 1
        else:
            out.append(t)
        i += 1
    return out


# ---------------------------------------------------------------- cues

# (words, handler, kind). Matched longest first on lower-case words.
_CUES: list[tuple[tuple[str, ...], str, str]] = [
    # funding (only in a sentence about funding)
    (("co-led", "by"), "after", LEAD),
    (("led", "by"), "after", LEAD),
    (("co", "led", "by"), "after", LEAD),
    (("spearheaded", "by"), "after", LEAD),
    (("headed", "by"), "after", LEAD),
    (("co-led",), "before", LEAD),
    (("co-leads",), "before", LEAD),
    (("led",), "before", LEAD),
    (("leads",), "before", LEAD),
    (("-led",), "before", LEAD),
    (("spearheaded",), "before", LEAD),
    (("lead", "investor"), "either", LEAD),
    (("lead", "investors"), "either", LEAD),
    (("participation", "from"), "after", PARTICIPANT),
    (("participation", "by"), "after", PARTICIPANT),
    (("participation", "of"), "after", PARTICIPANT),
    (("existing", "investors"), "after", PARTICIPANT),
    (("other", "investors"), "after", PARTICIPANT),
    (("participated",), "before", PARTICIPANT),
    (("participating",), "before", PARTICIPANT),
    (("participate",), "before", PARTICIPANT),
    (("joined", "the", "round"), "before", PARTICIPANT),
    (("joined",), "before", PARTICIPANT),
    (("existing", "investor"), "after", PARTICIPANT),
    (("joined", "by"), "after", PARTICIPANT),
    (("followed", "on"), "before", PARTICIPANT),
    (("investors", "include"), "after", INVESTOR),
    (("investors", "included"), "after", INVESTOR),
    (("investors", "including"), "after", INVESTOR),
    (("backed", "by"), "after", INVESTOR),
    (("backing", "from"), "after", INVESTOR),
    (("funding", "from"), "after", INVESTOR),
    (("investment", "from"), "after", INVESTOR),
    (("invested",), "before", INVESTOR),
    (("invests",), "before", INVESTOR),
    (("backed",), "before", INVESTOR),
    (("-backed",), "before", INVESTOR),
    (("investor",), "either", INVESTOR),
    (("investors",), "either", INVESTOR),
    (("backer",), "either", INVESTOR),
    (("backers",), "either", INVESTOR),
    # roles
    (("chief", "executive", "officer"), "role", "ceo"),
    (("chief", "executive"), "role", "ceo"),
    (("ceo",), "role", "ceo"),
    (("chief", "technology", "officer"), "role", "cto"),
    (("chief", "technical", "officer"), "role", "cto"),
    (("cto",), "role", "cto"),
    (("chief", "financial", "officer"), "role", "cfo"),
    (("cfo",), "role", "cfo"),
    (("chief", "operating", "officer"), "role", "coo"),
    (("coo",), "role", "coo"),
    (("chief", "marketing", "officer"), "role", "cmo"),
    (("cmo",), "role", "cmo"),
    (("chief", "product", "officer"), "role", "cpo"),
    (("cpo",), "role", "cpo"),
    (("vice", "president"), "skip", ""),
    (("president",), "role", "president"),
    (("executive", "chairman"), "role", "chair"),
    (("chairman",), "role", "chair"),
    (("chairwoman",), "role", "chair"),
    (("founder",), "role", FOUNDER),
    (("co-founder",), "role", FOUNDER),
    (("cofounder",), "role", FOUNDER),
    (("founders",), "role", FOUNDER),
    (("co-founders",), "role", FOUNDER),
    (("founded",), "found", FOUNDER),
    (("co-founded",), "found", FOUNDER),
    (("cofounded",), "found", FOUNDER),
    (("established",), "found", FOUNDER),
    # places
    (("based", "in"), "place", BASED_IN),
    (("headquartered", "in"), "place", BASED_IN),
    (("headquarters", "in"), "place", BASED_IN),
    (("headquarters", "to"), "place", BASED_IN),
    (("headquarters", ":"), "place", BASED_IN),
    (("headquarters", "is", "in"), "place", BASED_IN),
    (("headquarters", "are", "in"), "place", BASED_IN),
    (("hq", "in"), "place", BASED_IN),
    (("head", "office", "in"), "place", BASED_IN),
    (("-based",), "place_before", BASED_IN),
    (("-headquartered",), "place_before", BASED_IN),
    # acquisitions
    (("acquired",), "acquire", ACQUIRED),
    (("acquires",), "acquire", ACQUIRED),
    (("acquire",), "acquire", ACQUIRED),
    (("acquiring",), "acquire", ACQUIRED),
    (("bought",), "acquire", ACQUIRED),
    (("buys",), "acquire", ACQUIRED),
    (("buy",), "acquire", ACQUIRED),
    (("buying",), "acquire", ACQUIRED),
    (("purchased",), "acquire", ACQUIRED),
    (("purchases",), "acquire", ACQUIRED),
    (("took", "over"), "acquire", ACQUIRED),
    (("takes", "over"), "acquire", ACQUIRED),
    (("snapped", "up"), "acquire", ACQUIRED),
    (("acquisition", "of"), "acquisition_of", ACQUIRED),
    (("purchase", "of"), "acquisition_of", ACQUIRED),
    (("takeover", "of"), "acquisition_of", ACQUIRED),
    (("acquisition", "by"), "acquisition_by", ACQUIRED),
    (("sold", "to"), "sold_to", ACQUIRED),
]
_CUE_INDEX: dict[str, list[tuple[tuple[str, ...], str, str]]] = {}
for _cue in sorted(_CUES, key=lambda c: -len(c[0])):
    _CUE_INDEX.setdefault(_cue[0][0], []).append(_cue)
_FIRST_WORDS = frozenset(_CUE_INDEX)

# Funding cues that say "investor" themselves; the others ("led", "joined") count only in a sentence
# about funding.
_SELF_EVIDENT = frozenset(
    [
        ("lead", "investor"),
        ("lead", "investors"),
        ("investor",),
        ("investors",),
        ("backer",),
        ("backers",),
        ("investors", "include"),
        ("investors", "included"),
        ("investors", "including"),
        ("existing", "investors"),
        ("existing", "investor"),
        ("other", "investors"),
        ("backed", "by"),
        ("-backed",),
    ]
)
_FUNDING_WORDS = _words(
    """
    round rounds series funding financing seed pre-seed investment investments raise raised raises raising
    tranche venture
    """
)
_CJK_FUNDING = ("融资", "轮", "投资")
_ROLE_WORDS = _words(
    """
    chief executive officer technology technical financial operating marketing product ceo cto cfo coo cmo
    cpo president chairman chairwoman chair founder co-founder cofounder and its the company's
    """
)
# Words that may stand between a person and the role cue naming them ("Voss was previously COO").
_ROLE_GAP = _words(
    """
    is was as its the a an who serves served serving became becomes become becoming named appointed has have
    been also and now currently previously formerly former remains will be joined join joins leads runs heads
    then our their his her of at interim acting new current before after until once
    """
)
_ROLE_ADJECTIVES = frozenset(["former", "current", "new", "interim", "acting", "then", "now", "founding"])
# Words that put a role in the past: it neither contradicts nor is contradicted by a present one.
_PAST = frozenset(["former", "formerly", "previously", "ex", "once", "earlier", "until", "prior", "then", "before"])
_LIST_GAP = frozenset(["also", "have", "has", "had", "both", "jointly", "all", "each", "reportedly", "which", "who"])
_APPOSITIVE = _words(
    """
    its their his her the a an who is was also both former chief executive officer technology technical
    financial operating marketing product ceo cto cfo coo cmo cpo president chairman founder co-founder
    cofounder
    """
)
_OBJECT_STOP = _PREPOSITIONS | _BE | frozenset(["and", "or", "but", "which", "who", "that", "after", "before"])
_NOT_ACQUISITION = _words(
    """
    stake stakes share shares interest majority minority assets rights licence license land building
    property equipment customers users data patents
    """
)
# Words after "and" that continue a list of names rather than start a new clause.
_CONTINUERS = _words(
    """
    its their his her the a an former chief co-founder cofounder founder president chairman
    """
)
_CLAUSE_BREAK = frozenset(["but", "while", "whereas", "which", "who", "where", "although", "though"])
_SEED = re.compile(r"(?i)\b(pre-seed|seed)\b")
_CJK_LEAD = re.compile(r"由([^，。；、,;由的]{2,24}?)(?:共同|联合)?领投|([^，。；、,;由的]{2,24}?)(?:共同|联合)?领投")
_CJK_FOLLOW = re.compile(r"([^，。；、,;由的]{2,24}?)(?:等)?(?:跟投|参投)")
_CJK_SEPARATORS = re.compile(r"[、和与及]")


_PHRASES = sorted(
    {
        r"\s*".join(re.escape(w) for w in words)
        for words, handler, _ in _CUES
        if handler != "skip" and words[0][0] != "-"
    },
    key=len,
    reverse=True,
)
_HINT = re.compile(
    r"(?i)(?<![\w-])(?:" + "|".join(_PHRASES) + r")(?![\w-])|-(?:led|backed|based|headquartered)\b|领投|跟投|参投"
)


# The same test for ASCII text, matched against its lower-cased form (the cue phrases are lower
# case): a case-blind pattern is several times slower, and a lookahead on the letters the cues
# start with lets the alternatives fail at once at every other word.
_HINT_ASCII = re.compile(
    r"(?<![\w-])(?=["
    + "".join(sorted({phrase[1] if phrase[0] == "\\" else phrase[0] for phrase in _PHRASES}))
    + r"])(?:"
    + "|".join(_PHRASES)
    + r")(?![\w-])|-(?:led|backed|based|headquartered)\b"
)


@lru_cache(maxsize=16384)
def may_state_relations(text: str) -> bool:
    """A cheap test: whether ``text`` holds any cue word at all (most sentences hold none)."""
    if text.isascii():
        return _HINT_ASCII.search(text.lower()) is not None
    return _HINT.search(text) is not None


def _funding_context(toks: Sequence[_Tok], sentence: str) -> bool:
    if any(t.kind == "word" and t.low in _FUNDING_WORDS for t in toks):
        return True
    return any(f.kind in ("round", "money") for f in figures(sentence))


def _round_of(sentence: str) -> str | None:
    letters = [str(f.value) for f in figures(sentence) if f.kind == "round"]
    if letters:
        return letters[0]
    m = _SEED.search(sentence)
    return m.group(1).lower() if m else None


def _arg(t: _Tok) -> Arg:
    return Arg(t.text, t.terms)


# ---------------------------------------------------------------- binding helpers


class _Sentence:
    """One sentence's tokens and the positional rules that bind names to cues."""

    def __init__(self, toks: list[_Tok]):
        self.toks = toks
        self.persons: set[int] = set()  # token indices bound as persons

    def tok(self, i: int) -> _Tok | None:
        return self.toks[i] if 0 <= i < len(self.toks) else None

    def is_name(self, i: int) -> bool:
        t = self.tok(i)
        return t is not None and t.kind == "name"

    def list_after(self, i: int, skip_words: int = 4) -> list[int]:
        """Names listed from token ``i`` on ("Halcyon Ventures and Bluefield Capital", "A, B and C"),
        after at most ``skip_words`` describing words ("the venture firm")."""
        j, skipped = i, 0
        while (t := self.tok(j)) is not None and (
            t.low == ":" or (t.kind == "word" and t.low not in _OBJECT_STOP and skipped < skip_words)
        ):
            j += 1
            skipped += t.kind == "word"
        if not self.is_name(j):
            return []
        found = [j]
        j += 1
        while True:
            k, separated = j, False
            while (t := self.tok(k)) is not None and (
                (t.kind == "punct" and t.low in (",", "&"))
                or (t.kind in ("word", "ref") and t.low in _APPOSITIVE)
                or t.low == "and"
            ):
                separated |= t.low in (",", "and", "&")
                k += 1
            if separated and self.is_name(k) and not self.toks[k].possessive:
                found.append(k)
                j = k + 1
            else:
                return found

    def list_before(self, i: int) -> list[int]:
        """Names listed right before token ``i`` ("Sequoia Capital and Greylock Partners also")."""
        j = i - 1
        while (t := self.tok(j)) is not None and t.kind == "word" and t.low in _LIST_GAP:
            j -= 1
        if (
            (t := self.tok(j)) is not None
            and t.low == ","
            and (n := self.tok(j + 1)) is not None
            and n.low
            in (
                "which",
                "who",
            )
        ):
            j -= 1
        if not self.is_name(j) or self.toks[j].possessive:
            return []
        found = [j]
        j -= 1
        while (t := self.tok(j)) is not None and t.low in (",", "and", "&"):
            k = j
            while (t2 := self.tok(k)) is not None and t2.low in (",", "and", "&"):
                k -= 1
            if self.is_name(k) and not self.toks[k].possessive:
                found.append(k)
                j = k - 1
            else:
                break
        return found[::-1]

    def _after_preposition(self, i: int) -> bool:
        t = self.tok(i - 1)
        return t is not None and t.kind == "word" and t.low in _PREPOSITIONS

    def subject_before(self, i: int) -> int | None:
        """The subject of the clause a cue at ``i`` is in: the nearest name or pronoun before it that
        is no preposition's object, skipping an enclosed aside (", a rival of Corvane,")."""
        j = i - 1
        while j >= 0:
            t = self.toks[j]
            if t.low == ";":
                return None
            if t.low == ",":
                opening = next((k for k in range(j - 1, -1, -1) if self.toks[k].low in (",", ";")), None)
                if opening is not None and self.toks[opening].low == ",":
                    inside = [k for k in range(opening + 1, j) if self.toks[k].kind != "punct"]
                    if len(inside) == 1 and self.is_name(inside[0]):
                        return inside[0]  # ", Erik Haugen," — the aside is the name
                    j = opening - 1
                    continue
            elif t.kind in ("name", "ref") and not t.possessive and not self._after_preposition(j):
                return j
            j -= 1
        return None

    def object_after(self, i: int) -> int | None:
        """The first name or pronoun after token ``i`` ("the invoicing startup Invoicely"), or None
        when a clause boundary, a preposition or a non-company object ("a stake in") comes first."""
        j = i
        for _ in range(6):
            t = self.tok(j)
            if t is None or t.kind == "punct" or t.kind == "num":
                return None
            if t.kind in ("name", "ref") and not t.possessive:
                return j
            if t.kind == "ref":
                j += 1
                continue  # "its competitor Voltwise"
            if t.kind == "name" or t.low in _OBJECT_STOP or t.low in _NOT_ACQUISITION:
                return None
            j += 1
        return None

    def clause_end(self, i: int, limit: int = 16) -> int:
        """Where the clause from ``i`` ends (";", a new clause, or ``limit`` tokens on)."""
        j = i
        while j < min(len(self.toks), i + limit):
            t = self.toks[j]
            if t.low == ";" or (t.kind == "word" and t.low in _CLAUSE_BREAK):
                return j
            if t.low == "and" and (n := self.tok(j + 1)) is not None and n.kind == "word" and n.low not in _CONTINUERS:
                return j  # "… in Austin and moved its headquarters …"
            j += 1
        return j


# ---------------------------------------------------------------- extraction


@dataclass(frozen=True)
class _Pending:
    """A relation whose pronoun arguments are still token indices (resolved per sentence)."""

    kind: str
    agent: int | None
    theme: int | None
    round: str | None = None
    past: bool = False


def _extract_tokens(s: _Sentence, sentence: str, funding: bool) -> list[_Pending]:
    toks = s.toks
    rnd = _round_of(sentence) if funding else None
    out: list[_Pending] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        match = None
        if t.kind == "word" and t.low in _FIRST_WORDS:
            for words, handler, kind in _CUE_INDEX[t.low]:
                if all((x := s.tok(i + k)) is not None and x.low == w for k, w in enumerate(words)):
                    match = (words, handler, kind)
                    break
        if match is None:
            i += 1
            continue
        words, handler, kind = match
        j = i + len(words)
        if handler in ("after", "before", "either"):
            if funding or words in _SELF_EVIDENT:
                out += _funding(s, i, j, handler, kind, rnd)
        elif handler == "role":
            out += _role(s, i, j, kind)
        elif handler == "found":
            out += _founding(s, i, j)
        elif handler in ("place", "place_before"):
            out += _place(s, i, j, handler)
        elif handler.startswith("acqui") or handler == "sold_to":
            out += _acquisition(s, i, j, handler)
        i = j
    return out


def _funding(s: _Sentence, i: int, j: int, handler: str, kind: str, rnd: str | None) -> list[_Pending]:
    if kind == LEAD and (n := s.tok(j)) is not None and n.low == "to":
        return []  # "led to": a consequence, not a round
    names: list[int] = []
    if handler in ("after", "either"):
        k = j
        while (t := s.tok(k)) is not None and t.low in ("was", "were", "is", "are", ":", "include", "included"):
            k += 1
        if any((t := s.tok(x)) is not None and t.low in _ROLE_WORDS - {"and", "its", "the"} for x in range(j, j + 3)):
            return []  # "led by chief executive …": a person running the company
        names = s.list_after(k)
    if not names and handler in ("before", "either"):
        k = i
        while (t := s.tok(k - 1)) is not None and t.low in ("as", "the", "a", "an", "was", "were", "is", "are"):
            k -= 1
        names = s.list_before(k)
    return [_Pending(kind, n, None, rnd) for n in names]


def _role(s: _Sentence, i: int, j: int, kind: str) -> list[_Pending]:
    company: int | None = None
    k = i - 1
    while (t := s.tok(k)) is not None and t.kind == "word" and t.low in _ROLE_ADJECTIVES:
        k -= 1
    prev = s.tok(k)
    start = k
    if prev is not None and prev.kind in ("name", "ref") and prev.possessive:
        company, start = k, k - 1
    elif prev is not None and prev.kind == "name" and s.is_name(j) and k == i - 1:
        s.persons.add(j)  # "Vocalis chief executive Dana Whitfield"
        return [_Pending(kind, j, k)]
    m = j
    if (t := s.tok(m)) is not None and t.low in ("of", "at") and (s.is_name(m + 1) or _is_ref(s.tok(m + 1))):
        company, m = m + 1, m + 2
    person: int | None = None
    after = False
    if s.is_name(j) and not s.toks[j].possessive:
        person, after = j, True  # "CEO Mei Tanaka", "founder Sam Okafor"
    else:
        person, slot = _person_before(s, start)
        if company is None:
            company = slot
        if person is None and (t := s.tok(m)) is not None and t.low == "," and s.is_name(m + 1):
            person, after = m + 1, True  # "Heliogrid's chief executive, Erik Haugen, …"
    if person is None:
        return []
    people = [person]
    if after and s.toks[j - 1].low.endswith("s"):  # "its founders, Jane Park and Omar Haddad"
        people = [p for p in s.list_after(person, skip_words=0) if not s.toks[p].possessive] or people
    s.persons.update(people)
    # In the past when a past word stands between the person and the title or right before the title
    # ("formerly CTO", "a former CEO"), or "until" follows it ("CTO until 2020").
    between = range(min(person, i - 2), max(person, i))
    past = any((t := s.tok(k)) is not None and t.kind == "word" and t.low in _PAST for k in between)
    past = past or any((t := s.tok(k)) is not None and t.low == "until" for k in range(j, j + 4))
    return [_Pending(kind, p, company, past=past) for p in people]


def _is_ref(t: _Tok | None) -> bool:
    return t is not None and t.kind == "ref"


def _person_before(s: _Sentence, start: int) -> tuple[int | None, int | None]:
    """The person a role cue before ``start`` names, and a company named on the way
    ("Luis Ferreira is Corvane's chief executive", "Mei Tanaka, who leads Corvane as …")."""
    company: int | None = None
    j = start
    for _ in range(10):
        t = s.tok(j)
        if t is None or t.low == ";":
            return None, company
        if t.kind == "name":
            prev = s.tok(j - 1)
            slot = t.possessive or (
                prev is not None and prev.low in ("of", "at", "joined", "join", "joins", "leads", "runs", "heads")
            )
            if slot:
                company = company if company is not None else j
            else:
                return j, company
        elif t.kind == "ref":
            if t.possessive and company is None:
                company = j
        elif (
            (t.kind == "punct" and t.low != ",")
            or (t.kind == "word" and t.low not in _ROLE_GAP and t.low not in _ROLE_WORDS)
            or t.kind == "num"
        ):
            return None, company
        j -= 1
    return None, company


_WHEN_OR_WHERE = frozenset(["in", "on", "at", "during", "around", "circa"])


def _founding(s: _Sentence, i: int, j: int) -> list[_Pending]:
    prev = s.tok(i - 1)
    end = s.clause_end(j)
    by_next = (n := s.tok(j)) is not None and n.low == "by"  # "the company behind NATS founded by Collison"
    # "Cresta founded in 2017 …", "Kestra, founded in Paris": a headline's or a clause's passive
    # ("was" left out) — an active "founded" names what was founded right after it.
    when_next = n is not None and n.low in _WHEN_OR_WHERE
    passive = prev is None or by_next or when_next or prev.low in _BE or (prev.low == "," and s.object_after(j) is None)
    persons: list[int] = []
    company: int | None
    if passive:
        company = s.subject_before(i - 1 if prev is not None and prev.low in _BE else i)
        for k in range(j, end):
            if s.toks[k].low == "by":
                persons = s.list_after(k + 1, skip_words=1)
                break
    else:
        subject = s.subject_before(i)
        persons = [subject] if subject is not None and s.toks[subject].kind == "name" else []
        company = s.object_after(j)
    for k in range(j, end):
        if s.toks[k].low == "with" and not (s.tok(k + 1) is not None and s.toks[k + 1].kind == "num"):
            persons += [p for p in s.list_after(k + 1, skip_words=0) if p not in persons]
            break
    out = [_Pending(FOUNDER, p, company) for p in persons]
    s.persons.update(persons)
    for k in range(j, end):
        if s.toks[k].low == "in" and s.is_name(k + 1) and k + 1 not in persons and k + 1 != company:
            out.append(_Pending(FOUNDED_IN, company, k + 1))
            break
    return out


def _place(s: _Sentence, i: int, j: int, handler: str) -> list[_Pending]:
    if handler == "place_before":
        place = i - 1 if s.is_name(i - 1) else None
        company = j if s.is_name(j) else s.subject_before(i - 1)
    else:
        names = s.list_after(j, skip_words=3)
        place = names[0] if names else None
        company = s.subject_before(i)
        before = s.tok(i - 1)
        if before is not None and before.kind == "ref" and before.possessive:
            company = i - 1  # "moved its headquarters to Denver"
    if place is None:
        return []
    # "was headquartered in Austin until 2021", "originally based in Austin": where it was, not is
    window = range(i - 3, place + 4)
    past = any((t := s.tok(k)) is not None and t.kind == "word" and t.low in _PLACE_PAST for k in window)
    return [_Pending(BASED_IN, company, place, past=past)]


_PLACE_PAST = _PAST | {"originally", "initially"} - {"then"}


def _acquisition(s: _Sentence, i: int, j: int, handler: str) -> list[_Pending]:
    buyer: int | None
    target: int | None
    if handler == "acquisition_of":
        target = s.object_after(j)
        prev = s.tok(i - 1)
        buyer = i - 1 if prev is not None and prev.kind in ("name", "ref") and prev.possessive else None
        if target is not None and (t := s.tok(target + 1)) is not None and t.low == "by" and s.is_name(target + 2):
            buyer = target + 2
    elif handler == "acquisition_by":
        buyer = j if s.is_name(j) else None
        prev = s.tok(i - 1)
        target = i - 1 if prev is not None and prev.kind in ("name", "ref") and prev.possessive else None
    elif handler == "sold_to":
        buyer = j if s.is_name(j) else None
        target = s.subject_before(i)
    else:
        prev = s.tok(i - 1)
        nxt = s.tok(j)
        if (nxt is not None and nxt.low == "by") or (prev is not None and prev.low in _BE):
            target = s.subject_before(i - 1 if prev is not None and prev.low in _BE else i)
            buyer = None
            for k in range(j, min(j + 6, len(s.toks))):
                if s.toks[k].low == "by" and s.is_name(k + 1):
                    buyer = k + 1
                    break
                if s.toks[k].low in (",", ";"):
                    break
        else:
            buyer = s.subject_before(i)
            target = s.object_after(j)
            if target is None and (held := _stake_in(s, j)) is not None:
                return [_Pending(STAKE, buyer, held)]  # "bought a 20% stake in Initech": not the company
    if target is None:
        return []
    return [_Pending(ACQUIRED, buyer, target)]


_STAKE_WORDS = frozenset(["stake", "stakes", "share", "shares", "interest", "holding"])


def _stake_in(s: _Sentence, j: int) -> int | None:
    """The company a stake is bought in ("a minority stake in X", "shares of X"), if the object is one."""
    for k in range(j, min(j + 6, len(s.toks))):
        t = s.toks[k]
        if t.kind == "word" and t.low in _STAKE_WORDS:
            nxt = s.tok(k + 1)
            if nxt is not None and nxt.low in ("in", "of") and s.is_name(k + 2):
                return k + 2
            return None
        if t.kind == "punct" and t.low in (",", ";"):
            return None
    return None


def _resolve(s: _Sentence, pending: list[_Pending], topic: Arg | None) -> tuple[list[Relation], Arg | None]:
    """Relations with pronouns resolved to the sentence's first company-like name (before the
    pronoun), else the topic carried from the previous sentence; and this sentence's topic."""
    used_as_place = {p.theme for p in pending if p.kind in (FOUNDED_IN, BASED_IN)}
    investors = {p.agent for p in pending if p.kind in FUNDING}
    companies = [
        k
        for k, t in enumerate(s.toks)
        if t.kind == "name" and k not in s.persons and k not in used_as_place and k not in investors
    ]
    own_topic = _arg(s.toks[companies[0]]) if companies else None

    def arg(k: int | None, company_slot: bool) -> Arg | None:
        if k is None:
            return (own_topic or topic) if company_slot else None
        t = s.toks[k]
        if t.kind != "ref":
            return _arg(t)
        before = [c for c in companies if c < k]
        if before:
            return _arg(s.toks[before[0]])
        return topic

    out = []
    for p in pending:
        if p.kind in FUNDING:
            out.append(Relation(p.kind, arg(p.agent, False), None, p.round))
        elif p.kind in ROLES:
            out.append(Relation(p.kind, arg(p.agent, False), arg(p.theme, True), past=p.past))
        elif p.kind in (FOUNDED_IN, BASED_IN):
            out.append(Relation(p.kind, arg(p.agent, True), arg(p.theme, False), past=p.past))
        else:
            out.append(Relation(p.kind, arg(p.agent, False), arg(p.theme, False)))
    return [r for r in out if _informative(r)], own_topic or topic


def _informative(r: Relation) -> bool:
    if r.kind in FUNDING or r.kind in ROLES:
        return r.agent is not None
    if r.kind in (FOUNDED_IN, BASED_IN):
        return r.theme is not None
    return r.theme is not None


def _cjk(sentence: str, rnd: str | None) -> list[Relation]:
    if not UNSPACED_RE.search(sentence) or not any(w in sentence for w in _CJK_FUNDING):
        return []
    out: list[Relation] = []
    for kind, pattern in ((LEAD, _CJK_LEAD), (PARTICIPANT, _CJK_FOLLOW)):
        for m in pattern.finditer(sentence):
            text = next(g for g in m.groups() if g)
            for part in _CJK_SEPARATORS.split(text):
                part = part.strip()
                if part and (terms := term_set(part)):
                    out.append(Relation(kind, Arg(part, terms), None, rnd))
    return out


@dataclass(frozen=True)
class Carry:
    """What one sentence of a source hands the next in its field: the company its pronouns stand
    for, the round it was about, and whether it was about funding at all."""

    topic: Arg | None = None
    round: str | None = None
    funding: bool = False


def sentence_relations(
    sentence: str,
    known: frozenset[str] = frozenset(),
    common: frozenset[str] | None = None,
    carry: Carry = Carry(),
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
            found = [replace(r, agent=None) if r.kind in (FOUNDED_IN, BASED_IN) else r for r in found]
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
    if claim.kind in (FOUNDED_IN, BASED_IN):
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
    if claim.kind in (FOUNDED_IN, BASED_IN):
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
