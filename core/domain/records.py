"""What the memo store keeps about runs, sections and checks, as typed records.

Every version of sourcedesk reads what an older one wrote: a field that is missing,
or that an older version stored in another shape, takes its default instead of
failing the whole record (``Lenient``), and fields this version does not know are
kept as they are (``extra="allow"``) so a round trip never loses them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)

T = TypeVar("T")

COUNT_KEYS = ("verified", "retitled", "substituted", "dropped", "out_of_range", "protected", "links_removed")


def _fallback(default: Callable[[], Any]) -> WrapValidator:
    def validate(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            return default()

    return WrapValidator(validate)


def _none() -> None:
    return None


def _items(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A list whose unreadable items are skipped (one bad row never hides the others)."""
    if not isinstance(value, list):
        return []
    kept = []
    for item in value:
        try:
            kept.extend(handler([item]))
        except ValidationError:
            continue
    return kept


def _text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


# A value of the wrong shape reads as absent (None).
Lenient = Annotated[T | None, _fallback(_none)]
LenientList = Annotated[list[T], WrapValidator(_items)]
LenientDict = Annotated[dict[str, T], _fallback(dict)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class StoredCitation(_Record):
    """One row of a run's reconcile report."""

    key: Annotated[str, BeforeValidator(_text)] = ""
    status: str = ""
    retitled: bool = False
    cited_url: Lenient[str] = None
    resolved_url: Lenient[str] = None
    score: Lenient[float] = None
    claim: str = ""
    support: Lenient[str] = None
    evidence: Lenient[str] = None
    reason: Lenient[str] = None  # why the support verdict is what it is
    weak: bool = False
    about: Lenient[dict[str, str]] = None  # the cited source's about verdict ({"verdict", "reason"})
    judge: Lenient[dict[str, Any]] = None  # the model judge's {verdict, reason, cost}, beside the offline verdict


class UncitedClaim(_Record):
    """A sentence that states a checkable fact and carries no (surviving) citation."""

    claim: str = ""
    reason: str = ""


class StoredReport(_Record):
    """A run's reconcile report, as ``reconcile --json`` prints it."""

    verified: int = 0
    retitled: int = 0
    substituted: int = 0
    dropped: int = 0
    out_of_range: int = 0
    protected: int = 0
    links_removed: int = 0
    citations: LenientList[StoredCitation] = Field(default_factory=list)
    uncited: LenientList[UncitedClaim] = Field(default_factory=list)
    warnings: LenientList[str] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {k: int(getattr(self, k)) for k in COUNT_KEYS}


class RunError(_Record):
    """Why the writer call failed (its kind, the HTTP status, the service's message)."""

    kind: Lenient[str] = None
    status: Lenient[int] = None
    message: str = ""


class StoredOutcome(_Record):
    """What the run told the analyst (the CLI's ``run --json`` entry for the section)."""

    status: Lenient[str] = None
    message: str = ""
    error_kind: Lenient[str] = None
    warnings: LenientList[str] = Field(default_factory=list)
    requests: LenientDict[int] = Field(default_factory=dict)
    source_set_reused: Lenient[bool] = None
    report: Lenient[StoredReport] = None  # older records only: newer ones keep it once, in the run


class RunRecord(_Record):
    """One run of one section — failed and cancelled ones too."""

    id: str = ""
    section: str = ""
    created_at: Lenient[str] = None
    started_at: Lenient[str] = None
    finished_at: Lenient[str] = None
    status: Lenient[str] = None  # ok, degraded, failed, cancelled
    message: str = ""
    web_search: Lenient[bool] = None
    refresh: Lenient[bool] = None
    source_set_id: Lenient[str] = None
    source_set_reused: Lenient[bool] = None
    model: Lenient[str] = None
    writer_api: Lenient[str] = None  # the writer backend (perplexity, perplexity-sonar, openai, …)
    writer: Lenient[str] = None  # the backend's own description of what it was asked for
    domain_filter: LenientList[str] = Field(default_factory=list)
    prompt: Lenient[dict[str, Any] | str] = None
    raw_response: Lenient[dict[str, Any]] = None
    web_results: Lenient[list[dict[str, Any]]] = None  # the writer's own search results, normalised
    annotations: Lenient[list[dict[str, Any]]] = None  # what each url_citation annotation did
    # The unit the url_citation offsets were read in: "code points", "utf-16" or "utf-8"; "none" when
    # no unit lined them up with the text (the markers alone were used); None without annotations.
    annotation_offsets: Lenient[str] = None
    report: Lenient[StoredReport] = None
    counts: Lenient[dict[str, int]] = None  # the report's counts, kept beside it for cheap listings
    outcome: Lenient[StoredOutcome] = None
    timings: LenientDict[float] = Field(default_factory=dict)
    cost: LenientDict[float] = Field(default_factory=dict)
    error: Lenient[RunError] = None
    previous_note: Lenient[str] = None
    note_sha256: Lenient[str] = None

    @property
    def the_report(self) -> StoredReport | None:
        """The reconcile report, wherever this record's version kept it."""
        if self.report is not None:
            return self.report
        return self.outcome.report if self.outcome is not None else None

    @property
    def report_counts(self) -> dict[str, int] | None:
        """Citation counts (None when the run produced no report)."""
        report = self.the_report
        if report is not None:
            return report.counts()
        return dict(self.counts) if self.counts else None

    @property
    def run_status(self) -> str:
        return self.status or (self.outcome.status if self.outcome else None) or "?"

    @property
    def reused(self) -> bool:
        if self.source_set_reused is not None:
            return self.source_set_reused
        return bool(self.outcome and self.outcome.source_set_reused)

    @property
    def warnings(self) -> list[str]:
        return list(self.outcome.warnings) if self.outcome else []

    @property
    def was_cancelled(self) -> bool:
        """Cancelled, also when an older version recorded it as failed."""
        kinds = (
            self.status,
            self.outcome.status if self.outcome else None,
            self.outcome.error_kind if self.outcome else None,
            self.error.kind if self.error else None,
        )
        return "cancelled" in kinds

    def writer_results(self) -> list[dict[str, Any]]:
        """The writer's own search results: the normalised ``web_results`` (any writer API),
        else, for records from before those were kept, a chat completion's ``search_results``."""
        if self.web_results is not None:
            return list(self.web_results)
        raw = self.raw_response or {}
        results = raw.get("search_results")
        return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


class CheckState(_Record):
    """What the store keeps of a section's last check: counts, not rows."""

    at: str = ""
    note: str = ""
    note_sha256: str = ""
    liveness: bool = False
    counts: LenientDict[Any] = Field(default_factory=dict)
    problems: int = 0


class SectionState(_Record):
    """Small per-section facts that outlive a session."""

    last_run: Lenient[str] = None
    last_status: Lenient[str] = None
    note_sha256: Lenient[str] = None  # the hash of the note sourcedesk last wrote
    prior_note_sha256: Lenient[str] = None  # and of the one before it (still on disk if that write never ran)
    last_check: Lenient[CheckState] = None
