"""How a page uses the subject's name: as the name, inside a longer name, or as a word.

"Kestra Medical said", "Toyota Cresta", "Apollo.io" use the name inside a longer proper
name; "a ramp in the car park" uses it as a common word; "NATS, the National Association
of Teachers of Singing" spells out what the letters stand for. Reading these needs the
text as written (capitals, sentence starts, what joins two words), which
``core.phrases`` folds away, so this module reads the spans ``WordText`` keeps.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from sourcedesk.core.sources.vocabulary import stem
from sourcedesk.core.text.phrases import Hit, WordText, fold, word_list

# Words that may follow a name without making a longer one ("Kestra Inc", "Ramp CEO Eric Glyman").
NOT_A_NAME_WORD = frozenset(
    word_list(
        """
    inc incorporated ltd limited llc plc corp corporation co gmbh ag sa sas bv nv pty
    usd eur gbp jpy chf cad aud inr cny
    ceo cto cfo coo cmo president founder cofounder chairman chief head vp team staff
    i a an the and or of to in on at for by with from as is are was were be
    monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december
        """
    )
)
# What a domain-style name ends with ("Apollo.io", "Notion.vc").
NAME_TLDS = frozenset(word_list("io ai co com net org app dev network vc so xyz tech"))
# Small words an organisation's spelled-out name may contain ("National Association *of* Teachers").
CONNECTORS = frozenset(word_list("of to and for the de du la le y e & für in on"))
_SENTENCE_ENDS = set(".!?:;|\n•·–—")
_OPENERS = set(" \t\"'“‘([*#>`_")
MAX_NAME_WORDS = 4


@dataclass(frozen=True)
class NameUse:
    """One occurrence of the subject's name on a page and how it is used."""

    hit: Hit
    strong: bool  # written as a name: capitalised (or as the subject writes it), not a common word's position
    in_title: bool
    longer: str | None = None  # the longer proper name it is part of, as written ("Kestra Medical")
    longer_key: str | None = None  # that name's two-word core, normalised ("kestra medical")
    longer_full: str | None = None  # the whole capitalised run ("Kestra Medical Technologies")


class PageWords:
    """A page's title and body as one ``WordText``, with where the title ends."""

    def __init__(self, title: str, body: str) -> None:
        self.text = WordText(f"{title}\n{body}" if body else title)
        self.title_end = len(title)
        self.title_words = sum(1 for _, start, _ in self.text.spans if start < self.title_end)
        self._stems: dict[str, str] | None = None
        self._title_stems: frozenset[str] | None = None

    def title_stems(self) -> frozenset[str]:
        """The title's words, stemmed (computed once)."""
        if self._title_stems is None:
            self._title_stems = frozenset(stem(w) for w in self.text.words[: self.title_words])
        return self._title_stems

    def stems(self) -> dict[str, str]:
        """Stem → word of every word (computed once: every judge that reads the page uses it)."""
        if self._stems is None:
            cache: dict[str, str] = {}
            out: dict[str, str] = {}
            for w in self.text.words:
                st = cache.get(w)
                if st is None:
                    st = cache[w] = stem(w)
                out.setdefault(st, w)
            self._stems = out
        return self._stems

    def sentence_case_title(self) -> bool:
        """A title written like a sentence ("Kestra Medical Technologies prices $202M IPO for
        wearable defibrillator"): its capitals mark names. A headline in Title Case ("Kestra
        Unveils New Engine") capitalises every word, so its capitals say nothing."""
        longer = [w for w in (self.raw(i) for i in range(self.title_words)) if len(w) >= 4 and w[:1].isalpha()]
        if len(longer) < 4:
            return False
        lower = sum(1 for w in longer if w[:1].islower())
        return lower * 2 >= len(longer)

    def raw(self, index: int) -> str:
        _, start, end = self.text.spans[index]
        return self.text.text[start:end]

    def gap(self, left: int, right: int) -> str:
        """The characters between word ``left`` and word ``right`` (= left + 1)."""
        return self.text.text[self.text.spans[left][2] : self.text.spans[right][1]]

    def capitalised(self, index: int) -> bool:
        first = self.raw(index)[:1]
        return first.isupper()

    def sentence_start(self, index: int) -> bool:
        """Whether word ``index`` opens a sentence, a line, a list item or a title segment."""
        text, at = self.text.text, self.text.spans[index][1] - 1
        while at >= 0:
            ch = text[at]
            if ch in _OPENERS:
                at -= 1
                continue
            if ch == "-" and (at == 0 or text[at - 1] in " \t\n"):  # a "- " bullet
                at -= 1
                continue
            return ch in _SENTENCE_ENDS
        return True

    def in_heading(self, index: int) -> bool:
        """A markdown heading line (title-cased like a headline)."""
        text = self.text.text
        line_start = text.rfind("\n", 0, self.text.spans[index][1]) + 1
        return text[line_start : line_start + 1] == "#"


def _casing_matches(written: str, canonical: str) -> bool:
    """Written as a name: as the subject writes it, in capitals, or capitalised."""
    return written == canonical or written.isupper() or written[:1].isupper()


def _next_word_name(page: PageWords, after: int, subject_words: frozenset[str]) -> tuple[str, str, int] | None:
    """``(word as written, folded, index)`` when word ``after`` continues a proper name."""
    if after >= len(page.text.words):
        return None
    gap = page.gap(after - 1, after)
    word = page.text.words[after]
    raw = page.raw(after)
    if gap == "." and word in NAME_TLDS:
        return raw, word, after
    if gap not in (" ", "-") or not raw[:1].isupper() or word.isdigit():
        return None
    if word in NOT_A_NAME_WORD or word in subject_words:
        return None
    return raw, word, after


def _previous_word_name(page: PageWords, before: int, subject_words: frozenset[str]) -> tuple[str, str] | None:
    """``(word as written, folded)`` when word ``before`` opens a proper name ending in the subject's name."""
    if before < page.title_words or page.gap(before, before + 1) != " ":
        return None
    word, raw = page.text.words[before], page.raw(before)
    if not raw[:1].isupper() or word.isdigit() or word in NOT_A_NAME_WORD or word in subject_words:
        return None
    if page.in_heading(before):
        return None
    if page.sentence_start(before):
        # "Freddie Mercury led Queen…": a sentence's first word is a name's only when the
        # title writes the same two words ("Freddie Mercury's greatest performances")
        title = page.text.words[: page.title_words]
        pair = (word, page.text.words[before + 1])
        if word.endswith("ing") or not any(title[i : i + 2] == pair for i in range(len(title) - 1)):
            return None
    return raw, word


def _longer(page: PageWords, hit: Hit, subject_words: frozenset[str]) -> tuple[str, str, str] | None:
    """The longer proper name a body mention is part of: ``(core as written, core key, full run)``."""
    if (hit.first < page.title_words and not page.sentence_case_title()) or page.in_heading(hit.first):
        return None
    follow = _next_word_name(page, hit.last, subject_words)
    if follow is not None:
        raw, word, index = follow
        gap = page.gap(hit.last - 1, hit.last)
        core = f"{hit.written}{gap}{raw}"
        full_end = index + 1
        while full_end < len(page.text.words) and full_end - hit.first < MAX_NAME_WORDS:
            more = _next_word_name(page, full_end, subject_words)
            if more is None or page.gap(full_end - 1, full_end) != " ":
                break
            full_end += 1
        full = page.text.written(hit.first, full_end) if gap != "." else core
        return core, f"{' '.join(fold(w) for w in hit.written.split())} {word}", full
    lead = _previous_word_name(page, hit.first - 1, subject_words)
    if lead is not None:
        raw, word = lead
        core = f"{raw} {hit.written}"
        return core, f"{word} {' '.join(fold(w) for w in hit.written.split())}", core
    return None


def name_uses(page: PageWords, phrase: str, canonical: str, taken: Set[int] = frozenset()) -> list[NameUse]:
    """Every use of the subject's name ``phrase`` (normalised) on the page, outside ``taken`` words."""
    subject_words = frozenset(phrase.split())
    hits = [h for h in page.text.find(phrase) if not set(range(h.first, h.last)) & taken]
    if not hits:
        return []
    lower_seen = not canonical.isupper() and any(not _casing_matches(h.written, canonical) for h in hits)
    uses: list[NameUse] = []
    for hit in hits:
        in_title = hit.first < page.title_words
        strong = _casing_matches(hit.written, canonical)
        if strong and lower_seen and (in_title or page.sentence_start(hit.first)):
            strong = False  # "Ramp access to the upper decks…" on a page about a ramp
        longer = _longer(page, hit, subject_words) if strong else None
        if longer is None:
            uses.append(NameUse(hit, strong, in_title))
        else:
            core, key, full = longer
            uses.append(NameUse(hit, strong, in_title, core, key, full))
    return uses


def spelled_out(page: PageWords, canonical: str) -> list[tuple[str, str]]:
    """Names whose initials spell the subject's short name ("National Association of Teachers
    of Singing" for NATS): ``(name as written, normalised)``. Only for names of 3 to 6 letters."""
    letters = [c for c in fold(canonical) if c.isalnum()]
    if not 3 <= len(letters) <= 6 or not canonical.isalpha():
        return []
    words = page.text.words
    found: list[tuple[str, str]] = []
    start = page.title_words
    n = len(words)
    i = start
    while i < n:
        if not page.capitalised(i) or words[i] in CONNECTORS:
            i += 1
            continue
        # Walk a run of capitalised words joined by spaces and connectors; match its initials.
        initials: list[str] = []
        j = i
        last_cap = i
        while j < n and len(initials) <= len(letters):
            if j > i and page.gap(j - 1, j) != " ":
                break
            if page.capitalised(j) and words[j] not in CONNECTORS:
                initials.append(words[j][0])
                last_cap = j
            elif words[j] not in CONNECTORS:
                break
            if initials == letters:
                written = page.text.written(i, last_cap + 1)
                found.append((written, " ".join(words[i : last_cap + 1])))
                break
            j += 1
        i += 1
    return found
