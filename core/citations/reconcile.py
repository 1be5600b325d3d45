"""Reconcile a writer's draft against what retrieval really returned: a writer asked to cite
fabricates URLs and mislabels real ones, so no citation is trusted until it is checked.

Every citation — ``[^key]`` with its definition, a retrieved marker ``[^E3]``, a
bare ``[N]`` indexing the writer's search results — ends up verified (definition
rebuilt from ground truth), substituted (the claim sentence is supported by a
retrieved source), protected (analyst keys, untouched), or removed with every
one of its inline markers (dropped / out of range). Prose is never rewritten.

Citation look-alikes count: ``[^e1]`` is the retrieved marker ``E1`` (that
namespace is case-insensitive), ``[1,2]`` is ``[1]`` and ``[2]``, ``[1-3]`` is ``[1]`` to ``[3]``, ``[^ E1]`` is
read as ``[^E1]`` (with a ``malformed_marker`` warning). A bare ``[N]`` whose
URL the writer gave — Perplexity's ``[N](url)``, or ``[N]`` resolved by a
``[N]: url`` reference definition — is decided by that URL like a footnote
definition (verified if retrieved, else substituted or dropped): the URL is what
a reader would follow. A writer's own Sources list (``bibliography``) is
removed; when the writer gave no search results, its numbered entries serve as
the written URL of bare ``[N]`` citations (with search results, ``[N]`` indexes
them: the API's numbering is ground truth, the model's transcription is not).

No unretrieved URL survives anywhere else either (``screening``, ``links``):
before citations are decided, inline links, autolinks, bare URLs, reference
definitions, raw HTML and protected definitions are screened, and the finished
body is screened again. Each removed URL is a warning and counts in
``report.links_removed``.

Keys after reconciliation: a retrieved source is cited by its marker (``E3``),
a web result by a number; two writer keys that resolve to one source merge into
one key. Non-protected definitions are removed from where the writer put them
and rebuilt in the house format under the two "Sources" headings at the end;
protected definitions stay where they are, verbatim. Line endings become ``\\n``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from sourcedesk.core.citations.bare_urls import comparable
from sourcedesk.core.citations.bibliography import is_label, numbering
from sourcedesk.core.citations.evidence_index import evidence_of
from sourcedesk.core.citations.ground import GroundSource, GroundTruth
from sourcedesk.core.citations.house import HouseDefinition, render_sources_sections
from sourcedesk.core.citations.links import citation_references, reference_label
from sourcedesk.core.citations.parse import ParsedDoc, citation_link_label, normalise_source, parse
from sourcedesk.core.citations.placeholders import is_placeholder_url
from sourcedesk.core.citations.report import CitationRecord, ReconcileReport, UncitedClaim
from sourcedesk.core.citations.rewrite import apply_edits, delete_lines, rewrite_markers
from sourcedesk.core.citations.scan import scan
from sourcedesk.core.citations.screening import Screened, report_screening, screen_body, screen_draft
from sourcedesk.core.citations.sentences import ClaimIndex
from sourcedesk.core.citations.support import (
    UNCHECKED,
    UNSUPPORTED,
    Claim,
    SupportScorer,
    Verdict,
    clear_winner,
    verdict_rank,
)
from sourcedesk.core.citations.tidy import needs_tidy, one_marker_per_source_edits, tidy_with_stats
from sourcedesk.core.citations.uncited import uncited_claims
from sourcedesk.core.citations.written import WrittenDefinition, differs, read_definition
from sourcedesk.core.net.urls import normalise_url

DEFAULT_PROTECTED = ("deck", "dataroom", "internal")


@dataclass
class ReconcileResult:
    text: str  # reconciled, tidied markdown with the house "Sources" sections appended
    report: ReconcileReport
    body: str = ""  # the same text without the appended sections
    definitions: list[HouseDefinition] = field(default_factory=list)


@dataclass
class _Citation:
    kind: str  # "footnote" | "bare"
    label: str
    url: str | None = None  # a bare [N] whose URL the writer gave: [N](url)
    occurrences: list[int] = field(default_factory=list)  # live marker indices, in order
    definitions: list[int] = field(default_factory=list)
    status: str = "dropped"
    source: GroundSource | None = None
    written: WrittenDefinition | None = None
    retitled: bool = False
    cited_url: str | None = None
    score: float | None = None
    claim: str = ""
    position: int = 0
    verdict: Verdict | None = None
    removed: set[int] = field(default_factory=set)  # occurrences whose claim the substitute does not support
    reason: str = ""  # why it was dropped (for the uncited list)


def _collect(doc: ParsedDoc, protected: frozenset[str]) -> tuple[list[_Citation], set[int]]:
    """Citations keyed by (kind, label, given URL) in order of first appearance, and the definitions to delete."""
    deleted_defs = {i for i, d in enumerate(doc.definitions) if d.label.lower() not in protected}
    citations: dict[tuple[str, str, str | None], _Citation] = {}
    for i, m in enumerate(doc.markers):
        if m.definition in deleted_defs:
            continue  # goes away with the definition around it
        key = (m.kind, m.label, normalise_url(m.url) if m.url else None)
        c = citations.get(key)
        if c is None:
            c = citations[key] = _Citation(m.kind, m.label, url=m.url, position=m.start)
        c.occurrences.append(i)
    for di, d in enumerate(doc.definitions):
        key = ("footnote", d.label, None)
        c = citations.get(key)
        if c is None:
            c = citations[key] = _Citation("footnote", d.label, position=len(doc.source) + d.start)
        c.definitions.append(di)
    return sorted(citations.values(), key=lambda c: c.position), deleted_defs


def may_substitute(source: GroundSource) -> bool:
    """Whether a fabricated citation may be substituted with this source — the one place
    source eligibility is decided (a web result on a rejected domain never is, nor a source
    about a namesake: that would launder a citation to the wrong company)."""
    return not source.blocked and (source.about or {}).get("verdict") != "namesake"


class _Decider:
    """Decides one citation's status against the ground truth, and judges its support."""

    def __init__(
        self,
        doc: ParsedDoc,
        truth: GroundTruth,
        protected: frozenset[str],
        report: ReconcileReport,
        numbers: dict[str, str] | None = None,
        subject: Iterable[str] = (),
    ):
        self.doc, self.truth, self.protected, self.report = doc, truth, protected, report
        # the writer's own [N] → URL list: only when there are no search results for [N] to index
        self.numbers = {} if truth.indexed else dict(numbers or {})
        self.claims = ClaimIndex(doc)
        self.candidates = truth.candidates()
        self.position = {id(s): i for i, s in enumerate(self.candidates)}
        # Sources whose about verdict says they never name the subject: a claim about the subject
        # needs its name there (a competitor's layoffs page does not support the subject's).
        strangers = [i for i, s in enumerate(self.candidates) if (s.about or {}).get("verdict") == "other"]
        self.scorer = SupportScorer(
            [evidence_of(s.evidence_fields(), s.evidence_index) for s in self.candidates], subject, strangers=strangers
        )
        self.eligible = [i for i, s in enumerate(self.candidates) if may_substitute(s)]
        self._claims: dict[int, Claim] = {}  # marker → its claim
        self._winners: dict[int, tuple[Verdict, int] | None] = {}  # id(claim) → its substitute

    def claim(self, occ: int) -> Claim:
        """The claim a marker binds to (a table cell's labels as context); a clause with nothing
        to check falls back to its sentence."""
        found = self._claims.get(occ)
        if found is None:
            context = self.claims.context(occ)
            row, header = self.claims.labels(occ)
            found = self.scorer.claim(self.claims.clause(occ), context, row=row, unit=header)
            if not found.checkable:
                found = self.scorer.claim(self.claims.sentence(occ), context, row=row, unit=header)
            self._claims[occ] = found
        return found

    def winner(self, claim: Claim) -> tuple[Verdict, int] | None:
        """The one source a fabricated citation of ``claim`` may be substituted with (decided once
        per claim: a draft often repeats one claim under several invented URLs)."""
        key = id(claim)  # claims are interned by the scorer for the whole run
        if key not in self._winners:
            self._winners[key] = clear_winner(self.scorer.rank(claim, self.eligible))
        return self._winners[key]

    def claim_text(self, occ: int) -> str:
        context, claim = self.claims.context(occ), self.claim(occ).text
        return f"{context}; {claim}" if context else claim

    def decide(self, c: _Citation) -> None:
        if c.definitions:
            c.written = read_definition(self.doc, self.doc.definitions[c.definitions[0]])
            c.cited_url = c.written.url
            if len(c.definitions) > 1:
                self.report.warn(
                    "duplicate_definition", f"[^{c.label}] is defined {len(c.definitions)} times; the first was used"
                )
        elif c.kind == "bare":
            c.cited_url = c.url or self.numbers.get(str(int(c.label)))
        if c.cited_url and is_placeholder_url(c.cited_url):
            self.report.placeholder_urls += 1
        c.claim = self.claim_text(c.occurrences[0]) if c.occurrences else ""
        if c.kind == "footnote" and c.label.lower() in self.protected:
            c.status = "protected"
            if not c.definitions and c.occurrences:
                self.report.warn("protected_undefined", f"protected [^{c.label}] has no definition")
        elif not c.occurrences:
            c.status = "dropped"
            self.report.warn("unreferenced_definition", f"[^{c.label}] was defined but never cited; definition removed")
        elif self.truth.empty:
            c.status = "dropped"  # the defence never switches itself off
            c.reason = "no retrieved sources and no search results to check it against"
        elif c.kind == "bare" and c.cited_url:
            self._footnote(c)  # the writer said which URL: that URL decides, as for a definition
        elif c.kind == "bare":
            self._bare(c)
        elif self.truth.is_marker_label(c.label.upper()):
            self._retrieved_marker(c)
        else:
            self._footnote(c)
        if c.status == "verified":
            self._judge(c)

    def _judge(self, c: _Citation) -> None:
        """A verified citation's support: the weakest verdict over the claims it is cited for."""
        index = self.position.get(id(c.source))
        if index is None:
            return
        worst: tuple[Verdict, int] | None = None
        for occ in c.occurrences:
            verdict = self.scorer.judge(self.claim(occ), index)
            if worst is None or _weakness(verdict) < _weakness(worst[0]):
                worst = (verdict, occ)
        if worst is not None:
            c.verdict, c.claim = worst[0], self.claim_text(worst[1])

    def _bare(self, c: _Citation) -> None:
        n, indexed = int(c.label), self.truth.indexed
        if 1 <= n <= len(indexed) and indexed[n - 1].blocked:
            result = indexed[n - 1]
            c.status, c.cited_url = "dropped", result.url
            c.reason = f"it cites a web result this section does not accept ({result.blocked_why})"
            code = "rejected_name" if result.blocked_why.startswith("naming the rejected name") else "rejected_domain"
            self.report.warn(code, f"[{c.label}] cites {result.url}, {result.blocked_why}; removed")
            return
        if 1 <= n <= len(indexed):
            c.status, c.source, c.cited_url = "verified", indexed[n - 1], indexed[n - 1].url
            return
        c.status = "out_of_range"
        c.reason = f"[{c.label}] is out of range"
        self.report.warn(
            "out_of_range",
            f"out of range: [{c.label}] but the writer's search returned "
            f"{len(indexed)} result{'' if len(indexed) == 1 else 's'}; removed",
        )

    def _retrieved_marker(self, c: _Citation) -> None:
        src = self.truth.by_marker.get(c.label.upper())  # [^e1] is E1
        if src is None:
            prefix = c.label[0].upper()
            c.status = "out_of_range"
            c.reason = f"[^{c.label}] is out of range"
            self.report.warn(
                "out_of_range",
                f"out of range: [^{c.label}] but the retrieved set has "
                f"{self.truth.prefix_counts.get(prefix, 0)} {prefix}-sources; removed",
            )
            return
        c.status, c.source, c.retitled = "verified", src, differs(c.written, src)
        if c.cited_url and self.truth.lookup_url(c.cited_url) is not src:
            self.report.warn(
                "marker_url_mismatch",
                f"[^{c.label}]: the writer's definition pointed at "
                f"{c.cited_url}; replaced with {src.marker}'s {src.url}",
            )
        c.cited_url = c.cited_url or src.url

    def _footnote(self, c: _Citation) -> None:
        src = self.truth.lookup_url(c.cited_url) if c.cited_url else None
        if src is not None:
            c.status, c.source, c.retitled = "verified", src, differs(c.written, src)
            return
        # Never retrieved: substituted only with the one source that clearly supports its claim.
        winners: dict[int, tuple[Verdict, int] | None] = {}
        for occ in c.occurrences:
            winners[occ] = self.winner(self.claim(occ))
        found = [(w, occ) for occ, w in winners.items() if w is not None]
        if not found:
            c.status = "dropped"
            c.reason = "its URL was never retrieved and no retrieved source clearly supports it"
            return
        (verdict, index), occ = found[0] if len(found) == 1 else max(found, key=lambda f: (f[0][0].score, -f[1]))
        c.status, c.source, c.verdict = "substituted", self.candidates[index], verdict
        c.score, c.claim = round(verdict.score, 4), self.claim_text(occ)
        if len(winners) > 1:
            c.removed = {o for o, w in winners.items() if w is None or w[1] != index}
        if c.removed:
            c.reason = f"the source it was substituted with ({c.source.url}) does not support this claim"


def _weakness(v: Verdict) -> tuple[int, float]:
    """Order of verdicts from weakest (unsupported) up; unchecked is not weak, only unknown."""
    if v.support == UNCHECKED:
        return (2, 0.0)
    return verdict_rank(v)


def _apparatus_heading_lines(doc: ParsedDoc, deleted_lines: set[int]) -> set[int]:
    """Headings like "## Sources" whose section held nothing but removed definitions."""
    lines: set[int] = set()
    total = len(doc.line_starts)
    for i, h in enumerate(doc.headings):
        if not is_label(h.text, heading=True, apparatus=True):
            continue
        nxt = doc.headings[i + 1].line_start if i + 1 < len(doc.headings) else total
        body = range(h.line_end, nxt)
        if not any(ln in deleted_lines for ln in body):
            continue
        if all(ln in deleted_lines or not doc.source[slice(*doc.line_span(ln, ln + 1))].strip() for ln in body):
            lines.update(range(h.line_start, h.line_end))
    return lines


def _final_labels(
    doc: ParsedDoc,
    citations: list[_Citation],
    protected: frozenset[str],
    claims: ClaimIndex,
    one_marker_per_source: bool = False,
) -> tuple[dict[int, str | None], dict[GroundSource, str]]:
    """Each live marker's final label (None = remove) and each cited source's key.

    One source, one key: a retrieved source keeps its marker, web results are
    numbered 1…n in order of first appearance. Every marker stays on its claim; only
    the opt-in one-marker-per-source-per-paragraph style removes earlier repeats,
    decided here so numbering follows the markers that survive. (GroundSource
    compares by identity: one object per source.)
    """
    target: dict[int, str | GroundSource] = {}  # marker → protected label, or the source it resolves to
    for c in citations:
        for occ in c.occurrences:
            if c.status == "protected":
                target[occ] = c.label
            elif c.source is not None and occ not in c.removed:
                target[occ] = c.source
    alive = set(target)
    if one_marker_per_source:
        alive -= one_marker_per_source_edits(doc, claims, {i: target[i] for i in alive})
    labels: dict[GroundSource, str] = {}
    next_web = 1
    for idx in sorted(alive, key=lambda i: (doc.markers[i].definition is not None, doc.markers[i].start)):
        src = target[idx]
        if isinstance(src, str) or src in labels:
            continue
        if src.marker:
            labels[src] = src.marker
        else:
            while str(next_web) in protected:
                next_web += 1
            labels[src] = str(next_web)
            next_web += 1
    fates: dict[int, str | None] = {}
    for c in citations:
        for occ in c.occurrences:
            value = target.get(occ) if occ in alive else None
            fates[occ] = None if value is None else value if isinstance(value, str) else labels[value]
    return fates, labels


def _release_lazy_prose(doc: ParsedDoc, keys: frozenset[str], report: ReconcileReport) -> ParsedDoc:
    """Prose a writer put right under a footnote definition, with no blank line, is by
    footnote syntax a lazy continuation of that definition — and would be deleted with
    it, since definitions are rebuilt from ground truth. It was meant as the next
    paragraph: give it the blank line it lacks (indented continuations stay)."""
    if all(d.line_end - d.line_start < 2 for d in doc.definitions):
        return doc  # every definition is one line: nothing can be under one
    lines = doc.source.splitlines(keepends=True)
    starts: list[int] = []
    for d in doc.definitions:
        if d.label.lower() in keys or not lines[d.line_start].startswith("[^"):
            continue  # protected text is the analyst's; inside a container, lines carry its marks
        for ln in range(d.line_start + 1, min(d.line_end, len(lines))):
            if lines[ln].strip() and not lines[ln][0].isspace() and lines[ln - 1].strip():
                starts.append(ln)
                report.warn(
                    "definition_swallowed_prose",
                    f"text right under the definition of [^{d.label}] (no blank line) was read as prose",
                )
                break  # the rest of the definition's range is that paragraph's, or the next definition's
    if not starts:
        return doc
    for ln in sorted(starts, reverse=True):
        lines.insert(ln, "\n" if lines[ln - 1].endswith("\n") else "\n\n")
    return parse("".join(lines), malformed=True)


def reconcile(
    markdown: str,
    sources: Iterable[object] | None,
    *,
    search_results: Sequence[object] | None = None,
    protected: Iterable[str] = DEFAULT_PROTECTED,
    exclude: Callable[[str], object] | None = None,
    subject: Iterable[str] = (),
    one_marker_per_source: bool = False,
) -> ReconcileResult:
    """Check every citation in ``markdown`` against the ground truth; see the module docstring.

    ``exclude(url)`` truthy blocks a web result (e.g. on a domain the analyst rejected).
    ``subject`` names the memo's subject (its name and aliases): not a distinctive name in a claim.
    ``one_marker_per_source`` turns on the one-marker-per-source-per-paragraph style."""
    keys = frozenset(p.lower() for p in ((protected,) if isinstance(protected, str) else protected))
    truth = GroundTruth.build(sources, search_results, exclude=exclude)
    resolved: dict[str, str | None] = {}

    def exact(url: str) -> str | None:
        """The URL retrieval returned for the page ``url`` names, or None when it was never retrieved."""
        if url not in resolved:
            src = truth.lookup_url(comparable(url))
            resolved[url] = src.url if src is not None else None
        return resolved[url]

    def allowed(url: str) -> bool:
        return exact(url) is not None

    report = ReconcileReport()
    screened = Screened()
    doc = _release_lazy_prose(parse(normalise_source(markdown), malformed=True), keys, report)
    doc = screen_draft(doc, keys, allowed, screened, exact=exact)
    citations, deleted_defs = _collect(doc, keys)
    decider = _Decider(doc, truth, keys, report, numbering(screened.bibliographies), subject)
    for c in citations:
        decider.decide(c)

    fates, labels = _final_labels(doc, citations, keys, decider.claims, one_marker_per_source)
    deleted_lines: set[int] = set()
    skip_blocks: set[int] = set()
    for di in deleted_defs:
        d = doc.definitions[di]
        deleted_lines.update(range(d.line_start, d.line_end))
        skip_blocks.update(d.blocks)
    deleted_lines |= _citation_reference_lines(doc, allowed)
    edits = rewrite_markers(doc, fates, hygiene=True, skip_blocks=skip_blocks, empty_lines=deleted_lines)
    deleted_lines |= _apparatus_heading_lines(doc, deleted_lines)
    edits += delete_lines(doc, deleted_lines)
    body = apply_edits(doc.source, edits)
    renames: dict[str, str] = {}
    if needs_tidy(body):  # hygiene was applied above; tidy runs only when something is left for it
        body, stats = tidy_with_stats(body, protected=keys, one_marker_per_source=one_marker_per_source)
        renames = stats.renames
    body = _close_open_fence(screen_body(body, keys, allowed, screened, exact=exact).lstrip("\n").rstrip())

    definitions = [HouseDefinition(renames.get(label, label), src) for src, label in labels.items()]
    sections = render_sources_sections(definitions)
    text = "\n\n".join(part for part in (body, sections.rstrip("\n")) if part) + "\n"

    for c in citations:
        v = c.verdict
        report.citations.append(
            CitationRecord(
                key=c.label,
                status=c.status,
                retitled=c.retitled,
                cited_url=c.cited_url,
                resolved_url=c.source.url if c.source is not None else None,
                score=c.score if c.score is not None else (round(v.score, 4) if v is not None else None),
                claim=c.claim,
                support=v.support if v is not None else None,
                evidence=v.evidence if v is not None else None,
                weak=c.status == "verified" and v is not None and v.support == UNSUPPORTED,
                reason=v.reason if v is not None else c.reason,
                about=c.source.about if c.source is not None else None,
            )
        )
    dropped = {
        occ: c.reason or "its citation was dropped"
        for c in citations
        if c.status in ("dropped", "out_of_range") or c.removed
        for occ in c.occurrences
        if fates.get(occ) is None
    }
    report.uncited = [UncitedClaim(claim=t, reason=r) for t, r in uncited_claims(doc, decider.claims, fates, dropped)]
    report_screening(report, screened, truth, allowed)
    _flag_namesake_citations(report)
    _summarise_warnings(report, doc, truth, citations)
    return ReconcileResult(text=text, report=report, body=body + "\n" if body else "", definitions=definitions)


def _citation_reference_lines(doc: ParsedDoc, allowed: Callable[[str], bool]) -> set[int]:
    """``[N]: url`` reference definitions that ``[N]`` citations went through: their citations now have
    house definitions, so the lines go — unless an ordinary link also uses a retrieved one."""
    if not doc.references:
        return set()  # no reference definition to delete
    citing = citation_references(doc)
    if not citing:
        return set()
    linked = set()
    for block in doc.blocks:
        for s in block.spans:
            if s.rule == "link" and not s.nested and citation_link_label(block.content, s) is None:
                linked.add(reference_label(block.content, s))
    lines: set[int] = set()
    for ref in doc.references:
        if ref.label in citing and not (ref.label in linked and allowed(ref.href)):
            lines.update(range(ref.line_start, ref.line_end))
    return lines


def _close_open_fence(body: str) -> str:
    """A draft cut off inside a code fence (a truncated answer) would swallow the Sources sections
    appended after it, hiding every definition: close the fence first."""
    if "```" not in body and "~~~" not in body:
        return body
    fences = [t for t in scan(body)[0] if t.type == "fence" and t.map and t.level == 0]
    if not fences:
        return body
    last, lines = fences[-1], body.split("\n")
    assert last.map is not None  # only fences that carry their lines were kept
    first, end = last.map
    closing = re.compile(rf" {{0,3}}{re.escape(last.markup[0])}{{{len(last.markup)},}}[ \t]*")
    if end < len(lines) or (end - 1 > first and closing.fullmatch(lines[end - 1])):
        return body
    return body + "\n" + last.markup


def _summarise_warnings(
    report: ReconcileReport, doc: ParsedDoc, truth: GroundTruth, citations: list[_Citation]
) -> None:
    if truth.empty and any(c.status == "dropped" and c.occurrences for c in citations):
        n = sum(1 for c in citations if c.status == "dropped" and c.occurrences)
        report.warn(
            "empty_ground_truth", f"no retrieved sources and no search results: all {n} unprotected citations dropped"
        )
    if report.placeholder_urls:
        report.warn(
            "placeholder_url",
            f"{report.placeholder_urls} placeholder/fabricated URL(s) cited (reserved example domains, XXXX, /path/to/, {{…}})",
        )
    if doc.numeric_reference_links:
        report.warn(
            "reference_link",
            f"{doc.numeric_reference_links} [N] marker(s) resolved by a [N]: reference "
            "definition are links, not citations, and were left as written",
        )
    if doc.unmapped:
        report.warn("unmapped", f"{doc.unmapped} marker(s) could not be located in the source and were left as written")
    for record in report.citations:
        if record.weak:
            report.warn(
                "weak_citation",
                f"weak citation [^{record.key}]: retrieved, but it does not support its claim ({record.reason})",
            )


def _flag_namesake_citations(report: ReconcileReport) -> None:
    """Every kept citation whose source is about a namesake, named in the warnings."""
    for c in report.citations:
        if c.about and c.about.get("verdict") == "namesake" and c.status in ("verified", "substituted"):
            report.warn(
                "namesake_citation",
                f"[^{c.key}] cites {c.resolved_url}, a source about a namesake ({c.about.get('reason', '')})",
            )
