"""``sourcedesk tidy FILE.md [--check] [--json]`` — citation hygiene in place.

The file is rewritten atomically (temp file in the same directory, then
``os.replace``), keeping its permissions and its line-ending style; ``--check``
only reports and exits 1 when the file would change (for CI and hooks).
Terminal control sequences and bidi overrides in the file (pasted from a terminal
or a web page) are removed too, and an API key is redacted: a note never carries them.
``--json`` prints ``{"file", "changed", "written", "respaced", "moved_punctuation",
"duplicates_removed", "renumbered", "renames": {old: new}, "cleaned"}`` (same exit codes;
``cleaned`` says control sequences or a key were taken out).
"""

from __future__ import annotations

import json
from pathlib import Path

from sourcedesk.core.citations import tidy_with_stats
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.files.atomic import atomic_write_bytes
from sourcedesk.core.text.safety import clean_text
from sourcedesk.tui.commands.reconcile import read_text


def register(sub) -> None:
    p = sub.add_parser(
        "tidy",
        help="fix citation spacing, punctuation, duplicates and numbering in place",
        description="Tidy a Markdown file's citations in place: one space before a marker, markers after the "
        "sentence's full stop, no duplicate in a cluster, numeric footnotes renumbered 1..n with their "
        "definitions in order. --check only reports.",
    )
    p.add_argument("file", type=Path, metavar="FILE.md")
    p.add_argument("--check", action="store_true", help="do not write; exit 1 if the file would change")
    p.add_argument("--json", action="store_true", help="print what changed as a JSON object")
    p.set_defaults(func=run)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` exactly as given (its line endings included), atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def _describe(stats, cleaned: bool) -> str:
    parts = ["control sequences removed"] if cleaned else []
    if stats.respaced:
        parts.append(f"{stats.respaced} respaced")
    if stats.moved_punctuation:
        parts.append(f"{stats.moved_punctuation} moved after punctuation")
    if stats.duplicates_removed:
        parts.append(f"{stats.duplicates_removed} duplicate marker(s) removed")
    if stats.renumbered:
        moves = ", ".join(f"[^{a}]→[^{b}]" for a, b in sorted(stats.renames.items(), key=lambda kv: int(kv[0])))
        parts.append(f"{stats.renumbered} renumbered ({moves})")
    return "; ".join(parts) or "whitespace normalised"


def run(args) -> int:
    original = read_text(args.file, "markdown file")
    crlf = "\r\n" in original
    safe = clean_text(original, multiline=True)
    cleaned = safe != original.replace("\r\n", "\n")
    tidied, stats = tidy_with_stats(safe)
    if crlf:
        tidied = tidied.replace("\n", "\r\n")
    changed = tidied != original
    as_json = getattr(args, "json", False)
    if changed and not args.check:
        try:
            write_atomic(args.file, tidied)
        except OSError as exc:
            raise UserError(
                f"{args.file}: cannot write ({exc.strerror})", hint="check the file's permissions"
            ) from None
    if as_json:
        print(json.dumps(_document(args.file, changed, changed and not args.check, stats, cleaned), indent=2))
    elif not changed:
        print(clean_text(f"{args.file}: already tidy"))
    elif args.check:
        print(clean_text(f"{args.file}: would change — {_describe(stats, cleaned)}"))
    else:
        print(clean_text(f"{args.file}: tidied — {_describe(stats, cleaned)}"))
    return 1 if changed and args.check else 0


def _document(path: Path, changed: bool, written: bool, stats, cleaned: bool) -> dict:
    return {
        "file": clean_text(str(path)),
        "changed": changed,
        "written": written,
        "respaced": stats.respaced if changed else 0,
        "moved_punctuation": stats.moved_punctuation if changed else 0,
        "duplicates_removed": stats.duplicates_removed if changed else 0,
        "renumbered": stats.renumbered if changed else 0,
        "renames": dict(stats.renames) if changed else {},
        "cleaned": cleaned,
    }
