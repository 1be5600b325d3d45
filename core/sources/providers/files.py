"""``provider: files`` — the analyst's own markdown/text notes as citable sources (``V1``…).

Paths: a relative glob is resolved against the memo folder and may not leave it
(``../other-memo/*.md`` is refused with a warning — a memo copied to another
machine must not silently cite whatever sits next to it); an absolute glob is an
explicit choice and is honoured. The memo's own store (``.sourcedesk/``) and
hidden files are never read. ``**`` does not descend into linked folders (links
back up the tree would make it walk forever); name a linked folder to read it.

URLs are ``file:<path relative to the memo folder>`` (``file:notes/call.md``) so a
memo kept in git cites the same thing on every machine; files reached through
an absolute glob get a ``file:///…`` URI.
"""

from __future__ import annotations

import codecs
import fnmatch
import glob as globlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from sourcedesk.core.domain.models import RunWarning, Source
from sourcedesk.core.files.regular import NotRegularFile, read_regular
from sourcedesk.core.memo.spec import FilesEntry
from sourcedesk.core.sources.providers.base import Provider, ProviderContext, ProviderResult
from sourcedesk.core.text.safety import clean_text

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".txt", ".text"})
MAX_FILE_CHARS = 50_000  # beyond this a note is cut (with a warning); the budget does the rest
SUMMARY_CHARS = 300  # paragraphs are gathered until the summary reaches this length
SUMMARY_MAX = 800
_HEADING_RE = re.compile(r"^#\s+(.+?)\s*#*\s*$")
_FRONTMATTER_RE = re.compile(r"\A---\s*\n.*?\n(?:---|\.\.\.)\s*(?:\n|\Z)", re.DOTALL)


def file_url(path: Path, memo_dir: Path) -> str:
    try:
        return "file:" + path.relative_to(memo_dir).as_posix()
    except ValueError:
        return path.as_uri()


def title_of(body: str, fallback: str) -> str:
    """The first ``# heading`` (frontmatter skipped), else the file name."""
    for line in _FRONTMATTER_RE.sub("", body, count=1).splitlines():
        m = _HEADING_RE.match(line.strip())
        if m:
            return " ".join(m.group(1).split())
    return fallback


def summary_of(body: str) -> str:
    """The first paragraph(s) of prose: headings, frontmatter and code fences skipped."""
    text = _FRONTMATTER_RE.sub("", body, count=1)
    paragraphs: list[str] = []
    in_fence = False
    current: list[str] = []
    for line in [*text.splitlines(), ""]:
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            current = []
            continue
        if in_fence:
            continue
        if not stripped or stripped.startswith("#"):
            if current:
                paragraphs.append(" ".join(current))
                current = []
                if sum(len(p) for p in paragraphs) >= SUMMARY_CHARS:
                    break
            continue
        current.append(stripped)
    summary = "\n\n".join(paragraphs)
    if len(summary) > SUMMARY_MAX:
        summary = summary[:SUMMARY_MAX].rsplit(" ", 1)[0] + " …"
    return summary


# Enough bytes for MAX_FILE_CHARS characters of UTF-8 (at most 4 bytes each) and a BOM: a file
# is read only this far, so a 2 GB log matched by a glob costs no more than a note.
MAX_READ_BYTES = MAX_FILE_CHARS * 4 + 3


class _Read(NamedTuple):
    text: str
    size: int  # the file's size in bytes
    cut: bool  # the file goes on past MAX_READ_BYTES


def _read_text(path: Path) -> _Read:
    """UTF-8 text, cleaned like any outside text (no terminal control sequences, bidi
    overrides or API keys), or ValueError for something that is not text."""
    try:
        raw = read_regular(path, MAX_READ_BYTES)  # a FIFO swapped in after the glob must not block
    except NotRegularFile:
        raise ValueError("not a regular file") from None
    size = path.stat().st_size
    cut = len(raw) > MAX_READ_BYTES
    raw = raw[:MAX_READ_BYTES]
    if b"\x00" in raw[:8192]:
        raise ValueError("looks binary")
    try:
        # A cut file may end inside a character: the decoder keeps that partial one back.
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(raw, final=not cut)
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    return _Read(clean_text(text, multiline=True), max(size, len(raw)), cut)


def _glob(pattern: str, root: Path | None) -> list[str]:
    """``glob(pattern, recursive=True)`` (relative to ``root`` when given), except that ``**``
    never descends into a linked folder: two links pointing back up the tree made glob walk
    about 2**40 paths, hanging the section."""
    parts = Path(pattern).parts
    deep = next((i for i, part in enumerate(parts) if part == "**"), None)
    if deep is None:
        return globlib.glob(pattern, root_dir=root, recursive=True)
    prefix, rest = parts[:deep], list(parts[deep:])
    tops = globlib.glob(os.path.join(*prefix), root_dir=root) if prefix else [""]
    hits: list[str] = []
    prune_hidden = not any(part.startswith(".") for part in rest)  # "**/.notes/*.md" must look inside
    for top in tops:
        start = os.path.join(root, top) if root is not None else top
        if not os.path.isdir(start):
            continue
        for folder, dirs, files in os.walk(start, followlinks=False):  # a linked folder is listed, not entered
            if prune_hidden:  # like glob: hidden folders only when named
                dirs[:] = [d for d in dirs if not d.startswith(".")]
            below = Path(os.path.relpath(folder, start)).parts if folder != start else ()
            for name in files:
                if _matches_parts(rest, [*below, name]):
                    hits.append(os.path.join(top, *below, name))
    return hits


def _matches_parts(pattern: list[str], parts: list[str]) -> bool:
    """Whether path ``parts`` match glob ``pattern`` components, ``**`` standing for any number
    of folders (hidden names only where the pattern spells the dot, as glob does)."""
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(pattern):
                memo[i, j] = j == len(parts)
            elif pattern[i] == "**":
                memo[i, j] = match(i + 1, j) or (j < len(parts) and not parts[j].startswith(".") and match(i, j + 1))
            else:
                ok = j < len(parts) and fnmatch.fnmatchcase(parts[j], pattern[i])
                ok = ok and (not parts[j].startswith(".") or pattern[i].startswith("."))
                memo[i, j] = ok and match(i + 1, j + 1)
        return memo[i, j]

    return match(0, 0)


class FilesProvider(Provider):
    name = "files"
    marker_prefix = "V"
    uses_network = False

    def describe(self, entry: FilesEntry, ctx: ProviderContext) -> dict[str, Any]:
        return {
            "provider": self.name,
            "glob": list(entry.glob),
            "max_files": entry.max_files,
            "full_text": entry.full_text,
        }

    def _matches(self, entry: FilesEntry, ctx: ProviderContext, warnings: list[RunWarning]) -> list[Path]:
        root = ctx.memo_dir.resolve()
        found: list[Path] = []
        seen: set[Path] = set()
        for pattern in entry.glob:
            absolute = Path(pattern).expanduser().is_absolute()
            if absolute:
                hits = _glob(str(Path(pattern).expanduser()), None)
            else:
                hits = [str(root / h) for h in _glob(pattern, root)]
            outside = 0
            for hit in sorted(hits):
                try:
                    path = Path(hit).resolve()
                except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11's resolve)
                    shown = clean_text(file_url(Path(hit), root))
                    warnings.append(
                        RunWarning(
                            code="info",
                            message=f"skipped {shown}: a symbolic link that leads back to itself",
                            entry=ctx.entry_index,
                        )
                    )
                    continue
                if not absolute and not path.is_relative_to(root):
                    outside += 1
                    continue
                if path.is_relative_to(root) and ".sourcedesk" in path.relative_to(root).parts:
                    continue
                if path.is_file():
                    if path not in seen:  # a set: a glob may match tens of thousands
                        seen.add(path)
                        found.append(path)
                elif path.exists() and not path.is_dir():
                    warnings.append(
                        RunWarning(
                            code="info",
                            message=f"skipped {clean_text(file_url(path, root))}: not a regular file "
                            "(a pipe, socket or device)",
                            entry=ctx.entry_index,
                        )
                    )
            if outside:
                warnings.append(
                    RunWarning(
                        code="info",
                        message=f"glob {pattern!r}: skipped {outside} file(s) outside the memo folder "
                        "(write an absolute path to read files elsewhere on purpose)",
                        entry=ctx.entry_index,
                    )
                )
            if not hits:
                warnings.append(
                    RunWarning(code="short", message=f"glob {pattern!r} matched no files", entry=ctx.entry_index)
                )
        return found

    async def fetch(self, entry: FilesEntry, ctx: ProviderContext) -> ProviderResult:
        result = ProviderResult()
        root = ctx.memo_dir.resolve()
        paths = self._matches(entry, ctx, result.warnings)
        readable = 0
        for path in paths:
            if readable >= entry.max_files:
                result.warnings.append(
                    RunWarning(
                        code="info",
                        message=f"{len(paths)} files matched; only the first {entry.max_files} (max-files) were read",
                        entry=ctx.entry_index,
                    )
                )
                break
            shown = clean_text(file_url(path, root))  # a file name can carry control characters too
            if path.suffix.lower() not in TEXT_SUFFIXES:
                result.warnings.append(
                    RunWarning(
                        code="info", message=f"skipped {shown}: not a markdown or text file", entry=ctx.entry_index
                    )
                )
                continue
            try:
                read = _read_text(path)
                mtime = path.stat().st_mtime
            except (OSError, ValueError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                result.warnings.append(
                    RunWarning(code="info", message=f"skipped {shown}: cannot read it ({why})", entry=ctx.entry_index)
                )
                continue
            body = read.text
            if read.cut or len(body) > MAX_FILE_CHARS:
                size = f"{read.size:,} bytes" if read.cut else f"{len(body):,} characters"
                result.warnings.append(
                    RunWarning(
                        code="info",
                        message=f"{shown} is {size}; only the first {MAX_FILE_CHARS:,} characters are used",
                        entry=ctx.entry_index,
                    )
                )
                body = body[:MAX_FILE_CHARS]
            result.sources.append(
                Source(
                    provider=self.name,
                    url=shown,
                    title=clean_text(title_of(body, path.name)),
                    published_date=datetime.fromtimestamp(mtime, UTC).date().isoformat(),
                    summary=summary_of(body),
                    text=body,
                    rank=readable,
                    entry=ctx.entry_index,
                    query=", ".join(entry.glob),
                    full_text=entry.full_text,
                )
            )
            readable += 1
        return result
