"""The exclusion list for one include-sources entry, with where each entry came from.

Exclusions come from four places — the memo's rejected domains, the global
rejected domains, the entry's own ``exclude-domains`` and (for ``pin: none``)
the aggregator list. Keeping the origin beside each domain is what lets the UI
say *why* a result was removed ("github.com — aggregator", "careers.cresta.com —
rejected in this memo") instead of just that it was.

The list is unlimited. Exa takes at most 1200 entries, so ``api_domains`` picks
which ones are sent (aggregators first: they are the ones a wide search hits
most); every entry, sent or not, is enforced on the results by ``match``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from sourcedesk.core.net.hosts import excluded_by
from sourcedesk.core.net.urls import host_of, strip_www

Origin = Literal["aggregator", "entry", "memo", "global"]
# Order in which entries claim Exa's 1200 excludeDomains slots.
API_PRIORITY: tuple[Origin, ...] = ("aggregator", "entry", "memo", "global")
ORIGIN_WORDS = {
    "aggregator": "aggregator",
    "entry": "excluded by the entry",
    "memo": "rejected in this memo",
    "global": "rejected globally",
}


def canonical_domain(domain: str | None) -> str | None:
    """``"https://WWW.Cresta.com/jobs"`` → ``"cresta.com"``; ``"*.foo.com"`` → ``"foo.com"``;
    None when there is no host in it."""
    if not isinstance(domain, str):
        return None
    text = domain.strip()
    if text.startswith("*."):
        text = text[2:]
    host = host_of(text.lstrip("."))
    return strip_www(host) if host else None


@dataclass(frozen=True)
class Exclusion:
    domain: str
    origin: Origin

    @property
    def rule(self) -> str:
        """How a removal names its cause: ``"<origin>:<domain>"`` (e.g. ``aggregator:github.com``)."""
        return f"{self.origin}:{self.domain}"

    @property
    def reason(self) -> str:
        """The ``RemovedSource.reason`` for a result this exclusion removes."""
        if self.origin == "aggregator":
            return "aggregator"
        if self.origin in ("memo", "global"):
            return "rejected"
        return "excluded"


@dataclass
class ExclusionList:
    """Deduplicated exclusions; a domain listed twice keeps its highest-priority origin."""

    items: list[Exclusion] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_domain = {e.domain: e for e in self.items}

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def domains(self) -> list[str]:
        return [e.domain for e in self.items]

    def match(self, host_or_url: str | None) -> Exclusion | None:
        """The exclusion that removes this host (the host or a parent domain is listed).

        Looks up the host's parent chain in a dict (the list may hold thousands of
        entries) and lets ``sourcedesk.core.net.hosts.excluded_by`` have the final word on the hit."""
        host = host_of(host_or_url) if host_or_url else None
        if not host:
            return None
        labels = host.split(".")
        for i in range(len(labels)):
            candidate = self._by_domain.get(".".join(labels[i:]))
            if candidate and excluded_by(host, [candidate.domain]):
                return candidate
        return None

    def api_domains(self, limit: int = 1200) -> list[str]:
        """The entries to send as ``excludeDomains`` (priority order, at most ``limit``)."""
        return self.domains()[:limit]

    def canonical(self) -> list[list[str]]:
        """Sorted ``[domain, origin]`` pairs: what a fingerprint covers."""
        return sorted([e.domain, e.origin] for e in self.items)


def assemble(
    *,
    memo_rejects: Iterable[str] = (),
    global_rejects: Iterable[str] = (),
    entry_excludes: Iterable[str] = (),
    aggregators: Iterable[str] = (),
) -> ExclusionList:
    """One list in API priority order; unusable entries (no host in them) are dropped."""
    sources: dict[Origin, Iterable[str]] = {
        "aggregator": aggregators,
        "entry": entry_excludes,
        "memo": memo_rejects,
        "global": global_rejects,
    }
    seen: set[str] = set()
    items: list[Exclusion] = []
    for origin in API_PRIORITY:
        for raw in sources[origin]:
            domain = canonical_domain(raw)
            if domain and domain not in seen:
                seen.add(domain)
                items.append(Exclusion(domain, origin))
    return ExclusionList(items)
