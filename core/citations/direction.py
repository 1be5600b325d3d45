"""Direction: a claim that says a quantity went up where its source says it went down.

"Revenue fell" and "revenue rose" share every term and every figure; only the verb differs.
The lexicon (``sourcedesk.core.citations.lexicon``) lists the words that say up (rose, grew,
expanded, up …) and down (fell, declined, dropped, cut …). Each such word in a text is a
**movement**: its direction and the quantity it is about — the terms from the previous
movement, clause break or sentence start up to the word, and the few words after it before
punctuation ("cut 30% of its staff": the staff). Its **head** is the quantity's last terms
before the word, figures passed over ("gross merchandise volume of $1.9 billion, up": GMV).

A claim's movement is compared with each movement of its source: how many of the claim
head's terms the source's quantity holds, and of the source head's terms the claim's
quantity holds (names — the memo's subject, the claim's names, names the sources write
capitalised — never count: a company's name says nothing about which of its figures moved).
The best-matching movement decides: when it goes another way (down for up, flat for either),
and none matching as well goes the claim's way, the source reverses the claim. Scripts written
without spaces (CJK) hold their direction words inside longer words ("前期比12%増"): those
are found as morphemes, their quantity read from the characters before them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from sourcedesk.core.citations.lexicon import FLAT, lexicon
from sourcedesk.core.citations.tokens import UNSPACED_RE, normalise_text, term_set, terms

# Where a quantity's words stop: a sentence or clause break, or a word that starts another clause.
_BREAK = re.compile(r"[.!?](?=\s|$)|[;:。；！？\n]|,\s*(?:while|whereas|but|and)\b|\b(?:while|whereas|but)\b", re.I)
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_PUNCTUATION = re.compile(r"[,;:()\[\]]")
# "up to 40%", "set up", "sign up": not movements.
_NOT_MOVEMENT = re.compile(
    r"(?i)\bup\s+to\b|\b(?:set|sign|signed|sets|setting|signs|pick|picked|end|ended|show|showed|came|come)\s+up\b"
)
AFTER_WORDS = 4  # words after the verb that may name the quantity ("cut 55 jobs")
HEAD_TERMS = 2  # the quantity's last terms before the verb
UNSPACED_HEAD_TERMS = 4  # the same in an unspaced script, read in character pairs ("売上高は前期比": 前期, 期比 …)
# Words after which "stable", "flat" or "steady" says a quantity did not move.
_LINKING = frozenset(
    [
        "was",
        "were",
        "is",
        "are",
        "be",
        "been",
        "remained",
        "remains",
        "remain",
        "stayed",
        "stays",
        "stay",
        "held",
        "holds",
        "hold",
        "kept",
        "keeps",
        "largely",
        "broadly",
        "essentially",
        "virtually",
        "roughly",
        "mostly",
    ]
)
_UNSPECIFIC = frozenset(
    term_set("year quarter month week percent per cent compared period time level thousand million billion trillion")
)


@dataclass(frozen=True)
class Movement:
    way: str  # up | down
    terms: frozenset[str]  # the quantity's terms
    head: frozenset[str]  # its last terms before the verb, and those after it
    verb: str  # the word as written
    span: str  # the quantity and the verb, as written (for a reason)


@lru_cache(maxsize=8192)
def movements(text: str) -> tuple[Movement, ...]:
    """Every movement ``text`` states, in order."""
    norm = normalise_text(text)
    words = list(_WORD.finditer(norm))
    cues = _cues(norm, words)
    if not cues:
        return ()
    breaks = [m.end() for m in _BREAK.finditer(norm)]
    out: list[Movement] = []
    start = 0
    for at, end, way, i in cues:
        opening = max([start, *(b for b in breaks if b <= at)])
        before = norm[opening:at] if i < 0 else " ".join(v.group() for v in words[:i] if v.start() >= opening)
        after = _after(norm, words, i) if i >= 0 else []
        own = term_set(norm[at:end])
        following = term_set(" ".join(m.group() for m in after)) - _UNSPECIFIC - own
        quantity = (term_set(before) | following) - _UNSPECIFIC - own
        leading = [t for t in terms(before) if t not in _UNSPECIFIC]
        head = frozenset(leading[-(HEAD_TERMS if i >= 0 else UNSPACED_HEAD_TERMS) :]) | following
        stop = after[-1].end() if after else end
        span = " ".join(norm[opening:stop].split()).strip(" ,")
        out.append(Movement(way, quantity, head, norm[at:end], span))
        start = end
    return tuple(out)


def _cues(norm: str, words: list[re.Match[str]]) -> list[tuple[int, int, str, int]]:
    """The direction words of ``norm``: (start, end, way, index in ``words`` or -1 for a morpheme
    inside an unspaced-script word), in order. A flat word counts only after a linking verb."""
    known = lexicon()
    found: list[tuple[int, int, str, int]] = []
    blocked: list[tuple[int, int]] | None = None
    for i, w in enumerate(words):
        way = known.direction(w.group())
        if way is None:
            continue
        if blocked is None:
            blocked = [(m.start(), m.end()) for m in _NOT_MOVEMENT.finditer(norm)]
        if any(s <= w.start() < e for s, e in blocked):
            continue
        if (
            way == FLAT
            and w.group().lower() != "unchanged"
            and (i == 0 or words[i - 1].group().lower() not in _LINKING)
        ):
            continue
        found.append((w.start(), w.end(), way, i))
    if known.unspaced and UNSPACED_RE.search(norm):
        for m in known.unspaced_pattern.finditer(norm):
            found.append((m.start(), m.end(), known.unspaced[m.group()], -1))
        found.sort()
    return found


def _after(text: str, words: list[re.Match[str]], i: int) -> list[re.Match[str]]:
    """Up to ``AFTER_WORDS`` words after the verb ``words[i]``, passing over figures, stopping at
    punctuation, a clause break or another direction word."""
    out: list[re.Match[str]] = []
    pos = words[i].end()
    for w in words[i + 1 :]:
        gap = text[pos : w.start()]
        if _PUNCTUATION.search(gap) or _BREAK.search(gap) or lexicon().direction(w.group()):
            break
        out.append(w)
        pos = w.end()
        if len(out) >= AFTER_WORDS:
            break
    return out


@dataclass(frozen=True)
class Reversal:
    claim: Movement
    source: Movement
    passage: int  # index of the source passage that states it

    def reason(self) -> str:
        return (
            f'the source says "{self.source.span}" ({self.source.way}), '
            f'where the claim says "{self.claim.span}" ({self.claim.way})'
        )


def reversal(claim_text: str, passages: list[str], ignore: frozenset[str] = frozenset()) -> Reversal | None:
    """The first claim movement its source reverses (see the module docstring), or None.
    ``ignore``: terms that name no quantity (the subject's and the claim's names)."""
    said = movements(claim_text)
    if not said:
        return None
    stated = [(i, m) for i, p in enumerate(passages) for m in movements(p)]
    if not stated:
        return None
    for c in said:
        best, ways, where = 0, set(), None
        for i, m in stated:
            score = len((c.head & m.terms) - ignore) + len((m.head & c.terms) - ignore)
            if score > best:
                best, ways, where = score, {m.way}, (i, m)
            elif score == best and score:
                ways.add(m.way)
        if best and where is not None and len(ways) == 1 and c.way not in ways:  # up, down, flat: one of them
            return Reversal(c, where[1], where[0])
    return None
