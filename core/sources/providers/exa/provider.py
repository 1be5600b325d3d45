"""``provider: exa`` — Exa search with entity pins enforced on the results.

Exa's ``includeDomains`` is a substring match (pinning ``cresta.com`` returns
``alcresta.com``), so the pin is sent as a hint and then **every result is
re-checked** with ``sourcedesk.core.net.hosts.host_matches_pin``; the rest are recorded as
namesakes. Exclusions (rejects, the entry's own, aggregators for ``pin: none``)
are likewise enforced on every result, whatever was or was not sent to Exa:

- what is sent follows Exa's rules (``plan``): a field the entry's category refuses
  (the date window, ``excludeText``, ``excludeDomains``; for ``people`` an
  ``includeDomains`` that is not LinkedIn's) stays on our side, with one note;
- a pinned request never carries ``excludeDomains`` (Exa may refuse include and
  exclude together) — a rejected ``careers.cresta.com`` inside the pin is removed
  on our side (``filtering``).

Whenever results may be filtered on our side the request over-fetches
(``2 × num-results``), and if filtering still leaves the entry short while Exa
had more to give, one follow-up call asks for enough to make up the loss.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, ClassVar

from pydantic import AliasChoices, Field, SecretStr

from sourcedesk.core.config.settings import ProviderSettings, Settings
from sourcedesk.core.domain.models import RunWarning
from sourcedesk.core.memo.spec import ExaEntry
from sourcedesk.core.net.policy import EXA_RETRY
from sourcedesk.core.sources.providers.base import Provider, ProviderClient, ProviderContext, ProviderResult
from sourcedesk.core.sources.providers.exa.client import DEFAULT_MAX_RESPONSE_BYTES, ExaClient
from sourcedesk.core.sources.providers.exa.errors import ExaError
from sourcedesk.core.sources.providers.exa.filtering import Filtered, filter_results, removal_warnings
from sourcedesk.core.sources.providers.exa.plan import ExaPlan, plan_entry
from sourcedesk.core.sources.providers.exa.request import MAX_RESULTS
from sourcedesk.core.sources.providers.exa.response import ExaSearchResult

NO_KEY = "no Exa API key is set — set EXA_API_KEY to retrieve sources"
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
    if answer.invisible_removed:
        warnings.append(
            RunWarning(
                code="info",
                message=f"Exa's answer carried invisible characters (direction marks, zero-width spaces, line "
                f"separators) or text that is not valid Unicode in {answer.invisible_removed} result(s); "
                "they were removed or replaced with U+FFFD",
                entry=entry,
            )
        )
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
                "carrying control or invisible characters, or read as different hosts by browsers and the HTTP "
                "client); they were skipped",
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
        _count(result, first, ctx.entry_index)
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
        filtered = filter_results(first.results, plan, ctx)
        exhausted = len(first.results) < asked  # Exa had nothing more to give
        if len(filtered.kept) < want and not exhausted and asked < MAX_RESULTS:
            filtered = await _make_up(client, plan, ctx, result, filtered, asked)
        result.sources = filtered.kept
        result.namesakes = filtered.namesakes
        result.excluded = filtered.excluded
        result.warnings += removal_warnings(filtered, plan, ctx.entry_index)
        return result


def _count(result: ProviderResult, answer: ExaSearchResult, index: int) -> None:
    result.requests += answer.requests
    result.cost_dollars += answer.cost_total
    _exa_notices(result.warnings, answer, index)


async def _make_up(
    client: ExaClient, plan: ExaPlan, ctx: ProviderContext, result: ProviderResult, filtered: Filtered, asked: int
) -> Filtered:
    """One follow-up search asking for enough to make up what filtering removed (the first
    answer is kept if the follow-up fails or keeps fewer)."""
    want = plan.entry.num_results
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
        return filtered
    _count(result, second, ctx.entry_index)
    refiltered = filter_results(second.results, plan, ctx)
    return refiltered if len(refiltered.kept) >= len(filtered.kept) else filtered


def exa_settings(settings: Settings) -> ExaSettings:
    """Exa's own settings inside ``settings`` (``exa_url``, ``EXA_API_KEY``, …)."""
    return ExaProvider().exa_settings(settings)
