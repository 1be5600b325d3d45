"""Raw HTML in a draft, read with a real HTML tokenizer (Python's ``html.parser``).

A browser opens more than ``href``: images load ``src`` and every ``srcset``
candidate, forms post to ``action``/``formaction``, videos fetch ``poster``, a
``<meta http-equiv=refresh content="0; url=…">`` navigates, and any attribute may
hold a URL written ``//host``, ``https:/host``, ``https:\\host`` or with an
entity-encoded scheme (``&#104;ttps:``), which the browser decodes first. So every
attribute of every tag is read (values entity-decoded, as the browser reads them):

* an attribute that carries a URL retrieval never returned is removed whole
  (name and value); the tag and its text stay;
* an attribute whose URLs were all retrieved is rewritten to the exact URLs
  retrieval returned (no tracking parameters or credentials the writer added).

The tokenizer also says where the text between tags is, so markers written inside
HTML (``<p>… [^1]</p>``) are found and reconciled like any other.
"""

from __future__ import annotations

import html
import html.parser
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser

from sourcedesk.core.citations.bare_urls import unescape_attribute
from sourcedesk.core.citations.parse import is_web_url

# Attributes whose whole value is a URL (or a list of them) in some element.
URL_ATTRIBUTES = frozenset(
    {
        "href",
        "src",
        "srcset",
        "imagesrcset",
        "action",
        "formaction",
        "poster",
        "cite",
        "data",
        "background",
        "longdesc",
        "usemap",
        "manifest",
        "codebase",
        "archive",
        "classid",
        "profile",
        "icon",
        "dynsrc",
        "lowsrc",
        "ping",
        "xlink:href",
        "itemid",
    }
)
_LISTS = frozenset({"srcset", "imagesrcset"})
_RAW_TEXT = frozenset({"script", "style", "textarea", "title"})
_SPACED = frozenset({"ping", "archive"})
# The tokenizer's own attribute syntax (not in the type stubs, so read from the module).
_ATTRIBUTE: re.Pattern[str] = vars(html.parser)["attrfind_tolerant"]
# A web URL written anywhere inside a value: schemes with any run of slashes/backslashes, or //host.
_EMBEDDED = re.compile(r"(?i)(?:https?:[/\\]+|(?<![\w:])[/\\]{2}(?=[\w-]+\.))[^\s\"'<>()]+")


@dataclass(frozen=True)
class Attribute:
    name: str  # lower-cased
    start: int  # offsets in the HTML text: the whole attribute (leading whitespace included)
    end: int
    value: str  # entity-decoded, as a browser reads it


@dataclass(frozen=True)
class Tag:
    name: str
    start: int
    end: int
    attributes: tuple[Attribute, ...] = ()


@dataclass
class HtmlScan:
    tags: list[Tag] = field(default_factory=list)
    text: list[tuple[int, int]] = field(default_factory=list)  # text between tags


class _Tokenizer(HTMLParser):
    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=False)
        self.source = source
        self.lines = [0] + [m.end() for m in re.finditer("\n", source)]
        self.scan = HtmlScan()
        self._raw: str | None = None  # inside <script>/<style>: their content is code, not text
        self._closing = False

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.lines[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text() or ""
        start = self._offset()
        self.scan.tags.append(Tag(tag, start, start + len(raw), tuple(_attributes(raw, start))))
        if tag in _RAW_TEXT:
            self._raw = tag

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text() or ""
        start = self._offset()
        self.scan.tags.append(Tag(tag, start, start + len(raw), tuple(_attributes(raw, start))))

    def handle_endtag(self, tag: str) -> None:
        if tag == self._raw:
            self._raw = None

    def close(self) -> None:
        self._closing = True  # what is left now is an unclosed comment, tag or declaration
        super().close()

    def handle_data(self, data: str) -> None:
        if self._raw is not None or self._closing or data.lstrip().startswith("<"):
            return  # script/style content, or an unclosed comment or tag: not text a reader sees
        start = self._offset()
        if self.scan.text and self.scan.text[-1][1] == start:
            self.scan.text[-1] = (self.scan.text[-1][0], start + len(data))
        else:
            self.scan.text.append((start, start + len(data)))

    def handle_entityref(self, name: str) -> None:
        self.handle_data(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.handle_data(f"&#{name};")


def _attributes(raw: str, base: int) -> list[Attribute]:
    name_end = re.match(r"<[^\s/>]+", raw)
    pos = name_end.end() if name_end else 1
    out = []
    while True:
        m = _ATTRIBUTE.search(raw, pos)
        if m is None or m.start() >= len(raw) - 1:
            break
        value = m.group(3) or ""
        if value[:1] in ("'", '"') and value[-1:] == value[:1] and len(value) >= 2:
            value = value[1:-1]
        lead = m.start()
        while lead > 0 and raw[lead - 1].isspace():
            lead -= 1
        end = m.start() + len(m.group(1)) + len(m.group(2) or "")
        out.append(Attribute(m.group(1).lower(), base + lead, base + end, unescape_attribute(value)))
        pos = max(m.end(), m.start() + 1)
    return out


def scan_html(source: str) -> HtmlScan:
    """Tags (with their attributes) and text runs of an HTML fragment, with offsets into it."""
    tokenizer = _Tokenizer(source)
    tokenizer.feed(source)
    tokenizer.close()
    return tokenizer.scan


# A browser's URL parser drops every ASCII tab and newline before it reads a URL:
# ``ht&#x09;tps://host`` and ``ht<newline>tps://host`` are ``https://host``.
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")


def _as_parsed(value: str) -> str:
    return value.translate(_TAB_OR_NEWLINE)


def attribute_urls(attribute: Attribute) -> list[str]:
    """The web URLs an attribute carries, as a browser would read them."""
    value = _as_parsed(attribute.value).strip()
    if attribute.name in URL_ATTRIBUTES:
        if attribute.name in _LISTS:
            parts = [c.strip().split()[0] for c in value.split(",") if c.strip()]
        elif attribute.name in _SPACED:
            parts = value.split()
        else:
            parts = [value]
        found = [p for p in parts if is_web_url(p)]
        return found + [u for p in parts if not is_web_url(p) for u in _EMBEDDED.findall(p)]
    return _EMBEDDED.findall(value)


@dataclass(frozen=True)
class HtmlEdit:
    start: int  # offsets in the HTML text
    end: int
    text: str
    removed: tuple[str, ...] = ()  # unretrieved URLs this edit takes out


def screen_html(
    source: str, allowed: Callable[[str], bool], exact: Callable[[str], str | None] | None = None
) -> list[HtmlEdit]:
    """Edits that take every unretrieved URL out of the attributes of ``source`` (an HTML
    fragment) and point every retrieved one at the exact URL retrieval returned."""
    edits: list[HtmlEdit] = []
    for tag in scan_html(source).tags:
        for attr in tag.attributes:
            urls = attribute_urls(attr)
            if not urls:
                continue
            bad = tuple(u for u in urls if not allowed(u))
            if bad:
                edits.append(HtmlEdit(attr.start, attr.end, "", bad))
                continue
            if exact is None:
                continue
            value = _as_parsed(attr.value)
            for url in urls:
                to = exact(url)
                if to is not None and to != url:
                    value = value.replace(url, to)
            if value != _as_parsed(attr.value):
                quoted = value.replace("&", "&amp;").replace('"', "&quot;")
                edits.append(HtmlEdit(attr.start, attr.end, f' {attr.name}="{quoted}"'))
    return edits
