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
The best-matching movement decides: when it goes the other way, and none matching as well
goes the same way, the source reverses the claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from sourcedesk.core.citations.lexicon import DOWN, UP, lexicon
from sourcedesk.core.citations.tokens import normalise_text, term_set, terms

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
    known = lexicon()
    words = list(_WORD.finditer(norm))
    if not any(known.direction(w.group()) for w in words):
        return ()
    blocked = [(m.start(), m.end()) for m in _NOT_MOVEMENT.finditer(norm)]
    breaks = [m.end() for m in _BREAK.finditer(norm)]
    out: list[Movement] = []
    start = 0
    for i, w in enumerate(words):
        way = known.direction(w.group())
        if way is None or any(s <= w.start() < e for s, e in blocked):
            continue
        opening = max([start, *(b for b in breaks if b <= w.start())])
        before = [v.group() for v in words[:i] if v.start() >= opening]
        after = _after(norm, words, i)
        own = term_set(w.group())
        following = term_set(" ".join(m.group() for m in after)) - _UNSPECIFIC - own
        quantity = (term_set(" ".join(before)) | following) - _UNSPECIFIC - own
        leading = [t for t in terms(" ".join(before)) if t not in _UNSPECIFIC]
        head = frozenset(leading[-HEAD_TERMS:]) | following
        end = after[-1].end() if after else w.end()
        span = " ".join(norm[opening:end].split()).strip(" ,")
        out.append(Movement(way, quantity, head, w.group(), span))
        start = w.end()
    return tuple(out)


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
        if best and where is not None and ways == {DOWN if c.way == UP else UP}:
            return Reversal(c, where[1], where[0])
    return None
