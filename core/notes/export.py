"""``memo.md``: every section note assembled into one document.

Each note numbers its own footnotes, so the same page may be ``[^E2]`` in one
section and ``[^4]`` in another. Export gives the whole memo one numbering:
markers become ``[^1]..[^n]`` in order of first appearance, one number (and one
definition) per URL compared through ``normalise_url``, so two sections citing
the same page share a number. A marker whose definition is missing is removed
(no orphan markers) and a definition nobody cites is left out (no unused ones).

Notes are read with the reconciler's own markdown parser (``sourcedesk.core.citations.parse``)
and edited through its offset-exact rewriter, so export agrees with tidy and
reconcile on what a marker, a definition, a block and code are:

* repeated citations of one source are de-duplicated only inside one cluster of
  adjacent markers (``[^1][^1]``), exactly as ``tidy`` does: a source cited on two
  claims stays on both;
* a definition's URL is its link destination as ``read_definition`` reads it
  (never a URL that happens to appear in the link's title);
* fenced code, indented code and code spans are never edited; a fenced or raw
  HTML block a note leaves open is closed at the end of its section, so it
  cannot swallow the sections after it;
* each note's ``# Title`` becomes its section's ``##`` heading and its other
  headings move one level down (setext headings become ATX);
* analyst-protected keys (``deck``, ``dataroom``…) pass through as written; the
  same key defined differently in two sections gets distinct keys in memo.md
  (``deck``, ``deck-2``) and a warning, identical definitions merge;
* the result is passed through ``tidy`` once, so ``sourcedesk tidy memo.md`` on
  it changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it.token import Token

from sourcedesk.core.citations.house import HOUSE_HEADINGS
from sourcedesk.core.citations.parse import Definition, ParsedDoc, parse
from sourcedesk.core.citations.rewrite import Edit, apply_edits, delete_lines, rewrite_markers
from sourcedesk.core.citations.scan import scan
from sourcedesk.core.citations.tidy import marker_clusters, tidy
from sourcedesk.core.citations.written import read_definition
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.storage import SourceSetStore
from sourcedesk.core.files.atomic import atomic_write_text, remove_stale_temporaries
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.notes.note import find_note, parse_note, read_note_text
from sourcedesk.core.text.safety import clean_text
from sourcedesk.core.verify.ledger import Conflict, memo_ledger, memo_sections

DEFAULT_OUTPUT = "memo.md"
SOURCES_HEADING = "## Sources"

_HOUSE_HEADING_TEXTS = frozenset(h.lstrip("#").strip() for h in HOUSE_HEADINGS)
# CommonMark HTML blocks 1–5 end only at their closer (6 and 7 end at a blank line).
_HTML_CLOSERS = (
    (r"<(script|pre|style|textarea)(?=[\s>]|$)", "</{0}>"),
    (r"<!--", "-->"),
    (r"<\?", "?>"),
    (r"<!\[CDATA\[", "]]>"),
    (r"<![a-z]", ">"),
)


@dataclass(frozen=True)
class SectionText:
    """One section's note as export sees it: its title and its body (no frontmatter)."""

    section_id: str
    title: str
    body: str | None  # None: the section was never run


@dataclass
class ExportResult:
    path: Path | None
    text: str
    sections: int = 0
    missing: list[str] = field(default_factory=list)  # section ids with no note yet
    footnotes: int = 0
    warnings: list[str] = field(default_factory=list)
    review: list[str] = field(default_factory=list)  # the ledger's conflicts, each in one line


# A citation's identity in the memo: ("n", "url:<normalised>" | "text:<definition>") for
# numbered citations, ("p", key, definition text | None) for an analyst-protected key.
_Ident = tuple[str, ...] | tuple[str, str, str | None]


@dataclass
class _Note:
    """One section's note (``parse`` for markers and definitions, the same parser's block
    tokens for headings and code) with what export decided about each marker."""

    section: SectionText
    doc: ParsedDoc
    tokens: list[Token]
    definitions: dict[str, int]  # label → index of its first definition in doc.definitions
    body_markers: list[int] = field(default_factory=list)  # footnote markers outside definitions
    idents: dict[int, _Ident | None] = field(default_factory=dict)  # marker → identity (None: remove)
    texts: dict[int, str] = field(default_factory=dict)  # marker → its definition's text
    fates: dict[int, str | None] = field(default_factory=dict)  # marker → memo label (None: remove)


def _norm_space(text: str) -> str:
    return " ".join(text.split())


def definition_text(doc: ParsedDoc, definition: Definition) -> str:
    """What follows ``[^label]:`` in a definition, its continuation lines kept as written."""
    lines = doc.source[definition.start : definition.end].rstrip("\n").split("\n")
    needle = f"[^{definition.label}]:"
    first = lines[0]
    at = first.find(needle)
    lines[0] = first[at + len(needle) :] if at >= 0 else first
    lines = [ln.rstrip() for ln in lines]
    lines[0] = lines[0].strip()
    return "\n".join(lines).strip("\n")


def definition_url(text: str) -> str | None:
    """The URL a definition's text points at, as the reconciler reads it (its link destination)."""
    doc = parse(f"[^x]: {text}\n")
    if not doc.definitions:
        return None
    url = read_definition(doc, doc.definitions[0]).url
    return url.strip() if url else None


def _identity(doc: ParsedDoc, definition: Definition, text: str) -> _Ident:
    url = read_definition(doc, definition).url
    if url and url.strip():
        return ("n", "url:" + normalise_url(url))
    return ("n", "text:" + _norm_space(text).casefold())


def _read(section: SectionText) -> _Note:
    doc = parse(section.body or "")
    tokens, _ = scan(doc.source)
    definitions: dict[str, int] = {}
    for i, d in enumerate(doc.definitions):
        definitions.setdefault(d.label, i)
    note = _Note(section, doc, tokens, definitions)
    note.body_markers = [i for i, m in enumerate(doc.markers) if m.kind == "footnote" and m.definition is None]
    return note


def _plan(
    note: _Note,
    protected: frozenset[str],
    memo_protected: dict[str, list[str]],
    warnings: list[str],
) -> None:
    """Each body marker's identity; one marker per identity per cluster of adjacent markers."""
    doc, sid = note.doc, note.section.section_id
    warned: set[str] = set()
    orphans: dict[str, int] = {}
    for idx in note.body_markers:
        label = doc.markers[idx].label
        key = label.lower()
        di = note.definitions.get(label)
        if key in protected:
            if di is not None:
                text = definition_text(doc, doc.definitions[di])
                note.idents[idx] = ("p", key, _norm_space(text))
                note.texts[idx] = text
                continue
            others = memo_protected.get(key, [])
            if others:  # defined in another section of the memo: cite that definition
                note.idents[idx] = ("p", key, _norm_space(others[0]))
                note.texts[idx] = others[0]
                if len(others) > 1 and label not in warned:
                    warned.add(label)
                    warnings.append(
                        f"{sid}: protected marker [^{label}] has no definition in its note and the memo "
                        f"defines it {len(others)} ways; it cites the first ({_norm_space(others[0])!r})"
                    )
            else:
                note.idents[idx] = ("p", key, None)
                if label not in warned:
                    warned.add(label)
                    warnings.append(f"{sid}: protected marker [^{label}] has no definition")
            continue
        if di is None:
            note.idents[idx] = None
            orphans[label] = orphans.get(label, 0) + 1
            continue
        definition = doc.definitions[di]
        text = definition_text(doc, definition)
        note.idents[idx] = _identity(doc, definition, text)
        note.texts[idx] = text

    for label, times in orphans.items():
        where = f" ({times} times)" if times > 1 else ""
        warnings.append(f"{sid}: marker [^{label}] had no definition and was removed{where}")

    for bi, block in enumerate(doc.blocks):
        if block.definition is not None:
            continue
        for cluster in marker_clusters(doc, bi):
            seen: set[_Ident] = set()
            for idx in cluster:
                ident = note.idents.get(idx)
                if ident is None:
                    continue
                if ident in seen:
                    note.idents[idx] = None
                seen.add(ident)
    if doc.unmapped:
        warnings.append(f"{sid}: {doc.unmapped} marker(s) could not be located in the note and were left as written")
    if doc.link_text_refs:
        keys = ", ".join(f"[^{k}]" for k in dict.fromkeys(doc.link_text_refs))
        warnings.append(f"{sid}: footnote marker(s) inside link text left as written: {keys}")


class _Keys:
    """Memo-wide labels: numbers by first appearance, protected keys as written (``deck-2`` on a clash)."""

    def __init__(self, taken: Iterable[str]) -> None:
        self.numbers: dict[str, int] = {}
        self.numbered_texts: dict[str, str] = {}
        self.protected: dict[tuple[str, str | None], str] = {}  # (key, definition) → memo label
        self.protected_texts: dict[str, str] = {}  # memo label → definition text
        self.first_section: dict[str, str] = {}  # key → section id of its first definition
        self.taken = {t.lower() for t in taken}

    def label(self, ident: _Ident, written: str, text: str | None, section_id: str, warnings: list[str]) -> str:
        if ident[0] == "n":
            key = ident[1]
            if key not in self.numbers:
                self.numbers[key] = len(self.numbers) + 1
                self.numbered_texts[key] = text or ""
            return str(self.numbers[key])
        _, key, norm = ident
        found = self.protected.get((key, norm))
        if found is not None:
            return found
        if norm is None:  # no definition anywhere: kept as written (warned in _plan)
            self.protected[(key, norm)] = written
            return written
        if key not in self.first_section:
            name = written
            self.first_section[key] = section_id
        else:
            n = 2
            while f"{key}-{n}" in self.taken:
                n += 1
            name = f"{written}-{n}"
            warnings.append(
                f"{section_id}: protected key [^{written}] is defined differently from section "
                f"{self.first_section[key]}'s; this section's citations are [^{name}] in memo.md"
            )
        self.taken.add(name.lower())
        self.protected[(key, norm)] = name
        self.protected_texts[name] = text or ""
        return name


def _heading_edits(note: _Note) -> tuple[list[Edit], set[int]]:
    """Headings one level down (the section heading is ``##``); house "Sources" headings and
    any front matter deleted (returned as lines to delete).

    ATX headings get one more ``#`` (six stays six); top-level setext headings become ATX
    (``Title`` / ``===`` → ``## Title``) — only ``#`` characters, line breaks and the
    underline change, never the heading's words.
    """
    doc, tokens = note.doc, note.tokens
    src = doc.source
    edits: list[Edit] = []
    delete: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok.type == "front_matter" and tok.map:  # a note passed with its run record: not memo text
            delete.update(range(*tok.map))
            continue
        if tok.type != "heading_open" or tok.map is None:
            continue
        first, last = tok.map
        inline = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1].type == "inline" else None
        content = inline.content.strip() if inline is not None else ""
        if tok.level == 0 and tok.markup == "##" and content in _HOUSE_HEADING_TEXTS:
            delete.update(range(first, last))
            continue
        ls, le = doc.line_span(first, first + 1)
        line = src[ls:le]
        if tok.markup.startswith("#"):
            if len(tok.markup) < 6:
                at = line.find("#")
                if at >= 0:
                    edits.append(Edit(ls + at, ls + at, "#"))
            continue
        if tok.level != 0 or last - first < 2:
            continue  # setext heading inside a container: left as written
        level = 2 if tok.markup == "=" else 3
        indent = len(line) - len(line.lstrip(" \t"))
        edits.append(Edit(ls + indent, ls + indent, "#" * level + " "))
        for ln in range(first + 1, last - 1):  # join a multi-line heading into one line
            a, b = doc.line_span(ln, ln + 1)
            nxt = src[a:b]
            edits.append(Edit(a - 1, a + len(nxt) - len(nxt.lstrip(" \t")), " "))
        ua, ub = doc.line_span(last - 1, last)
        underline_end = ub - 1 if src[ub - 1 : ub] == "\n" else ub
        edits.append(Edit(ua - 1, underline_end, ""))
    return edits, delete


def _title_heading(note: _Note) -> int | None:
    """The line of the note's ``# Title`` when the note opens with one (it becomes the section heading)."""
    for i, tok in enumerate(note.tokens):
        if tok.type == "front_matter":
            continue
        if tok.type == "heading_open" and tok.level == 0 and tok.markup in ("#", "=") and tok.map:
            inline = note.tokens[i + 1] if i + 1 < len(note.tokens) else None
            if inline is not None and inline.type == "inline" and inline.content.strip():
                return tok.map[0]
        return None
    return None


def _unclosed_block(note: _Note) -> str | None:
    """What to append when a top-level fenced code block or raw HTML block (``<!--``, ``<pre>``…)
    runs to the end of the note: left open, it would swallow every section after it in memo.md."""
    doc = note.doc
    n = len(doc.line_starts)
    for tok in note.tokens:
        if tok.level != 0 or not tok.map or tok.map[1] < n:
            continue
        first, last = tok.map
        if tok.type == "fence":
            a, b = doc.line_span(last - 1, last)
            closing = doc.source[a:b].rstrip("\n")
            char, size = tok.markup[0], len(tok.markup)
            if last - first < 2 or not re.fullmatch(rf" {{0,3}}{re.escape(char)}{{{size},}}[ \t]*", closing):
                return tok.markup
        elif tok.type == "html_block":
            html = tok.content.lstrip(" ")
            for opening, closer in _HTML_CLOSERS:
                m = re.match(opening, html, re.I)
                if m:
                    end = closer.format(*m.groups())
                    if end.lower() not in html[m.end() :].lower():
                        return end
                    break
    return None


def _strip_blank_lines(text: str) -> str:
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def _render(note: _Note) -> str:
    """The note's body for memo.md: markers relabelled, definitions and house headings out,
    headings one level down. Starts with the ``## heading`` of the section."""
    doc = note.doc
    title_line = _title_heading(note)
    skip = {bi for d in doc.definitions for bi in d.blocks}
    empty: set[int] = set()
    edits = rewrite_markers(doc, note.fates, hygiene=False, skip_blocks=skip, empty_lines=empty)
    heading_edits, heading_lines = _heading_edits(note)
    edits += heading_edits
    lines = set(empty) | heading_lines
    for d in doc.definitions:
        lines.update(range(d.line_start, d.line_end))
    edits += delete_lines(doc, lines)
    body = _strip_blank_lines(apply_edits(doc.source, edits))
    closer = _unclosed_block(note)
    if closer:
        body += "\n" + closer
    if title_line is None:
        heading = f"## {_norm_space(note.section.title)}"
        return heading + ("\n\n" + body if body else "")
    return body


def assemble_memo(
    title: str, sections: Sequence[SectionText], *, protected: Iterable[str] = ()
) -> tuple[str, int, list[str]]:
    """The memo text, the number of footnotes and warnings. Pure: no disk access."""
    keys = frozenset(p.lower() for p in protected)
    warnings: list[str] = []
    notes = [_read(s) if s.body is not None else None for s in sections]

    # Every protected definition in the memo, in reading order (a note may cite one defined elsewhere).
    memo_protected: dict[str, list[str]] = {}
    written_keys: set[str] = set()
    for note in notes:
        if note is None:
            continue
        for i, d in enumerate(note.doc.definitions):
            if d.label.lower() in keys and note.definitions[d.label] == i:
                text = definition_text(note.doc, d)
                known = memo_protected.setdefault(d.label.lower(), [])
                if _norm_space(text) not in {_norm_space(k) for k in known}:
                    known.append(text)
        written_keys.update(m.label for m in note.doc.markers if m.label.lower() in keys)

    for note in notes:
        if note is not None:
            _plan(note, keys, memo_protected, warnings)

    labels = _Keys(written_keys)
    out = [f"# {_norm_space(title)}"]
    for section, note in zip(sections, notes, strict=False):
        if note is None:
            out.append(
                f"## {_norm_space(section.title)}\n\n"
                "> _This section has not been written yet (in the memo folder: "
                f"`sourcedesk run . --section {section.section_id}`)._"
            )
            continue
        for idx in note.body_markers:
            ident = note.idents.get(idx)
            note.fates[idx] = (
                None
                if ident is None
                else labels.label(ident, note.doc.markers[idx].label, note.texts.get(idx), section.section_id, warnings)
            )
        out.append(_render(note))

    definitions = [f"[^{n}]: {labels.numbered_texts[key]}".rstrip() for key, n in labels.numbers.items()]
    definitions += [f"[^{name}]: {text}".rstrip() for name, text in labels.protected_texts.items()]
    if definitions:
        out.append(SOURCES_HEADING + "\n\n" + "\n".join(definitions))
    text = tidy("\n\n".join(out) + "\n")
    return text, len(labels.numbers), warnings


REVIEW_HEADING = "## Review before sending"


def review_section(conflicts: Sequence[Conflict]) -> tuple[str, list[str]]:
    """The list that ends ``memo.md`` when its sections contradict each other (the memo's ledger):
    each conflict with both sections and sources, and whether the sources disagree."""
    lines = [f"{c.describe()} — {c.verdict()}" for c in conflicts]
    if not lines:
        return "", []
    intro = "These claims give one quantity two values; choose one, or say why both stand."
    return "\n\n".join([REVIEW_HEADING, intro, "\n".join(f"- {line}" for line in lines)]) + "\n", lines


def export_memo(
    memo_dir: Path | str,
    output: Path | str | None = None,
    *,
    review: bool = True,
    store: SourceSetStore | None = None,
) -> ExportResult:
    """Assemble ``memo.md`` from the section notes and write it atomically. With ``review`` (the
    default), the memo's ledger runs over the notes (their claims checked against the frozen sets
    in ``store``, when given) and a review list of its conflicts ends the memo."""
    loaded = load_memo(Path(memo_dir))
    memo = loaded.memo
    memo_dir = Path(loaded.dir)
    remove_stale_temporaries(memo_dir)  # a memo.md temporary a killed export left behind
    sections: list[SectionText] = []
    missing: list[str] = []
    for section in memo.sections:
        path = find_note(memo_dir, memo, section.id)
        if path is None:
            missing.append(section.id)
            sections.append(SectionText(section.id, section.title, None))
            continue
        _, body = parse_note(read_note_text(path), path=path)
        sections.append(SectionText(section.id, section.title, body))
    text, footnotes, warnings = assemble_memo(memo.title, sections, protected=memo.settings.protected_keys)
    listed: list[str] = []
    if review:
        listing, listed = review_section(memo_ledger(loaded, memo_sections(loaded, store)).conflicts)
        text = f"{text.rstrip()}\n\n{listing}" if listing else text
    text = clean_text(text, multiline=True)  # no control sequence or key a note picked up reaches memo.md
    target = Path(output) if output else memo_dir / DEFAULT_OUTPUT
    if not target.is_absolute() and output:
        target = Path.cwd() / target
    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise UserError(
            f"cannot write {target}: {exc.strerror or exc}",
            hint="check that the folder exists and is writable, or pass --output elsewhere",
        ) from None
    return ExportResult(
        path=target,
        text=text,
        sections=len(sections) - len(missing),
        missing=missing,
        footnotes=footnotes,
        warnings=warnings,
        review=listed,
    )
