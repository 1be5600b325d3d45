"""Meaningful tokens: the one definition of "a word that can carry a claim".

Substitution asks whether a retrieved source supports a sentence by counting
shared meaningful tokens. Everything that decides what counts as a token lives
here so the reconciler, the benchmark and the tests cannot drift apart.

Rules (in order):

* NFKC-normalise and lower-case.
* Thousands separators inside numbers are removed (``1,200`` → ``1200``) so a
  figure written two ways is one token; decimals stay whole (``1.5``).
* A token is a run of letters or a number; letters and digits split each other,
  so ``$41m`` → ``41`` + ``m`` and ``2017`` stays ``2017``.
* A light plural fold (``companies`` → ``company``, ``customers`` →
  ``customer``) so grammatical number does not hide a match.
* Stopwords and 1-character tokens are dropped (``m`` from ``$41m`` goes;
  ``41`` stays, single digits go — they carry almost no evidence).
"""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "either",
        "else",
        "ever",
        "every",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "however",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "least",
        "less",
        "like",
        "made",
        "make",
        "many",
        "may",
        "me",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "myself",
        "neither",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "per",
        "same",
        "she",
        "should",
        "since",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "though",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "via",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "yet",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "said",
        "says",
        "say",
        "according",
        "new",
        "use",
        "used",
        "using",
        "including",
        "include",
        "includes",
    ]
)

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")


def _fold(token: str) -> str:
    """Fold a plural to its singular; deliberately tiny (no stemmer dependency)."""
    if token[0].isdigit() or len(token) <= 3:
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def meaningful_tokens(text: str) -> frozenset[str]:
    """The set of meaningful tokens in ``text`` (see the module docstring for the rules)."""
    text = _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).lower())
    out = set()
    for raw in _TOKEN.findall(text):
        if len(raw) < 2 or raw in STOPWORDS:
            continue
        token = _fold(raw)
        if token not in STOPWORDS:
            out.add(token)
    return frozenset(out)
