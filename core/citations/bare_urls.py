"""Bare URLs in text: where one starts and, above all, where it ends.

The one definition of "a URL written as plain text" for the citation code (a
writer's definition ``[^2]: https://…``, URLs in prose, in raw HTML, in a
writer's Sources list). It follows the GFM autolink extension, the rules a
reader's renderer uses to turn such text into a link:

* starts at ``http://`` / ``https://`` (anywhere: a URL glued to a word is
  still a URL the note must not carry) or at ``www.`` after a boundary;
* runs until whitespace, ``<``, ``>``, a bracket ``[``/``]`` or a backtick;
* trailing ``? ! . , : ; * _ ~ ' "`` and a backslash are punctuation, not URL;
* a ``)`` belongs to the URL only while the parentheses balance, so
  ``https://en.wikipedia.org/wiki/NATS_(company)`` is whole and
  ``(see https://nats.io)`` is not ``…nats.io)``. Unlike GFM, a ``)`` that closes
  nothing ends the URL even mid-word (``(https://x.io)lists``): a URL must never
  swallow a prose word.

``comparable(url)`` undoes markdown escapes and entities the way a renderer
would, so the URL compared with the ground truth is the URL a reader gets.
"""

from __future__ import annotations

import html
import html.entities
import re
import unicodedata

_START = re.compile(r"(?i)https?://|(?<![\w.@/:\\-])www\.")
_STOP = set('<>[]`"')


def _body_end(text: str, pos: int, end: int) -> int:
    """Where a bare URL that starts its body at ``pos`` ends.

    The host may hold non-ASCII letters (an IDN); after it, only printable ASCII — a
    writer glues prose to URLs ("…/x。这是…", "…/x—the company…", a zero-width space),
    and those words must stay prose, never be removed as part of the URL."""
    in_host = True
    i = pos
    while i < end:
        ch = text[i]
        if ch.isspace() or ch in _STOP:
            break
        if ch in "/?#":
            in_host = False
        elif ord(ch) > 0x7E and (not in_host or unicodedata.category(ch)[0] not in "LNM"):
            break
        i += 1
    return i


_TRAILING = "?!.,:;*_~'\"\\"
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def _balanced(url: str) -> str:
    depth = 0
    for i, ch in enumerate(url):
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return url[:i]
            depth -= 1
    return url


def _trim(url: str) -> str:
    while url:
        last = url[-1]
        if last in _TRAILING or (last == ")" and url.count(")") > url.count("(")):
            url = url[:-1]
        else:
            break
    return url


def find_bare_urls(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of every bare URL in ``text[start:end]`` (offsets into ``text``)."""
    end = len(text) if end is None else end
    out: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        m = _START.search(text, pos, end)
        if m is None:
            break
        url = _trim(_balanced(text[m.start() : _body_end(text, m.end(), end)]))
        if len(url) > len(m.group()) and url[len(m.group()) :].strip("/"):
            out.append((m.start(), m.start() + len(url)))
            pos = m.start() + len(url)
        else:
            pos = m.end()
    return out


# Markdown decodes only complete references: ``&name;``, ``&#123;``, ``&#x7b;``.
_MARKDOWN_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# What an HTML tokenizer reads as a reference inside an attribute value.
_ATTRIBUTE_REFERENCE = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")
_LEGACY_NAMES = frozenset(name for name in html.entities.html5 if not name.endswith(";"))


def unescape_markdown(text: str) -> str:
    """``text`` with its character references decoded as a markdown renderer decodes them.

    ``html.unescape`` also decodes HTML's legacy references without a semicolon, which
    turns the query parameters ``&region=`` and ``&param=`` into ``®ion=`` and ``¶m=``:
    a retrieved URL would no longer match itself."""
    if "&" not in text:
        return text
    return _MARKDOWN_REFERENCE.sub(lambda m: html.unescape(m.group()), text)


def _attribute_reference(m: re.Match[str]) -> str:
    ref = m.group()
    if ref.startswith("&#") or ref.endswith(";"):
        return html.unescape(ref)
    # a legacy name with no semicolon is decoded only when a letter, digit or "=" does not follow
    if ref[1:] in _LEGACY_NAMES and m.string[m.end() : m.end() + 1] != "=":
        return html.unescape(ref)
    return ref


def unescape_attribute(value: str) -> str:
    """An HTML attribute value as a browser reads it (the HTML standard's attribute rule:
    ``&#104ttps:`` is "https:", but ``&amp=1`` and ``&region=eu`` stay as written)."""
    if "&" not in value:
        return value
    return _ATTRIBUTE_REFERENCE.sub(_attribute_reference, value)


def comparable(url: str) -> str:
    """The URL a renderer would produce from the markdown text ``url`` (escapes and entities undone)."""
    return unescape_markdown(_ESCAPED.sub(r"\1", url))
