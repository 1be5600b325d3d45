"""Words and whole-word phrases, the way an analyst reads a name.

"Kestra Medical", "KESTRA-MEDICAL's" and "kestra medical" are one phrase: matching
ignores case, accents and punctuation and works on whole words, so ``NATS`` is found
in "Nats air traffic control" but not in "GNATS". A run of letters switches words
where the script changes ("NATSは" is ``nats`` + ``は``), so a Latin name is found in
Japanese or Chinese text that has no spaces. Used by the ``about`` verdict and by
name rejects, so both agree on what "contains the phrase" means.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

_RUN_RE = re.compile(r"[^\W_]+")
_LATIN_LIMIT = 0x250  # Basic Latin to Latin Extended-B


def _is_latin(ch: str) -> bool:
    code = ord(ch)
    return code < _LATIN_LIMIT or 0x1E00 <= code <= 0x1EFF


def fold(text: str) -> str:
    """Case- and accent-insensitive form of one word ("Késtra" → "kestra")."""
    text = text.casefold()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _split_scripts(run: str, start: int) -> list[tuple[str, int, int]]:
    if run.isascii():
        return [(run, start, start + len(run))]
    parts: list[tuple[str, int, int]] = []
    begin = 0
    for i in range(1, len(run) + 1):
        if i == len(run) or _is_latin(run[i]) != _is_latin(run[i - 1]):
            parts.append((run[begin:i], start + begin, start + i))
            begin = i
    return parts


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """``(folded word, start, end)`` for every word of ``text``, offsets into ``text``."""
    spans: list[tuple[str, int, int]] = []
    for match in _RUN_RE.finditer(text):
        for raw, start, end in _split_scripts(match.group(), match.start()):
            word = fold(raw)
            if word:
                spans.append((word, start, end))
    return spans


def word_list(block: str) -> list[str]:
    """A list of words written as one block of text (long vocabularies stay readable)."""
    return block.split()


def words(text: str) -> tuple[str, ...]:
    return tuple(w for w, _, _ in word_spans(text))


def normalise_phrase(text: str) -> str:
    """The comparable form of a phrase: folded words joined by single spaces ("" for none)."""
    return " ".join(words(text))


@dataclass(frozen=True)
class Hit:
    """One occurrence of a phrase: word positions and the text as written."""

    phrase: str  # normalised
    first: int  # index of the first word
    last: int  # index after the last word
    written: str  # the original characters, e.g. "KESTRA-MEDICAL"


class WordText:
    """A text prepared once for many whole-word phrase lookups."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = word_spans(text)
        self.words = tuple(w for w, _, _ in self.spans)
        self._joined = " " + " ".join(self.words) + " "
        # char offset in ``_joined`` where each word starts (after its leading space)
        self._starts: list[int] = []
        offset = 1
        for word in self.words:
            self._starts.append(offset)
            offset += len(word) + 1

    def __contains__(self, phrase: str) -> bool:
        return bool(phrase) and f" {phrase} " in self._joined

    def find(self, phrase: str) -> list[Hit]:
        """Every whole-word occurrence of the normalised ``phrase`` (overlaps included)."""
        if not phrase:
            return []
        needle = f" {phrase} "
        size = phrase.count(" ") + 1
        hits: list[Hit] = []
        at = self._joined.find(needle)
        while at != -1:
            first = bisect_right(self._starts, at + 1) - 1
            last = first + size
            start, end = self.spans[first][1], self.spans[last - 1][2]
            hits.append(Hit(phrase, first, last, self.text[start:end]))
            at = self._joined.find(needle, at + 1)
        return hits

    def written(self, first: int, last: int) -> str:
        """The original text of words ``first`` to ``last`` (exclusive)."""
        return self.text[self.spans[first][1] : self.spans[last - 1][2]]


def contains_phrase(texts: Iterable[str], phrase: str) -> bool:
    """Whether any of ``texts`` contains the (raw or normalised) phrase as whole words."""
    needle = normalise_phrase(phrase)
    if not needle:
        return False
    return any(needle in WordText(t) for t in texts if t)
