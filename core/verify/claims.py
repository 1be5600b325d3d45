"""What in a cited sentence must be checkable word for word: quotations and statistics.

**Quotations** are text between double quotes — straight ``"…"``, curly ``“…”``
or guillemets ``«…»`` (styles may even be mixed by a writer) — or between curly
single quotes ``‘…’``. Straight single quotes are not read: they are
apostrophes far more often than quotes. A quotation needs at least
``MIN_QUOTE_WORDS`` words; shorter quoted terms (``the "edge"``, ``"Series A"``)
are scare quotes and names, not quotations of a source.

**Statistics** are numbers that carry a claim:

* money — a currency symbol or code before the number (``$1.5B``, ``€20 million``,
  ``USD 41.2M``, ``GBP 118m``);
* percentages — ``%``, ``percent``, ``per cent``, ``percentage point(s)``, ``bps``;
* scaled numbers — ``25 million``, ``1.5B``, ``20k``, ``3bn``;
* multiples — ``10x``;
* counts written with thousands separators — ``9,100``, ``700,000``.

Plain numbers (``44 employees``, ``34 recommendations``), ordinals and years
(``founded in 2017``, ``28 August 2023``) are not extracted: without a unit they
are too often dates, versions or list counts, and a year is only checked as
part of a statistic that contains it (``$2024``-style amounts are money). The
text is kept exactly as written (``$1.5B`` stays ``$1.5B``), apart from markdown
backslash escapes, which are the note's syntax, not its words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_QUOTE_WORDS = 3
MAX_QUOTE_CHARS = 600

QUOTE, STATISTIC = "quote", "statistic"

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_SCALE_WORD = r"(?:thousand|million|billion|trillion)\b"
# A range is one figure: "USD 84–88M" is checked whole, never as "USD 84" and "88M".
_RANGE = rf"(?:\s?[–—-]\s?{_NUM})?"
_CURRENCY = r"(?:(?:US|A|C|NZ|HK|S)?\$|[€£¥₹]|(?:USD|EUR|GBP|JPY|CHF|CAD|AUD|CNY|INR)\s?)"
_STATISTIC = re.compile(
    rf"""
    (?<![\w.,$€£¥₹])
    (?:
        {_CURRENCY}\s?{_NUM}{_RANGE}(?:\s?{_SCALE_WORD}|(?:bn|mn|[MBKmbk])\b)?      # money
      | {_NUM}{_RANGE}\s?(?:%|percent\b|per\s?cent\b|percentage\ points?\b|bps\b|basis\ points\b)  # percentages
      | {_NUM}{_RANGE}(?:\s{_SCALE_WORD}|(?:bn|[MBK]|k)\b)                           # scaled
      | {_NUM}x\b                                                            # multiples
      | \d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?![\d,])                            # 9,100
    )
    """,
    re.X,
)
# Double quotes of every style are first mapped to '"' (same length), then paired in order.
_DOUBLE_QUOTES = str.maketrans(dict.fromkeys("“”„‟«»〝〞＂", '"'))
_DOUBLE = re.compile(r'"([^"]+)"')
_CURLY_SINGLE = re.compile(r"(?<![\w’'])‘([^‘]+?)’(?!\w)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


@dataclass(frozen=True)
class Item:
    """One quotation or statistic, at ``start:end`` of the text it was found in."""

    kind: str  # "quote" | "statistic"
    text: str
    start: int
    end: int


def unescape_markdown(text: str) -> str:
    return _ESCAPE.sub(r"\1", text)


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def find_quotations(prose: str) -> list[Item]:
    """Quotations in ``prose`` with their positions (``start:end`` includes the quote marks)."""
    items: list[Item] = []
    unified = prose.translate(_DOUBLE_QUOTES)
    for pattern in (_DOUBLE, _CURLY_SINGLE):
        for m in pattern.finditer(unified if pattern is _DOUBLE else prose):
            inner = " ".join(unescape_markdown(m.group(1)).split())
            if _words(inner) >= MIN_QUOTE_WORDS and len(inner) <= MAX_QUOTE_CHARS:
                items.append(Item(QUOTE, inner, m.start(), m.end()))
    return sorted(items, key=lambda i: i.start)


def find_statistics(prose: str) -> list[Item]:
    """Statistics in ``prose`` with their positions, as written."""
    return [Item(STATISTIC, " ".join(m.group(0).split()), m.start(), m.end()) for m in _STATISTIC.finditer(prose)]


def find_items(prose: str) -> list[Item]:
    """Quotations and statistics, in order; a statistic inside a quotation is checked as
    part of the quotation, not again on its own."""
    quotes = find_quotations(prose)
    stats = [s for s in find_statistics(prose) if not any(q.start <= s.start and s.end <= q.end for q in quotes)]
    return sorted(quotes + stats, key=lambda i: (i.start, i.kind))
