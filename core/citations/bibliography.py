"""A writer's own Sources list: found and removed (the note rebuilds its own from ground truth).

Writers append one — ``**Sources:**`` then ``[1] https://…`` lines, ``## References``
then ``1. https://…`` or ``- [Title](url)``. Left in, its line-start ``[N]`` read
as citations and its URLs (invented ones included) reach the note.

A bibliography is a label line — a heading, bold text, or plain text ending with
a colon, whose words say sources / references / citations / bibliography / works
cited / further reading / links / notes — followed by lines that are each just a
citation entry: an optional ``[N]`` / ``(N)`` / ``N.`` / ``-`` prefix, then a URL
(bare, ``<url>`` or ``[title](url)``), optionally with a short title or date
(at most ``MAX_ENTRY_WORDS`` other words; footnote markers ignored). Two or more
consecutive ``[N] url`` lines are one even without a label. Lists whose items
carry no URL, or read as prose, are not bibliographies and stay.

A one-line list — ``Sources: https://a, https://b`` (a label, a colon, then
nothing but URLs and separators) — is one too. The label line goes with the
entries (and with the writer's footnote definitions under it, which the
reconciler removes anyway); a heading only when nothing else is left under it.
Numbered entries give the writer's own ``[N]`` → URL mapping.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass, field

from sourcedesk.core.citations.bare_urls import comparable, find_bare_urls
from sourcedesk.core.citations.parse import ParsedDoc

MAX_ENTRY_WORDS = 24
_VOCABULARY = (
    r"(?:sources?(?:\s+(?:used|cited|consulted))?|references?|citations?|bibliography|works\s+cited"
    r"|further\s+reading|reading\s+list|(?:useful\s+|related\s+)?links)"
)
# "Notes" often heads prose: it labels a sources list only for the reconciler's own purpose
# (a heading over nothing but the writer's footnote definitions)
_APPARATUS = rf"(?:{_VOCABULARY}|notes|footnotes)"
_LABEL = re.compile(rf"(?i)(\*\*|__|\*|_)?\s*{_VOCABULARY}(\s*\([^)]*\))?\s*(:?)\s*(?(1)\1)\s*(:?)")
_APPARATUS_LABEL = re.compile(rf"(?i)(\*\*|__|\*|_)?\s*{_APPARATUS}(\s*\([^)]*\))?\s*(:?)\s*(?(1)\1)\s*(:?)")
_PREFIX = re.compile(r"\s*(?:\[(\d{1,4})\]:?|\((\d{1,4})\)|(\d{1,4})[.)]|[-*+•])?[ \t]*")
_WORD = re.compile(r"[^\W_]+")
_FOOTNOTE = re.compile(r"\[\^[^\]]*\]")
# entries may also point at non-web sources (a retrieved local file): a link, an autolink, a file: URL
_OTHER = re.compile(r"\[[^\]\n]*\]\(<?([^)\s>]+)>?\)|<([a-z][a-z0-9+.-]*:[^>\s]+)>|\b(file:[^\s<>\[\]`]+)", re.I)
_INLINE_LABEL = re.compile(rf"(?i)\s*(\*\*|__)?\s*{_VOCABULARY}\s*(?(1)\1)?\s*:\s*(?(1)\1)?")


@dataclass(frozen=True)
class Entry:
    line: int
    number: str | None  # "3" for "[3] …", "3. …", "(3) …"
    bracketed: bool  # written "[N]"
    urls: tuple[str, ...]


@dataclass
class Bibliography:
    lines: set[int] = field(default_factory=set)  # source lines to delete (label and entries)
    entries: list[Entry] = field(default_factory=list)


def _entry(text: str, line: int) -> Entry | None:
    m = _PREFIX.match(text)
    assert m is not None  # every part of the prefix is optional: it always matches
    # a marker on an entry does not make it prose; and the reconciler may remove it, after which
    # the line must read the same (reconciling a reconciled note changes nothing)
    rest = _FOOTNOTE.sub(" ", text[m.end() :])
    found = [(a, b, comparable(rest[a:b])) for a, b in find_bare_urls(rest)]
    taken = [(a, b) for a, b, _ in found]
    for o in _OTHER.finditer(rest):
        dest = o.group(1) or o.group(2) or o.group(3)
        if not any(a < o.end() and o.start() < b for a, b in taken):
            found.append((o.start(), o.end(), dest))
    if not found:
        return None
    residue = rest
    for a, b, _ in sorted(found, reverse=True):
        residue = residue[:a] + " " + residue[b:]
    if len(_WORD.findall(residue)) > MAX_ENTRY_WORDS:
        return None
    number = m.group(1) or m.group(2) or m.group(3)
    return Entry(line, number, m.group(1) is not None, tuple(url for _, _, url in sorted(found)))


def _bracketed(text: str) -> bool:
    """Whether a line opens with a ``[N]`` entry prefix."""
    m = _PREFIX.match(text)
    return m is not None and m.group(1) is not None


def _one_line_list(text: str, line: int) -> Entry | None:
    """``Sources: https://a, https://b`` — a label and nothing but URLs after its colon."""
    m = _INLINE_LABEL.match(text)
    if m is None:
        return None
    rest = text[m.end() :]
    found = find_bare_urls(rest)
    residue = rest
    for a, b in reversed(found):
        residue = residue[:a] + " " + residue[b:]
    if not found or _WORD.search(residue.replace("[", " ").replace("]", " ")):
        return None
    return Entry(line, None, False, tuple(comparable(rest[a:b]) for a, b in found))


def is_label(text: str, heading: bool, *, apparatus: bool = False) -> bool:
    """A sources-list label: "## References", "**Sources:**", "Citations:". With ``apparatus``
    "Notes"/"Footnotes" too (the reconciler's test for a heading over the writer's definitions)."""
    body = text.strip().lstrip("#").strip() if heading else text.strip()
    m = (_APPARATUS_LABEL if apparatus else _LABEL).fullmatch(body)
    if m is None:
        return False
    return heading or bool(m.group(1)) or bool(m.group(3) or m.group(4))


def find_bibliographies(
    doc: ParsedDoc, *, skip_lines: Set[int] = frozenset(), removable_lines: Set[int] = frozenset()
) -> list[Bibliography]:
    """Every bibliography block of ``doc``, in order (see the module docstring).

    ``removable_lines`` will be deleted anyway (the writer's footnote definitions):
    a label heading with only those and the entries under it goes too."""
    src = doc.source
    n = len(doc.line_starts)
    line_block: dict[int, int] = {}
    for bi, b in enumerate(doc.blocks):
        if b.definition is None and not b.cell:
            for ln in range(b.line, max(b.line_end, b.line + 1)):
                line_block.setdefault(ln, bi)

    def text(ln: int) -> str:
        a, b = doc.line_span(ln, ln + 1)
        return src[a:b].rstrip("\n")

    reference_lines = {ln for r in doc.references for ln in range(r.line_start, r.line_end)}
    headings = sorted(h.line_start for h in doc.headings)
    out: list[Bibliography] = []
    i = 0
    while i < n:
        if i in skip_lines or i not in line_block:
            i += 1
            continue
        block = doc.blocks[line_block[i]]
        heading = block.heading and block.line == i
        one_line = None if heading else _one_line_list(text(i), i)
        if one_line is not None:
            out.append(Bibliography(lines={i}, entries=[one_line]))
            i += 1
            continue
        label = is_label(block.content if heading else text(i), heading)
        if heading and not label:
            i += 1
            continue
        entries: list[Entry] = []
        definitions = False  # the writer's footnote definitions under the label
        j = i + 1 if label else i
        if heading:
            j = max(j, block.line_end)
        while j < n:
            if definitions and (j in removable_lines or j in reference_lines):
                j += 1  # more of the writer's definitions (already known to be under the label)
                continue
            line = text(j)
            if not line.strip():
                j += 1
                continue
            if j in removable_lines or j in reference_lines:  # the writer's definitions: apparatus too
                definitions = True
                j += 1
                continue
            if j in skip_lines or j not in line_block or doc.blocks[line_block[j]].heading:
                break
            if not label and not _bracketed(line):
                break  # without a label only a run of "[N] url" lines is a list (checked before reading the entry)
            entry = _entry(line, j)
            if entry is None or (not label and not entry.bracketed):
                break  # without a label only a run of "[N] url" lines is a list
            entries.append(entry)
            j += 1
        if label and not heading and definitions and not entries:
            out.append(Bibliography(lines={i}))  # "Sources:" over definitions the reconciler rebuilds
            i = j
            continue
        if entries and (label or len(entries) >= 2):
            bib = Bibliography(lines={e.line for e in entries}, entries=entries)
            if label and not heading:
                bib.lines.add(i)
            elif heading:
                nxt = next((h for h in headings if h > i), n)
                rest = range(block.line_end, nxt)
                if all(
                    ln in bib.lines or ln in removable_lines or ln in reference_lines or not text(ln).strip()
                    for ln in rest
                ):
                    bib.lines.update(range(i, block.line_end))
            out.append(bib)
            i = entries[-1].line + 1
        else:
            i += 1
    return out


def numbering(bibliographies: list[Bibliography]) -> dict[str, str]:
    """The writer's own ``[N]`` → URL mapping (first entry of a number wins, its first URL)."""
    out: dict[str, str] = {}
    for bib in bibliographies:
        for e in bib.entries:
            if e.number is not None and e.urls:
                out.setdefault(str(int(e.number)), e.urls[0])
    return out
