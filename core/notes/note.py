"""The section note: ``sections/NN-<id>.md``, the file an analyst reads and edits.

A note is YAML frontmatter that records the run which produced it (so a reader
can tell which frozen source set, model and reconcile outcome stand behind the
text), then ``# Title``, the reconciled body, and the footnote definitions in
one house format grouped under ``## Sources (web search)`` and
``## Sources (retrieved)``.

Rendering is deterministic (fixed key order, no wall-clock reads) so that
re-rendering the same run gives the same bytes, and writing is atomic so that a
crash or a failed run can never leave a half-written note behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from sourcedesk.core.citations.house import HOUSE_HEADINGS, RETRIEVED_HEADING, WEB_HEADING
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.files.atomic import atomic_write_text
from sourcedesk.core.files.regular import SymlinkRefused, read_regular
from sourcedesk.core.text.safety import clean_text

SECTIONS_DIR = "sections"
SOURCES_HEADINGS = HOUSE_HEADINGS
COUNT_KEYS = (
    "verified",
    "retitled",
    "substituted",
    "dropped",
    "out_of_range",
    "protected",
    "links_removed",
    # what the support check found: verdicts over verified and substituted citations, weak ones
    # (verified but unsupported), and claims left without a citation
    "supported",
    "partial",
    "unsupported",
    "unchecked",
    "weak",
    "uncited",
)


def note_counts(report: Mapping[str, Any]) -> dict[str, int]:
    """The frontmatter counts from a reconcile report's JSON (support verdicts flattened, uncited counted)."""
    flat: dict[str, Any] = dict(report)
    support = report.get("support")
    if isinstance(support, Mapping):
        flat.update(support)
    uncited = report.get("uncited")
    flat["uncited"] = len(uncited) if isinstance(uncited, list) else uncited
    return {k: _count(flat.get(k)) for k in COUNT_KEYS}


def _count(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


_FRONTMATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_FRONTMATTER_OPEN_RE = re.compile(r"\A---[ \t]*\r?\n")


class NoteFormatError(UserError):
    """A note's frontmatter is not readable YAML (the analyst edited it by hand)."""


# libyaml's C loader when PyYAML was built with it (same safe schema, several times faster:
# the memo screen reads every section's frontmatter); the pure-Python one otherwise.
_FRONTMATTER_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def note_filename(index: int, section_id: str) -> str:
    """``01-overview.md`` for the first section; ``index`` is 0-based."""
    return f"{index + 1:02d}-{section_id}.md"


def note_path(memo_dir: Path | str, memo: Any, section_id: str) -> Path:
    """Where the note of ``section_id`` lives (its number follows memo order)."""
    return Path(memo_dir) / SECTIONS_DIR / note_filename(memo.section_index(section_id), section_id)


def find_note(memo_dir: Path | str, memo: Any, section_id: str) -> Path | None:
    """The existing note of a section, also when sections were reordered since it was written."""
    canonical = note_path(memo_dir, memo, section_id)
    if canonical.is_file():
        return canonical
    others = sorted((Path(memo_dir) / SECTIONS_DIR).glob(f"[0-9][0-9]-{section_id}.md"))
    return others[0] if others else None


@dataclass(frozen=True)
class NoteRecord:
    """What the frontmatter records about the run that wrote the note."""

    section: str
    title: str
    run_id: str
    model: str
    generated_at: datetime | str
    status: str = "ok"  # ok | degraded
    web_search: bool = True
    source_set_id: str | None = None
    source_set_version: int | None = None
    source_set_fingerprint: str | None = None
    counts: Mapping[str, Any] = field(default_factory=dict)  # a reconcile report's JSON, or counts
    warnings: Sequence[str] = ()
    namesake_citations: Sequence[str] = ()  # keys of citations whose source is about a namesake
    cost_retrieval: float = 0.0
    cost_writer: float = 0.0
    cost_judge: float | None = None  # the model judge's call, when the run asked it (support.judge: model)

    def frontmatter(self) -> dict[str, Any]:
        """The frontmatter mapping in its one fixed key order."""
        generated = self.generated_at
        if isinstance(generated, datetime):
            if generated.tzinfo is None:
                generated = generated.replace(tzinfo=UTC)
            generated = generated.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        flags = {"cites_namesakes": [_one_line(k) for k in self.namesake_citations]} if self.namesake_citations else {}
        return {
            "section": self.section,
            "title": _one_line(self.title),
            "run_id": self.run_id,
            "status": self.status,
            **flags,
            "source_set": {
                "id": self.source_set_id,
                "version": self.source_set_version,
                "fingerprint": (self.source_set_fingerprint or "")[:8] or None,
            },
            "model": self.model,
            "generated_at": generated,
            "web_search": bool(self.web_search),
            "counts": note_counts(self.counts),
            "warnings": [_one_line(w) for w in self.warnings],
            "cost": self._cost(),
        }

    def _cost(self) -> dict[str, float]:
        cost = {"retrieval": _usd(self.cost_retrieval), "writer": _usd(self.cost_writer)}
        if self.cost_judge is not None:  # only when the run asked the model judge: older notes stay as they were
            cost["judge"] = _usd(self.cost_judge)
        cost["total"] = _usd((self.cost_retrieval or 0.0) + (self.cost_writer or 0.0) + (self.cost_judge or 0.0))
        return cost


def _usd(value: float | None) -> float:
    return round(float(value or 0.0), 6)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def dump_frontmatter(data: dict[str, Any]) -> str:
    """YAML between ``---`` fences; strings that look like other types are quoted by the dumper."""
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10**6)
    return f"---\n{body}---\n"


def render_note(
    record: NoteRecord,
    body: str,
    *,
    web_definitions: Iterable[str] = (),
    retrieved_definitions: Iterable[str] = (),
) -> str:
    """The full note text: frontmatter, ``# Title``, ``body``, then the grouped definitions.

    The run pipeline passes the reconciler's tidied text as ``body``: it already ends
    with the house ``## Sources (…)`` groups (rendered by ``sourcedesk.core.citations``, the one
    owner of the house format), so no definitions are passed. Callers holding loose
    finished ``[^key]: …`` lines pass them here instead; an empty group is left out."""
    parts = [dump_frontmatter(record.frontmatter()), f"# {_one_line(record.title)}\n"]
    text = body.strip("\n")
    if text:
        parts.append(f"\n{text}\n")
    for heading, lines in ((WEB_HEADING, web_definitions), (RETRIEVED_HEADING, retrieved_definitions)):
        lines = [ln.strip() for ln in lines if ln and ln.strip()]
        if lines:
            parts.append(f"\n{heading}\n\n" + "\n".join(lines) + "\n")
    # The last gate before the file: whatever a server slipped into the text (a control
    # sequence, a key it echoed back) does not reach a note an editor or `cat` will show.
    return clean_text("".join(parts), multiline=True)


def parse_note(text: str, *, path: Path | str | None = None) -> tuple[dict[str, Any], str]:
    """``(frontmatter, body)``; a note without frontmatter gives ``({}, text)``. A first
    ``---`` line that is never closed is an error: the rest of the note would otherwise
    be read as frontmatter by one tool and as body text by another."""
    match = _FRONTMATTER_RE.match(text)
    where = f"{path}: " if path else ""
    if not match and _FRONTMATTER_OPEN_RE.match(text):
        raise NoteFormatError(
            f"{where}the frontmatter that opens with '---' on line 1 is never closed.",
            "add a '---' line where the frontmatter ends, or delete the first line if it is not frontmatter.",
        )
    if not match:
        return {}, text
    try:
        data = yaml.load(match.group(1), Loader=_FRONTMATTER_LOADER) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 2})" if mark is not None else ""
        raise NoteFormatError(
            f"{where}the frontmatter is not valid YAML{line}.",
            "fix the block between the two '---' lines, or delete it (the next run rewrites it).",
        ) from None
    if not isinstance(data, dict):
        raise NoteFormatError(f"{where}the frontmatter must be a mapping of keys to values.")
    return data, text[match.end() :]


def read_note_text(path: Path) -> str:
    """A note's text, or a ``UserError`` naming the file (and the line of a bad byte)."""
    try:
        raw = read_regular(path, follow_links=False)  # a link's target is not the memo's text
    except SymlinkRefused:
        raise UserError(
            f"{path} is a symbolic link; notes are read only as regular files",
            hint="replace the link with the note itself, or re-run its section",
        ) from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}", hint="check the file's permissions") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError(
            f"{path}:{line}: not valid UTF-8 text (byte 0x{raw[exc.start]:02x})",
            hint="save the note as UTF-8 (or re-run its section to rewrite it)",
        ) from None


def write_note_atomic(path: Path | str, text: str) -> Path:
    """Replace ``path`` with ``text`` in one step (temp file in the same directory,
    fsync, ``os.replace``). Any failure leaves the old note byte-identical."""
    path = Path(path)
    atomic_write_text(path, text)
    return path
