"""The finance and company lexicon: terms of art a writer and a source spell differently.

``lexicon.yaml`` (beside this module, curated by hand) lists, for each concept, every spelling
that means exactly it ("ARR" = "annual recurring revenue"), groups of ordinary words writers
swap when restating a source ("bought" = "acquired"), and the words that say a quantity went
up or down. Three readers use it:

* terms (``sourcedesk.core.citations.tokens``): every spelling of a concept becomes one term, so "ARR"
  in a claim meets "annual recurring revenue" in its source, with the weight of one term;
* the direction check (``sourcedesk.core.citations.direction``): "fell" against "rose" for the same
  quantity is a contradiction;
* facts and the memo ledger: what a figure measures (revenue, ARR, headcount, …).

Spellings are matched on whole words, case-insensitively, with hyphens and spaces alike. The
file ships inside the package: nothing is downloaded, and a broken file fails at import, in
the test suite, not in front of an analyst.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

UP, DOWN, FLAT = "up", "down", "flat"


@dataclass(frozen=True)
class Lexicon:
    concepts: dict[str, str]  # a spelling (casefolded, single-spaced) → its concept's token
    names: dict[str, str]  # a concept's token → how a reason names it ("ARR")
    words: dict[str, str]  # an ordinary word or phrase → the head word of its group
    directions: dict[str, str]  # a word → "up" | "down" | "flat"
    pattern: re.Pattern[str]  # every multi-word spelling and phrase, longest first
    unspaced: dict[str, str] = field(default_factory=dict)  # a CJK direction morpheme → "up" | "down"
    also: dict[str, str] = field(default_factory=dict)  # a concept's token → words each spelling also states
    unspaced_pattern: re.Pattern[str] = re.compile("(?!)")  # every such morpheme, longest first

    def rewrite(self, text: str) -> str:
        """``text`` (casefolded) with every multi-word spelling replaced by its concept's token
        and every multi-word phrase by its group's head word; single words are left to
        ``token_for``."""
        if " " not in text and "-" not in text and "&" not in text:
            return text
        return self.pattern.sub(self._replacement, " ".join(text.replace("-", " ").split()))

    def _replacement(self, m: re.Match[str]) -> str:
        before = m.string[m.start() - 1] if m.start() else " "
        if before.isalnum() or before in "_&":
            return m.group()  # inside a longer word ("tarr"): not the term
        key = _key(m.group())
        return self.concepts.get(key) or self.words.get(key) or m.group()

    def token_for(self, word: str) -> str | None:
        """The concept token or head word one casefolded word stands for, if the lexicon knows it."""
        return self.concepts.get(word) or self.words.get(word)

    def direction(self, word: str) -> str | None:
        return self.directions.get(word.casefold())


def _key(spelling: str) -> str:
    return " ".join(spelling.casefold().replace("-", " ").split())


def _token(term: str, forms: list[str]) -> str:
    """A concept's token: the letters of its name ("arr", "gmv"), or of its longest spelling when
    the name has too few ("M&A" → "mergersandacquisitions"); a word the term extraction keeps whole."""
    letters = re.sub(r"[^a-z]", "", term.casefold())
    if len(letters) >= 3 and "&" not in term:
        return letters
    return re.sub(r"[^a-z]", "", max(forms, key=len).casefold())


def build(data: Any) -> Lexicon:
    """A lexicon from the parsed YAML; a malformed entry is a ValueError naming it."""
    if not isinstance(data, dict):
        raise ValueError("lexicon: expected a mapping with 'terms', 'words' and 'directions'")
    concepts: dict[str, str] = {}
    names: dict[str, str] = {}
    also: dict[str, str] = {}
    for entry in data.get("terms") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("term"), str) or not entry.get("forms"):
            raise ValueError(f"lexicon: a term needs 'term' and 'forms': {entry!r}")
        forms = [str(f) for f in entry["forms"]]
        token = _token(entry["term"], forms)
        names[token] = entry["term"]
        if entry.get("also"):
            also[token] = " ".join(_key(str(w)) for w in entry["also"])
        for form in forms:
            concepts[_key(form)] = token
    words: dict[str, str] = {}
    for group in data.get("words") or []:
        if not isinstance(group, list) or len(group) < 2:
            raise ValueError(f"lexicon: a word group needs two words or more: {group!r}")
        head = _key(str(group[0]))
        for word in group:
            words[_key(str(word))] = head
    directions: dict[str, str] = {}
    unspaced: dict[str, str] = {}
    given = data.get("directions") or {}
    for way in (UP, DOWN, FLAT):
        for word in given.get(way) or []:
            directions[_key(str(word))] = way
    for way in (UP, DOWN):
        for word in given.get(f"unspaced_{way}") or []:
            unspaced[str(word)] = way
    morphemes = "|".join(re.escape(w) for w in sorted(unspaced, key=len, reverse=True))
    # Spellings the word reader would split ("H1": a letter and a digit) are rewritten with the phrases.
    phrases = [k for k in (*concepts, *words) if " " in k or "&" in k or not k.isalpha()]
    # No look-behind: tried at every character it costs more than the match; the replacement
    # checks the character before instead.
    pattern = re.compile(rf"(?:{_trie(phrases) or '(?!)'})(?![\w&])")
    unspaced_pattern = re.compile(morphemes or "(?!)")
    return Lexicon(
        concepts, names, words, directions, pattern, unspaced=unspaced, also=also, unspaced_pattern=unspaced_pattern
    )


def _trie(words: list[str]) -> str:
    """An alternation of ``words`` grouped by their characters, longest match first: every
    branch starts with a literal, so the regex engine tries only the phrases that start there."""
    by_first: dict[str, list[str]] = {}
    for word in words:
        by_first.setdefault(word[0], []).append(word[1:])
    branches = []
    for first, rests in sorted(by_first.items()):
        longer = [rest for rest in rests if rest]
        tail = f"(?:{_trie(longer)}){'?' if len(longer) < len(rests) else ''}" if longer else ""
        branches.append(re.escape(first) + tail)
    return "|".join(branches)


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The shipped lexicon (read once)."""
    text = files(__package__).joinpath("lexicon.yaml").read_text(encoding="utf-8")
    return build(yaml.safe_load(text))
