"""Before and after the citations are decided: the writer's sources lists and every unretrieved URL.

The reconciler decides citations; this is the rest of the promise that no URL
reaches a section unless retrieval returned it (a URL the writer typed itself is as
likely invented as real):

* ``screen_draft`` — before citations are decided: the writer's own sources
  lists go (``bibliography``) and every web URL outside a citation that was not
  retrieved is taken out (``links``), protected definitions included. The
  writer's unprotected footnote definitions are left alone: their URLs are
  what the citations are checked by, and they are rebuilt from ground truth.
* ``screen_body`` — after: the finished body is checked again (cheap when it
  holds: one scan of the text), so nothing an edit turned into something else
  can carry a URL through.
* ``report_screening`` — one warning per removed URL (``unretrieved_link``), per
  sources list (``writer_sources_list_removed``, naming its unretrieved URLs),
  per malformed marker read as a marker; and the ``links_removed`` count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sourcedesk.core.citations.bare_urls import comparable
from sourcedesk.core.citations.bibliography import Bibliography, find_bibliographies, numbering
from sourcedesk.core.citations.ground import GroundTruth
from sourcedesk.core.citations.html_links import attribute_urls, scan_html, unsafe_attributes
from sourcedesk.core.citations.links import screen_links, strip_remaining
from sourcedesk.core.citations.parse import ParsedDoc, parse
from sourcedesk.core.citations.placeholders import is_placeholder_url
from sourcedesk.core.citations.removed_links import LinkScreen
from sourcedesk.core.citations.report import ReconcileReport
from sourcedesk.core.citations.rewrite import apply_edits, delete_lines
from sourcedesk.core.citations.tidy import tidy_with_stats
from sourcedesk.core.citations.web_urls import find_web_urls
from sourcedesk.core.net.urls import normalise_url


@dataclass
class Screened:
    """What was taken out before and after the citations were decided (for the report)."""

    bibliographies: list[Bibliography] = field(default_factory=list)
    screens: list[LinkScreen] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)


def screen_draft(
    doc: ParsedDoc,
    keys: frozenset[str],
    allowed: Callable[[str], bool],
    screened: Screened,
    *,
    exact: Callable[[str], str | None] | None = None,
) -> ParsedDoc:
    """Remove the writer's Sources lists and every unretrieved URL outside citations; re-parse if anything changed.

    The writer's own (unprotected) footnote definitions are left alone: their URLs are what the
    citations are checked by, and the definitions are rebuilt from ground truth anyway."""
    rebuilt = [d for d in doc.definitions if d.label.lower() not in keys]
    def_lines = {ln for d in rebuilt for ln in range(d.line_start, d.line_end)}
    def_blocks = {bi for d in rebuilt for bi in d.blocks}
    bibliographies = find_bibliographies(doc, skip_lines=def_lines, removable_lines=def_lines)
    bib_lines = {ln for b in bibliographies for ln in b.lines}
    screen = screen_links(doc, allowed, skip_blocks=def_blocks, skip_lines=def_lines | bib_lines, exact=exact)
    screened.bibliographies += bibliographies
    screened.screens.append(screen)
    if not (bib_lines or screen.lines or screen.edits):
        out = doc
    else:
        out = parse(apply_edits(doc.source, screen.edits + delete_lines(doc, bib_lines | screen.lines)), malformed=True)
    screened.malformed += [
        m.text
        for m in out.markers
        if m.kind == "footnote"
        and m.raw is not None
        and (m.definition is None or out.definitions[m.definition].label.lower() in keys)
    ]
    return out


def screen_body(
    body: str,
    keys: frozenset[str],
    allowed: Callable[[str], bool],
    screened: Screened,
    *,
    exact: Callable[[str], str | None] | None = None,
) -> str:
    """The promise, checked on the finished body: any unretrieved web URL still there is removed.

    Cheap when it holds (a scan of the text); only a suspicious URL — in code, say — costs a parse.
    Screened as links first; what an earlier edit hid from that (text that turned into something
    else) then loses its characters (``strip_remaining``)."""
    screeners: tuple[Callable[[ParsedDoc], LinkScreen], ...] = (
        lambda doc: screen_links(doc, allowed, exact=exact),
        lambda doc: strip_remaining(doc, allowed),
    )
    for screen_doc in screeners:
        if all(allowed(comparable(body[a:b])) for a, b in find_web_urls(body)) and not _suspicious_html(body, allowed):
            break
        doc = parse(body)
        screen = screen_doc(doc)
        if screen.edits or screen.lines:
            screened.screens.append(screen)
            body = tidy_with_stats(
                apply_edits(doc.source, screen.edits + delete_lines(doc, screen.lines)), protected=keys
            )[0]
    return body


def _suspicious_html(body: str, allowed: Callable[[str], bool]) -> bool:
    """Whether an HTML attribute in ``body`` still carries an unretrieved URL (entity-encoded
    schemes and ``//host`` forms do not show up as bare URLs)."""
    if "<" not in body or "=" not in body:
        return False
    return unsafe_attributes(body) or any(
        not allowed(url) for tag in scan_html(body).tags for attr in tag.attributes for url in attribute_urls(attr)
    )


def report_screening(
    report: ReconcileReport, screened: Screened, truth: GroundTruth, allowed: Callable[[str], bool]
) -> None:
    for raw in dict.fromkeys(screened.malformed):
        label = raw[2:-1].strip()
        report.warn(
            "malformed_marker", f"{raw} is not footnote syntax (a space inside the brackets); read as [^{label}]"
        )
    for bib in screened.bibliographies:
        if not bib.entries:
            continue  # a bare "Sources:" label over the writer's definitions
        urls = [u for e in bib.entries for u in e.urls]
        unretrieved = [u for u in urls if not allowed(u)]
        report.links_removed += len(unretrieved)
        report.placeholder_urls += sum(1 for u in unretrieved if is_placeholder_url(u))
        detail = f"; never retrieved: {', '.join(unretrieved)}" if unretrieved else ""
        report.warn(
            "writer_sources_list_removed",
            f"removed the writer's own sources list ({len(bib.entries)} "
            f"entr{'y' if len(bib.entries) == 1 else 'ies'}{detail}); "
            "the note's Sources sections list retrieved sources only",
        )
    numbers = numbering(screened.bibliographies)
    if numbers and truth.indexed:
        disagree = [
            n
            for n, url in numbers.items()
            if int(n) > len(truth.indexed) or truth.indexed[int(n) - 1].norm != normalise_url(url)
        ]
        if disagree:
            report.warn(
                "writer_numbering_ignored",
                f"the writer's sources list numbers {', '.join(f'[{n}]' for n in disagree)} differently from "
                "its search results; [N] markers were resolved by the search results",
            )
    for screen in screened.screens:
        for removed in screen.removed:
            if removed.kind == "handler":  # script, not a link: warned about, not counted as a link
                report.warn("html_script_removed", removed.message())
                continue
            report.links_removed += int(removed.text) if removed.kind == "scheme" and removed.text.isdigit() else 1
            if is_placeholder_url(removed.url):
                report.placeholder_urls += 1
            report.warn("unretrieved_link", removed.message())
