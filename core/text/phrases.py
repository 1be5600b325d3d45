"""Words and whole-word phrases, the way an analyst reads a name.

"Kestra Medical", "KESTRA-MEDICAL's" and "kestra medical" are one phrase: matching
ignores case, accents and punctuation and works on whole words, so ``NATS`` is found
in "Nats air traffic control" but not in "GNATS". A run of letters switches words
where the script changes ("NATSは" is ``nats`` + ``は``), so a Latin name is found in
Japanese or Chinese text that has no spaces. Used by the ``about`` verdict and by
name rejects, so both agree on what "contains the phrase" means.
"""

from __future__ import annotations

import html
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


# A character reference, named (with or without its ``;``, as browsers read it) or numeric.
_ENTITY_RE = re.compile(r"&(?:#[0-9]{1,7};?|#[xX][0-9a-fA-F]{1,6};?|[A-Za-z][A-Za-z0-9]{1,31};?)")


def _decode_pass(text: str, starts: list[int], ends: list[int]) -> tuple[str, list[int], list[int]]:
    out: list[str] = []
    new_starts: list[int] = []
    new_ends: list[int] = []
    at = 0
    for match in _ENTITY_RE.finditer(text):
        chunk = match.group()
        decoded = html.unescape(chunk)
        if decoded == chunk:
            continue
        out.append(text[at : match.start()])
        new_starts += starts[at : match.start()]
        new_ends += ends[at : match.start()]
        # "&nbspMedical" decodes to "\xa0Medical": the letters after a legacy entity are its own
        kept = 0
        while kept < len(decoded) - 1 and kept < len(chunk) - 1 and decoded[-1 - kept] == chunk[-1 - kept]:
            kept += 1
        head = len(decoded) - kept
        first, last = starts[match.start()], ends[match.end() - kept - 1]
        out.append(decoded)
        new_starts += [first] * head + starts[match.end() - kept : match.end()]
        new_ends += [last] * head + ends[match.end() - kept : match.end()]
        at = match.end()
    if not out:
        return text, starts, ends
    out.append(text[at:])
    return "".join(out), new_starts + starts[at:], new_ends + ends[at:]


def _decoded(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` with HTML character references decoded (twice: scraped titles carry
    ``&amp;nbsp;``), with each decoded character's start and end offsets in ``text``."""
    starts, ends = list(range(len(text))), list(range(1, len(text) + 1))
    for _ in range(2):
        if "&" not in text:
            break
        text, starts, ends = _decode_pass(text, starts, ends)
    return text, starts, ends


def shown_words(written: str) -> str:
    """Words as a reader of the page sees them: "Kestra&nbsp;Medical" → "Kestra Medical"."""
    if "&" in written:
        written = _decoded(written)[0]
    if written.isascii() and "  " not in written and "\n" not in written and "\t" not in written:
        return written
    return " ".join(written.split())


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """``(folded word, start, end)`` for every word of ``text``, offsets into ``text``.

    Any space or punctuation separates words — a non-breaking space too — and an HTML
    character reference counts as the character it stands for, so "Kestra&nbsp;Medical"
    is the two words of "Kestra Medical", as a reader of the page sees them."""
    spans: list[tuple[str, int, int]] = []
    if "&" in text:
        decoded, starts, ends = _decoded(text)
        if decoded != text:
            for word, start, end in word_spans(decoded):
                spans.append((word, starts[start], ends[end - 1]))
            return spans
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
    written: str  # as written, e.g. "KESTRA-MEDICAL" (references decoded, spaces plain)


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
            hits.append(Hit(phrase, first, last, shown_words(self.text[start:end])))
            at = self._joined.find(needle, at + 1)
        return hits

    def written(self, first: int, last: int) -> str:
        """The text of words ``first`` to ``last`` (exclusive), as a reader sees it."""
        return shown_words(self.text[self.spans[first][1] : self.spans[last - 1][2]])


def contains_phrase(texts: Iterable[str], phrase: str) -> bool:
    """Whether any of ``texts`` contains the (raw or normalised) phrase as whole words."""
    needle = normalise_phrase(phrase)
    if not needle:
        return False
    return any(needle in WordText(t) for t in texts if t)
