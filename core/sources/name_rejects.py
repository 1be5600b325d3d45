"""Rejected names: results whose title or text contains a phrase are removed.

A domain reject cannot catch third-party coverage of a namesake (a trade-press story on
Kestra Medical Technologies' IPO lives on a publisher's site), so the analyst can also
reject a *name*. A result is removed when its title or any stored text — summary,
highlights, page text, facts, a writer result's snippet — contains the phrase as whole
words, ignoring case and punctuation (``sourcedesk.core.text.phrases``). The rule is enforced on our side
everywhere: at retrieval, on the frozen sets, on the writer's search results. Exa can
also take one phrase of at most five words as ``excludeText``; ``exclude_text`` picks it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.text.phrases import normalise_phrase, shown_words, words

Origin = Literal["memo", "global"]
EXCLUDE_TEXT_MAX_WORDS = 5  # Exa: one string of up to five words


@dataclass(frozen=True)
class NameReject:
    phrase: str  # as the analyst typed it
    key: str  # normalised
    origin: Origin

    @property
    def rule(self) -> str:
        """How a removal names its cause: ``memo-name:Kestra Medical``."""
        return f"{self.origin}-name:{self.phrase}"


_NAME_HINT = 'give the phrase a namesake is known by, e.g. --name "Kestra Medical"'
MAX_NAME_WORDS = 12
MIN_NAME_CHARS = 3


def canonical_name(text: str) -> tuple[str, str]:
    """``(name as shown, normalised key)``; ``UserError`` for a phrase with no words or so
    short it would match almost everything."""
    shown = shown_words(" ".join((text or "").split()))  # "Kestra&nbsp;Medical" is stored as read
    key = normalise_phrase(shown)
    if not key:
        raise UserError(f"{shown!r} has no words to match" if shown else "an empty name was given", hint=_NAME_HINT)
    if len(key.replace(" ", "")) < MIN_NAME_CHARS:
        raise UserError(f"{shown!r} is too short: it would match almost every page", hint=_NAME_HINT)
    if len(key.split()) > MAX_NAME_WORDS:
        raise UserError(f"{shown!r} has more than {MAX_NAME_WORDS} words", hint=_NAME_HINT)
    return shown, key


def is_name_rule(rule: str) -> bool:
    """Rules of name rejects read ``memo-name:…``/``global-name:…`` (domain rules ``memo:…``)."""
    return rule.split(":", 1)[0].endswith("-name")


def name_of_rule(rule: str) -> str:
    """``memo-name:Kestra Medical`` → ``Kestra Medical``."""
    return rule.split(":", 1)[1] if ":" in rule else rule


def texts_of(item: object) -> list[str]:
    """Everything stored about a source or result that a name could appear in."""

    def get(name: str) -> object:
        return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)

    out: list[str] = []
    for name in ("title", "summary", "snippet", "text"):
        value = get(name)
        if isinstance(value, str) and value:
            out.append(value)
        elif isinstance(value, Mapping):  # an Exa schema summary still as an object
            out += _leaves(value)
    highlights = get("highlights")
    if isinstance(highlights, (list, tuple)):
        out += [h for h in highlights if isinstance(h, str)]
    facts = get("facts")
    if isinstance(facts, Mapping):
        out += _leaves(facts)
    return out


def _leaves(value: object) -> list[str]:
    if isinstance(value, Mapping):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [] if value is None else [str(value)]


@dataclass
class NameRejectList:
    items: list[NameReject] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def match_texts(self, texts: Iterable[str]) -> NameReject | None:
        """The first rejected name any of ``texts`` contains (whole words), or None."""
        if not self.items:
            return None
        joined = " " + " ".join(" ".join(words(t)) for t in texts if t) + " "
        for item in self.items:
            if f" {item.key} " in joined:
                return item
        return None

    def match(self, item: object) -> NameReject | None:
        """For a ``Source``, an Exa result or a writer search result (dict)."""
        return self.match_texts(texts_of(item))

    def exclude_text(self) -> str | None:
        """The first phrase short enough for Exa's ``excludeText`` (one string, ≤5 words)."""
        for item in self.items:
            if len(item.key.split()) <= EXCLUDE_TEXT_MAX_WORDS:
                return item.phrase
        return None

    def canonical(self) -> list[list[str]]:
        """Sorted ``[key, origin]`` pairs (shown in a set's request)."""
        return sorted([i.key, i.origin] for i in self.items)


def assemble(*, memo_names: Iterable[str] = (), global_names: Iterable[str] = ()) -> NameRejectList:
    """Memo names first, then global ones; a phrase listed twice keeps its first origin."""
    seen: set[str] = set()
    items: list[NameReject] = []
    scopes: tuple[tuple[Origin, Iterable[str]], ...] = (("memo", memo_names), ("global", global_names))
    for origin, names in scopes:
        for name in names:
            key = normalise_phrase(name)
            if key and key not in seen:
                seen.add(key)
                items.append(NameReject(" ".join(name.split()), key, origin))
    return NameRejectList(items)


__all__ = [
    "EXCLUDE_TEXT_MAX_WORDS",
    "NameReject",
    "NameRejectList",
    "assemble",
    "canonical_name",
    "is_name_rule",
    "name_of_rule",
    "texts_of",
]
