"""``sourcedesk retrieve DIR [--section ID]... [--refresh] [--json]`` — the retrieval stage alone.

Shows, per section, what the writer would be given and everything that was
kept out: kept sources with markers, sources omitted by the budget (with sizes),
namesakes removed by the pin check, results removed by exclusions, warnings,
and what this run cost. Every kept or omitted source carries its ``about``
verdict (``sourcedesk.core.sources.about``): ``subject``, ``namesake``, ``other`` or ``unclear``, with why. Exit code 0 even when retrieval degraded — a degraded
section is a warning, not an error.

``--json`` prints one stable document::

    {"memo": DIR, "requests": N, "cost_dollars": X, "sections": [
      {"section", "source_set_id", "version", "reused", "kept_previous", "degraded",
       "requests", "cost_dollars",            # this run (0 and 0.0 when reused)
       "set_requests", "set_cost_dollars",    # what the set cost when it was retrieved
       "created_at", "fingerprint", "budget_chars", "used_chars",
       "sources":   [{"marker", "title", "host" (null for local files), "url", "provider", "entry", "rank",
                      "published_date", "size", "about": {"verdict", "reason"}}],
       "omitted":   [{"title", "host", "url", "provider", "size", "about": {"verdict", "reason"}}],
       "namesakes": [{"host", "title", "url", "rule"}],
       "excluded":  [{"host", "title", "url", "reason", "rule"}],
       "warnings":  [{"code", "message", "entry"}]}]}
"""

from __future__ import annotations

import asyncio
import json
import sys

from sourcedesk.core.text.safety import clean_document, clean_text


def register(sub) -> None:
    p = sub.add_parser(
        "retrieve",
        help="resolve sections' sources (reuses frozen sets; --refresh to fetch again)",
        description="Run the retrieval stage only and show what each section's writer would get.",
    )
    p.add_argument("dir", metavar="DIR", help="memo folder (containing memo.yaml)")
    p.add_argument("--section", action="append", dest="sections", metavar="ID", help="only this section (repeatable)")
    p.add_argument("--refresh", action="store_true", help="retrieve again even if a fresh frozen set exists")
    p.add_argument("--json", action="store_true", help="print a JSON document instead of text")
    p.add_argument(
        "--wait", type=float, default=0.0, metavar="SECONDS", help="wait this long for a section someone else holds"
    )
    p.set_defaults(func=_run)


def _run(args) -> int:
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.tui.headless import retrieve_memo_folder

    settings = args.settings  # loaded once by the CLI entry point
    for notice in load_memo(args.dir, writer_api=settings.writer_api).notices:
        sys.stderr.write(f"sourcedesk: notice: {notice}\n")
    outcomes = asyncio.run(
        retrieve_memo_folder(args.dir, args.sections or None, refresh=args.refresh, settings=settings, wait_s=args.wait)
    )
    # Retrieval cleaned every string where it came in; the document is cleaned once more on
    # the way out so that a set stored by an older version cannot reach the terminal raw.
    document = clean_document(outcomes_document(args.dir, outcomes, _judge(args.dir)))
    if args.json:
        json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(document))
    return 0


def _host(source) -> str | None:
    """The web host, or None for a local file (whose URL is shown instead)."""
    return source.host if source.url.lower().startswith(("http://", "https://")) else None


def _judge(memo_dir):
    """The about judge with what the store learned (the retrieval above has let go of the store)."""
    from pathlib import Path

    from sourcedesk.core.config.settings import load_settings
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.core.sources.judge import memo_judge
    from sourcedesk.tui.stores import global_store, memo_store

    loaded = load_memo(Path(memo_dir))
    settings = load_settings()
    with memo_store(loaded.dir, settings) as store:
        everywhere = global_store(settings)
        try:
            return memo_judge(loaded.memo, store, global_name_rejects=everywhere.reject_names())
        finally:
            everywhere.close()


def _abouts(judge, source_set) -> dict[str, dict]:
    """Every source's verdict by URL, the set judged as one section (sites as sites)."""
    if judge is None:
        return {}
    pool = [*source_set.sources, *(o.source for o in source_set.omitted), *(h.source for h in source_set.held_out)]
    return {s.url: a.to_json() for s, a in zip(pool, judge.judge_section(pool), strict=True)}


def _section_doc(outcome, judge=None) -> dict:
    ss = outcome.source_set
    reused = outcome.reused
    abouts = _abouts(judge, ss)
    return {
        "section": ss.section,
        "source_set_id": ss.id or None,
        "version": ss.version,
        "reused": reused,
        "kept_previous": outcome.kept_previous,
        "degraded": ss.degraded,
        "requests": 0 if reused else outcome.requests,
        "cost_dollars": 0.0 if reused or outcome.kept_previous else ss.cost_dollars,
        "set_requests": ss.requests,
        "set_cost_dollars": ss.cost_dollars,
        "created_at": ss.created_at.isoformat(),
        "fingerprint": ss.fingerprint,
        "budget_chars": ss.budget_chars,
        "used_chars": ss.used_chars,
        "sources": [
            {
                "marker": s.marker,
                "title": s.title,
                "host": _host(s),
                "url": s.url,
                "provider": s.provider,
                "entry": s.entry,
                "rank": s.rank,
                "published_date": s.published_date,
                "size": s.size,
                "about": abouts.get(s.url),
            }
            for s in ss.sources
        ],
        "omitted": [
            {
                "title": o.source.title,
                "host": _host(o.source),
                "url": o.source.url,
                "provider": o.source.provider,
                "size": o.size,
                "about": abouts.get(o.source.url),
            }
            for o in ss.omitted
        ],
        "held_out": [
            {
                "title": h.source.title,
                "host": _host(h.source),
                "url": h.source.url,
                "namesake": h.namesake,
                "about": abouts.get(h.source.url) or {"verdict": "namesake", "reason": h.reason},
            }
            for h in ss.held_out
        ],
        "namesakes": [{"host": r.host, "title": r.title, "url": r.url, "rule": r.rule} for r in ss.namesakes],
        "excluded": [
            {"host": r.host, "title": r.title, "url": r.url, "reason": r.reason, "rule": r.rule} for r in ss.excluded
        ],
        "warnings": [{"code": w.code, "message": w.message, "entry": w.entry} for w in ss.warnings],
    }


def outcomes_document(memo_dir, outcomes, judge=None) -> dict:
    sections = [_section_doc(o, judge) for o in outcomes]
    return {
        "memo": str(memo_dir),
        "requests": sum(s["requests"] for s in sections),
        "cost_dollars": round(sum(s["cost_dollars"] for s in sections), 6),
        "sections": sections,
    }


def _clean(text: object) -> str:
    """Untrusted text (titles, hosts) as one plain line: no terminal control codes, no keys."""
    return " ".join(clean_text(str(text)).split())


def render_text(document: dict) -> str:
    lines: list[str] = []
    for sec in document["sections"]:
        state = "reused frozen set" if sec["reused"] else ("kept previous set" if sec["kept_previous"] else "retrieved")
        if sec["degraded"]:
            state += ", DEGRADED"
        lines.append(f"== {sec['section']}  [{sec['source_set_id'] or 'not saved'}]  {state}")
        lines.append(
            f"   requests this run: {sec['requests']}   cost this run: ${sec['cost_dollars']:.4f}   "
            f"budget: {sec['used_chars']:,}/{sec['budget_chars']:,} chars"
        )
        lines.append(f"   sources ({len(sec['sources'])}):")
        for s in sec["sources"]:
            where = s["host"] or s["url"]
            lines.append(f"     {s['marker'] or '-':<4} {_clean(s['title'] or where)}  ({_clean(where)})")
            about = s.get("about")
            if about and about["verdict"] in ("namesake", "unclear"):
                lines.append(f"          about: {about['verdict']} — {_clean(about['reason'])}")
        if not sec["sources"]:
            lines.append("     (none)")
        if sec["omitted"]:
            lines.append(f"   omitted by budget ({len(sec['omitted'])}):")
            for o in sec["omitted"]:
                where = o["host"] or o["url"]
                lines.append(f"     {_clean(o['title'] or where)}  ({_clean(where)}, {o['size']:,} chars)")
        if sec.get("held_out"):
            lines.append(f"   held out of the writer's set ({len(sec['held_out'])}):")
            for h in sec["held_out"]:
                where = h["host"] or h["url"]
                lines.append(f"     {_clean(h['title'] or where)}  ({_clean(where)})")
                lines.append(f"          held out: about {_clean(h['namesake'] or 'a namesake')}")
        if sec["namesakes"]:
            lines.append(f"   namesakes removed ({len(sec['namesakes'])}):")
            for r in sec["namesakes"]:
                lines.append(f"     {_clean(r['host'])}  {_clean(r['title'])}")
        if sec["excluded"]:
            lines.append(f"   excluded ({len(sec['excluded'])}):")
            for r in sec["excluded"]:
                lines.append(f"     {_clean(r['host'])}  {_clean(r['rule'])}")
        if sec["warnings"]:
            lines.append("   warnings:")
            for w in sec["warnings"]:
                lines.append(f"     [{w['code']}] {_clean(w['message'])}")
        lines.append("")
    lines.append(f"total: {document['requests']} request(s), ${document['cost_dollars']:.4f}")
    return "\n".join(lines) + "\n"
