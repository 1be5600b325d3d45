"""Raw HTML split into tags and text in one pass: every character is looked at a bounded number of times.

Python's ``html.parser`` buffers what it cannot finish and, on every ``feed``, scans
the buffer again from the first ``<``: an answer of ``"<!--" * 60000`` or
``'<a href=' * 30000`` took minutes. A writer's answer is outside text, so this
tokenizer follows the HTML standard's tokenizer where it decides what a browser
sees — tag names, attributes (quoted, unquoted, valueless), comments (``<!-- … -->``,
including one left open, which runs to the end), bogus comments (``<!…>``,
``<?…>``, ``</3…>``), and the raw text of ``<script>`` and ``<style>`` — and each
step moves forward with ``str.find`` or an anchored match, never back.

Two deliberate differences from a browser, both on the safe side for screening:

* a tag still open at the end of the fragment is reported (``closed`` False) with
  the attributes read so far: in a note, the HTML that follows the fragment would
  continue it, so its URLs are screened like any other;
* the content of ``<textarea>`` and ``<title>`` is read for tags (as Python's
  parser did) but is not text a reader sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

# Elements whose content is not markup at all (no tag inside is a tag).
RAW_TEXT = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes", "plaintext"})
# Elements whose content is not text a reader sees, though tags inside are still read.
HIDDEN_TEXT = frozenset({"textarea", "title"})

_SPACE = " \t\n\r\f"
_TAG_NAME = re.compile(r"[^\s/>]*")
# Separators, then one attribute: its name and, if any, its value (quoted, unquoted, or a quote never closed).
_ATTRIBUTE = re.compile(
    r"[\s/]*(?:(?P<name>[^\s/>][^\s/>=]*)"
    r"(?:\s*=\s*(?:\"(?P<dq>[^\"]*)(?:\"|(?P<open>\Z))|'(?P<sq>[^']*)(?:'|(?P<sopen>\Z))|(?P<uq>[^\s>]*)))?)?"
)


class Attribute(NamedTuple):  # a tuple: an answer may hold a hundred thousand of them
    name: str  # lower-cased
    start: int  # offsets in the HTML text: the whole attribute (leading whitespace included)
    end: int
    raw_value: str  # as written, without its quotes (entities not decoded)


class Tag(NamedTuple):
    name: str  # lower-cased
    start: int
    end: int
    attributes: tuple[Attribute, ...] = ()
    closed: bool = True  # False: the fragment ended inside the tag
    end_tag: bool = False


@dataclass
class Tokens:
    tags: list[Tag] = field(default_factory=list)  # start tags (and end tags when asked for)
    text: list[tuple[int, int]] = field(default_factory=list)  # text a reader sees, between tags
    steps: int = 0  # the main loop's turns; each consumes input, so steps <= the text's length


def start_tag(s: str, lt: int) -> Tag:
    """The start tag at ``s[lt] == "<"`` (a letter follows), read to its ``>`` or the end of ``s``."""
    n = len(s)
    m = _TAG_NAME.match(s, lt + 1)
    assert m is not None
    name = m.group().lower()
    pos = m.end()
    attributes: list[Attribute] = []
    while True:
        a = _ATTRIBUTE.match(s, pos)
        assert a is not None  # every part of it is optional
        if a.group("name") is None:  # only separators: the tag ends here, or the fragment does
            end = a.end()
            if end >= n:
                return Tag(name, lt, n, tuple(attributes), closed=False)
            return Tag(name, lt, end + 1, tuple(attributes))  # s[end] == ">"
        value = a.group("dq")
        if value is None:
            value = a.group("sq")
        if value is None:
            value = a.group("uq") or ""
        attributes.append(Attribute(a.group("name").lower(), _lead(s, pos, a.start("name")), a.end(), value))
        if a.group("open") is not None or a.group("sopen") is not None:  # a quote never closed: the tag neither
            return Tag(name, lt, n, tuple(attributes), closed=False)
        pos = a.end()


def _lead(s: str, lead: int, name_start: int) -> int:
    """An attribute's start with the whitespace before it (so removing it leaves no double space)."""
    i = name_start
    while i > lead and s[i - 1] in _SPACE:
        i -= 1
    return i


def _comment_end(s: str, pos: int) -> int:
    """Where a comment whose ``<!--`` ends at ``pos`` ends (after ``-->``, ``--!>``, or the end of ``s``)."""
    if s.startswith(">", pos):  # <!-->
        return pos + 1
    if s.startswith("->", pos):  # <!--->
        return pos + 2
    i = pos
    while True:
        j = s.find("--", i)
        if j < 0:
            return len(s)
        if s.startswith(">", j + 2):
            return j + 3
        if s.startswith("!>", j + 2):
            return j + 4
        i = j + 1


def _after(s: str, pos: int, what: str) -> int:
    j = s.find(what, pos)
    return len(s) if j < 0 else j + len(what)


_RAW_END: dict[str, re.Pattern[str]] = {}


def _raw_text_end(s: str, pos: int, name: str) -> int:
    """Where the raw text of ``<name>`` that starts at ``pos`` ends (at ``</name``, or the end of ``s``)."""
    pattern = _RAW_END.get(name)
    if pattern is None:
        pattern = _RAW_END[name] = re.compile(rf"</{re.escape(name)}(?=[\s/>]|$)", re.IGNORECASE)
    m = pattern.search(s, pos)
    return len(s) if m is None else m.start()


def tokenize(s: str, *, end_tags: bool = False) -> Tokens:
    """Tags and text runs of the HTML fragment ``s`` (offsets into it), in one forward pass."""
    out = Tokens()
    n = len(s)
    pos = 0
    text_from = 0
    hidden: str | None = None  # inside <textarea>/<title>: tags are read, text is not seen

    def text(a: int, b: int) -> None:
        if a >= b or hidden is not None:
            return
        if out.text and out.text[-1][1] == a:
            out.text[-1] = (out.text[-1][0], b)
        else:
            out.text.append((a, b))

    while pos < n:
        out.steps += 1
        lt = s.find("<", pos)
        if lt < 0:
            break
        nxt = s[lt + 1 : lt + 2]
        if nxt.isascii() and nxt.isalpha():
            text(text_from, lt)
            tag = start_tag(s, lt)
            out.tags.append(tag)
            pos = text_from = tag.end
            if tag.name in RAW_TEXT and tag.closed:
                pos = text_from = _raw_text_end(s, pos, tag.name)
            elif tag.name in HIDDEN_TEXT and tag.closed:
                hidden = tag.name
            continue
        if nxt == "/":
            after = s[lt + 2 : lt + 3]
            if after.isascii() and after.isalpha():
                text(text_from, lt)
                m = _TAG_NAME.match(s, lt + 2)
                assert m is not None
                name = m.group().lower()
                close = _after(s, m.end(), ">")
                if end_tags:
                    out.tags.append(
                        Tag(name, lt, close, closed=close <= n and s[close - 1 : close] == ">", end_tag=True)
                    )
                if name == hidden:
                    hidden = None
                pos = text_from = close
                continue
            if after == ">":  # "</>" is dropped
                text(text_from, lt)
                pos = text_from = lt + 3
                continue
            if after:  # "</3…>" is a bogus comment
                text(text_from, lt)
                pos = text_from = _after(s, lt + 2, ">")
                continue
            break  # "</" at the very end: text
        if nxt == "!":
            text(text_from, lt)
            if s.startswith("<!--", lt):
                pos = text_from = _comment_end(s, lt + 4)
            else:  # <!DOCTYPE …>, <![CDATA[ …>, any other <!…>: a bogus comment to the next ">"
                pos = text_from = _after(s, lt + 2, ">")
            continue
        if nxt == "?":
            text(text_from, lt)
            pos = text_from = _after(s, lt + 2, ">")
            continue
        pos = lt + 1  # "<" followed by anything else is text
    text(text_from, n)
    return out
