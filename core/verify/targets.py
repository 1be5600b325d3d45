"""What ``check-urls PATH`` checks: the notes PATH names, and what each one cites.

PATH may be

* one note (``sections/NN-id.md``) or any markdown file — the memo folder is
  its ``sections/`` parent's parent (else its own folder), for the store;
* a memo folder — every ``sections/*.md`` note. The exported ``memo.md`` is
  *not* added: it repeats the notes' citations (renumbered); it is checked when
  it is the only thing there, or when named as PATH;
* a folder of notes (e.g. the ``sections/`` folder itself);
* the exported ``memo.md`` (its ``## Sources`` list has no source set of its
  own: its citations are looked up in every section note's set).

From each note, with the reconciler's own parser and claim binding:

* every footnote definition's URL (``sourcedesk.core.citations.written.read_definition``),
  with the house group it sits under (``## Sources (retrieved)`` / ``(web search)``);
* every inline link or autolink in the prose (key ``None``);
* every quotation and statistic (``claims``) in a sentence a marker cites, bound
  to one marker cluster (``[^E1] [^2]``): the first cluster that follows the item
  in its sentence, else the last one before it — so in "A grew 50% [^1] and B
  20% [^2]." each figure goes to its own citation;
* every money amount and percentage in a sentence no marker cites (key-less
  ``uncited_statistic`` items): grounding looks for those in the whole frozen set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sourcedesk.core.citations.figures import figures
from sourcedesk.core.citations.house import RETRIEVED_HEADING, WEB_HEADING
from sourcedesk.core.citations.parse import ParsedDoc, parse
from sourcedesk.core.citations.sentences import ClaimIndex
from sourcedesk.core.citations.written import read_definition
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.notes.note import NoteFormatError, parse_note
from sourcedesk.core.verify.claims import STATISTIC, find_items

UNCITED_STATISTIC = "uncited_statistic"

NOTE_SUFFIXES = (".md", ".markdown")
EXPORT_NAME = "memo.md"
SECTIONS = "sections"
_HINT = "give a section note (sections/NN-id.md), a memo folder, or its exported memo.md"
_GROUPS = {RETRIEVED_HEADING.lstrip("# "): "retrieved", WEB_HEADING.lstrip("# "): "web"}
# Inline constructs whose characters are never prose (a number in a URL is not a statistic).
_NOT_PROSE = frozenset({"backticks", "autolink", "html_inline", "image", "footnote_ref", "footnote_inline"})


@dataclass(frozen=True)
class CitedUrl:
    note: str  # the note as shown to the analyst
    key: str | None  # footnote label; None for an inline link
    url: str
    title: str | None = None  # what the note calls it (untrusted text)
    group: str | None = None  # "retrieved" | "web" | None: the house heading it sits under


@dataclass(frozen=True)
class ClaimItem:
    """A quotation or statistic and the citation cluster it is attributed to."""

    note: str
    keys: tuple[str, ...]
    kind: str
    text: str


@dataclass
class NoteCitations:
    path: Path
    name: str
    frontmatter: dict[str, Any] = field(default_factory=dict)
    urls: list[CitedUrl] = field(default_factory=list)
    items: list[ClaimItem] = field(default_factory=list)
    url_by_key: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def is_export(self) -> bool:
        return self.path.name == EXPORT_NAME and not self.frontmatter

    @property
    def source_set_id(self) -> str | None:
        value = (self.frontmatter.get("source_set") or {}) if isinstance(self.frontmatter, dict) else {}
        found = value.get("id") if isinstance(value, dict) else None
        return found if isinstance(found, str) and found else None

    @property
    def run_id(self) -> str | None:
        found = self.frontmatter.get("run_id") if isinstance(self.frontmatter, dict) else None
        return found if isinstance(found, str) and found else None


@dataclass
class Target:
    """The notes PATH names, and the memo folder whose store may hold their sources."""

    path: Path
    memo_dir: Path
    notes: list[Path]


def _is_note_file(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in NOTE_SUFFIXES and not path.name.startswith(".")


def _notes_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if _is_note_file(p))


def resolve_target(path: Path) -> Target:
    """Which notes PATH means; ``UserError`` (naming PATH, with a hint) when it means none."""
    if not path.exists():
        raise UserError(f"{path}: no such file or folder", hint=_HINT)
    if path.is_dir():
        sections = path / SECTIONS
        if sections.is_dir() and _notes_in(sections):
            return Target(path, path, _notes_in(sections))
        if (path / EXPORT_NAME).is_file():
            return Target(path, path, [path / EXPORT_NAME])
        if _notes_in(path):
            memo_dir = path.parent if path.name == SECTIONS else path
            return Target(path, memo_dir, _notes_in(path))
        raise UserError(
            f"{path}: no notes to check (no {SECTIONS}/*.md, no {EXPORT_NAME})",
            hint="run `sourcedesk run DIR` to write the section notes first, or " + _HINT,
        )
    if path.suffix.lower() not in NOTE_SUFFIXES:
        raise UserError(f"{path}: not a markdown note (expected a .md file)", hint=_HINT)
    memo_dir = path.parent.parent if path.parent.name == SECTIONS else path.parent
    return Target(path, memo_dir, [path])


def read_note_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start}); not a note", hint=_HINT) from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _group_of(doc: ParsedDoc, line: int) -> str | None:
    group = None
    for heading in doc.headings:
        if heading.line_start >= line:
            break
        group = _GROUPS.get(heading.text.strip())
    return group


def _prose(doc: ParsedDoc, block_index: int) -> str:
    """The block's content with every non-prose character blanked (same length, same offsets)."""
    block = doc.blocks[block_index]
    chars = list(block.content)

    def blank(a: int, b: int) -> None:
        for i in range(max(a, 0), min(b, len(chars))):
            if chars[i] != "\n":
                chars[i] = " "

    for span in block.spans:
        if span.nested or span.in_note:
            continue
        if span.rule in _NOT_PROSE:
            blank(span.start, span.end)
        elif span.rule == "link":  # keep the link text, blank "[" and the destination part
            raw = block.content[span.start : span.end]
            cut = max(raw.rfind("]("), raw.rfind("]["))
            cut = cut if cut >= 0 else len(raw) - 1
            blank(span.start, span.start + 1)
            blank(span.start + cut, span.end)
    for mi in block.markers:  # bare [N] markers too
        m = doc.markers[mi]
        blank(m.cstart, m.cend)
    return "".join(chars)


def _clusters(doc: ParsedDoc, block_index: int) -> list[list[int]]:
    """The block's markers grouped into clusters separated only by whitespace."""
    block = doc.blocks[block_index]
    clusters: list[list[int]] = []
    for mi in block.markers:
        m = doc.markers[mi]
        if clusters:
            prev = doc.markers[clusters[-1][-1]]
            if not block.content[prev.cend : m.cstart].strip():
                clusters[-1].append(mi)
                continue
        clusters.append([mi])
    return clusters


def _claim_items(doc: ParsedDoc, name: str) -> list[ClaimItem]:
    claims = ClaimIndex(doc)
    found: dict[tuple[object, ...], ClaimItem] = {}
    for bi, block in enumerate(doc.blocks):
        if block.definition is not None or block.heading:
            continue
        if not block.markers:
            for item in find_items(_prose(doc, bi)):
                if _money_or_percentage(item.kind, item.text):
                    entry = ClaimItem(name, (), UNCITED_STATISTIC, item.text)
                    found.setdefault(((), entry.kind, item.text), entry)
            continue
        clusters = []
        for cluster in _clusters(doc, bi):
            first, last = doc.markers[cluster[0]], doc.markers[cluster[-1]]
            keys = tuple(dict.fromkeys(doc.markers[i].label for i in cluster))
            clusters.append((first.cstart, last.cend, claims.range(cluster[0]), keys))
        for item in find_items(_prose(doc, bi)):
            candidates = [c for c in clusters if c[2][0] < item.end and item.start < c[2][1]]
            if not candidates:
                if _money_or_percentage(item.kind, item.text):  # uncited: looked for in the whole frozen set
                    entry = ClaimItem(name, (), UNCITED_STATISTIC, item.text)
                    found.setdefault(((), entry.kind, item.text), entry)
                continue
            following = [c for c in candidates if c[0] >= item.end]
            keys = following[0][3] if following else candidates[-1][3]
            entry = ClaimItem(name, keys, item.kind, item.text)
            found.setdefault((keys, item.kind, item.text), entry)
    return list(found.values())


def _money_or_percentage(kind: str, text: str) -> bool:
    return kind == STATISTIC and any(f.kind in ("money", "percent") for f in figures(text))


def read_note(path: Path, name: str | None = None) -> NoteCitations:
    """Every cited URL and grounded item of one note file."""
    text = read_note_text(path)
    note = NoteCitations(path=path, name=name or str(path))
    try:
        note.frontmatter, _ = parse_note(text, path=path)
    except NoteFormatError as err:
        note.warnings.append(f"{err.message} The run record could not be read; sources are looked up by URL only.")
    doc = parse(text)
    seen: set[tuple[str | None, str]] = set()
    for definition in doc.definitions:
        written = read_definition(doc, definition)
        if not written.url:
            continue
        note.url_by_key.setdefault(definition.label, written.url)
        if (definition.label, written.url) in seen:
            continue
        seen.add((definition.label, written.url))
        group = _group_of(doc, definition.line_start)
        note.urls.append(CitedUrl(note.name, definition.label, written.url, written.title, group))
    for block in doc.blocks:
        if block.definition is not None:
            continue
        for span in block.spans:
            if (
                span.rule in ("link", "autolink")
                and span.href
                and span.href.lower().startswith(("http://", "https://"))
            ) and (None, span.href) not in seen:
                seen.add((None, span.href))
                title = span.text.strip() if span.text and span.text.strip() != span.href else None
                note.urls.append(CitedUrl(note.name, None, span.href, title, None))
    note.items = _claim_items(doc, note.name)
    return note


def display_name(target: Target, note_path: Path) -> str:
    """How a note is named in the output: the path the analyst can open, as they gave it."""
    if note_path == target.path:
        return str(target.path)
    try:
        return str(target.path / note_path.relative_to(target.path))
    except ValueError:
        return str(note_path)
