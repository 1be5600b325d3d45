"""A plain draft's markdown-it tokens, built without running markdown-it.

Most drafts a writer returns are plain: paragraphs of prose with footnote markers and
simple links, ATX headings, and one-line footnote definitions. For those, what the
instrumented parse (``sourcedesk.core.citations.scan``) yields is known in advance — the block
tokens ``sourcedesk.core.citations.parse`` reads and the spans of each footnote reference and
link — and building it directly costs a fraction of the parse, which otherwise
dominates reconciling a short section.

``plain_tokens`` answers None the moment a draft holds anything else: a character that
can open another inline construct (code, raw HTML, an entity, an escape, an image, an
inline note, a table pipe, a tab), a line that can open another block (indented,
quoted, a list item, a fence, a rule, a setext underline, a reference definition), a
link with anything but plain text and a plain destination, or a bracket construct it
does not model. Then the full parse runs. Equality with the full parse is
differential-tested on generated drafts and on the footnote fixtures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it.common.utils import MD_TRIM_CHARS

from sourcedesk.core.citations.scan import Span


@dataclass(slots=True, eq=False)
class Token:
    """The part of a markdown-it ``Token`` that ``sourcedesk.core.citations.parse`` reads (cheaper to build)."""

    type: str
    tag: str
    nesting: int
    map: list[int] | None = None
    content: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    start: int = -1  # an inline token: where its content starts in the source (it runs on unbroken)


# Characters that open an inline construct this module does not model (a bare "&" is text; an
# entity is not), and the two-character openers of images and inline notes. Tested as substrings:
# a regex tried at every character of a whole draft costs far more.
_UNSAFE_TEXT = ("`", "\\", "<", "|", "\t", "\x0b", "\x0c", "![", "^[")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});")
_ORDERED_ITEM = re.compile(r"\d{1,9}[.)]")
_HEADING = re.compile(r"(#{1,6}) +[^#\s][^#]*")
_DEFINITION = re.compile(r"\[\^([^\]\s\[]+)\]: (\S.*)")
_REFERENCE = re.compile(r"\[[^\]]*\]:")
_FOOTNOTE_REF = re.compile(r"\[\^([^ \n\]]+)\]")
_DEFINITION_START = re.compile(r"\[\^[^\] ]+\]:")  # what the footnote rule takes for a definition
_LINK = re.compile(r"\[([^\[\]\n*_~^!&]*)\]\(([^\s()<>\"']+)\)")
# A footnote definition whose text is one plain link (groups: label, the link, its text, its URL).
_LINK_DEFINITION = re.compile(r"\[\^([^\]\s\[]+)\]: (\[([^\[\]\n*_~^!&]*)\]\(([^\s()<>\"']+)\))")
_UNSAFE_PROTOCOL = re.compile(r"(?i)\s*(?:vbscript|javascript|file|data):")
# First characters of a line that can open a block construct (headings, quotes, lists, rules,
# setext underlines, fences, HTML, tables, reference and footnote definitions, escapes, entities).
_BLOCK_OPENERS = frozenset("#>-+*=_~`<|!:\\&")

Tokens = tuple[list[Token], dict[int, list[Span]]]
# A footnote definition that is one plain link on a line of its own ("[^key]: [Title](url)"): the
# plain path's single token for markdown-it's footnote_reference_open, inline and close tokens.
LINK_DEFINITION = "footnote_link_definition"


def plain_tokens(src: str) -> Tokens | None:
    """The block tokens and per-inline spans markdown-it gives ``src`` (normalised), or None when
    ``src`` is not plain (see the module docstring)."""
    if any(unsafe in src for unsafe in _UNSAFE_TEXT) or ("&" in src and _ENTITY.search(src)):
        return None
    lines = src.split("\n") if src else []
    if src.endswith("\n"):
        lines.pop()  # markdown-it's line count: a final newline ends the last line
    tokens: list[Token] = []
    spans: dict[int, list[Span]] = {}
    n, i = len(lines), 0
    starts = [0] * (n + 1)
    for k in range(n):
        starts[k + 1] = starts[k] + len(lines[k]) + 1
    ahead: re.Match[str] | None = None  # line ahead_at as a one-link definition (read once, used twice)
    ahead_at = -1
    while i < n:
        line = lines[i]
        if _blank(line):
            i += 1
            continue
        if line[0].isspace() or line[-1].isspace():
            return None
        if line[0] == "#":
            m = _HEADING.fullmatch(line)
            content = _trim(line[len(m.group(1)) :]) if m is not None else ""
            at = starts[i] + line.index(content, len(m.group(1))) if m is not None else -1
            if m is None or not _inline(tokens, spans, "heading", content, (i, i + 1), at):
                return None
            i += 1
            continue
        link = (ahead if ahead_at == i else _LINK_DEFINITION.fullmatch(line)) if line.startswith("[^") else None
        if link is not None and i + 1 < n and lines[i + 1].startswith("[^"):
            ahead, ahead_at = _LINK_DEFINITION.fullmatch(lines[i + 1]), i + 1
        if link is not None and (i + 1 == n or _blank(lines[i + 1]) or (ahead_at == i + 1 and ahead is not None)):
            # The usual definition, "[^key]: [Title](url)" on a line of its own: read in one match
            # (what the general branch below gives it, in a fraction of the calls).
            if _UNSAFE_PROTOCOL.match(link.group(4)):
                return None
            close = i + 1
            while close < n and _blank(lines[close]):
                close += 1
            value = link.group(2)
            # One token for the definition's open, inline and close tokens (parse reads it as those three).
            definition = Token(
                LINK_DEFINITION,
                "",
                0,
                map=[i, close],
                content=value,
                meta={"label": link.group(1)},
                start=starts[i] + link.start(2),
            )
            tokens.append(definition)
            spans[id(definition)] = [
                Span(
                    "link",
                    0,
                    len(value),
                    False,
                    href=link.group(4),
                    text=link.group(3),
                    label_end=link.end(3) - link.start(2),
                )
            ]
            i += 1
            continue
        if _DEFINITION_START.match(line):
            d = _DEFINITION.fullmatch(line)
            if d is None or _REFERENCE.match(d.group(2)) or not _opens_prose(d.group(2)):
                return None
            end = _paragraph_end(lines, i + 1)
            if end is None:
                return None
            close = end
            while close < n and _blank(lines[close]):
                close += 1  # the definition runs on to the next block (trailing blank lines are its own)
            opening = Token("footnote_reference_open", "", 1, map=[i, close], meta={"label": d.group(1)})
            tokens.append(opening)
            content = _trim("\n".join([d.group(2), *lines[i + 1 : end]]))
            if not _inline(tokens, spans, "paragraph", content, (i, end), starts[i] + d.start(2)):
                return None
            tokens.append(Token("footnote_reference_close", "", -1))
            i = end
            continue
        if not _opens_prose(line):
            return None
        end = _paragraph_end(lines, i + 1)
        if end is None:
            return None
        content = _trim("\n".join(lines[i:end]))
        if content[0] == "[" and "]:" in content:
            return None  # it might be a link reference definition
        if not _inline(tokens, spans, "paragraph", content, (i, end), starts[i]):
            return None
        i = end
    return tokens, spans


def _blank(line: str) -> bool:
    return not line.strip(" ")


def _trim(text: str) -> str:
    return text.strip(MD_TRIM_CHARS)


def _opens_prose(line: str) -> bool:
    """Whether a line can only continue or start a paragraph (no block construct opens with it)."""
    first = line[0]
    if first.isdigit():
        return _ORDERED_ITEM.match(line) is None
    return not first.isspace() and first not in _BLOCK_OPENERS


def _paragraph_end(lines: list[str], j: int) -> int | None:
    """The first line after a paragraph's first: a blank line, a heading or a footnote definition
    (both interrupt a paragraph), or the end; None when a line is none of those nor plain prose."""
    while j < len(lines):
        line = lines[j]
        if _blank(line):
            return j
        if line[0].isspace() or line[-1].isspace():
            return None
        if line[0] == "#":
            return j if _HEADING.fullmatch(line) else None
        if _DEFINITION_START.match(line):
            return j if _DEFINITION.fullmatch(line) else None
        if not _opens_prose(line):
            return None
        j += 1
    return j


def _inline(
    tokens: list[Token], spans: dict[int, list[Span]], kind: str, content: str, lines: tuple[int, int], start: int
) -> bool:
    """Append a paragraph's or heading's tokens (its content starts at source offset ``start``);
    False when its content is not plain."""
    found = _spans(content)
    if found is None:
        return False
    line_map = [lines[0], lines[1]]
    inline = Token("inline", "", 0, map=line_map, content=content, start=start)
    if kind == "heading":  # a paragraph's own open/close tokens tell the reader nothing
        tokens += [Token("heading_open", "", 1, map=line_map), inline, Token("heading_close", "", -1)]
    else:
        tokens.append(inline)
    spans[id(inline)] = found
    return True


def _spans(content: str) -> list[Span] | None:
    """What the instrumented parse records in plain inline content: footnote references and links.
    A bracket pair not followed by "(" is text (the draft has no reference definitions)."""
    out: list[Span] = []
    i = 0
    while (i := content.find("[", i)) >= 0:
        if content.startswith("[^", i):
            ref = _FOOTNOTE_REF.match(content, i)  # the footnote rule's own test: "]" before any space
            if ref is not None:
                if "[" in ref.group(1) or content.startswith("(", ref.end()):
                    return None
                i = ref.end()
                out.append(Span("footnote_ref", ref.start(), i, False, ref.group(1)))
                continue
            # "[^ E1]", "[^]": no footnote reference, an ordinary bracket
        j = content.find("]", i + 1)
        if j < 0:
            break  # no closing bracket anywhere after: the rest is text
        if "[" in content[i + 1 : j]:
            return None
        if content.startswith("(", j + 1):
            link = _LINK.match(content, i)
            if link is None or _UNSAFE_PROTOCOL.match(link.group(2)):
                return None
            out.append(Span("link", i, link.end(), False, href=link.group(2), text=link.group(1), label_end=j))
            i = link.end()
            continue
        i = j + 1
    return out
