"""Dates in citations: parse what sources and writers write, print the house forms.

A date is kept at the precision it was given (year, year-month, or full day) so
that a writer's "2024-03" is not called wrong against a source's 2024-03-05, and
a bare year is never treated as a date (too many titles contain one).
"""

from __future__ import annotations

import re
from typing import NamedTuple

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_MON = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"

_YEAR_DIGITS = re.compile(r"\d{4}")
_ISO = re.compile(r"(?<!\d)(\d{4})[-/](\d{1,2})(?:[-/](\d{1,2}))?(?!\d)")
_YEAR_MON_DAY = re.compile(r"(?<!\d)(\d{4}),?\s+" + _MON + r"(?:\s+(\d{1,2}))?(?!\d)", re.I)
_MON_DAY_YEAR = re.compile(r"\b" + _MON + r"\s+(?:(\d{1,2})(?:st|nd|rd|th)?,?\s+)?(\d{4})(?!\d)", re.I)
_DAY_MON_YEAR = re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s+" + _MON + r",?\s+(\d{4})(?!\d)", re.I)


class PartialDate(NamedTuple):
    year: int
    month: int | None = None
    day: int | None = None

    def iso(self) -> str:
        if self.month is None:
            return f"{self.year:04d}"
        if self.day is None:
            return f"{self.year:04d}-{self.month:02d}"
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"

    def human(self) -> str:
        """House form: ``2024, Mar 05`` (or ``2024, Mar`` / ``2024`` at lower precision)."""
        if self.month is None:
            return f"{self.year:04d}"
        if self.day is None:
            return f"{self.year:04d}, {_MONTH_NAMES[self.month - 1]}"
        return f"{self.year:04d}, {_MONTH_NAMES[self.month - 1]} {self.day:02d}"

    def agrees_with(self, other: PartialDate) -> bool:
        """Equal on every component both dates state."""
        if self.year != other.year:
            return False
        if self.month is None or other.month is None:
            return True
        if self.month != other.month:
            return False
        return self.day is None or other.day is None or self.day == other.day


def _make(year: str, month: int | None, day: str | None) -> PartialDate | None:
    y = int(year)
    d = int(day) if day else None
    if not 1000 <= y <= 2999 or (month is not None and not 1 <= month <= 12):
        return None
    if d is not None and not 1 <= d <= 31:
        return None
    return PartialDate(y, month, d)


def _month(name: str) -> int:
    return _MONTHS.index(name.lower()[:3]) + 1


def parse_date(value: object) -> PartialDate | None:
    """Parse one source-supplied date (``2024-03-05``, ``2023-11-16T01:36:32Z``, ``March 5, 2024``…)."""
    if not isinstance(value, str) or not value.strip():
        return None
    found = find_dates(value)
    if found:
        return found[0]
    m = re.fullmatch(r"\s*(\d{4})\s*", value)
    return PartialDate(int(m.group(1))) if m and 1000 <= int(m.group(1)) <= 2999 else None


def find_dates(text: str) -> list[PartialDate]:
    """Every date written in ``text``, in order of appearance (bare years excluded)."""
    if not _YEAR_DIGITS.search(text):
        return []  # every form below writes its year in four digits
    hits: list[tuple[int, PartialDate]] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match[str], date: PartialDate | None) -> None:
        if date is None or any(s < m.end() and m.start() < e for s, e in taken):
            return
        taken.append((m.start(), m.end()))
        hits.append((m.start(), date))

    for m in _ISO.finditer(text):
        add(m, _make(m.group(1), int(m.group(2)), m.group(3)))
    for m in _YEAR_MON_DAY.finditer(text):
        add(m, _make(m.group(1), _month(m.group(2)), m.group(3)))
    for m in _DAY_MON_YEAR.finditer(text):
        add(m, _make(m.group(3), _month(m.group(2)), m.group(1)))
    for m in _MON_DAY_YEAR.finditer(text):
        add(m, _make(m.group(3), _month(m.group(1)), m.group(2)))
    return [d for _, d in sorted(hits)]
