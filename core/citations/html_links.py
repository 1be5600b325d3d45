"""Raw HTML in a draft, read with a linear HTML tokenizer (``html_tokens``), and screened.

A browser opens more than ``href``: images load ``src`` and every ``srcset``
candidate, forms post to ``action``/``formaction``, videos fetch ``poster``, a
``<meta http-equiv=refresh content="0; url=…">`` navigates, and any attribute may
hold a URL written ``//host``, ``https:/host``, ``https:\\host`` or with an
entity-encoded scheme (``&#104;ttps:``), which the browser decodes first. So every
attribute of every tag is read (values entity-decoded, tabs and newlines dropped, as
the browser reads them):

* only http(s) links to retrieved sources survive: an attribute that carries a URL
  retrieval never returned is removed whole (name and value), and so is a URL
  attribute (``href``, ``src``, …) holding anything but a web URL —
  ``javascript:``, ``jav&#x09;ascript:``, ``vbscript:``, ``data:``, ``file:``, a
  relative path; the tag and its text stay;
* an event handler (``onerror``, ``onclick``, any ``on…``), ``srcdoc``, and any
  attribute that names a script scheme is removed whole: raw HTML never runs script;
* an attribute whose URLs were all retrieved is rewritten to the exact URLs
  retrieval returned (no tracking parameters or credentials the writer added).

The tokenizer also says where the text between tags is, so markers written inside
HTML (``<p>… [^1]</p>``) are found and reconciled like any other. It reads each
character a bounded number of times: 1 MB of unterminated ``<!--`` or ``<a href=``
takes as long as 1 MB of prose (Python's ``html.parser`` rescanned it quadratically).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from sourcedesk.core.citations.bare_urls import unescape_attribute
from sourcedesk.core.citations.html_tokens import Attribute, Tag, start_tag, tokenize

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
_SPACED = frozenset({"ping", "archive"})
# Attributes that run script or hold a whole document: never kept, whatever they say.
_ALWAYS_REMOVED = frozenset({"srcdoc"})
# A script scheme anywhere in a value (after entities, tabs and newlines are taken out, as a browser does).
_SCRIPT_SCHEME = re.compile(r"(?i)\b(?:java|vb|live|ecma)script\s*:")
# A web URL written anywhere inside a value: schemes with any run of slashes/backslashes, or //host.
_EMBEDDED = re.compile(r"(?i)(?:https?:[/\\]+|(?<![\w:])[/\\]{2}(?=[\w-]+\.))[^\s\"'<>()]+")
# What a value must start with to be a web URL (``is_web_url``'s rule, on a value already decoded).
_WEB_START = re.compile(r"(?i)(?:https?:[/\\]+|[/\\]{2}(?=[^/\\\s])|www\.)")
# A browser's URL parser drops every ASCII tab and newline before it reads a URL:
# ``ht&#x09;tps://host`` and ``ht<newline>tps://host`` are ``https://host``.
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")


@dataclass
class HtmlScan:
    tags: list[Tag] = field(default_factory=list)
    text: list[tuple[int, int]] = field(default_factory=list)  # text between tags


def scan_html(source: str) -> HtmlScan:
    """Tags (with their attributes as written) and text runs of an HTML fragment, with offsets into it."""
    tokens = tokenize(source)
    return HtmlScan(tokens.tags, tokens.text)


def attribute_value(attribute: Attribute) -> str:
    """The value as a browser reads it: entities decoded, tabs and newlines dropped, trimmed."""
    raw = attribute.raw_value
    if "&" in raw:
        raw = unescape_attribute(raw)
    if "\t" in raw or "\n" in raw or "\r" in raw:
        raw = raw.translate(_TAB_OR_NEWLINE)
    return raw.strip()


def _parts(name: str, value: str) -> list[str]:
    if name in _LISTS:
        return [c.strip().split()[0] for c in value.split(",") if c.strip()]
    if name in _SPACED:
        return value.split()
    return [value] if value else []


def attribute_urls(attribute: Attribute) -> list[str]:
    """The web URLs an attribute carries, as a browser would read them."""
    value = attribute_value(attribute)
    if attribute.name not in URL_ATTRIBUTES:
        return _EMBEDDED.findall(value) if ("/" in value or "\\" in value) else []
    parts = _parts(attribute.name, value)
    found = [p for p in parts if _WEB_START.match(p)]
    return found + [u for p in parts if not _WEB_START.match(p) for u in _EMBEDDED.findall(p)]


@dataclass(frozen=True)
class HtmlEdit:
    start: int  # offsets in the HTML text
    end: int
    text: str
    removed: tuple[str, ...] = ()  # what this edit takes out: unretrieved URLs, or the refused attributes' names
    kind: str = "html"  # "html" (a URL), "scheme" (a URL attribute holding no web URL), "handler" (script)
    count: int = 1  # attributes this edit removes (refused ones side by side are one edit)


def refusal(attribute: Attribute) -> str | None:
    """``"handler"`` for an attribute that runs script (an event handler, ``srcdoc``, a script scheme
    anywhere in it), ``"scheme"`` for a URL attribute holding something other than a web URL, else None."""
    name = attribute.name
    if name[:2] == "on" or name in _ALWAYS_REMOVED:
        return "handler"
    value = attribute_value(attribute)
    if ":" in value and "script" in value.lower() and _SCRIPT_SCHEME.search(value):
        return "handler"
    if name in URL_ATTRIBUTES and any(not _WEB_START.match(p) for p in _parts(name, value)):
        return "scheme"
    return None


class _Refused:
    """Refused attributes of one kind side by side, gathered into one removal."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.reset()

    def reset(self) -> None:
        self.start = self.end = self.count = 0
        self.kind = ""
        self.names = []

    def add(self, attr: Attribute, kind: str) -> None:
        if not self.count:
            self.start, self.kind = attr.start, kind
        self.end = attr.end
        self.count += 1
        if attr.name not in self.names and len(self.names) < 3:
            self.names.append(attr.name)

    def flush(self, edits: list[HtmlEdit]) -> None:
        if self.count:
            edits.append(HtmlEdit(self.start, self.end, "", tuple(self.names), self.kind, self.count))
        self.reset()


def screen_html(
    source: str, allowed: Callable[[str], bool], exact: Callable[[str], str | None] | None = None
) -> list[HtmlEdit]:
    """Edits that take out of the attributes of ``source`` (an HTML fragment) every unretrieved
    URL, every URL attribute that holds no web URL and every event handler, and point every
    retrieved URL at the exact URL retrieval returned. Refused attributes side by side go in one
    edit (a tag of 100,000 ``href=`` is one removal, not 100,000)."""
    edits: list[HtmlEdit] = []
    refused = _Refused()
    for tag in _tags(source):
        for attr in tag.attributes:
            kind = refusal(attr)
            if kind is not None:
                if kind != refused.kind:
                    refused.flush(edits)
                refused.add(attr, kind)
                continue
            refused.flush(edits)
            edits += _screened(attr, allowed, exact)
        refused.flush(edits)
    return edits


def _tags(source: str) -> list[Tag]:
    """The tags of ``source``; an inline tag (the usual fragment) is read without the whole tokenizer."""
    one = source[1:2]
    if source[:1] == "<" and one.isascii() and one.isalpha():
        tag = start_tag(source, 0)
        if tag.end == len(source):
            return [tag]
    return tokenize(source).tags


def _screened(
    attr: Attribute, allowed: Callable[[str], bool], exact: Callable[[str], str | None] | None
) -> list[HtmlEdit]:
    urls = attribute_urls(attr)
    if not urls:
        return []
    bad = tuple(u for u in urls if not allowed(u))
    if bad:
        return [HtmlEdit(attr.start, attr.end, "", bad)]
    rewritten = _exact_value(attr, urls, exact) if exact is not None else None
    return [rewritten] if rewritten is not None else []


def _exact_value(attr: Attribute, urls: list[str], exact: Callable[[str], str | None]) -> HtmlEdit | None:
    original = attribute_value(attr)
    value = original
    for url in urls:
        to = exact(url)
        if to is not None and to != url:
            value = value.replace(url, to)
    if value == original:
        return None
    quoted = value.replace("&", "&amp;").replace('"', "&quot;")
    return HtmlEdit(attr.start, attr.end, f' {attr.name}="{quoted}"')


def unsafe_attributes(source: str) -> bool:
    """Whether ``source`` still holds an attribute that is never kept (a handler, a script scheme,
    a URL attribute with no web URL)."""
    return any(refusal(attr) is not None for tag in tokenize(source).tags for attr in tag.attributes)
