"""Learned namesakes: organisation names read from the titles of sites the subject is not.

Three places teach sourcedesk a namesake without the analyst typing it — the memo's results
read cold (``core.sources.cold_namesakes``, origin ``found``), and:

- a host the entity pin removed whose registrable domain contains the subject's name —
  the substring impostors Exa's domain filter lets through (``alcresta.com`` for
  Cresta, ``gnats.io`` for NATS): its page titles name the impostor ("Alcresta
  Therapeutics");
- a domain the analyst rejected: the organisations its page titles name
  ("Kestra Medical Technologies reports fiscal 2025 results" → "Kestra Medical
  Technologies").

Only a name that contains the subject's name — as a word ("NATS Holdings") or inside
one ("CodeCresta") — is learned: a namesake shares or resembles the name. That rule
also keeps a publication's own name out ("… | The Guardian"), and the subject's own
names and aliases are never learned. The analyst sees learned names marked as such
and can remove one; a removed name is not learned again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.models import RemovedSource, SourceSet
from sourcedesk.core.net.hosts import host_matches_any, registrable_domain
from sourcedesk.core.net.urls import host_of
from sourcedesk.core.sources.about import NamesakeRef
from sourcedesk.core.sources.name_rejects import is_name_rule
from sourcedesk.core.text.phrases import normalise_phrase, word_list

Origin = Literal["pin", "reject", "found"]
MAX_WORDS = 5

# Title separators: "Org | tagline", "Org – tagline", "Org: tagline", "Page · Org".
_SEGMENT_RE = re.compile(r"\s+[|–—·•]\s+|\s+-\s+|:\s+|\s+::\s+")
_TOKEN_RE = re.compile(r"\S+")
_EDGE_PUNCT = "\"'“”‘’()[]{},.;!?«»"
# Words that start or end a title segment without being part of the organisation's name.
_NOT_NAME = frozenset(
    word_list(
        """
    about home welcome to the news blog careers career jobs leadership team investors investor press media
    contact contacts official site homepage docs documentation annual report reports accounts results review
    overview products product pricing customers customer stories story our us login sign in
        """
    )
)
_CONNECTORS = frozenset({"&", "and", "of", "de", "du", "la", "le", "y", "e", "für"})
_TLD_RE = re.compile(r"\.(?:[a-z]{2,6})(?:\.[a-z]{2})?$", re.IGNORECASE)


class LearnedNamesake(BaseModel):
    """One learned namesake as stored in the memo store."""

    name: str
    origin: Origin
    host: str  # the host it was read from
    title: str = ""  # the page title it was read from
    own_site: bool = False  # the host is the namesake's own site (its domain has the subject's name)
    added_at: str = Field(default_factory=lambda: clock.now().isoformat(timespec="seconds"))
    removed: bool = False  # the analyst removed it: never learned again

    def ref(self) -> NamesakeRef:
        return NamesakeRef(self.name, learned=True, host=self.host if self.own_site else None)

    @property
    def where(self) -> str:
        why = {
            "pin": "removed by the entity pin",
            "reject": "rejected domain",
            "found": "its site, in the memo's results" if self.own_site else "seen in the memo's results",
        }[self.origin]
        return f"{self.host} ({why})"


@runtime_checkable
class NamesakeStore(Protocol):
    """What learning needs from a memo store."""

    def learned_namesakes(self, *, include_removed: bool = False) -> list[LearnedNamesake]: ...

    def add_learned_namesakes(self, items: Sequence[LearnedNamesake]) -> int: ...


def _squash(text: str) -> str:
    return "".join(normalise_phrase(text).split())


def _is_capitalised(token: str) -> bool:
    first = token.lstrip(_EDGE_PUNCT)[:1]
    return bool(first) and (first.isupper() or first.isdigit())


def _runs(segment: str) -> list[list[str]]:
    """Runs of capitalised words (connectors allowed inside): candidate organisation names."""
    runs: list[list[str]] = []
    current: list[str] = []
    for token in _TOKEN_RE.findall(segment):
        bare = token.strip(_EDGE_PUNCT)
        if bare and _is_capitalised(bare):
            current.append(bare)
            if token != token.rstrip(",.;!?"):  # "Kestra Medical, the maker" ends the name
                runs.append(current)
                current = []
        elif current and bare.lower() in _CONNECTORS:
            current.append(bare)
        else:
            if current:
                runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def _trim(run: list[str]) -> list[str]:
    words = [_TLD_RE.sub("", w) if "." in w else w for w in run]
    words = [w.rstrip("'’s") if w.endswith(("'s", "’s")) else w for w in words]
    while words and (words[0].lower() in _NOT_NAME or words[0].lower() in _CONNECTORS):
        words = words[1:]
    while words and (words[-1].lower() in _NOT_NAME or words[-1].lower() in _CONNECTORS or words[-1].isdigit()):
        words = words[:-1]
    return [w for w in words if w]


def names_in_title(title: str, subject_names: Sequence[str]) -> list[str]:
    """Organisation names in a page title that contain the subject's name (as a word or
    inside one) and are not one of the subject's own names. "GNATS.io — hosted issue
    tracking" → ["GNATS"]; "About NATS | UK air traffic control" → [] (that is the
    subject's name itself)."""
    own = {normalise_phrase(n) for n in subject_names if normalise_phrase(n)}
    keys = {_squash(n) for n in subject_names[:1] if _squash(n)}
    found: list[str] = []
    for segment in _SEGMENT_RE.split(" ".join(title.split())):
        for run in _runs(segment):
            words = _trim(run)
            if not words or len(words) > MAX_WORDS:
                continue
            name = " ".join(words)
            norm = normalise_phrase(name)
            if not norm or norm in own or not any(k in "".join(norm.split()) for k in keys):
                continue
            if name not in found:
                found.append(name)
    return found


def _subject_names(subject_name: str, aliases: Sequence[str]) -> list[str]:
    return [subject_name, *aliases]


def is_impostor_host(host: str, subject_name: str) -> bool:
    """A host whose registrable domain contains the subject's name (``alcresta.com`` for Cresta)."""
    domain = registrable_domain(host) or host
    key = _squash(subject_name)
    return bool(key) and key in "".join(ch for ch in domain.lower() if ch.isalnum())


@dataclass(frozen=True)
class TitleSeen:
    """A page title and where it was seen."""

    url: str
    title: str


def learn(
    seen: Iterable[TitleSeen],
    *,
    origin: Origin,
    subject_name: str,
    aliases: Sequence[str] = (),
    subject_hosts: Sequence[str] = (),
    declared: Iterable[str] = (),
) -> list[LearnedNamesake]:
    """Namesakes read from titles. For ``origin="pin"`` only impostor hosts count; names
    memo.yaml already ``declared`` are not learned twice."""
    names = _subject_names(subject_name, aliases)
    skip = {normalise_phrase(d) for d in declared}
    out: dict[str, LearnedNamesake] = {}
    for item in seen:
        host = host_of(item.url) or ""
        if not host or host_matches_any(item.url, list(subject_hosts)):
            continue
        impostor = is_impostor_host(host, subject_name)
        if origin == "pin" and not impostor:
            continue
        for name in names_in_title(item.title, names):
            key = normalise_phrase(name)
            if key not in out and key not in skip:
                out[key] = LearnedNamesake(name=name, origin=origin, host=host, title=item.title, own_site=impostor)
    return list(out.values())


def learn_from_set(
    source_set: SourceSet,
    *,
    subject_name: str,
    aliases: Sequence[str] = (),
    subject_hosts: Sequence[str] = (),
    declared: Sequence[str] = (),
) -> list[LearnedNamesake]:
    """What a retrieval teaches: the pin's impostors and results removed as rejected domains."""
    pinned = [TitleSeen(r.url, r.title) for r in source_set.namesakes if r.title]
    rejected = [TitleSeen(r.url, r.title) for r in source_set.excluded if _rejected_domain(r) and r.title]
    found = learn(
        pinned, origin="pin", subject_name=subject_name, aliases=aliases, subject_hosts=subject_hosts, declared=declared
    )
    taken = [*declared, *(n.name for n in found)]
    return found + learn(
        rejected,
        origin="reject",
        subject_name=subject_name,
        aliases=aliases,
        subject_hosts=subject_hosts,
        declared=taken,
    )


def _rejected_domain(removed: RemovedSource) -> bool:
    return removed.reason == "rejected" and not is_name_rule(removed.rule)


def remember(store: NamesakeStore, learned: Sequence[LearnedNamesake]) -> int:
    """Store what is new (a name the analyst removed stays removed); returns how many were added."""
    if not learned:
        return 0
    known = {normalise_phrase(n.name) for n in store.learned_namesakes(include_removed=True)}
    fresh = [n for n in learned if normalise_phrase(n.name) not in known]
    return store.add_learned_namesakes(fresh) if fresh else 0


__all__ = [
    "LearnedNamesake",
    "NamesakeStore",
    "TitleSeen",
    "is_impostor_host",
    "learn",
    "learn_from_set",
    "names_in_title",
    "remember",
]
