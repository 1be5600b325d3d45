"""Distinctive names in a claim: capitalised names (people, firms, products, places) that a source
must name too for the claim to be supported (``sourcedesk.core.citations.support``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from sourcedesk.core.citations.tokens import normalise_text, term_set

_CAPITALISED = re.compile(r"[^\W\d_][\w'’.-]*")
_CLAUSE_OPENERS = ".!?;:。！？\n"


def _opens_clause(text: str, i: int) -> bool:
    """Whether position ``i`` starts the text, a sentence or a clause (a capitalised word there may
    be an ordinary word); opening quotes and brackets are skipped over."""
    j = i - 1
    while j >= 0 and text[j] in " \t\"'“‘«([*_":
        j -= 1
    return j < 0 or text[j] in _CLAUSE_OPENERS


# "According to Wikipedia, …", "as reported by Reuters": the name of the source, not of the fact.
_ATTRIBUTION = re.compile(r"(?i)(?:according\s+to|as\s+reported\s+by|reported\s+by|per)\s+(?:the\s+)?$")
# Capitalised words that name no one: calendar words, titles, currencies, legal forms.
_GENERIC = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "series",
        "round",
        "ceo",
        "cto",
        "cfo",
        "coo",
        "founder",
        "co-founder",
        "chief",
        "executive",
        "president",
        "chairman",
        "ai",
        "api",
        "apis",
        "saas",
        "ipo",
        "usd",
        "eur",
        "gbp",
        "us",
        "u.s.",
        "uk",
        "eu",
        "inc",
        "inc.",
        "ltd",
        "ltd.",
        "llc",
        "corp",
        "corp.",
        "co",
        "co.",
        "plc",
        "gmbh",
        "sa",
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "for",
        "of",
        "and",
        "or",
        "but",
        "by",
        "to",
        "with",
        "from",
        "as",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "he",
        "she",
        "they",
        "we",
        "our",
        "their",
        "his",
        "her",
        "i",
        "q1",
        "q2",
        "q3",
        "q4",
        "h1",
        "h2",
        "fy",
        "mr",
        "mrs",
        "ms",
        "dr",
    ]
)


def distinctive_names(text: str, proper: frozenset[str] = frozenset()) -> list[tuple[str, frozenset[str]]]:
    """Capitalised names in ``text`` with their terms. A capitalised word that opens the text or
    a sentence is only a name when ``proper`` knows its term as one (seen capitalised mid-sentence)."""
    norm = normalise_text(text)
    out: list[tuple[str, frozenset[str]]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            name = " ".join(run)
            out.append((name, term_set(name)))
            run.clear()

    pos = skip_until = 0
    for m in _CAPITALISED.finditer(norm):
        if m.start() < skip_until:
            continue
        if not run and not norm[m.start()].isupper():
            pos = m.end()  # a lower-case word with no name before it to end
            continue
        word = m.group().rstrip(".")
        gap = norm[pos : m.start()]
        if run and gap.strip() not in ("", "&", "-"):
            flush()
        pos = m.end()
        if not word[:1].isupper() or word.lower() in _GENERIC:
            flush()
            continue
        opening = not run and _opens_clause(norm, m.start())
        if opening and not (term_set(word) & proper):
            continue
        if not run and _ATTRIBUTION.search(norm[max(0, m.start() - 30) : m.start()]):
            pos = skip_until = _skip_name(norm, m.end())
            continue
        run.append(word)
        if m.group().endswith(".") and (m.end() >= len(norm) or norm[m.end()].isspace()):
            flush()  # "… Priya Raman. Sequoia …": the full stop ends the name
    flush()
    return [(name, t) for name, t in out if t]


@lru_cache(maxsize=8192)
def _names_in(text: str, known: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """``distinctive_names``, remembered: a section's claims are judged against many sources."""
    return distinctive_names(text, known)


def _skip_name(text: str, pos: int) -> int:
    """Past the rest of a capitalised run starting before ``pos`` (an attribution's source name)."""
    for m in _CAPITALISED.finditer(text, pos):
        if text[pos : m.start()].strip() or not m.group()[:1].isupper():
            return pos
        pos = m.end()
    return pos


def proper_terms(texts: Iterable[str]) -> frozenset[str]:
    """Terms written capitalised mid-sentence somewhere in ``texts`` (known names)."""
    found: set[str] = set()
    for text in texts:
        found |= _proper_in(text)
    return frozenset(found)


@lru_cache(maxsize=8192)
def _proper_in(text: str) -> frozenset[str]:
    norm = normalise_text(text)
    found: set[str] = set()
    for m in _CAPITALISED.finditer(norm):
        word = m.group()
        if word[:1].isupper() and not _opens_clause(norm, m.start()):
            found |= term_set(word)
    return frozenset(found)
