"""The reconcile report: one row per citation, counts per status — the shape ``reconcile
--json`` prints, which scripts read, so its keys only ever grow.

``key`` is the label as written in the draft (``3``, ``E2``, or the number of a
bare ``[N]``). Status values:

* ``verified`` — the cited URL (or marker, or bare index) is in the ground
  truth; ``retitled`` when the writer's title or date was corrected;
* ``substituted`` — the URL was never retrieved (or the writer gave none) but
  the claim sentence is supported by a retrieved source; ``score`` = shared /
  claim tokens;
* ``dropped`` — neither; definition and every inline marker removed. Also used
  for a definition that no marker cites (removed; it has no claim) and for every
  unprotected citation when the ground truth is empty;
* ``out_of_range`` — ``[^E9]`` with 6 E-sources, ``[12]`` with 8 web results:
  removed, never re-pointed, and named in the warnings;
* ``protected`` — analyst-declared keys, passed through untouched.

Every verified, retitled and substituted citation also carries its ``support``
for its claim (``supported``, ``partial``, ``unsupported``, or ``unchecked`` when
the source has no text to check) with the ``evidence`` passage that best matches
the claim; a verified citation that is ``unsupported`` keeps its URL (it was
retrieved) and is ``weak``. Dropped, out-of-range and protected citations are not
judged (``support`` is null). ``uncited`` lists every claim left without a
citation: a sentence with a figure or a quotation and no marker, and each claim
whose citation was dropped.

``links_removed`` counts web URLs outside citations that were never retrieved
and were taken out (links, autolinks, bare URLs, reference definitions, URLs in
protected definitions and in a writer's own sources list); each one is named in
an ``unretrieved_link`` or ``writer_sources_list_removed`` warning. It is an
extra key at the end of the documented dict; the documented keys are unchanged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Status = Literal["verified", "substituted", "dropped", "out_of_range", "protected"]
STATUSES: tuple[str, ...] = ("verified", "substituted", "dropped", "out_of_range", "protected")
Support = Literal["supported", "partial", "unsupported", "unchecked"]
SUPPORTS: tuple[str, ...] = ("supported", "partial", "unsupported", "unchecked")


class CitationRecord(BaseModel):
    key: str
    status: Status
    retitled: bool = False
    cited_url: str | None = None
    resolved_url: str | None = None
    score: float | None = None
    claim: str = ""
    support: Support | None = None
    evidence: str | None = None
    weak: bool = False
    reason: str = ""  # why the support verdict is what it is (for people)
    about: dict[str, str] | None = None  # the resolved source's about verdict ({"verdict", "reason"}) or null


class UncitedClaim(BaseModel):
    claim: str
    reason: str


class ReportWarning(BaseModel):
    """``code`` is machine-readable (``out_of_range``, ``placeholder_url``, …); ``message`` is for people."""

    code: str
    message: str


class ReconcileReport(BaseModel):
    citations: list[CitationRecord] = Field(default_factory=list)
    warnings: list[ReportWarning] = Field(default_factory=list)
    uncited: list[UncitedClaim] = Field(default_factory=list)
    placeholder_urls: int = 0  # placeholder/fabrication URLs cited (example.com, XXXX, /path/to/, {…})
    links_removed: int = 0  # unretrieved web URLs taken out of the text outside citations

    def count(self, status: str) -> int:
        return sum(1 for c in self.citations if c.status == status)

    @property
    def verified(self) -> int:
        return self.count("verified")

    @property
    def retitled(self) -> int:
        return sum(1 for c in self.citations if c.status == "verified" and c.retitled)

    @property
    def substituted(self) -> int:
        return self.count("substituted")

    @property
    def dropped(self) -> int:
        return self.count("dropped")

    @property
    def out_of_range(self) -> int:
        return self.count("out_of_range")

    @property
    def protected(self) -> int:
        return self.count("protected")

    def support_count(self, support: str) -> int:
        return sum(1 for c in self.citations if c.support == support)

    @property
    def weak(self) -> int:
        return sum(1 for c in self.citations if c.weak)

    def warn(self, code: str, message: str) -> None:
        self.warnings.append(ReportWarning(code=code, message=message))

    def to_json(self) -> dict[str, Any]:
        """The stable dict: integer counts, one row per citation, warnings as messages, uncited claims."""
        return {
            "verified": self.verified,
            "retitled": self.retitled,
            "substituted": self.substituted,
            "dropped": self.dropped,
            "out_of_range": self.out_of_range,
            "protected": self.protected,
            "citations": [c.model_dump(mode="json") for c in self.citations],
            "warnings": [w.message for w in self.warnings],
            "links_removed": self.links_removed,
            "uncited": [u.model_dump(mode="json") for u in self.uncited],
            "support": {s: self.support_count(s) for s in SUPPORTS} | {"weak": self.weak},
        }

    def summary(self) -> str:
        return (
            f"{self.verified} verified ({self.retitled} retitled), {self.substituted} substituted, "
            f"{self.dropped} dropped, {self.out_of_range} out of range, {self.protected} protected; "
            f"{self.weak} weak, {len(self.uncited)} uncited claim(s)"
        )
