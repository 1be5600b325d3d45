"""Figures: the numbers a claim stands or falls on, read as values.

A source supports "$125M" when it says "USD 125 million" or "125,000,000 dollars",
and contradicts it when, about the same thing, it says "$150 million". So figures
are compared as values of a kind, never as strings:

Numbers may be written as words (``two``, ``twenty-five``, ``three hundred``; ``one``
only before a scale, as in ``one million``): "two offices" is the count 2.

* ``money`` — an amount with its scale and currency (``$125M``, ``USD 125 million``,
  ``€20m``, ``1.25亿美元``, ``30億円``, ``40 مليون دولار``), in units of the currency;
* ``number`` — a scaled amount without a currency (``2.3 million``, ``200 ألف``);
  it matches money of the same value (the currency was said elsewhere);
* ``percent`` — ``12%``, ``12 percent``, ``12 per cent``, ``12٪``;
* ``year`` — 1800–2099 on its own (``in 2017``, ``2016年``);
* ``date`` — a day or month with its year (``14 November 2023``, ``June 2022``,
  ``2023-11-14``, ``2023年8月``); its year also counts as a year;
* ``count`` — a plain number followed by what it counts (``40 employees``,
  ``120名``); the counted word (as a term) is its unit;
* ``round`` — a funding round's letter (``Series D``, ``C轮``, ``シリーズB``, ``الفئة ب``).

Two figures are *the same quantity* when they have the same kind (and, for counts,
the same unit); a claim figure whose quantity appears with another value in the
evidence is contradicted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import NamedTuple

from sourcedesk.core.citations.fraction_words import shares
from sourcedesk.core.citations.tokens import normalise_text, terms
from sourcedesk.core.citations.units import SCALED_UNITS

_DIGITS = r"\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_UNITS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_TEENS = {
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
# Number words ("two", "twenty-five", "three hundred"); "one" only before a scale ("one million"),
# since "one of", "no one" and "one day" count nothing.
_NUMBER_WORD = (
    r"(?:(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven"
    r"|eight|nine))?|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|two|three"
    r"|four|five|six|seven|eight|nine)(?:\s+hundred)?|one(?=\s+(?:hundred|thousand|million|billion|trillion)\b)"
    r"(?:\s+hundred)?)\b"
)
_NUM = rf"{_DIGITS}|{_NUMBER_WORD}"
_SCALES = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mm": 1e6,
    "mn": 1e6,
    "mil": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "billions": 1e9,
    "t": 1e12,
    "tn": 1e12,
    "trillion": 1e12,
    "万": 1e4,
    "萬": 1e4,
    "亿": 1e8,
    "億": 1e8,
    "兆": 1e12,
    "ألف": 1e3,
    "الف": 1e3,
    "آلاف": 1e3,
    "الاف": 1e3,
    "مليون": 1e6,
    "ملايين": 1e6,
    "مليار": 1e9,
    "مليارات": 1e9,
    "بليون": 1e9,
    "تريليون": 1e12,
}
_SCALE = (
    r"(?:thousand|millions?|billions?|trillion|mil|mn|mm|bn|tn|[kmbt](?![a-z])|万|萬|亿|億|兆"
    r"|ألف|الف|آلاف|الاف|مليون|ملايين|مليارات|مليار|بليون|تريليون)"
)
_PREFIX_CURRENCY = {
    "us$": "USD",
    "usd": "USD",
    "$": "USD",
    "a$": "AUD",
    "aud": "AUD",
    "c$": "CAD",
    "cad": "CAD",
    "hk$": "HKD",
    "s$": "SGD",
    "nz$": "NZD",
    "€": "EUR",
    "eur": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "¥": "JPY",
    "jpy": "JPY",
    "cny": "CNY",
    "rmb": "CNY",
    "₹": "INR",
    "inr": "INR",
    "sar": "SAR",
    "aed": "AED",
    "chf": "CHF",
}
_SUFFIX_CURRENCY = {
    "dollars": "USD",
    "dollar": "USD",
    "usd": "USD",
    "euros": "EUR",
    "euro": "EUR",
    "eur": "EUR",
    "pounds": "GBP",
    "gbp": "GBP",
    "yen": "JPY",
    "美元": "USD",
    "元": "CNY",
    "人民币": "CNY",
    "日元": "JPY",
    "円": "JPY",
    "ドル": "USD",
    "دولار": "USD",
    "دولارا": "USD",
    "ريال": "SAR",
    "درهم": "AED",
    "جنيه": "EGP",
}
_PREFIX = r"(?:us\$|a\$|c\$|hk\$|s\$|nz\$|\$|€|£|¥|₹|usd|aud|cad|eur|gbp|jpy|cny|rmb|inr|sar|aed|chf)"
_SUFFIX = r"(?:dollars?|usd|euros?|eur|pounds|gbp|yen|人民币|美元|日元|元|円|ドル|دولارا|دولار|ريال|درهم|جنيه)"
_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_YEAR = r"(?:18|19|20)\d\d"
_ARABIC_ROUND = {"ا": "a", "أ": "a", "ب": "b", "ج": "c", "د": "d", "ه": "e", "هـ": "e", "و": "f"}

_FIGURE = re.compile(
    rf"""
    (?P<money_pre>{_PREFIX})\s?(?P<mp_num>{_NUM})(?:\s?(?P<mp_scale>{_SCALE}))?(?:\s?(?P<mp_suffix>{_SUFFIX}))?
  | (?P<money_num>{_NUM})\s?(?:(?P<ms_scale>{_SCALE})\s?)?(?P<money_suf>{_SUFFIX})
  | (?P<pct_num>{_NUM})\s?(?:%|٪|percent\b|per\s?cent\b|percentage\s+points?\b)
  | (?P<date_iso>{_YEAR})-(?P<iso_m>[01]\d)-(?P<iso_d>[0-3]\d)
  | (?P<dmy_d>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dmy_m>{_MONTH})\s*,?\s*(?P<dmy_y>{_YEAR})
  | (?P<mdy_m>{_MONTH})\s+(?P<mdy_d>[0-3]?\d)(?:st|nd|rd|th)?\s*,?\s*(?P<mdy_y>{_YEAR})
  | (?P<my_m>{_MONTH})\s*,?\s*(?:of\s+)?(?P<my_y>{_YEAR})
  | (?P<cjk_y>{_YEAR})年(?:(?P<cjk_m>1[0-2]|0?[1-9])月(?:(?P<cjk_d>[0-3]?\d)日)?)?
  | (?P<round_en>series|round)\s+(?P<round_l>[a-h])(?![\w-])
  | (?P<round_cjk_l>[a-h])(?:轮|輪|ラウンド)
  | シリーズ(?P<round_ja_l>[a-h])
  | (?:الفئة|الجولة|السلسلة)\s+(?P<round_ar_l>أ|ا|ب|ج|د|هـ|ه|و)(?![\w])
  | (?P<scaled_num>{_NUM})\s?(?P<scaled>{_SCALE})(?![\w])
  | (?P<year>{_YEAR})(?![\d.,]\d)
  | (?P<count_num>{_NUM})(?P<count_rest>\s*[^\W\d_][\w'’-]*|[名人座家个個位台件])
    """,
    re.X | re.I,
)
_PLAIN_NUMBER = re.compile(rf"(?=[\dtfseno])(?:{_NUM})")  # a number starts with a digit or these letters
# The same pattern for ASCII text, matched case-sensitively against its lower-cased form (the same
# matches and offsets; whatever depends on case is read from the text as written): a case-blind
# pattern tries every character several times slower. Lookaheads name the first characters a number, a month
# or a currency prefix can start with, so the alternatives fail at once everywhere else.
_FIGURE_ASCII = re.compile(
    _FIGURE.pattern.replace(_NUM, rf"(?=[\dtfseno])(?:{_NUM})")
    .replace(_MONTH, rf"(?=[jfmasond])(?:{_MONTH})")
    .replace(f"(?P<money_pre>{_PREFIX})", rf"(?=[$€£¥₹uachnsegjri])(?P<money_pre>{_PREFIX})"),
    re.X,
)
# Where a figure can begin in lower-cased ASCII text: a digit, a currency sign, or a word the
# pattern starts with (a currency code, a number word, a month, "series"/"round"; "hundred" and the
# scales only ever follow a number). Found in one pass, so the whole pattern is tried only at
# those places, not at every letter of every word. (Its CJK and Arabic alternatives cannot match
# ASCII text.)
_FIRST_WORDS = sorted(
    {
        *_PREFIX[3:-1].replace("\\$", "$").split("|"),
        *re.findall(r"[a-z]+", re.sub(r"\\[a-z]", " ", _NUMBER_WORD)),  # its words, not \s or \b
        *_MONTHS,
        "series",
        "round",
    }
    - {"hundred", "thousand", "million", "billion", "trillion"},
    key=len,
    reverse=True,
)


def _trie(words: Iterable[str]) -> str:
    """An alternation of ``words`` grouped by their letters ("a(?:ud|pr(?:il)?)|…"): every branch
    starts with a literal, so the regex engine jumps from one possible first character to the next
    and tries only the few words that start there."""
    by_first: dict[str, list[str]] = {}
    for word in words:
        by_first.setdefault(word[0], []).append(word[1:])
    branches = []
    for first, rests in sorted(by_first.items()):
        longer = [rest for rest in rests if rest]
        tail = f"(?:{_trie(longer)}){'?' if len(longer) < len(rests) else ''}" if longer else ""
        branches.append(re.escape(first) + tail)
    return "|".join(branches)


_FIGURE_START = re.compile(_trie([*"0123456789", *_FIRST_WORDS]))


def _scan_ascii(low: str) -> Iterator[re.Match[str]]:
    """``_FIGURE_ASCII.finditer(low)``, trying the pattern only where a figure can begin."""
    pos, end = 0, len(low)
    search, match = _FIGURE_START.search, _FIGURE_ASCII.match
    while pos < end:
        start = search(low, pos)
        if start is None:
            return
        m = match(low, start.start())
        if m is None:
            pos = start.start() + 1
        else:
            yield m
            pos = m.end()


class Figure(NamedTuple):
    kind: str  # money | number | percent | year | date | count | round
    value: float | str | tuple[int, int, int]  # amount / percentage / year / (y, m, d; 0 = unknown) / letter
    unit: str = ""  # currency for money, counted term for counts
    text: str = ""
    start: int = 0
    end: int = 0


def amount(f: Figure) -> float:
    """The value of a money, number, count, percent or year figure (0.0 for the others)."""
    return float(f.value) if isinstance(f.value, (int, float)) else 0.0


def date_of(f: Figure) -> tuple[int, int, int]:
    """(year, month, day) of a date figure, 0 where unknown; a year figure is (year, 0, 0)."""
    if isinstance(f.value, tuple):
        return f.value
    return (int(amount(f)), 0, 0)


def _number(text: str) -> float:
    if text[:1].isdigit():
        return float(text.replace(",", ""))
    words = text.lower().replace("-", " ").split()
    value = 0.0
    for w in words:
        if w == "hundred":
            value *= 100
        else:
            value += _UNITS.get(w) or _TEENS.get(w) or _TENS.get(w) or (1 if w == "one" else 0)
    return value


def _scale(word: str | None) -> float:
    return _SCALES.get((word or "").lower(), 1.0)


def _round_letter(m: re.Match[str]) -> str | None:
    for group in ("round_l", "round_cjk_l", "round_ja_l"):
        if m.group(group):
            return m.group(group).lower()
    if m.group("round_ar_l"):
        return _ARABIC_ROUND.get(m.group("round_ar_l"))
    return None


def _from_match(m: re.Match[str], written: str) -> Figure | None:
    """The figure ``m`` found; ``m`` may have run on a lower-cased copy of ``written`` (the same
    offsets), so the figure's text, and whatever else depends on case, is read from ``written``."""
    text = written[m.start() : m.end()].strip()
    if (m.lastindex or 0) < _TAIL_GROUPS:  # one of the money, percent, date or round alternatives
        return _early_figure(m, written, text)
    if m.group("scaled_num"):
        return Figure("number", _number(m.group("scaled_num")) * _scale(m.group("scaled")), "", text)
    if m.group("year"):
        return Figure("year", float(m.group("year")), "", text)
    if m.group("count_num"):
        rest = written[m.start("count_rest") : m.end("count_rest")].strip()
        if not _counts(written, m.start("count_num"), m.group("count_num"), rest):
            return None
        unit = terms("employees" if rest[:1] in _PEOPLE_COUNTERS else rest)
        return Figure("count", _number(m.group("count_num")), unit[0] if unit else rest, text)
    return None


# CJK counters for people ("350名", "约350人"): counts of the same thing, as "employees" is.
_PEOPLE_COUNTERS = frozenset("名人位")
# The groups of the last three alternatives (a scaled number, a year, a count: most figures in prose)
# come after all others: a match whose last group is one of them is one of those alternatives.
_TAIL_GROUPS = _FIGURE.groupindex["scaled_num"]


def _early_figure(m: re.Match[str], written: str, text: str) -> Figure | None:
    if m.group("money_pre"):
        currency = _PREFIX_CURRENCY.get(m.group("money_pre").lower(), "")
        if m.group("mp_suffix"):
            currency = _SUFFIX_CURRENCY.get(m.group("mp_suffix").lower(), currency)
        return Figure("money", _number(m.group("mp_num")) * _scale(m.group("mp_scale")), currency, text)
    if m.group("money_num"):
        currency = _SUFFIX_CURRENCY.get(m.group("money_suf").lower(), "")
        return Figure("money", _number(m.group("money_num")) * _scale(m.group("ms_scale")), currency, text)
    if m.group("pct_num"):
        return Figure("percent", _number(m.group("pct_num")), "", text)
    if m.group("date_iso"):
        return Figure("date", (int(m.group("date_iso")), int(m.group("iso_m")), int(m.group("iso_d"))), "", text)
    if m.group("dmy_y"):
        month = _MONTHS[m.group("dmy_m").lower().rstrip(".")]
        return Figure("date", (int(m.group("dmy_y")), month, int(m.group("dmy_d"))), "", text)
    if m.group("mdy_y"):
        month = _MONTHS[m.group("mdy_m").lower().rstrip(".")]
        return Figure("date", (int(m.group("mdy_y")), month, int(m.group("mdy_d"))), "", text)
    if m.group("my_y"):
        word = m.group("my_m").lower().rstrip(".")
        if word in ("may", "mar") and written[m.start("my_m")].islower():
            return Figure("year", float(m.group("my_y")), "", m.group("my_y"))  # "may 2021" is a verb
        return Figure("date", (int(m.group("my_y")), _MONTHS[word], 0), "", text)
    if m.group("cjk_y"):
        if m.group("cjk_m"):
            day = int(m.group("cjk_d") or 0)
            return Figure("date", (int(m.group("cjk_y")), int(m.group("cjk_m")), day), "", text)
        return Figure("year", float(m.group("cjk_y")), "", text)
    letter = _round_letter(m)
    if letter is not None:
        return Figure("round", letter, "", text)
    return None


# Words that follow a number without being what it counts ("Python 3.11 and Java", "see Figure 3
# for details", "hit by COVID-19 like everyone"): the number is a version, a label or part of a name.
_NOT_COUNTED = frozenset(
    str.split(
        """
    and or but nor so yet for of in on at by with from as than like into onto via per since until
    after before about the a an this that these those it its is was are were be been has have had
    will would can could may might must should today tomorrow yesterday now then also only just
    """
    )
)
_WORD_BEFORE = re.compile(r"([A-Z][\w.+-]*)[ \t]+\Z")  # the word right before a number, capitalised
_OPENING = ".!?:;(\"“‘'\n"  # after these (or at the start) a capitalised word opens a sentence or clause


def _counts(written: str, start: int, number: str, counted: str) -> bool:
    """Whether a number followed by a word counts that word: a whole number (a decimal before a
    word is a version, "1.0 brings"), not glued to a name or a fraction ("COVID-19", "24/7"), not
    a label's number ("Figure 3", "ISO 27001"), not zero-led ("0100", a phone number), and the
    next word a noun-like word, not "and" or "for"."""
    if counted.lower() in _NOT_COUNTED:
        return False
    if number[:1].isdigit() and number[0] == "0" and len(number) > 1 and "." not in number:
        return False
    if number[:1].isdigit() and "." in number and counted.lower() not in SCALED_UNITS:
        return False  # but "1.2 GW" is a quantity
    before = written[start - 1] if start > 0 else ""
    if before == "/" or (before == "-" and start > 1 and written[start - 2].isalpha()):
        return False
    label = _WORD_BEFORE.search(written, max(0, start - 40), start)
    if label is None:
        return True
    j = label.start() - 1
    while j >= 0 and written[j] in " \t":
        j -= 1
    return j < 0 or written[j] in _OPENING  # "Over 300 customers" opens a sentence: a count


# A run of digits, commas and points far longer than any amount ("1,000,000,000,000.00" is 20).
# The figure pattern tries each of its alternatives from every digit of a run and reads the run to
# its end each time, so a page or answer with a 10,000-digit run took 17 s; no figure is read there.
_NUMERAL_RUN = re.compile(r"[\d.,]{48,}")


def _blank_numeral_runs(text: str) -> str:
    """``text`` with overlong numeral runs replaced by "_" (a word character that is neither a letter
    nor a digit, so nothing around them reads differently), keeping every offset."""
    return _NUMERAL_RUN.sub(lambda m: "_" * len(m.group()), text)


# Scripts and signs the figure pattern reads beyond ASCII: CJK and kana (numerals, scales, 年月日),
# Arabic (scales, currencies, ٪), full-width forms and currency signs.
_FIGURE_SCRIPTS = re.compile(r"[\u0600-\u06ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef€£¥₹]")


_BEYOND_ASCII = re.compile(r"[^\x00-\x7f]")
_STAND_INS: dict[str, str] = {}


def _stand_in(m: re.Match[str]) -> str:
    """What a character beyond ASCII becomes in the ASCII scan: a letter or mark "x" (a word
    character, as it was), "’" the apostrophe (both continue a counted word), any other
    punctuation, symbol or space "#" or " " (neither starts, continues nor joins a figure)."""
    ch = m.group()
    found = _STAND_INS.get(ch)
    if found is None:
        category = unicodedata.category(ch)
        if ch == "’":
            found = "'"
        elif category[0] in "LM":
            found = "x"
        elif category[0] == "Z":
            found = " "
        else:
            found = "#"
        _STAND_INS[ch] = found
    return found


def _ascii_stand_in(text: str) -> str | None:
    """``text`` with every character beyond ASCII replaced by one that reads the same to the figure
    pattern (``_StandIn``), one for one so offsets hold; None when the text holds a script or sign
    the pattern reads (CJK, Arabic, €, £, …) or a digit beyond ASCII."""
    if _FIGURE_SCRIPTS.search(text):
        return None
    if any(unicodedata.category(ch)[0] == "N" for ch in set(text) if ch >= "\x80"):
        return None
    return _BEYOND_ASCII.sub(_stand_in, text)


@lru_cache(maxsize=8192)
def figures(text: str) -> tuple[Figure, ...]:
    """Every figure in ``text``, in order (offsets refer to ``normalise_text(text)``)."""
    norm = normalise_text(text)
    out: list[Figure] = []
    scan = _blank_numeral_runs(norm)
    if not scan.isascii():  # most text beyond ASCII is ASCII but for a dash, a quote or an accent
        scan = _ascii_stand_in(scan) or scan
    found = _scan_ascii(scan.lower()) if scan.isascii() else _FIGURE.finditer(scan)
    for m in found:
        glued = m.start() > 0 and norm[m.start() - 1].isalnum() and norm[m.start()] not in "$€£¥₹"
        if glued and not _cjk_boundary(norm, m.start()):
            continue  # inside a word or a longer number ("v2019", "A380")
        fig = _from_match(m, norm)
        if fig is not None:
            out.append(Figure(fig.kind, fig.value, fig.unit, fig.text, m.start(), m.end()))
    if " of" in norm:  # "a quarter of its staff" is 25% (and "two thirds" no count of thirds)
        words = [Figure("percent", v, "", t, a, b) for v, t, a, b in shares(norm)]
        kept = [f for f in out if not any(w.start < f.end and f.start < w.end for w in words)]
        out = sorted(kept + words, key=lambda f: f.start) if words else out
    return _ranges(norm, out) if any(ch in norm for ch in "-–—") or " to " in norm else tuple(out)


# "USD 84–88M", "$84-88 million", "30–40%": the scale, currency or percent sign written once
# belongs to both ends. Read alone, the first end would be "USD 84" and a range would be taken
# for a contradiction with a source that gives "USD 84M".
_RANGE_JOIN = re.compile(r"\s*(?:-|–|—|to)\s*", re.I)
_RANGE_START = re.compile(rf"(?<![\w.,])(?P<num>{_DIGITS})\s*(?:-|–|—|to)\s*\Z", re.I)
_LEADING_NUM = re.compile(_DIGITS)


def _ranges(norm: str, found: list[Figure]) -> tuple[Figure, ...]:
    out = list(found)
    i = 0
    while i < len(out):
        b = out[i]
        a = out[i - 1] if i else None
        joined = a is not None and _RANGE_JOIN.fullmatch(norm, a.end, b.start) is not None
        if joined and a is not None and a.kind == "money" and b.kind in ("money", "number"):
            lead_a, lead_b = _LEADING_NUM.search(a.text), _LEADING_NUM.search(b.text)
            if lead_a and lead_b:
                bare_a = _number(lead_a.group()) == amount(a)  # "USD 84": no scale of its own
                scale = amount(b) / _number(lead_b.group()) if _number(lead_b.group()) else 1.0
                if bare_a and scale > 1:
                    out[i - 1] = a._replace(value=amount(a) * scale)
                if b.kind == "number":
                    out[i] = b._replace(kind="money", unit=a.unit)
        elif a is not None and a.kind == "count" and a.text.lower().endswith(" to") and b.kind == "percent":
            # "30 to 40 percent" was read as a count of "to"
            out[i - 1] = Figure("percent", amount(a), "", a.text[:-3].rstrip(), a.start, a.start + len(a.text) - 3)
        elif b.kind == "percent" and not (a is not None and a.kind == "percent" and joined):
            m = _RANGE_START.search(norm, a.end if a is not None else 0, b.start)
            if m is not None and not (a is not None and a.end > m.start()):
                out.insert(
                    i, Figure("percent", _number(m.group("num")), "", m.group("num"), m.start("num"), m.end("num"))
                )
                i += 1
        i += 1
    return tuple(out)


def _cjk_boundary(text: str, i: int) -> bool:
    """CJK text glues figures to words (``完成1.25亿美元``): a figure may start right after a CJK character."""
    return not text[i - 1].isascii() and not text[i - 1].isdigit()


@lru_cache(maxsize=8192)
def plain_numbers(text: str) -> frozenset[float]:
    """Every number written in ``text`` (after digit normalisation), for counts matched against
    facts and tables that give a bare value (``employees: 350``)."""
    return frozenset(_number(n) for n in _PLAIN_NUMBER.findall(normalise_text(text)))


def _close(a: float, b: float) -> bool:
    """Within 0.5% of the larger (the rounding a writer applies to a figure)."""
    x, y = abs(a), abs(b)
    return abs(a - b) <= 0.005 * max(x if x > y else y, 1e-9)


def scaled(f: Figure) -> tuple[str, float] | None:
    """A count in a scaled unit as (base unit, value in it): "640 MW" → ("W", 6.4e8); None otherwise."""
    found = SCALED_UNITS.get(f.unit) if f.kind == "count" else None
    return (found[0], amount(f) * found[1]) if found else None


def matches(claim: Figure, other: Figure) -> bool:
    """Whether ``other`` (from the evidence) states the claim figure."""
    kind = claim.kind
    if kind in ("money", "number"):
        if other.kind not in ("money", "number"):
            return False
        if claim.unit and other.unit and claim.unit != other.unit:
            return False
        return _close(amount(claim), amount(other))
    if kind == "year":
        return other.kind in ("year", "date") and date_of(other)[0] == int(amount(claim))
    if kind == "date":
        if other.kind != "date":
            return False
        cy, cm, cd = date_of(claim)
        oy, om, od = date_of(other)
        return cy == oy and cm == om and (cd == 0 or cd == od)
    if kind == "count":
        if other.kind not in ("count", "number"):
            return False
        mine, theirs = scaled(claim), scaled(other)
        if mine and theirs:
            return mine[0] == theirs[0] and _close(mine[1], theirs[1])
        if mine and other.kind == "count" and other.unit:
            return False  # "640 GW" is not stated by "640 homes"
        return _close(amount(claim), amount(other))
    return other.kind == kind and other.value == claim.value


def less_precise(claim: Figure, other: Figure) -> bool:
    """Whether ``other`` is the claim's date given less precisely ("March 2025" or "2025" for
    "31 March 2025"): it does not state the claim's date, but it does not contradict it either."""
    if claim.kind not in ("year", "date") or other.kind not in ("year", "date"):
        return False
    said, stated = date_of(claim), date_of(other)
    return said != stated and all(s == 0 or s == c for c, s in zip(said, stated, strict=True))


def same_quantity(claim: Figure, other: Figure) -> bool:
    """Whether ``other`` measures what the claim figure measures (so a different value contradicts it)."""
    if claim.kind in ("money", "number"):
        return other.kind == "money" or (other.kind == "number" and claim.kind == "number")
    if claim.kind in ("year", "date"):
        return other.kind in ("year", "date")
    if claim.kind == "count":
        mine, theirs = scaled(claim), scaled(other)
        if mine and theirs:
            return mine[0] == theirs[0]  # 640 GW against 640 MW: the same quantity, another value
        return other.kind == "count" and bool(claim.unit) and claim.unit == other.unit
    return other.kind == claim.kind


def found_in(
    claim: Figure,
    evidence: tuple[Figure, ...],
    numbers: frozenset[float] = frozenset(),
    years: frozenset[int] | set[int] = frozenset(),
) -> bool:
    """Whether the evidence states the claim figure (a count also by a bare number, as facts give it,
    unless that number is one of ``years``, the years the source states)."""
    for f in evidence:
        if matches(claim, f):
            return True
    if claim.kind == "count" and scaled(claim) is None:  # a bare 640 says nothing of 640 GW
        value = amount(claim)
        # a year is a bare number too: neither 2,002 nor 2,012 employees is "stated" by the year 2012
        for n in numbers:
            if _close(value, n) and n not in years:
                return True
    return False
