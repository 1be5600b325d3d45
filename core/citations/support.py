"""Does a retrieved source support a claim sentence? Deterministic token overlap.

No model call: it runs inline on every citation. The field write-ups explain the
two floors — a high ratio on a one-word coincidence is noise, and an undiscriminating
substitution launders a fabricated URL into a confidently-wrong real one — so a
claim is supported only with at least ``MIN_SHARED`` shared meaningful tokens AND
a shared/claim-token ratio of at least ``MIN_RATIO``. Sources are scored on what
describes them (title, snippet, summary, highlights), never their full text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from core.citations.tokens import meaningful_tokens

MIN_SHARED = 2
MIN_RATIO = 0.20

T = TypeVar("T")


@dataclass(frozen=True)
class Support:
    shared: int
    ratio: float

    @property
    def supported(self) -> bool:
        return is_supported(self.shared, self.ratio)


def is_supported(shared: int, ratio: float) -> bool:
    """The operating threshold (the only place it is decided)."""
    return shared >= MIN_SHARED and ratio >= MIN_RATIO


def support(claim_tokens: frozenset[str], source_tokens: frozenset[str]) -> Support:
    if not claim_tokens:
        return Support(0, 0.0)
    shared = len(claim_tokens & source_tokens)
    return Support(shared, shared / len(claim_tokens))


def supports_text(claim: str, passage: str) -> Support:
    """Convenience for measurement: score a claim string against a passage string."""
    return support(meaningful_tokens(claim), meaningful_tokens(passage))


@dataclass(frozen=True)
class Match(Generic[T]):
    item: T
    rank: int  # position among the candidates (ties go to the lower rank)
    score: float  # shared / claim tokens
    shared: int


class SupportIndex(Generic[T]):
    """Inverted index over candidate sources so each claim costs O(its tokens × postings)."""

    def __init__(self, items: Sequence[T], texts: Iterable[str]):
        self._items = list(items)
        self._postings: dict[str, list[int]] = {}
        for rank, text in enumerate(texts):
            for token in meaningful_tokens(text):
                self._postings.setdefault(token, []).append(rank)

    def best(self, claim_tokens: frozenset[str]) -> Match[T] | None:
        """The best-supported candidate that passes the threshold (ties → earlier), or None."""
        if not claim_tokens:
            return None
        counts: dict[int, int] = {}
        for token in claim_tokens:
            for rank in self._postings.get(token, ()):
                counts[rank] = counts.get(rank, 0) + 1
        if not counts:
            return None
        rank, shared = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ratio = shared / len(claim_tokens)
        if not is_supported(shared, ratio):
            return None
        return Match(self._items[rank], rank, ratio, shared)
