"""Which of a set's sources the analyst's current rejections remove, and by which rule.

Rejected domains and rejected names are enforced on every source set — freshly
retrieved, reused from the store, or curated after a reject — so a set never carries a
source a rejection covers. Local files (``file:`` URLs) are the analyst's own notes:
no domain or name reject removes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sourcedesk.core.domain.models import RemovedSource, Source
from sourcedesk.core.sources.exclusions import ExclusionList
from sourcedesk.core.sources.exclusions import assemble as assemble_domains
from sourcedesk.core.sources.name_rejects import NameRejectList
from sourcedesk.core.sources.name_rejects import assemble as assemble_names


@dataclass
class Rejections:
    domains: ExclusionList
    names: NameRejectList

    def __bool__(self) -> bool:
        return bool(self.domains) or bool(self.names)

    @classmethod
    def of(
        cls,
        *,
        memo_domains: Iterable[str] = (),
        global_domains: Iterable[str] = (),
        memo_names: Iterable[str] = (),
        global_names: Iterable[str] = (),
    ) -> Rejections:
        return cls(
            assemble_domains(memo_rejects=memo_domains, global_rejects=global_domains),
            assemble_names(memo_names=memo_names, global_names=global_names),
        )

    def removal(self, source: Source) -> RemovedSource | None:
        """The record of this source's removal, or None when no rejection covers it."""
        if not source.url.lower().startswith(("http://", "https://")):
            return None
        hit = self.domains.match(source.url)
        if hit is not None:
            return RemovedSource(url=source.url, host=source.host, title=source.title, reason="rejected", rule=hit.rule)
        named = self.names.match(source)
        if named is not None:
            return RemovedSource(
                url=source.url, host=source.host, title=source.title, reason="rejected", rule=named.rule
            )
        return None

    def covered(self, sources: Sequence[Source]) -> list[tuple[Source, RemovedSource]]:
        out: list[tuple[Source, RemovedSource]] = []
        for source in sources:
            removal = self.removal(source)
            if removal is not None:
                out.append((source, removal))
        return out


__all__ = ["Rejections"]
