"""One Exa entry planned: what goes to Exa, and what is enforced on the results instead.

Exa's ``includeDomains`` is a substring match, so the pin is only a hint and every
result is re-checked; exclusions, rejected names and the date window are enforced on
every result too, whatever was sent. What is *sent* follows Exa's rules
(``sourcedesk.core.sources.providers.exa.request``):

- ``excludeDomains`` only for unpinned entries (Exa may refuse include and exclude
  lists together), at most 1,200 entries;
- a field the entry's category refuses is not sent at all — for ``company`` and
  ``people`` the date window, ``excludeText`` and ``excludeDomains``; for ``people``
  also an ``includeDomains`` that is not LinkedIn's (so ``pin: entity`` stays on our
  side); for ``financial report`` ``excludeText`` — and the entry gets **one** note
  saying what was applied to the results instead.

Whenever results may be removed on our side, the request over-fetches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sourcedesk.core.domain.models import RunWarning
from sourcedesk.core.memo.spec import ExaEntry, SummarySpec, TextSpec
from sourcedesk.core.memo.templates import render
from sourcedesk.core.net.hosts import PinRefused, validate_pin
from sourcedesk.core.sources.exclusions import ExclusionList, assemble
from sourcedesk.core.sources.name_rejects import NameRejectList
from sourcedesk.core.sources.name_rejects import assemble as assemble_names
from sourcedesk.core.sources.providers.base import ProviderContext
from sourcedesk.core.sources.providers.exa.request import (
    DATE_FIELDS,
    LINKEDIN_ONLY_CATEGORIES,
    MAX_DOMAINS,
    MAX_RESULTS,
    build_search_body,
    current_category,
    is_linkedin_domain,
    refused_with,
)

DEFAULT_TEXT_CHARS = 4000


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
    send_pins: bool = True  # False: the pin is kept on our side only (the category refuses it)
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
            include_domains=self.pins if self.pinned and self.send_pins else None,
            exclude_domains=self.send_exclude or None,
            start_published_date=e.start_published_date if self.send_dates else None,
            end_published_date=e.end_published_date if self.send_dates else None,
            exclude_text=[self.send_exclude_text] if self.send_exclude_text else None,
            **self.contents,
        )


def entry_contents(entry: ExaEntry) -> dict[str, Any]:
    """The entry's ``contents`` as ``build_search_body`` takes them."""
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


def _pin_plan(plan: ExaPlan, ctx: ProviderContext) -> None:
    plan.pins, plan.warnings = resolve_pins(plan.entry, ctx)
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


def plan_entry(entry: ExaEntry, ctx: ProviderContext) -> ExaPlan:
    query = render(entry.query, ctx.variables)
    plan = ExaPlan(query=query, entry=entry, contents=entry_contents(entry))
    refused = refused_with(entry.category)
    kept_here: list[str] = []  # what the category keeps off the request, for the one note
    if plan.pinned:
        _pin_plan(plan, ctx)
        linkedin_only = current_category(entry.category) in LINKEDIN_ONLY_CATEGORIES
        if plan.pins and linkedin_only and not all(is_linkedin_domain(p) for p in plan.pins):
            plan.send_pins = False
            kept_here.append(f"the entity pin ({', '.join(plan.pins)})")
    plan.exclusions = assemble(
        memo_rejects=ctx.memo_rejects,
        global_rejects=ctx.global_rejects,
        entry_excludes=[render(d, ctx.variables) for d in entry.exclude_domains],
        aggregators=[] if plan.pinned else ctx.aggregators,
    )
    if not plan.pinned and "excludeDomains" in refused and plan.exclusions:
        kept_here.append(f"the {len(plan.exclusions)} domain exclusion(s)")
    elif not plan.pinned:
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
    if plan.names and "excludeText" in refused:
        kept_here.append("the rejected names")
    elif plan.names:
        plan.send_exclude_text = plan.names.exclude_text()
    if (entry.start_published_date or entry.end_published_date) and refused.intersection(DATE_FIELDS):
        plan.send_dates = False
        kept_here.append("the published-date window (results without a date were kept)")
    if kept_here:
        plan.warnings.append(_client_side_note(entry, kept_here, ctx.entry_index))
    return plan


def _client_side_note(entry: ExaEntry, kept_here: list[str], index: int) -> RunWarning:
    """The entry's one note on what its category kept off the request."""
    what = kept_here[0] if len(kept_here) == 1 else ", ".join(kept_here[:-1]) + " and " + kept_here[-1]
    verb = "was" if len(kept_here) == 1 else "were"
    return RunWarning(
        code="info",
        message=f"Exa answers 400 to some filters with category {current_category(entry.category)}: "
        f"{what} {verb} applied to the results instead of being sent",
        entry=index,
    )
