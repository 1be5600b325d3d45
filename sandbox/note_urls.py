"""``python -m sourcedesk.sandbox.note_urls MEMO_DIR``: every link in a memo's notes against its runs' ground truth.

For each section note it collects every URL anywhere in the file (link
destinations, autolinks, bare URLs — frontmatter included) and checks each one,
normalised, against the ground truth of the run that wrote the note: the frozen
source set plus the writer's own web results recorded with the run. It prints
one line per section and exits 1 when any link is outside its ground truth.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

from sourcedesk.core.citations.bare_urls import find_bare_urls
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.notes.note import note_path, parse_note
from sourcedesk.core.verify.evidence import run_search_results
from sourcedesk.store.memo_store import MemoStore

_LINK_DEST = re.compile(r"\]\(\s*<?([^)\s>]+)>?")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")


def note_urls(text: str) -> set[str]:
    """Every URL anywhere in a note: link destinations, autolinks and bare URLs.

    A bare URL ends where a reader's renderer ends it, so the comma after a URL
    quoted in a warning ("[^E1] cites https://x.io/a, a source about…") is prose."""
    bare = {text[a:b] for a, b in find_bare_urls(text) if re.match(r"(?i)https?://", text[a:b])}
    found = set(_LINK_DEST.findall(text)) | set(_AUTOLINK.findall(text)) | bare
    return {u for u in found if re.match(r"(?i)^https?://", u) or "." in u.split("/")[0]}


@dataclass
class SectionCheck:
    section: str
    writer_api: str = ""
    links: int = 0
    outside: list[str] = field(default_factory=list)
    truth: int = 0
    missing: str = ""  # why the section could not be checked


def check_memo(memo_dir: Path) -> list[SectionCheck]:
    loaded = load_memo(memo_dir)
    checks: list[SectionCheck] = []
    with MemoStore(loaded.dir) as store:
        for section in loaded.memo.sections:
            check = SectionCheck(section.id)
            checks.append(check)
            path = note_path(loaded.dir, loaded.memo, section.id)
            if not path.is_file():
                check.missing = "no note"
                continue
            front, _ = parse_note(path.read_text(encoding="utf-8"))
            run = store.get_run(str(front.get("run_id") or ""))
            if run is None:
                check.missing = "the note's run is not in the store"
                continue
            check.writer_api = run.writer_api or ""
            truth = {normalise_url(r["url"]) for r in run_search_results(run) if r.get("url")}
            set_id = run.source_set_id
            source_set = store.get_source_set(set_id) if set_id else None
            if source_set is not None:
                truth |= {normalise_url(s.url) for s in source_set.sources}
            check.truth = len(truth)
            urls = note_urls(path.read_text(encoding="utf-8"))
            check.links = len(urls)
            check.outside = sorted(u for u in urls if normalise_url(u) not in truth)
    return checks


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sourcedesk.sandbox.note_urls", description=__doc__.split("\n")[0])
    p.add_argument("memo", type=Path, help="the memo folder")
    args = p.parse_args(argv)
    checks = check_memo(args.memo)
    outside = 0
    for c in checks:
        if c.missing:
            print(f"{c.section}: not checked ({c.missing})")
            continue
        outside += len(c.outside)
        print(
            f"{c.section}: {c.links} distinct links, {len(c.outside)} outside the ground truth "
            f"({c.truth} URLs retrieved; writer {c.writer_api or '?'})"
        )
        for url in c.outside:
            print(f"    outside: {url}")
    print(f"total: {outside} links outside the ground truth")
    return 1 if outside or any(c.missing for c in checks) else 0


if __name__ == "__main__":
    raise SystemExit(main())
