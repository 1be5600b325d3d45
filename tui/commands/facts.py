"""``sourcedesk facts DIR [--section ID]… [--json] [--conflicts]`` — what each source states, and
where the memo contradicts itself.

Without ``--conflicts``: every section's frozen set (the one its note was written against, else
the newest), each source with its facts — typed, with the source's own words — as the extraction
step stored them when the set was frozen. A set frozen before extraction existed is read now and
says so. With ``--conflicts``: the memo's ledger, every two claims that give one quantity two
values, with both sections and both sources; exit 1 when there is any (0 when none, 2 for bad
input). Titles, URLs and spans are untrusted: control characters are escaped, secrets redacted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sourcedesk.tui.commands.check_urls import _redactor, clean


def register(sub) -> None:
    p = sub.add_parser(
        "facts",
        help="list the facts each source states, or the memo's conflicting claims (--conflicts)",
        description="List the typed facts (figures, dates, rounds, people, products, organisations) each "
        "source of each section's frozen set states, with their spans; with --conflicts, list the claims that "
        "give one quantity two values across sections (exit 1 when there is any).",
    )
    p.add_argument("dir", metavar="DIR", type=Path, help="the memo folder (holds memo.yaml)")
    p.add_argument("--section", action="append", default=[], metavar="ID", help="only this section (repeatable)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--conflicts", action="store_true", help="list conflicts between sections' claims (exit 1 if any)")
    p.set_defaults(func=run)


def _sections(args) -> tuple[Any, list[Any]]:
    from sourcedesk.core.domain.errors import UserError
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.core.verify.ledger import memo_sections
    from sourcedesk.store.backend import open_existing_store

    loaded = load_memo(args.dir)
    known = {s.id for s in loaded.memo.sections}
    unknown = [s for s in args.section if s not in known]
    if unknown:
        raise UserError(
            f"no section {', '.join(repr(s) for s in unknown)} in {loaded.path}",
            hint=f"sections: {', '.join(sorted(known))}",
        )
    store = open_existing_store(loaded.dir, url=args.settings.store_url)
    return loaded, memo_sections(loaded, store, args.section)


def run(args) -> int:
    from sourcedesk.core.sources.extraction import facts_of
    from sourcedesk.core.verify.ledger import memo_ledger

    _, redact_text = _redactor()
    loaded, sections = _sections(args)
    if args.conflicts:
        conflicts = memo_ledger(loaded, sections).conflicts
        if args.json:
            print(json.dumps({"conflicts": [c.to_json() for c in conflicts]}, indent=2, ensure_ascii=False))
        else:
            for c in conflicts:
                print(clean(c.describe(), redact_text))
                print(f"  {clean(c.verdict(), redact_text)}")
                for side in (c.a, c.b):
                    print(f"  {clean(side.section, redact_text)}: {clean(side.claim, redact_text)}")
            print(
                f"{len(conflicts)} conflict(s) across {sum(1 for s in sections if s.body is not None)} written section(s)"
            )
        return 1 if conflicts else 0
    document: list[dict[str, Any]] = []
    for section in sections:
        entry: dict[str, Any] = {"section": section.section, "set": None, "sources": []}
        if section.source_set is not None:
            entry["set"] = section.source_set.id
            for source in section.source_set.sources:
                facts, stored = facts_of(source, section.source_set.facts_version)
                entry["sources"].append(
                    {
                        "marker": source.marker,
                        "url": source.url,
                        "title": source.title,
                        "stored": stored,
                        "facts": [f.to_json() for f in facts],
                    }
                )
        document.append(entry)
    if args.json:
        print(json.dumps({"sections": document}, indent=2, ensure_ascii=False))
        return 0
    for entry in document:
        _print_section(entry, redact_text)
    return 0


def _print_section(entry: dict[str, Any], redact_text) -> None:
    from sourcedesk.core.sources.extraction import Fact

    print(f"{entry['section']}: " + (f"frozen set {entry['set']}" if entry["set"] else "no frozen set yet"))
    for source in entry["sources"]:
        note = "" if source["stored"] else "  (read now: the set predates fact extraction)"
        print(f"  {clean(source['marker'] or '-', redact_text)}  {clean(source['url'], redact_text)}{note}")
        if not source["facts"]:
            print("      no facts")
        for data in source["facts"]:
            fact = Fact.from_json(data)
            print(
                f"      {clean(fact.describe(), redact_text)}    [{fact.field} @{fact.start}: {clean(fact.span, redact_text)}]"
            )
    print()
