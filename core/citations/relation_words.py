"""The words relations are read by (``sourcedesk.core.citations.relations``): tokens, names, cue phrases, and
the cheap test of whether a sentence holds a cue at all."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from sourcedesk.core.citations.figures import figures
from sourcedesk.core.citations.relation_model import ACQUIRED, BASED_IN, FOUNDER, INVESTOR, LEAD, PARTICIPANT, Arg
from sourcedesk.core.citations.tokens import UNSPACED_RE, term_set

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
    (("started",), "found_by", FOUNDER),
    (("set", "up"), "found_by", FOUNDER),
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
    post role position job leaving leaves left stepping steps step down quitting quits
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
    r"(?i)(?<![\w-])(?:"
    + "|".join(_PHRASES)
    + r")(?![\w-])|-(?:led|backed|based|headquartered)\b|领投|跟投|参投|总部|本社|証券取引所|证券交易所|証券交易所"
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
