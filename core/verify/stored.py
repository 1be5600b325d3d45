"""Read each note's evidence from the memo store: its frozen source set and its run.

A note's frontmatter names the run that wrote it (``run_id``) and the frozen set
it was written from (``source_set.id``); exactly those are used — a newer set
for the same section would be a different document. The exported ``memo.md``
names neither, so it gets the union of every section note's evidence.

Checking never creates a store: the caller hands in an open store or a way to open
an existing one (``sourcedesk.core.domain.storage.EvidenceOpener``; core never imports ``store``), and
a folder without one simply has no stored text (grounding says "unverifiable"). A
store another sourcedesk process holds open, or a damaged one, is a warning, not a
failure.
"""

from __future__ import annotations

from pathlib import Path

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.domain.storage import EvidenceOpener, EvidenceStore
from sourcedesk.core.verify.evidence import Evidence, run_search_results
from sourcedesk.core.verify.targets import SECTIONS, NoteCitations, read_note

NO_STORE = (
    "no memo store in {memo_dir} (.sourcedesk/db.json): quotations and statistics are unverifiable, "
    "and a 401/403 only counts for URLs under '## Sources (retrieved)'"
)


def _note_evidence(store: EvidenceStore, note: NoteCitations, warnings: list[str]) -> Evidence | None:
    """The evidence a note's frontmatter points at; None when it points at nothing stored."""
    evidence = Evidence()
    found = False
    if note.source_set_id:
        source_set = store.get_source_set(note.source_set_id)
        if source_set is None:
            warnings.append(f"{note.name}: source set {note.source_set_id} is not in the memo store")
        else:
            evidence.add_source_set(source_set)
            found = True
    if note.run_id:
        run = store.get_run(note.run_id)
        if run is None:
            warnings.append(f"{note.name}: run {note.run_id} is not in the memo store (web-search snippets unknown)")
        else:
            evidence.add_search_results(run_search_results(run))
            found = True
    return evidence if found else None


def _section_notes(memo_dir: Path) -> list[NoteCitations]:
    folder = memo_dir / SECTIONS
    notes = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        try:
            notes.append(read_note(path))
        except UserError:
            continue
    return notes


def load_evidence(
    memo_dir: Path,
    notes: list[NoteCitations],
    *,
    store: EvidenceStore | None = None,
    open_store: EvidenceOpener | None = None,
) -> tuple[dict[str, Evidence], list[str]]:
    """``{note name: Evidence}`` for the notes whose run is stored, and warnings.

    A note missing from the mapping has no stored evidence at all. ``store`` is an
    already open store for ``memo_dir`` (the workbench holds one for the whole
    session, and a second open in the same process is refused): it is used as it is
    and left open; else ``open_store`` opens the folder's store, which is read and
    closed. With neither, nothing stored is known."""
    warnings: list[str] = []
    if store is not None:
        return _read_evidence(store, memo_dir, notes, warnings), warnings
    try:
        opening = open_store(memo_dir) if open_store is not None else None
        if opening is None:
            warnings.append(NO_STORE.format(memo_dir=memo_dir))
            return {}, warnings
        with opening as opened:
            return _read_evidence(opened, memo_dir, notes, warnings), warnings
    except UserError as err:
        warnings.append(f"the memo store could not be read ({err.message}); stored source text is unknown")
    except (OSError, ValueError, KeyError) as exc:  # a damaged db.json
        warnings.append(f"the memo store could not be read ({type(exc).__name__}); stored source text is unknown")
    return {}, warnings


def _read_evidence(
    store: EvidenceStore, memo_dir: Path, notes: list[NoteCitations], warnings: list[str]
) -> dict[str, Evidence]:
    result: dict[str, Evidence] = {}
    try:
        section_evidence: Evidence | None = None
        for note in notes:
            if note.is_export:
                if section_evidence is None:
                    section_evidence = Evidence()
                    for section in _section_notes(memo_dir):
                        found = _note_evidence(store, section, [])
                        if found is not None:
                            section_evidence.merge(found)
                if section_evidence.texts:
                    result[note.name] = section_evidence
                continue
            found = _note_evidence(store, note, warnings)
            if found is not None:
                result[note.name] = found
            elif not note.source_set_id and not note.run_id:
                warnings.append(f"{note.name}: no run recorded in its frontmatter; its sources' text is unknown")
    except UserError as err:
        warnings.append(f"the memo store could not be read ({err.message}); stored source text is unknown")
        return {}
    except (OSError, ValueError, KeyError) as exc:  # a damaged payload file, a half-written record
        warnings.append(f"the memo store could not be read ({type(exc).__name__}); stored source text is unknown")
        return {}
    return result
