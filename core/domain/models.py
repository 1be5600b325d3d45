"""Domain records shared by retrieval, writing, reconciliation and the UI.

Kept deliberately free of behaviour beyond small derived properties so that the
store can persist them as plain JSON (``model_dump(mode="json")``) and the TUI
can render them without knowing which provider produced them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field

from sourcedesk.core.domain import clock
from sourcedesk.core.net.urls import host_of


class Source(BaseModel):
    """One retrieved document, normalised across providers."""

    provider: str  # "exa", "files", "writer", ...
    url: str
    title: str = ""
    published_date: str | None = None
    author: str | None = None
    summary: str = ""  # prose summary (schema summaries are split into ``facts``)
    facts: dict[str, Any] = Field(default_factory=dict)  # cleaned structured facts
    text: str = ""  # page text when the entry asked for it (or local file body)
    highlights: list[str] = Field(default_factory=list)
    score: float | None = None
    rank: int = 0  # position in the provider's answer (0-based), before filtering
    entry: int = 0  # index of the include-sources entry that produced it
    query: str = ""
    full_text: bool = False  # the entry opted into full text: ``text`` counts toward the budget
    marker: str | None = None  # "E1", "V2", "W1" — assigned only after packing
    # Typed facts read from the stored text when the set was frozen (sourcedesk.core.sources.extraction):
    # {"kind", "value", "span", "field", "start", …}; computed once per set, offline, never sent to a writer.
    extracted: list[dict[str, Any]] = Field(default_factory=list)
    # The support check's reading of the same text (passages' terms and figures, names), made with
    # the facts so a run does not read the text again (sourcedesk.core.citations.evidence_index).
    evidence_index: dict[str, Any] = Field(default_factory=dict)
    # The ``about`` verdict ({"verdict", "reason"}) for this run only: computed from the stored
    # text whenever it is needed (namesakes change), so never persisted with the set.
    about: dict[str, str] | None = Field(default=None, exclude=True)

    @property
    def host(self) -> str:
        return host_of(self.url) or ""

    @property
    def prompt_text(self) -> str:
        """The source text that goes into the writer prompt (and the budget)."""
        if self.full_text and self.text:
            return self.text
        return self.summary or (self.highlights and " … ".join(self.highlights)) or self.text[:1500]

    @property
    def facts_yaml(self) -> str:
        """The facts exactly as the prompt shows them (a small YAML block)."""
        if not self.facts:
            return ""
        return yaml.safe_dump(self.facts, sort_keys=False, allow_unicode=True, default_flow_style=False)

    @property
    def size(self) -> int:
        """Characters this source costs against the context budget: prose plus facts,
        because both are pasted into the prompt."""
        return len(self.prompt_text) + len(self.facts_yaml)


WarningCode = Literal[
    "degraded",  # retrieval failed or was skipped; the section continues writer-only
    "truncated",  # sources omitted by the context budget
    "pin_without_url",  # pin: entity but no usable subject URL/domains
    "pin_refused",  # a pin that is a public suffix (e.g. co.uk) was refused
    "namesakes_removed",  # results outside the pinned hosts were removed
    "held_out",  # sources about a namesake were held out of the writer's set
    "excluded",  # results removed by exclusions (rejected domains, aggregators)
    "short",  # fewer sources than asked for after filtering
    "stale",  # reused set older than TTL could not be refreshed
    "out_of_range",  # writer cited a marker beyond the set
    "writer",  # writer-side problem (degraded writer search, etc.)
    "quarantined",  # damaged stored data was moved aside and treated as missing
    "exa",  # a warning Exa itself returned with the results
    "info",
]


class RunWarning(BaseModel):
    code: WarningCode
    message: str
    entry: int | None = None  # include-sources entry it concerns, when known


class RemovedSource(BaseModel):
    """A result that came back from a provider but was filtered out (and why)."""

    url: str
    host: str
    title: str = ""
    reason: Literal["namesake", "excluded", "rejected", "aggregator", "duplicate"]
    rule: str = ""  # the pin or exclusion entry that removed it


class OmittedSource(BaseModel):
    """A source that passed every filter but did not fit the context budget."""

    source: Source
    size: int


class HeldOutSource(BaseModel):
    """A source about a namesake, held out of the writer's set (before numbering); ``k`` keeps it in."""

    source: Source
    namesake: str = ""  # the namesake it is about ("Kestra Medical Technologies")
    reason: str = ""  # the about verdict's reason


class SourceSet(BaseModel):
    """A frozen, persisted retrieval result for one section.

    A re-run reuses it verbatim (no network) unless the analyst refreshes it or
    it is older than the TTL; a new retrieval makes a new version.
    """

    id: str = ""  # "<section>@v<version>-<fingerprint[:8]>" (set by the store)
    memo: str = ""
    section: str
    version: int = 0
    fingerprint: str
    request: dict[str, Any] = Field(default_factory=dict)  # what the fingerprint covers
    created_at: datetime = Field(default_factory=clock.now)
    sources: list[Source] = Field(default_factory=list)  # kept, markers assigned
    omitted: list[OmittedSource] = Field(default_factory=list)
    namesakes: list[RemovedSource] = Field(default_factory=list)
    excluded: list[RemovedSource] = Field(default_factory=list)
    held_out: list[HeldOutSource] = Field(default_factory=list)  # about a namesake: not handed to the writer
    kept_in: list[str] = Field(default_factory=list)  # normalised URLs the analyst kept in despite their verdict
    warnings: list[RunWarning] = Field(default_factory=list)
    cost_dollars: float = 0.0
    requests: int = 0  # HTTP requests this retrieval made
    budget_chars: int = 0
    degraded: bool = False
    facts_version: int = 0  # the extraction that made the sources' ``extracted`` facts (0: none yet)

    @property
    def used_chars(self) -> int:
        return sum(s.size for s in self.sources)

    def by_marker(self) -> dict[str, Source]:
        return {s.marker: s for s in self.sources if s.marker}
