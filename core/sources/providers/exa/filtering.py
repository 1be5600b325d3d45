"""Exa's results checked one by one: the pin, every exclusion, rejected names, the date window.

Whatever was or was not sent to Exa, every rule is enforced here on every result, in
rank order, until the entry has its ``num-results``: a host outside the pinned ones is
a namesake (Exa's ``includeDomains`` matches substrings), an excluded or rejected one
is recorded with the rule that removed it. What survives becomes a provider-neutral
``Source`` (schema summaries split into prose and facts, entity records merged in,
placeholders such as "null" stripped).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sourcedesk.core.domain.models import RemovedSource, RunWarning, Source
from sourcedesk.core.memo.spec import ExaEntry
from sourcedesk.core.net.hosts import host_matches_any
from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.sources.facts import clean_facts, entity_facts, merge_facts, parse_summary
from sourcedesk.core.sources.name_rejects import is_name_rule, name_of_rule
from sourcedesk.core.sources.providers.base import ProviderContext
from sourcedesk.core.sources.providers.exa.plan import ExaPlan
from sourcedesk.core.sources.providers.exa.response import ExaResult

SHOWN_IN_WARNING = 6  # hosts listed in a namesake/exclusion warning before "and N more"


def _in_window(published: str | None, window: tuple[str | None, str | None]) -> bool:
    if not published:
        return True
    day = published.strip()[:10]
    start, end = (w.strip()[:10] if w else None for w in window)
    return not ((start and day < start) or (end and day > end))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def to_source(r: ExaResult, *, rank: int, entry: ExaEntry, index: int, query: str, wants_text: bool) -> Source:
    """An Exa result as a provider-neutral Source: schema summaries split into prose and
    facts, entity records merged in, placeholders ("null", "N/A") stripped."""
    prose, summary_facts = parse_summary(r.summary)
    facts = clean_facts(merge_facts(summary_facts, entity_facts(r.entities)))
    return Source(
        provider="exa",
        url=r.url,
        title=_one_line(r.title or ""),
        published_date=r.published_date,
        author=r.author,
        summary=prose,
        facts=facts if isinstance(facts, dict) else {},
        text=(r.text or "") if wants_text else "",
        highlights=[_one_line(h) for h in r.highlights if h.strip()],
        score=r.score,
        rank=rank,
        entry=index,
        query=query,
        full_text=entry.full_text,
    )


@dataclass
class Filtered:
    kept: list[Source] = field(default_factory=list)
    namesakes: list[RemovedSource] = field(default_factory=list)
    excluded: list[RemovedSource] = field(default_factory=list)
    scanned: int = 0

    @property
    def removed(self) -> int:
        return len(self.namesakes) + len(self.excluded)


def filter_results(results: list[ExaResult], plan: ExaPlan, ctx: ProviderContext) -> Filtered:
    """Apply the pin and every exclusion to the results, in rank order, until the entry is full."""
    out = Filtered()
    want = plan.entry.num_results
    seen: set[str] = set()
    window = plan.client_dates
    wants_text = plan.contents.get("text") is not None
    for rank, r in enumerate(results):
        if len(out.kept) >= want:
            break
        out.scanned += 1
        key = normalise_url(r.url)
        if key in seen:
            continue
        seen.add(key)
        host = host_of(r.url) or ""
        title = _one_line(r.title or "")
        if plan.pinned and not host_matches_any(r.url, plan.pins):
            out.namesakes.append(
                RemovedSource(url=r.url, host=host, title=title, reason="namesake", rule=", ".join(plan.pins))
            )
            continue
        hit = plan.exclusions.match(r.url)
        if hit is not None:
            out.excluded.append(RemovedSource(url=r.url, host=host, title=title, reason=hit.reason, rule=hit.rule))
            continue
        named = plan.names.match(r)
        if named is not None:
            out.excluded.append(RemovedSource(url=r.url, host=host, title=title, reason="rejected", rule=named.rule))
            continue
        if window is not None and not _in_window(r.published_date, window):
            rule = f"date:{window[0] or ''}..{window[1] or ''}"
            out.excluded.append(RemovedSource(url=r.url, host=host, title=title, reason="excluded", rule=rule))
            continue
        out.kept.append(
            to_source(r, rank=rank, entry=plan.entry, index=ctx.entry_index, query=plan.query, wants_text=wants_text)
        )
    return out


def _hosts(removed: list[RemovedSource]) -> str:
    hosts = list(dict.fromkeys(r.host for r in removed))
    shown = ", ".join(hosts[:SHOWN_IN_WARNING])
    return shown + (f" and {len(hosts) - SHOWN_IN_WARNING} more" if len(hosts) > SHOWN_IN_WARNING else "")


def removal_warnings(filtered: Filtered, plan: ExaPlan, index: int) -> list[RunWarning]:
    """What the checks removed (namesakes outside the pin, exclusions, rejected names), and a short entry."""
    warnings: list[RunWarning] = []
    if filtered.namesakes:
        warnings.append(
            RunWarning(
                code="namesakes_removed",
                message=f"removed {len(filtered.namesakes)} result(s) outside the pinned "
                f"host(s) {', '.join(plan.pins)}: {_hosts(filtered.namesakes)}",
                entry=index,
            )
        )
    by_domain = [r for r in filtered.excluded if not is_name_rule(r.rule)]
    by_name = [r for r in filtered.excluded if is_name_rule(r.rule)]
    if by_domain:
        warnings.append(
            RunWarning(
                code="excluded",
                message=f"removed {len(by_domain)} result(s) by exclusions: {_hosts(by_domain)}",
                entry=index,
            )
        )
    if by_name:
        names = ", ".join(f"'{n}'" for n in dict.fromkeys(name_of_rule(r.rule) for r in by_name))
        warnings.append(
            RunWarning(
                code="excluded",
                message=f"removed {len(by_name)} result(s) naming a rejected name ({names}): {_hosts(by_name)}",
                entry=index,
            )
        )
    want = plan.entry.num_results
    if len(filtered.kept) < want:
        why = f" after removing {filtered.removed}" if filtered.removed else ""
        warnings.append(
            RunWarning(
                code="short",
                message=f"asked for {want} result(s), got {len(filtered.kept)}{why} (query: {plan.query!r})",
                entry=index,
            )
        )
    return warnings
