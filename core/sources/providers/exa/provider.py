"""``provider: exa`` — Exa search with entity pins enforced on the results.

Exa's ``includeDomains`` is a substring match (pinning ``cresta.com`` returns
``alcresta.com``), so the pin is sent as a hint and then **every result is
re-checked** with ``sourcedesk.core.net.hosts.host_matches_pin``; the rest are recorded as
namesakes. Exclusions (rejects, the entry's own, aggregators for ``pin: none``)
are likewise enforced on every result, whatever was or was not sent to Exa:

- ``excludeDomains`` is sent only for unpinned entries, at most 1200 entries, and
  never with ``category: company``/``people`` (Exa answers 400);
- a pinned request never carries ``excludeDomains`` (Exa may refuse include and
  exclude together) — a rejected ``careers.cresta.com`` inside the pin is removed
  on our side;
- date filters are not sent with ``company``/``people`` either: they are applied
  to the results, and undated results are kept (an ``info`` warning says so).

Whenever results may be filtered on our side the request over-fetches
(``2 × num-results``), and if filtering still leaves the entry short while Exa
had more to give, one follow-up call asks for enough to make up the loss.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import AliasChoices, Field, SecretStr

from sourcedesk.core.config.settings import ProviderSettings, Settings
from sourcedesk.core.domain.models import RemovedSource, RunWarning, Source
from sourcedesk.core.memo.spec import ExaEntry, SummarySpec, TextSpec
from sourcedesk.core.memo.templates import render
from sourcedesk.core.net.hosts import PinRefused, host_matches_any, validate_pin
from sourcedesk.core.net.policy import EXA_RETRY
from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.sources.exclusions import ExclusionList, assemble
from sourcedesk.core.sources.facts import clean_facts, entity_facts, merge_facts, parse_summary
from sourcedesk.core.sources.name_rejects import NameRejectList, is_name_rule, name_of_rule
from sourcedesk.core.sources.name_rejects import assemble as assemble_names
from sourcedesk.core.sources.providers.base import Provider, ProviderClient, ProviderContext, ProviderResult
from sourcedesk.core.sources.providers.exa.client import (
    CATEGORIES_WITHOUT_FILTERS,
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_DOMAINS,
    MAX_RESULTS,
    ExaClient,
    ExaError,
    ExaResult,
    ExaSearchResult,
    build_search_body,
    current_category,
)

NO_KEY = "no Exa API key is set — set EXA_API_KEY to retrieve sources"
DEFAULT_TEXT_CHARS = 4000
SHOWN_IN_WARNING = 6  # hosts listed in a namesake/exclusion warning before "and N more"
FULL_LIST_IN_REQUEST = 50  # longer exclusion lists are fingerprinted by digest


class ExaSettings(ProviderSettings):
    """Exa's settings: ``SOURCEDESK_EXA_URL`` and friends, the key from ``EXA_API_KEY``."""

    exa_url: str = "https://api.exa.ai"
    exa_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("EXA_API_KEY", "exa_api_key"))
    # Exa allows 10 searches a second; every section of a run shares this limit.
    exa_requests_per_second: float = Field(default=10.0, gt=0)
    # Largest Exa answer read (bytes). The body is streamed and reading stops at the cap; an
    # entry whose answer is larger degrades. 100 results with 100,000 characters of text fit.
    exa_max_response_bytes: int = Field(default=DEFAULT_MAX_RESPONSE_BYTES, gt=0)


@dataclass
class ExaPlan:
    """One entry, resolved: what will be sent and what will be enforced on the results."""

    query: str
    entry: ExaEntry
    pins: list[str] = field(default_factory=list)
    exclusions: ExclusionList = field(default_factory=ExclusionList)
    warnings: list[RunWarning] = field(default_factory=list)
    skip: bool = False  # pin: entity without a usable pin — nothing is searched
    names: NameRejectList = field(default_factory=NameRejectList)  # rejected names, enforced on results
    send_exclude_text: str | None = None  # the one phrase Exa also gets as excludeText
    send_exclude: list[str] = field(default_factory=list)
    send_dates: bool = True
    contents: dict[str, Any] = field(default_factory=dict)

    @property
    def pinned(self) -> bool:
        return self.entry.pin == "entity"

    @property
    def client_dates(self) -> tuple[str | None, str | None] | None:
        e = self.entry
        if self.send_dates or not (e.start_published_date or e.end_published_date):
            return None
        return e.start_published_date, e.end_published_date

    @property
    def filters_locally(self) -> bool:
        """True when results may be removed on our side (so over-fetch)."""
        return (
            self.pinned
            or len(self.exclusions) > len(self.send_exclude)
            or self.client_dates is not None
            or bool(self.names)
        )

    def body(self, num_results: int) -> dict[str, Any]:
        e = self.entry
        return build_search_body(
            self.query,
            num_results=max(1, min(num_results, MAX_RESULTS)),
            category=e.category,
            type=e.type,
            include_domains=self.pins if self.pinned else None,
            exclude_domains=self.send_exclude or None,
            start_published_date=e.start_published_date if self.send_dates else None,
            end_published_date=e.end_published_date if self.send_dates else None,
            exclude_text=[self.send_exclude_text] if self.send_exclude_text else None,
            **self.contents,
        )


def _contents(entry: ExaEntry) -> dict[str, Any]:
    c = entry.contents
    summary: dict[str, Any] | bool | None
    if isinstance(c.summary, SummarySpec):
        summary = {"query": c.summary.query, "schema": c.summary.schema_}
    else:
        summary = bool(c.summary) or None
    text: dict[str, Any] | bool | None
    if isinstance(c.text, TextSpec):
        text = {"maxCharacters": c.text.max_characters}
    elif c.text:
        text = {"maxCharacters": DEFAULT_TEXT_CHARS}
    else:
        text = None
    if entry.full_text and text is None:  # full text counted against the budget needs the text
        text = {"maxCharacters": DEFAULT_TEXT_CHARS}
    highlights = c.highlights if isinstance(c.highlights, dict) else (bool(c.highlights) or None)
    return {"summary": summary, "text": text, "highlights": highlights}


def resolve_pins(entry: ExaEntry, ctx: ProviderContext) -> tuple[list[str], list[RunWarning]]:
    """Pins for ``pin: entity``: the subject URL's host, ``subject.domains``, the entry's
    ``domains`` — each validated; a public-suffix pin is refused with a warning."""
    subject = ctx.memo.subject
    candidates = ([subject.url] if subject.url else []) + list(subject.domains)
    candidates += [render(d, ctx.variables) for d in entry.domains]
    pins: list[str] = []
    warnings: list[RunWarning] = []
    for raw in candidates:
        if not raw or not raw.strip():
            continue
        try:
            pin = validate_pin(raw)
        except PinRefused as exc:
            warnings.append(RunWarning(code="pin_refused", message=str(exc), entry=ctx.entry_index))
            continue
        if pin not in pins:
            pins.append(pin)
    return pins, warnings


def plan_entry(entry: ExaEntry, ctx: ProviderContext) -> ExaPlan:
    query = render(entry.query, ctx.variables)
    plan = ExaPlan(query=query, entry=entry, contents=_contents(entry))
    filtered_category = current_category(entry.category) in CATEGORIES_WITHOUT_FILTERS
    if plan.pinned:
        plan.pins, plan.warnings = resolve_pins(entry, ctx)
        if not plan.pins:
            plan.skip = True
            plan.warnings.append(
                RunWarning(
                    code="pin_without_url",
                    message="pin: entity, but the memo has no usable subject url or domains to pin to — "
                    "this entry was not searched (add subject.url or domains, or use pin: none for a wide search)",
                    entry=ctx.entry_index,
                )
            )
    plan.exclusions = assemble(
        memo_rejects=ctx.memo_rejects,
        global_rejects=ctx.global_rejects,
        entry_excludes=[render(d, ctx.variables) for d in entry.exclude_domains],
        aggregators=[] if plan.pinned else ctx.aggregators,
    )
    if not plan.pinned and not filtered_category:
        plan.send_exclude = plan.exclusions.api_domains(MAX_DOMAINS)
        if len(plan.exclusions) > MAX_DOMAINS:
            plan.warnings.append(
                RunWarning(
                    code="info",
                    message=f"{len(plan.exclusions)} exclusions: Exa takes {MAX_DOMAINS}, so the rest are "
                    "enforced on the results only (every exclusion is always enforced on the results)",
                    entry=ctx.entry_index,
                )
            )
    plan.names = assemble_names(memo_names=ctx.memo_name_rejects, global_names=ctx.global_name_rejects)
    if plan.names and not filtered_category:  # Exa answers 400 for excludeText with company/people
        plan.send_exclude_text = plan.names.exclude_text()
    if filtered_category and (entry.start_published_date or entry.end_published_date):
        plan.send_dates = False
        plan.warnings.append(
            RunWarning(
                code="info",
                message=f"Exa refuses date filters with category {entry.category}: the published-date window "
                "was applied to the results instead (results without a date were kept)",
                entry=ctx.entry_index,
            )
        )
    return plan


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
class _Filtered:
    kept: list[Source] = field(default_factory=list)
    namesakes: list[RemovedSource] = field(default_factory=list)
    excluded: list[RemovedSource] = field(default_factory=list)
    scanned: int = 0

    @property
    def removed(self) -> int:
        return len(self.namesakes) + len(self.excluded)


def _filter(results: list[ExaResult], plan: ExaPlan, ctx: ProviderContext) -> _Filtered:
    """Apply the pin and every exclusion to the results, in rank order, until the entry is full."""
    out = _Filtered()
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


def _exa_notices(warnings: list[RunWarning], answer: ExaSearchResult, entry: int) -> None:
    """Exa's own warnings about a request, once each, in the section's warnings."""
    seen = {w.message for w in warnings}
    for text in answer.warnings:
        message = f"Exa says: {text}"
        if message not in seen:
            seen.add(message)
            warnings.append(RunWarning(code="exa", message=message, entry=entry))


def _cleaning_notices(warnings: list[RunWarning], answer: ExaSearchResult, entry: int) -> None:
    """What cleaning Exa's answer took out (control sequences, an echoed key, unusable results)."""
    if answer.cost_problem:
        warnings.append(RunWarning(code="info", message=answer.cost_problem, entry=entry))
    if answer.controls_removed:
        warnings.append(
            RunWarning(
                code="info",
                message=f"Exa's answer carried terminal control sequences or bidi overrides in "
                f"{answer.controls_removed} result(s); they were removed",
                entry=entry,
            )
        )
    if answer.keys_redacted:
        warnings.append(
            RunWarning(
                code="info",
                message=f"Exa's answer echoed the API key back in {answer.keys_redacted} result(s); "
                "it was redacted and never stored",
                entry=entry,
            )
        )
    if answer.skipped:
        warnings.append(
            RunWarning(
                code="info",
                message=f"Exa returned {answer.skipped} result(s) without a usable URL (missing, not http(s), "
                "or carrying control characters); they were skipped",
                entry=entry,
            )
        )


class ExaProvider(Provider):
    name = "exa"
    label = "Exa"
    marker_prefix = "E"
    uses_network = True
    key_env = "EXA_API_KEY"
    settings_model: ClassVar[type[ProviderSettings] | None] = ExaSettings

    def exa_settings(self, settings: Settings) -> ExaSettings:
        return self.own_settings(settings, ExaSettings)

    def open_client(self, settings: Settings) -> ExaClient:
        """The search client a run shares: the key, the base URL, retries and the rate limit."""
        own = self.exa_settings(settings)
        retry = dataclasses.replace(
            EXA_RETRY, max_retries=max(0, settings.max_retries), max_retry_after_s=settings.retry_max_wait_s
        )
        return ExaClient(
            own.exa_url,
            own.exa_api_key,
            timeout=settings.request_timeout_s,
            retry=retry,
            rate_per_s=own.exa_requests_per_second,
            max_response_bytes=own.exa_max_response_bytes,
        )

    def describe(self, entry: ExaEntry, ctx: ProviderContext) -> dict[str, Any]:
        plan = plan_entry(entry, ctx)
        exclusions: Any = plan.exclusions.canonical()
        if len(exclusions) > FULL_LIST_IN_REQUEST:
            digest = hashlib.sha256(json.dumps(exclusions).encode()).hexdigest()
            exclusions = {"count": len(exclusions), "sha256": digest}
        described: dict[str, Any] = {
            "provider": self.name,
            "query": plan.query,
            "category": entry.category,
            "type": entry.type,
            "num_results": entry.num_results,
            "pin": entry.pin,
            "pins": sorted(plan.pins),
            "exclusions": exclusions,
            "start_published_date": entry.start_published_date,
            "end_published_date": entry.end_published_date,
            "contents": plan.contents,
            "full_text": entry.full_text,
        }
        if plan.names:  # only when there are some: sets retrieved before name rejects keep their fingerprint
            described["names"] = plan.names.canonical()
            described["exclude_text"] = plan.send_exclude_text
        return described

    async def fetch(self, entry: ExaEntry, ctx: ProviderContext) -> ProviderResult:
        plan = plan_entry(entry, ctx)
        result = ProviderResult(warnings=list(plan.warnings))
        if plan.skip:
            return result
        client: ProviderClient | None = ctx.client(self)
        if not isinstance(client, ExaClient):
            raise ExaError("auth", None, NO_KEY)
        want = entry.num_results
        asked = min(MAX_RESULTS, want * 2) if plan.filters_locally else want
        first = await client.search(plan.body(asked))
        result.requests += first.requests
        result.cost_dollars += first.cost_total
        _exa_notices(result.warnings, first, ctx.entry_index)
        _cleaning_notices(result.warnings, first, ctx.entry_index)
        if not first.results:
            result.degraded = True
            result.warnings.append(
                RunWarning(
                    code="degraded",
                    message=f"Exa returned no results for {plan.query!r} — "
                    "the entry has no sources; the section continues writer-only",
                    entry=ctx.entry_index,
                )
            )
            return result
        filtered = _filter(first.results, plan, ctx)
        exhausted = len(first.results) < asked  # Exa had nothing more to give
        if len(filtered.kept) < want and not exhausted and asked < MAX_RESULTS:
            more = min(MAX_RESULTS, max(asked * 2, asked + filtered.removed + 2 * (want - len(filtered.kept))))
            try:
                second = await client.search(plan.body(more))
            except ExaError as exc:
                result.requests += exc.requests
                result.warnings.append(
                    RunWarning(
                        code="short",
                        message=f"a follow-up search to make up for filtered results "
                        f"failed ({exc.message}); kept what the first search gave",
                        entry=ctx.entry_index,
                    )
                )
            else:
                result.requests += second.requests
                result.cost_dollars += second.cost_total
                _exa_notices(result.warnings, second, ctx.entry_index)
                refiltered = _filter(second.results, plan, ctx)
                if len(refiltered.kept) >= len(filtered.kept):
                    filtered = refiltered
        result.sources = filtered.kept
        result.namesakes = filtered.namesakes
        result.excluded = filtered.excluded
        if filtered.namesakes:
            result.warnings.append(
                RunWarning(
                    code="namesakes_removed",
                    message=f"removed {len(filtered.namesakes)} result(s) outside the pinned "
                    f"host(s) {', '.join(plan.pins)}: {_hosts(filtered.namesakes)}",
                    entry=ctx.entry_index,
                )
            )
        by_domain = [r for r in filtered.excluded if not is_name_rule(r.rule)]
        by_name = [r for r in filtered.excluded if is_name_rule(r.rule)]
        if by_domain:
            result.warnings.append(
                RunWarning(
                    code="excluded",
                    message=f"removed {len(by_domain)} result(s) by exclusions: {_hosts(by_domain)}",
                    entry=ctx.entry_index,
                )
            )
        if by_name:
            names = ", ".join(f"'{n}'" for n in dict.fromkeys(name_of_rule(r.rule) for r in by_name))
            result.warnings.append(
                RunWarning(
                    code="excluded",
                    message=f"removed {len(by_name)} result(s) naming a rejected name ({names}): {_hosts(by_name)}",
                    entry=ctx.entry_index,
                )
            )
        if len(filtered.kept) < want:
            why = f" after removing {filtered.removed}" if filtered.removed else ""
            result.warnings.append(
                RunWarning(
                    code="short",
                    message=f"asked for {want} result(s), got {len(filtered.kept)}{why} (query: {plan.query!r})",
                    entry=ctx.entry_index,
                )
            )
        return result


def exa_settings(settings: Settings) -> ExaSettings:
    """Exa's own settings inside ``settings`` (``exa_url``, ``EXA_API_KEY``, …)."""
    return ExaProvider().exa_settings(settings)
