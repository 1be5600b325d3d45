"""What the writer wrote in a footnote definition: the cited URL, its title, its dates.

Definitions come as ``[Title](url)``, ``<url>``, a bare URL, or a house-format
line; the URL is the first link/autolink destination, else the first bare URL
in prose (``bare_urls``: parentheses balanced, so ``…/NATS_(company)`` is whole),
else a code span that looks like a URL or path. Dates are read from the text
outside links and URLs (URL paths and titles often contain dates that are not
the citation's date).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from operator import attrgetter

from sourcedesk.core.citations.bare_urls import comparable, find_bare_urls
from sourcedesk.core.citations.dates import PartialDate, find_dates, parse_date
from sourcedesk.core.citations.ground import GroundSource
from sourcedesk.core.citations.parse import Definition, ParsedDoc

_TEXTUAL = frozenset({"escape", "entity"})
_NON_WORD = re.compile(r"[\W_]+")
_QUOTED = re.compile(r"[\"“]([^\"”]{3,})[\"”]")


@dataclass
class WrittenDefinition:
    url: str | None = None
    title: str | None = None
    dates: list[PartialDate] = field(default_factory=list)


def read_definition(doc: ParsedDoc, definition: Definition) -> WrittenDefinition:
    out = WrittenDefinition()
    outside: list[str] = []
    code_urls: list[str] = []
    for bi in definition.blocks:
        block = doc.blocks[bi]
        c, pos = block.content, 0
        # escapes and entities stay in the prose: "https://x.org/a\_b" is one URL
        spans = [s for s in block.spans if not s.nested and s.rule not in _TEXTUAL]
        if len(spans) > 1:
            spans.sort(key=attrgetter("start"))
        for span in spans:
            outside.append(c[pos : span.start])
            pos = max(pos, span.end)
            if span.rule in ("link", "autolink") and span.href and not span.href.startswith("#"):
                if out.url is None:
                    out.url = span.href
                    if span.rule == "link" and span.text and span.text.strip() != span.href:
                        out.title = span.text.strip()
            elif span.rule == "backticks" and span.text and re.search(r"://|^/|^\w:\\", span.text.strip()):
                code_urls.append(span.text.strip())
        outside.append(c[pos:])
    prose = "\n".join(outside)
    if prose.isspace() or not prose:  # the usual definition: one link, no text around it for a title or a date
        if out.url is None and code_urls:
            out.url = code_urls[0]
        return out
    found = find_bare_urls(prose)
    if out.url is None and found:
        out.url = comparable(prose[found[0][0] : found[0][1]])
    if out.url is None and code_urls:
        out.url = code_urls[0]
    if out.title is None:
        quoted = _QUOTED.search(prose)
        out.title = quoted.group(1).strip() if quoted else None
    for a, b in reversed(found):
        prose = prose[:a] + " " + prose[b:]
    out.dates = find_dates(prose)
    return out


def _norm_title(title: str) -> str:
    text = unicodedata.normalize("NFKC", title).casefold()
    return " ".join(_NON_WORD.sub(" ", text).split())


def titles_agree(written: str, truth: str) -> bool:
    """Same title up to case/punctuation; a truncated source title ("…", "...") matches by prefix."""
    w, t = _norm_title(written), _norm_title(truth)
    if w == t:
        return True
    return bool(truth.rstrip().endswith(("...", "…")) and t and w.startswith(t))


def differs(written: WrittenDefinition | None, source: GroundSource) -> bool:
    """Whether the writer's title or a date it gave disagrees with the retrieved source (→ retitled)."""
    if written is None:
        return False
    if written.title and source.title and not titles_agree(written.title, source.title):
        return True
    truth = [d for d in (parse_date(source.published), parse_date(source.updated)) if d]
    return any(not any(d.agrees_with(t) for t in truth) for d in written.dates)
