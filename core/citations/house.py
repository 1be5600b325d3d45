"""The house format for footnote definitions, and the two "Sources" sections.

One definition per line, every part rebuilt from ground truth, never from what
the writer typed::

    [^3]: 2024, Mar 05. [Title](https://host/path). host. Published: 2024-03-05 · Updated: 2024-04-01

* leading human date = the published date (else the updated date), at the
  precision the source gave (``2024, Mar 05`` / ``2024, Mar`` / ``2024``);
* ``[Title](url)`` — the title is escaped so source text is never read as
  markup; an empty title shows the URL without its scheme; URLs that are not
  http(s) (local files) are shown as a code span instead of a link;
* publisher = the host without ``www.``;
* ``Published: …`` / ``Updated: …`` in ISO form, each only when known.

Absent parts are omitted with their separator. Web-search definitions (numeric
keys) go under ``## Sources (web search)``, retrieved ones (``E3``, ``V1``…)
under ``## Sources (retrieved)``; the reconciler recognises these headings and
rebuilds them, so reconciling a finished note again changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sourcedesk.core.citations.dates import parse_date
from sourcedesk.core.citations.ground import MARKER_RE, GroundSource, coerce_source
from sourcedesk.core.net.urls import host_of, strip_www

WEB_HEADING = "## Sources (web search)"
RETRIEVED_HEADING = "## Sources (retrieved)"
HOUSE_HEADINGS = (WEB_HEADING, RETRIEVED_HEADING)
_PREFIX_ORDER = {"E": 0, "V": 1, "W": 2}
_TITLE_ESCAPE = re.compile(r"([\\`*_\[\]<>&~^|])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")  # only looked for in text that is not all printable
_MAX_TITLE = 300
_NEEDS_BRACKETS = re.compile(r"[\s()\\]")
_BACKTICKS = re.compile(r"`+")
_WEB_SCHEME = re.compile(r"(?i)^https?://")
_WEB_PREFIX = re.compile(r"(?i)^https?://(www\.)?")


@dataclass(frozen=True)
class HouseDefinition:
    key: str
    source: GroundSource

    @property
    def namespace(self) -> str:
        return namespace_of(self.key)

    def render(self) -> str:
        return format_definition(self.key, self.source)


def namespace_of(key: str) -> str:
    """``retrieved`` for marker keys (``E3``), ``web`` for everything else."""
    return "retrieved" if MARKER_RE.match(key) else "web"


def escape_text(text: str) -> str:
    """Make untrusted text inert inside link text: one line, markup characters escaped."""
    text = " ".join((text if text.isprintable() else _CONTROL.sub(" ", text)).split())
    if len(text) > _MAX_TITLE:
        text = text[: _MAX_TITLE - 1].rstrip() + "…"
    return _TITLE_ESCAPE.sub(_escaped, text) if _TITLE_ESCAPE.search(text) else text


def _escaped(m: re.Match[str]) -> str:
    return "\\" + m.group(1)


def _destination(url: str) -> str:
    url = (url if url.isprintable() else _CONTROL.sub("", url)).replace("<", "%3C").replace(">", "%3E")
    if _NEEDS_BRACKETS.search(url):
        return "<" + url + ">"
    return url


def _code_span(text: str) -> str:
    text = _CONTROL.sub(" ", text)
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def format_definition(key: str, source: object) -> str:
    """Render ``[^key]: …`` in the house format from a ground-truth source (or anything coercible)."""
    src = source if isinstance(source, GroundSource) else coerce_source(source, "source")
    published = parse_date(src.published)
    updated = parse_date(src.updated)
    parts: list[str] = []
    lead = published or updated
    if lead:
        parts.append(lead.human())
    is_web = bool(_WEB_SCHEME.match(src.url))
    if is_web:
        shown = src.title or _WEB_PREFIX.sub("", src.url).rstrip("/")
        parts.append(f"[{escape_text(shown)}]({_destination(src.url)})")
        host = strip_www(host_of(src.url) or "")
        if host:
            parts.append(host)
    else:
        if src.title:
            parts.append(escape_text(src.title))
        parts.append(_code_span(src.url))
    head = ". ".join(parts) + "."
    trailer = []
    if published:
        trailer.append(f"Published: {published.iso()}")
    if updated:
        trailer.append(f"Updated: {updated.iso()}")
    line = f"[^{key}]: {head}"
    if trailer:
        line += " " + " · ".join(trailer)
    return line


def _sort_key(key: str) -> tuple[int, str, int]:
    m = MARKER_RE.match(key)
    if m:
        return (_PREFIX_ORDER.get(m.group(1), 9), m.group(1), int(m.group(2)))
    if key.isdigit():
        return (0, "", int(key))
    return (1, key, 0)


def render_sources_sections(definitions: Iterable[HouseDefinition | tuple[str, object]]) -> str:
    """Group definitions under the two house headings (empty groups omitted); ends with a newline."""
    web: list[tuple[str, object]] = []
    retrieved: list[tuple[str, object]] = []
    for item in definitions:
        key, source = (item.key, item.source) if isinstance(item, HouseDefinition) else item
        (retrieved if namespace_of(key) == "retrieved" else web).append((key, source))
    blocks = []
    for heading, group in ((WEB_HEADING, web), (RETRIEVED_HEADING, retrieved)):
        if group:
            lines = [format_definition(k, s) for k, s in sorted(group, key=lambda ks: _sort_key(ks[0]))]
            blocks.append(heading + "\n\n" + "\n".join(lines) + "\n")
    return "\n".join(blocks)
