"""``memo.md``: every section note assembled into one document.

Each note numbers its own footnotes, so the same page may be ``[^E2]`` in one
section and ``[^4]`` in another. Export gives the whole memo one numbering:
markers become ``[^1]..[^n]`` in order of first appearance, one number (and one
definition) per URL compared through ``normalise_url``, so two sections citing
the same page share a number. Analyst-protected keys (``deck``, ``dataroom``…)
pass through as written. A marker whose definition is missing is removed (no
orphan markers) and a definition nobody cites is left out (no unused ones).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from core.errors import UserError
from core.memo_loader import load_memo
from core.notes import SOURCES_HEADINGS, find_note, parse_note
from core.urls import normalise_url
from store.atomic_file import atomic_write_text

DEFAULT_OUTPUT = "memo.md"
SOURCES_HEADING = "## Sources"

_DEFINITION_RE = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]?(.*)$")
_MARKER_RE = re.compile(r"[ \t]*\[\^([^\]\s]+)\]")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN_RE = re.compile(r"(`+)(?:.+?)\1")
_HEADING_RE = re.compile(r"^(#{1,6})([ \t].*|)$")
# A link destination (``<…>`` form first: it may hold parentheses), an autolink, a bare URL.
_URL_RE = re.compile(
    r"(?<!\\)\]\(\s*<([^>\n]+)>|(?<!\\)\]\(\s*((?:[^()\s]|\([^()\s]*\))+)|<(https?://[^>\s]+)>|(https?://[^\s)\]>]+)",
    re.IGNORECASE,
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


@dataclass
class _Note:
    """A note split into prose lines and its footnote definitions."""

    title: str | None
    lines: list[str]
    definitions: dict[str, str]


def _in_fences(lines: Sequence[str]) -> list[bool]:
    """For each line: is it part of a fenced code block (fence lines included)?"""
    flags, fence = [], None
    for line in lines:
        m = _FENCE_RE.match(line)
        if fence is None and m:
            fence = m.group(1)
            flags.append(True)
        elif fence is not None:
            flags.append(True)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):]:
                fence = None
        else:
            flags.append(False)
    return flags


def _split_note(body: str) -> _Note:
    """Separate the H1 title, the definitions (with indented continuation lines) and
    the house Sources headings from the prose."""
    lines = body.splitlines()
    fenced = _in_fences(lines)
    title = None
    prose: list[str] = []
    definitions: dict[str, str] = {}
    current: str | None = None
    for i, line in enumerate(lines):
        if fenced[i]:
            current = None
            prose.append(line)
            continue
        if current is not None and line.startswith(("    ", "\t")) and line.strip():
            definitions[current] += " " + line.strip()
            continue
        current = None
        m = _DEFINITION_RE.match(line)
        if m:
            current = m.group(1)
            definitions.setdefault(current, m.group(2).strip())
            continue
        if line.strip() in SOURCES_HEADINGS:
            continue
        h = _HEADING_RE.match(line)
        if title is None and h and len(h.group(1)) == 1 and not any(p.strip() for p in prose):
            title = h.group(2).strip()
            prose = []
            continue
        prose.append(line)
    while prose and not prose[-1].strip():
        prose.pop()
    while prose and not prose[0].strip():
        prose.pop(0)
    return _Note(title, prose, definitions)


def definition_url(text: str) -> str | None:
    """The URL a house-format definition points at (its first link or bare URL)."""
    m = _URL_RE.search(text)
    if not m:
        return None
    bracketed, plain, autolink, bare = m.groups()
    return (bracketed or plain or autolink or bare.rstrip(".,;:!?")).strip()


def _identity(definition: str) -> str:
    url = definition_url(definition)
    return "url:" + normalise_url(url) if url else "text:" + " ".join(definition.split()).lower()


def _mask_code_spans(line: str) -> str:
    return _CODE_SPAN_RE.sub(lambda m: "\0" * len(m.group(0)), line)


def _markers(line: str) -> list[re.Match[str]]:
    masked = _mask_code_spans(line)
    return list(_MARKER_RE.finditer(masked))


def _demote(line: str) -> str:
    h = _HEADING_RE.match(line)
    if h and len(h.group(1)) < 6:
        return "#" + line
    return line


def assemble_memo(
    title: str, sections: Sequence[SectionText], *, protected: Iterable[str] = ()
) -> tuple[str, int, list[str]]:
    """The memo text, the number of footnotes and warnings. Pure: no disk access."""
    protected = set(protected)
    warnings: list[str] = []
    notes = [(s, _split_note(s.body) if s.body is not None else None) for s in sections]

    # Pass 1: which citation does each marker stand for; one per identity per paragraph
    # (the last one stays, as tidy does within a note).
    plans: list[list[list[tuple[int, int, str | None]]]] = []  # section -> line -> (start, end, identity|None)
    first_definition: dict[str, str] = {}
    protected_definitions: dict[str, str] = {}
    for section, note in notes:
        if note is None:
            plans.append([])
            continue
        fenced = _in_fences(note.lines)
        line_plans: list[list[tuple[int, int, str | None]]] = []
        last_in_paragraph: dict[str, tuple[int, int]] = {}
        paragraph_marks: list[tuple[int, int, str]] = []

        def close_paragraph() -> None:
            for li, mi, ident in paragraph_marks:
                if last_in_paragraph[ident] != (li, mi):
                    start, end, _ = line_plans[li][mi]
                    line_plans[li][mi] = (start, end, None)
            last_in_paragraph.clear()
            paragraph_marks.clear()

        for li, line in enumerate(note.lines):
            if fenced[li] or not line.strip():
                close_paragraph()
                line_plans.append([])
                continue
            entries: list[tuple[int, int, str | None]] = []
            for m in _markers(line):
                key = m.group(1)
                if key in protected:
                    ident = "protected:" + key
                    if key in note.definitions:
                        protected_definitions.setdefault(key, note.definitions[key])
                    else:
                        warnings.append(f"{section.section_id}: protected marker [^{key}] has no definition")
                elif key in note.definitions:
                    ident = _identity(note.definitions[key])
                    first_definition.setdefault(ident, note.definitions[key])
                else:
                    warnings.append(f"{section.section_id}: marker [^{key}] had no definition and was removed")
                    entries.append((m.start(), m.end(), None))
                    continue
                entries.append((m.start(), m.end(), ident))
                last_in_paragraph[ident] = (li, len(entries) - 1)
                paragraph_marks.append((li, len(entries) - 1, ident))
            line_plans.append(entries)
        close_paragraph()
        plans.append(line_plans)

    # Pass 2: number identities by first appearance and rewrite the markers.
    numbers: dict[str, int] = {}
    out = [f"# {' '.join(title.split())}\n"]
    for (section, note), line_plans in zip(notes, plans):
        heading = (note.title if note and note.title else None) or section.title
        out.append(f"\n## {' '.join(heading.split())}\n")
        if note is None:
            out.append(f"\n> _This section has not been written yet (`sourcedesk run --section {section.section_id}`)._\n")
            continue
        fenced = _in_fences(note.lines)
        rendered: list[str] = []
        for li, line in enumerate(note.lines):
            if fenced[li]:
                rendered.append(line)
                continue
            pieces, pos = [], 0
            for start, end, ident in line_plans[li]:
                pieces.append(line[pos:start])
                pos = end
                if ident is None:
                    continue
                if ident.startswith("protected:"):
                    pieces.append(line[start:end])
                    continue
                number = numbers.setdefault(ident, len(numbers) + 1)
                lead = line[start:end][: len(line[start:end]) - len(line[start:end].lstrip(" \t"))]
                pieces.append(f"{lead}[^{number}]")
            pieces.append(line[pos:])
            rendered.append(_demote("".join(pieces)))
        if rendered:
            out.append("\n" + "\n".join(rendered) + "\n")

    if numbers or protected_definitions:
        lines = [f"[^{n}]: {first_definition[ident]}" for ident, n in sorted(numbers.items(), key=lambda kv: kv[1])]
        lines += [f"[^{k}]: {v}" for k, v in protected_definitions.items()]
        out.append(f"\n{SOURCES_HEADING}\n\n" + "\n".join(lines) + "\n")
    return "".join(out), len(numbers), warnings


def export_memo(memo_dir: Path | str, output: Path | str | None = None) -> ExportResult:
    """Assemble ``memo.md`` from the section notes and write it atomically."""
    loaded = load_memo(Path(memo_dir))
    memo = loaded.memo
    memo_dir = Path(loaded.dir)
    sections: list[SectionText] = []
    missing: list[str] = []
    for section in memo.sections:
        path = find_note(memo_dir, memo, section.id)
        if path is None:
            missing.append(section.id)
            sections.append(SectionText(section.id, section.title, None))
            continue
        _, body = parse_note(path.read_text(encoding="utf-8"), path=path)
        sections.append(SectionText(section.id, section.title, body))
    text, footnotes, warnings = assemble_memo(memo.title, sections, protected=memo.settings.protected_keys)
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
    )
