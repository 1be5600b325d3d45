"""An Exa entry of memo.yaml checked at load: what Exa would refuse is an error with its line, not a 400 at run time.

- a search type Exa no longer takes (``keyword``, ``hybrid``) or never took names the
  closest current one;
- a ``highlights`` option Exa does not know, and a ``max-characters`` over the 10,000
  Exa returns (for ``text`` the schema says so; ``highlights`` is free-form, so here);
- notices, not errors: a category Exa ignores, a retired highlights option (and what
  it is sent as: ``num-sentences`` becomes ``maxCharacters``, never past 10,000).
"""

from __future__ import annotations

from typing import Any

import yaml

from sourcedesk.core.memo.messages import Problem, locate
from sourcedesk.core.memo.spec import ExaEntry
from sourcedesk.core.sources.providers.exa.request import (
    CHARS_PER_SENTENCE,
    HIGHLIGHT_OPTIONS,
    MAX_CONTENT_CHARS,
    RETIRED_FIELDS,
    SEARCH_TYPES,
    category_notice,
    closest_search_type,
    exa_option_name,
)


def entry_problems(entry: ExaEntry, root: yaml.Node | None, base: tuple[Any, ...]) -> list[Problem]:
    """Values in an Exa entry that Exa would answer 400 to (``base``: the entry's place in memo.yaml)."""
    return _search_type_problems(entry, root, base) + _highlight_problems(entry, root, base)


def _search_type_problems(entry: ExaEntry, root: yaml.Node | None, base: tuple[Any, ...]) -> list[Problem]:
    if entry.type is None or entry.type in SEARCH_TYPES:
        return []
    line, shown, _ = locate(root, (*base, "type"))
    close = closest_search_type(entry.type)
    hint = (f"did you mean {close!r}? " if close else "") + f"Exa's search types: {', '.join(SEARCH_TYPES)}"
    return [Problem(line, shown, f"{entry.type!r} is not an Exa search type (Exa would refuse the search)", hint)]


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _highlight_value_problem(name: str | None, value: Any) -> tuple[str, str] | None:
    """What Exa would refuse in one highlights option's value (message, hint), if anything."""
    if name == "maxCharacters":
        if _whole(value) and value > MAX_CONTENT_CHARS:
            return (
                f"{value:,} is over the {MAX_CONTENT_CHARS:,} characters Exa returns for highlights",
                f"use at most max-characters: {MAX_CONTENT_CHARS}",
            )
        if not _whole(value) or value < 1:
            return (
                f"expected a whole number of characters from 1 to {MAX_CONTENT_CHARS:,}, got {value!r}",
                "write a whole number without quotes, e.g. max-characters: 2000",
            )
    if name == "numSentences" and (not _whole(value) or value < 1):
        return (
            f"expected a whole number of sentences, 1 or more, got {value!r}",
            "write a whole number, e.g. num-sentences: 3 (or max-characters: 4000, as Exa asks now)",
        )
    if name == "query" and not isinstance(value, str):
        return f"expected text, got {value!r}", 'quote it, e.g. query: "funding"'
    return None


def _highlight_problems(entry: ExaEntry, root: yaml.Node | None, base: tuple[Any, ...]) -> list[Problem]:
    highlights = entry.contents.highlights
    if not isinstance(highlights, dict):
        return []
    problems: list[Problem] = []
    for key, value in highlights.items():
        name = exa_option_name(key) if isinstance(key, str) else None
        line, shown, _ = locate(root, (*base, "contents", "highlights", key))
        wrong = _highlight_value_problem(name, value)
        if wrong:
            problems.append(Problem(line, shown, *wrong))
        if name in HIGHLIGHT_OPTIONS or name in RETIRED_FIELDS:
            continue
        problems.append(
            Problem(
                line,
                shown,
                f"{key!r} is not an Exa highlights option (Exa would refuse the search)",
                'use query and max-characters, e.g. highlights: {query: "funding", max-characters: 2000}',
            )
        )
    return problems


def entry_notices(entry: ExaEntry, root: yaml.Node | None, base: tuple[Any, ...], shown_file: str) -> list[str]:
    """One line each for what Exa ignores or takes under another name."""
    notices: list[str] = []
    if entry.category:
        note = category_notice(entry.category)
        if note:
            line, where, _ = locate(root, (*base, "category"))
            notices.append(f"{shown_file}:{line}: {where}: {note}")
    highlights = entry.contents.highlights if isinstance(entry.contents.highlights, dict) else {}
    for key in sorted(highlights, key=str):
        name = exa_option_name(key) if isinstance(key, str) else key
        if name not in RETIRED_FIELDS:
            continue
        line, where, _ = locate(root, (*base, "contents", "highlights", key))
        value = highlights[key]
        explicit = any(exa_option_name(k) == "maxCharacters" for k in highlights if isinstance(k, str))
        if name == "numSentences" and explicit:
            instead = "not sent (max-characters is given)"
        elif name == "numSentences" and _whole(value) and value > 0:
            chars = min(value * CHARS_PER_SENTENCE, MAX_CONTENT_CHARS)
            capped = (
                f", capped at Exa's {MAX_CONTENT_CHARS:,}" if value * CHARS_PER_SENTENCE > MAX_CONTENT_CHARS else ""
            )
            instead = f"sent as maxCharacters {chars:,} (about {CHARS_PER_SENTENCE:,} a sentence{capped})"
        else:
            instead = "sent as maxCharacters" if name == "numSentences" else "not sent"
        notices.append(f"{shown_file}:{line}: {where}: {key} is deprecated by Exa; {instead}")
    return notices
