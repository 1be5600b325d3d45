"""Reading one sentence's relations (``sourcedesk.core.citations.relations``): cue words bind the names around
them by position; pronouns resolve to the sentence's (or the previous sentence's) company."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sourcedesk.core.citations.relation_model import (
    ACQUIRED,
    BASED_IN,
    FOUNDED_IN,
    FOUNDER,
    FUNDING,
    LEAD,
    LISTED_ON,
    PARTICIPANT,
    ROLES,
    STAKE,
    Arg,
    Relation,
)
from sourcedesk.core.citations.relation_words import (
    _APPOSITIVE,
    _BE,
    _CJK_FOLLOW,
    _CJK_FUNDING,
    _CJK_LEAD,
    _CJK_SEPARATORS,
    _CLAUSE_BREAK,
    _CONTINUERS,
    _CUE_INDEX,
    _FIRST_WORDS,
    _LIST_GAP,
    _NOT_ACQUISITION,
    _OBJECT_STOP,
    _PAST,
    _PREPOSITIONS,
    _ROLE_ADJECTIVES,
    _ROLE_GAP,
    _ROLE_WORDS,
    _SELF_EVIDENT,
    _arg,
    _round_of,
    _Tok,
)
from sourcedesk.core.citations.tokens import UNSPACED_RE, term_set

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
            if t.kind == "ref" or (t.kind == "name" and self.is_name(j + 1)):
                j += 1
                continue  # "its competitor Voltwise", "Dublin's Ledgerly"
            if t.kind == "name" or t.low in _OBJECT_STOP or t.low in _NOT_ACQUISITION:
                return None
            j += 1
        return None

    def name_after(self, i: int, words: int = 3) -> int | None:
        """The name right after token ``i`` or after at most ``words`` describing words ("solar
        developer Vento Solare"); None when punctuation, a preposition or a verb-like word comes first."""
        for j in range(i, i + words + 1):
            t = self.tok(j)
            if t is None or t.kind in ("punct", "num", "ref") or t.low in _OBJECT_STOP:
                return None
            if t.kind == "name":
                return None if t.possessive else j
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
        elif handler == "found_by" and any(s.toks[k].low == "by" for k in range(j, s.clause_end(j))):
            out += _founding(s, i, j)  # "was started in 2015 by Aino Lahti"; "started trading" is no founding
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
        named = s.name_after(j)  # "the Bari-based developer Vento Solare": the place is Vento Solare's
        company = named if named is not None else s.subject_before(i - 1)
    else:
        names = s.list_after(j, skip_words=3)
        place = names[0] if names else None
        company = _apposed(s, s.subject_before(i))
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


def _apposed(s: _Sentence, k: int | None) -> int | None:
    """The company a name stands for when it only describes an apposition ("Vento Solare, an
    Italian solar developer based in Bari": Vento Solare, not Italian); else ``k``."""
    if k is None or k < 3 or (n := s.tok(k + 1)) is None or n.kind != "word":
        return k
    article, comma = s.toks[k - 1], s.toks[k - 2]
    if article.low in ("a", "an") and comma.low == "," and s.is_name(k - 3) and not s.toks[k - 3].possessive:
        return k - 3
    return k


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
        # "was acquired by", "bought by": passive; "is acquiring", "is buying": the subject buys.
        participle = s.toks[i].low in _PARTICIPLES
        if (nxt is not None and nxt.low == "by") or (participle and prev is not None and prev.low in _BE):
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


_PARTICIPLES = frozenset(["acquired", "bought", "purchased", "snapped"])
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


# "总部位于深圳", "总部设在苏州", "本社は大阪市にあり": where a company is based (the company is the
# sentence's topic).
_CJK_HEADQUARTERS = re.compile(
    r"总部(?:位于|设在|设于|在)([^，。；、,;\s]{2,8}?)(?=[，。；、,;\s]|$)|本社(?:は|が)([^，。；、,;\s]{2,8}?)に(?:あ|置)"
)
# "東京証券取引所", "上海证券交易所": the exchange is named by the characters before the word, back to a
# particle or a mark ("…は名古屋証券取引所" → 名古屋).
_CJK_EXCHANGE = re.compile(r"証券取引所|证券交易所|証券交易所")
_CJK_BOUNDARY = re.compile(r"[\s，。；、,;：:「」（）()はがのをにでと及和与]")


def _cjk_exchanges(sentence: str) -> list[Relation]:
    out = []
    for m in _CJK_EXCHANGE.finditer(sentence):
        before = sentence[max(0, m.start() - 6) : m.start()]
        name = _CJK_BOUNDARY.split(before)[-1]
        if len(name) >= 2 and (terms := term_set(name)):
            out.append(Relation(LISTED_ON, None, Arg(name + m.group(), terms)))
    return out


def _cjk(sentence: str, rnd: str | None) -> list[Relation]:
    if not UNSPACED_RE.search(sentence):
        return []
    out: list[Relation] = []
    for m in _CJK_HEADQUARTERS.finditer(sentence):
        place = m.group(1) or m.group(2)
        out.append(Relation(BASED_IN, None, Arg(place, term_set(place))))
    out += _cjk_exchanges(sentence)
    if not any(w in sentence for w in _CJK_FUNDING):
        return out
    for kind, pattern in ((LEAD, _CJK_LEAD), (PARTICIPANT, _CJK_FOLLOW)):
        for m in pattern.finditer(sentence):
            text = next(g for g in m.groups() if g)
            for part in _CJK_SEPARATORS.split(text):
                part = part.strip()
                if part and (terms := term_set(part)):
                    out.append(Relation(kind, Arg(part, terms), None, rnd))
    return out
