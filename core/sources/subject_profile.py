"""What the subject's own pages teach about it: the names it uses and the words that are its own.

A third-party article about Kestra rarely gives kestra.io; it names Emmanuel Darras, Paris,
"Kestra Enterprise", YAML flows. Those come from the subject's own pages (every stored
source on its hosts): the longer names it uses for itself ("Apollo Client", "Notion
Calendar" — never a namesake's), the proper names it writes mid-sentence (founders, city,
products, customers), the first words of those names ("Bill" of "Bill Pay": "Ramp Bill Pay"
is the subject's product, not a namesake), and the words two of its pages share.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sourcedesk.core.sources.name_uses import NOT_A_NAME_WORD, PageWords, name_uses
from sourcedesk.core.sources.vocabulary import GENERIC, distinguishing_terms
from sourcedesk.core.text.phrases import normalise_phrase, word_list

# Capitalised words too common to tell one organisation from another.
COMMON_PROPER = frozenset(
    word_list(
        """
    ai api apis sdk ui ux us usa uk eu europe european america american north south east west new global
    international national capital market markets select group street city state states united kingdom
    github google microsoft amazon apple linkedin twitter x youtube facebook slack gmail
    yes no ok faq pro plus free premium enterprise cloud beta
        """
    )
)
# Words before a name on the subject's own page that say the name is someone else's
# ("people sometimes confuse us with Kestra Medical", "we are not Kestra Financial").
SET_APART = frozenset(
    word_list("not unrelated confuse confused confusing mistake mistaken affiliated different nothing")
)
SET_APART_WINDOW = 8
MAX_PROPER = 120
MAX_CONTEXT = 80


@dataclass
class SubjectProfile:
    """The subject as its own pages describe it."""

    subject_phrase: str = ""  # its name, normalised
    own_names: set[str] = field(default_factory=set)  # longer names it uses, normalised ("apollo client")
    proper: dict[str, str] = field(default_factory=dict)  # folded word → as written ("darras" → "Darras")
    heads: set[str] = field(default_factory=set)  # first words of its proper names ("bill" of "Bill Pay")
    context: dict[str, str] = field(default_factory=dict)  # stem → word, shared by two of its pages
    own_text: str = ""  # every own page's words, joined

    def uses(self, key: str) -> bool:
        """Whether the subject's own pages use the (normalised) name: as one of its longer names,
        or — a name without the subject's, like a spelled-out one — anywhere in their text."""
        if not key:
            return False
        if key in self.own_names:
            return True
        return not self.carries_name(key) and f" {key} " in self.own_text

    def carries_name(self, key: str) -> bool:
        """Whether the normalised name contains the subject's name as words."""
        return bool(self.subject_phrase) and f" {self.subject_phrase} " in f" {key} "


def _set_apart(page: PageWords, first: int) -> bool:
    return any(w in SET_APART for w in page.text.words[max(0, first - SET_APART_WINDOW) : first])


def _mid_sentence_capital(page: PageWords, i: int) -> bool:
    return i >= page.title_words and page.capitalised(i) and not page.sentence_start(i) and not page.in_heading(i)


def _proper_words(page: PageWords, subject_words: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i, word in enumerate(page.text.words):
        if len(word) < 3 or word.isdigit() or word in subject_words:
            continue
        if word in GENERIC or word in NOT_A_NAME_WORD or word in COMMON_PROPER:
            continue
        if _mid_sentence_capital(page, i):
            out.setdefault(word, page.raw(i))
    return out


def _heads(page: PageWords, subject_words: set[str]) -> set[str]:
    """The first word of every capitalised run that does not open a sentence."""
    heads: set[str] = set()
    for i, word in enumerate(page.text.words):
        if word in subject_words or word in GENERIC or not _mid_sentence_capital(page, i):
            continue
        if i > 0 and page.capitalised(i - 1) and page.gap(i - 1, i) == " ":
            continue
        heads.add(word)
    return heads


def _lowercase_words(pages: list[PageWords]) -> set[str]:
    """Words the subject's pages also write in lower case: common words, not names."""
    return {word for page in pages for i, word in enumerate(page.text.words) if page.raw(i)[:1].islower()}


def learn_profile(name: str, pages: Iterable[tuple[str, str]], extra_words: Iterable[str] = ()) -> SubjectProfile:
    """From the subject's own pages as ``(title, body)``; ``extra_words``: words of its aliases."""
    phrase = normalise_phrase(name)
    subject_words = set(phrase.split()) | set(extra_words)
    prepared = [PageWords(title, body) for title, body in pages]
    lower = _lowercase_words(prepared)
    profile = SubjectProfile(subject_phrase=phrase)
    counts: dict[str, int] = {}
    for page in prepared:
        for use in name_uses(page, phrase, name):
            if use.longer_key and not _set_apart(page, use.hit.first):
                profile.own_names.add(use.longer_key)
        profile.heads |= _heads(page, subject_words)
        for word, raw in _proper_words(page, subject_words).items():
            if word not in lower:
                counts[word] = counts.get(word, 0) + 1
                profile.proper.setdefault(word, raw)
    ranked = sorted(profile.proper, key=lambda w: -counts[w])[:MAX_PROPER]
    profile.proper = {w: profile.proper[w] for w in ranked}
    term_counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for page in prepared:
        for term_stem, word in distinguishing_terms(page.text.text).items():
            term_counts[term_stem] = term_counts.get(term_stem, 0) + 1
            first.setdefault(term_stem, word)
    floor = 2 if len(prepared) >= 3 else 1
    shared = sorted(
        (s for s, n in term_counts.items() if n >= floor and len(s) >= 3 and first[s] not in subject_words),
        key=lambda s: (-term_counts[s], s),
    )
    profile.context = {s: first[s] for s in shared[:MAX_CONTEXT] if first[s] not in profile.proper}
    profile.own_text = " " + " ".join(" ".join(p.text.words) for p in prepared) + " "
    return profile


__all__ = ["COMMON_PROPER", "SubjectProfile", "learn_profile"]
