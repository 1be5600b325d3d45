"""Terms: the one definition of "a word that can carry a claim", in any script.

Support scoring compares a claim's terms with a source's. Everything that decides
what counts as a term lives here so the reconciler, the benchmarks and the tests
cannot drift apart.

* NFKC, case-folded; Arabic-Indic digits read as digits; Arabic diacritics and
  tatweel removed, alef forms unified (a writer and a page rarely vocalise alike).
* Words in scripts that separate words with spaces are stemmed with the Snowball
  stemmer of their script (English for Latin, Russian for Cyrillic, Greek, Arabic),
  so ``founded``/``founding`` and ``الشركة``/``شركة`` meet. British spellings are read
  as American ones first (``organisation``/``organization``, ``colour``/``color``), and a
  few groups of words writers swap when restating a source share one term
  (``bought``/``acquired``, ``staff``/``employees``, ``grew``/``increased``).
* Scripts written without spaces (Han, kana, Hangul, Thai, …) have no word
  boundaries to trust: a run of them becomes its overlapping character bigrams
  (``云舟科技`` → ``云舟 舟科 科技``), the usual unit for matching such text.
* Numbers are not terms: figures are compared as values (``sourcedesk.core.citations.figures``).
* Stopwords and one-letter words are dropped, and so are connectives and hedges
  (``additionally``, ``generally``, ``significant``): how a writer frames a claim,
  never what a source has to say for it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

import Stemmer  # type: ignore[import-not-found]  # PyStemmer ships no type information

from sourcedesk.core.citations.lexicon import lexicon

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
        "its",
        "it's",
        "في",
        "من",
        "على",
        "إلى",
        "الى",
        "عن",
        "أن",
        "ان",
        "إن",
        "هذا",
        "هذه",
        "ذلك",
        "تلك",
        "التي",
        "الذي",
        "الذين",
        "و",
        "او",
        "أو",
        "ثم",
        "قد",
        "كان",
        "كانت",
        "مع",
        "بعد",
        "قبل",
        "حيث",
        "كما",
        "أي",
        "اي",
        "نحو",
        "عام",
        "لدى",
        "حتى",
        "بين",
        "كل",
        "ما",
        "لم",
        "لن",
        "هو",
        "هي",
        "هم",
    ]
)

# Connectives, hedges and intensifiers: how a writer frames a claim, never what a source must say
# for it ("Additionally, it is generally believed …" asserts what "… is believed …" does).
DISCOURSE = frozenset(
    str.split(
        """
    additionally addition furthermore moreover however therefore thus hence consequently overall ultimately
    finally firstly secondly lastly instead rather still even already especially particularly notably
    specifically generally typically usually often sometimes frequently commonly largely mostly mainly
    primarily essentially basically simply really actually certainly clearly obviously indeed perhaps
    possibly potentially likely unlikely probably approximately roughly nearly almost quite fairly highly
    significantly greatly various several certain particular specific overall whole entire
    important crucial essential key significant major main
    """
    )
)
STOPWORDS = STOPWORDS | DISCOURSE

# Scripts written without spaces between words: matched by character bigrams.
_UNSPACED = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u312f"  # Bopomofo
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width katakana
)
UNSPACED_RE = re.compile(f"[{_UNSPACED}]+")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_ARABIC = re.compile("[\u0600-\u06ff]")
_WIDE_DIGIT = re.compile("[\u0660-\u0669\u06f0-\u06f9]")
_ARABIC_DIACRITICS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_ARABIC_LETTERS = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ؤ": "و", "ئ": "ي"})
DIGITS = str.maketrans({**{chr(0x660 + i): str(i) for i in range(10)}, **{chr(0x6F0 + i): str(i) for i in range(10)}})

_STEMMERS: dict[str, Any] = {name: Stemmer.Stemmer(name) for name in ("english", "russian", "greek", "arabic")}


def normalise_text(text: str) -> str:
    """What every comparison sees: NFKC, ASCII digits, Arabic without diacritics (case kept)."""
    if text.isascii():
        return text  # already all of that (every step maps only characters beyond ASCII)
    text = unicodedata.normalize("NFKC", text)
    if _WIDE_DIGIT.search(text):  # translate() maps character by character: only when there is one
        text = text.translate(DIGITS)
    if not text.isascii() and _ARABIC.search(text):
        text = _ARABIC_DIACRITICS.sub("", text).translate(_ARABIC_LETTERS)
    return text


def _stemmer_for(word: str) -> Any:
    ch = word[0]
    if ch < "\u0250":
        return _STEMMERS["english"]
    if "\u0600" <= ch <= "\u06ff":
        return _STEMMERS["arabic"]
    if "\u0400" <= ch <= "\u04ff":
        return _STEMMERS["russian"]
    if "\u0370" <= ch <= "\u03ff":
        return _STEMMERS["greek"]
    return None


# British spellings read as American ones, so "organisation" and "organization" are one term.
_SPELLINGS = [
    (re.compile(r"([^aeiou])is(ation|ations|e|ed|es|ing|er|ers)$"), r"\1iz\2"),
    (re.compile(r"ys(e|ed|es|ing|er|ers)$"), r"yz\1"),
    (re.compile(r"(?<=\w{3})our(s|ed|ing|er|ers|ite|ites|able|ably|ful)?$"), r"or\1"),
    (re.compile(r"([^aeiou])(t|b)re(s|d)?$"), r"\1\2er\3"),
    (re.compile(r"(?<=[fc])ence(s)?$"), r"ense\1"),
    (re.compile(r"(?<=og)ue(s)?$"), r"\1"),
    (re.compile(r"(?<=gram)me(s)?$"), r"\1"),
]


# Words a writer swaps for one another when restating a source (stems, the first one stands
# for the group; irregular forms included): "bought" a company is "acquired" it.
_SYNONYM_GROUPS = [
    "acquir acquisit buy bought purchas",
    "begin began begun start commenc",
    "end finish conclud",
    "increas rise rose risen grow grew grown",
    "decreas declin drop fell fall fallen",
    "larg big",
    "help assist",
    "show demonstr indic",
    "use util",
    "requir need",
    "allow enabl permit",
    "build built construct",
    "choos chose chosen select",
    "quick fast rapid",
    "rich wealthi",
    "found establish founder",
    "compani firm",
    "employe staff worker",
    "revenu sale",
]
_SYNONYMS = {t: g.split()[0] for g in _SYNONYM_GROUPS for t in g.split()[1:]}
# Titles written as initials are the words they stand for ("officer" itself is no term: "CEO" and
# "chief executive officer" are one title).
_TITLES = {
    "ceo": ("chief", "execut"),
    "cto": ("chief", "technolog"),
    "cfo": ("chief", "financi"),
    "coo": ("chief", "oper"),
    "cmo": ("chief", "market"),
    "cpo": ("chief", "product"),
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The term of one lower-cased word (possessive ``'s`` dropped)."""
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    if word.isascii():
        for pattern, american in _SPELLINGS:
            word = pattern.sub(american, word)
    stemmer = _stemmer_for(word)
    term = str(stemmer.stemWord(word)) if stemmer is not None else word
    return _SYNONYMS.get(term, term)


_HIRAGANA = re.compile("[\u3040-\u309f]+")


def _bigrams(run: str) -> list[str]:
    """Character pairs of an unspaced run. Japanese writes its particles and verb endings in
    hiragana ("1962年に設立された"): pairs across them say nothing of the content, so a run that mixes
    hiragana with kanji or katakana is read as the pieces between its hiragana."""
    if _HIRAGANA.search(run) and not _HIRAGANA.fullmatch(run):
        return [pair for piece in _HIRAGANA.split(run) if piece for pair in _pairs(piece)]
    return _pairs(run)


def _pairs(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=16384)
def _word_terms(word: str) -> tuple[str, ...]:
    """Terms of one word-like run (it may mix spaced and unspaced scripts: ``Coach云舟``)."""
    if not UNSPACED_RE.search(word):
        known = lexicon()
        concept = known.concepts.get(word) or (word if word in known.names else None)  # a spelling, or the token
        if concept is not None:  # a term of art, whole ("ARR", "annual recurring revenue": one term)
            also = known.also.get(concept)
            return (concept, *(stem(w) for w in also.split())) if also else (concept,)
        word = known.words.get(word, word)  # "sales" is revenue, "bought" acquired
        if len(word) < 2 or word in STOPWORDS or word in ("officer", "officers"):
            return ()
        if word in _TITLES:
            return _TITLES[word]
        term = stem(word)
        return () if term in STOPWORDS or len(term) < 2 else (term,)
    out: list[str] = []
    pos = 0
    for m in UNSPACED_RE.finditer(word):
        out += _word_terms(word[pos : m.start()]) if m.start() > pos else ()
        out += _bigrams(m.group())
        pos = m.end()
    if pos < len(word):
        out += _word_terms(word[pos:])
    return tuple(out)


def terms(text: str) -> list[str]:
    """The terms of ``text``, in order, repeats kept (see the module docstring)."""
    text = lexicon().rewrite(normalise_text(text).casefold())  # "annual recurring revenue" is "arr"
    out: list[str] = []
    for word in _WORD.findall(text):
        out += _word_terms(word)
    return out


@lru_cache(maxsize=65536)
def term_set(text: str) -> frozenset[str]:
    """The distinct terms of ``text`` (cached: a run scores the same passages and claims many times)."""
    return frozenset(terms(text))
