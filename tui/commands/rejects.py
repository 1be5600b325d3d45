"""``sourcedesk reject`` / ``unreject`` / ``rejects`` — manage rejected domains from the shell.

A rejected domain (and every subdomain) is excluded from retrieval: for one
memo (``--memo DIR``) or for every memo (``--global``). With neither flag, the
memo in the current folder is meant, if there is one.

When a memo is named, ``reject`` / ``unreject`` do exactly what the app's
curation does (``core.curation``): the domain's sources leave (or come back to)
that memo's frozen source sets at once, markers are re-packed, and what changed
is printed. Sets that matched the request before are re-keyed to the new
rejection list, so the next run reuses them instead of searching again — a
rejection changes every section's request fingerprint, and without this the
CLI would make every section retrieve again.

Decision for ``--global``: alone, it edits the global list only (it cannot know
which memos exist). Combined with ``--memo DIR`` it edits the global list *and*
curates that memo's sets, as the app does for the memo it has open; other
memos' sets keep the domain's sources until their next run, which retrieves
again because their request changed.

``--json`` on reject / unreject prints one object instead of the text:
``{"domain", "scope", "memo", "changed", "sections": [{"section", "set", "sources":
[{"marker", "title", "url"}]}], "still_rejected": [scopes]}`` — ``changed`` says whether
the list changed, ``sections`` the frozen sets that lost (reject) or got back (unreject)
sources, and ``set`` the id of each new version.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import sys
from pathlib import Path

from core.errors import MemoError, UserError
from core.memo_loader import MEMO_FILENAME, LoadedMemo, load_memo
from store.global_store import GlobalStore
from store.memo_store import MemoStore
from store.rejections import canonical_domain

STORE_WAIT_S = 2.0

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def register(sub) -> None:
    for name, helptext in (
        ("reject", "exclude a domain (and its subdomains) from retrieval"),
        ("unreject", "remove a domain from the rejection list"),
    ):
        verb = "take its sources out of" if name == "reject" else "put its sources back into"
        p = sub.add_parser(name, help=helptext, description=helptext + ".")
        p.add_argument("domain", metavar="DOMAIN", help="a domain or a URL (its host is used), e.g. kestra.com")
        p.add_argument(
            "--memo",
            metavar="DIR",
            type=Path,
            help=f"this memo's list (default: the memo in .); also {verb} its frozen source sets",
        )
        p.add_argument(
            "--global",
            dest="global_",
            action="store_true",
            help=f"the list for every memo; with --memo DIR, also {verb} that memo's frozen source sets",
        )
        if name == "reject":
            p.add_argument("--note", default="", help="why (shown in listings)")
        p.add_argument("--json", action="store_true", help="print what changed as a JSON object")
        p.set_defaults(func=_reject if name == "reject" else _unreject)

    p = sub.add_parser(
        "rejects",
        help="list rejected domains",
        description="List rejected domains: the memo's (--memo DIR, default the memo in .) and the global list.",
    )
    p.add_argument("--memo", metavar="DIR", type=Path, help="the memo's list")
    p.add_argument("--global", dest="global_", action="store_true", help="the global list")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_list)


def _memo_dir(path: Path) -> Path:
    if not (path / MEMO_FILENAME).is_file():
        raise UserError(
            f"{path} is not a memo folder (no {MEMO_FILENAME})",
            hint="pass --memo DIR for a memo folder, or --global for the list that applies to every memo",
        )
    return path


def _scope(args) -> tuple[str, Path | None]:
    """Which list, and which memo's frozen sets to curate (None: none)."""
    if args.global_:
        return "global", _memo_dir(args.memo) if args.memo is not None else None
    if args.memo is not None:
        return "memo", _memo_dir(args.memo)
    if (Path.cwd() / MEMO_FILENAME).is_file():
        return "memo", Path.cwd()
    raise UserError(
        f"say which list: there is no {MEMO_FILENAME} in the current folder",
        hint="use --memo DIR (one memo) or --global (every memo)",
    )


def _where(scope: str, memo_dir: Path | None) -> str:
    return "globally (every memo)" if scope == "global" else f"for memo {memo_dir}"


def _clean(text: object) -> str:
    """Untrusted text (titles, hosts) shown as plain characters: no terminal control codes."""
    return _CONTROL_RE.sub("?", " ".join(str(text).split()))


def _load(memo_dir: Path) -> LoadedMemo | None:
    """The memo, or None (said on stderr) when memo.yaml does not load: the list can still be
    edited, but without the sections the frozen sets cannot be curated."""
    try:
        return load_memo(memo_dir)
    except MemoError as exc:
        print(f"sourcedesk: warning: {exc.message}", file=sys.stderr)
        print(
            "sourcedesk: warning: the frozen source sets were not changed; once memo.yaml is fixed, "
            "each section retrieves again on its next run",
            file=sys.stderr,
        )
        return None


def _section_label(loaded: LoadedMemo, section_id: str) -> str:
    try:
        return f"{section_id} — {_clean(loaded.memo.section(section_id).title)}"
    except KeyError:
        return section_id


def _source_line(marker: str | None, source) -> str:
    where = source.host or source.url
    return f"    {marker or '-':<4} {_clean(source.title or where)}  ({_clean(where)})"


# ---------------------------------------------------------------- --json


def _with_report(work):
    """Run ``work(args, report)``; with ``--json`` its text is held back and ``report`` printed."""

    def command(args) -> int:
        report: dict[str, object] = {"domain": None, "scope": None, "memo": None, "changed": False, "sections": []}
        report["still_rejected"] = []
        if not getattr(args, "json", False):
            return work(args, report)
        with contextlib.redirect_stdout(io.StringIO()):
            code = work(args, report)
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return code

    return command


def _sources_json(markers_and_sources) -> list[dict[str, object]]:
    return [{"marker": m, "title": s.title, "url": s.url} for m, s in markers_and_sources]


# ---------------------------------------------------------------- reject


@_with_report
def _reject(args, report) -> int:
    domain = canonical_domain(args.domain)  # junk is refused before anything is opened
    scope, memo_dir = _scope(args)
    report.update(domain=domain, scope=scope, memo=str(memo_dir) if memo_dir else None)
    if memo_dir is None:  # --global alone: the list only
        added = report["changed"] = GlobalStore().add_reject(domain, args.note)
        _say_rejected(domain, scope, memo_dir, added)
        if added:
            print(
                "Frozen source sets are not changed now: each memo's next run retrieves again without it "
                "(--memo DIR also takes its sources out of that memo's sets at once)."
            )
        return 0
    loaded = _load(memo_dir)
    settings = args.settings
    with MemoStore(memo_dir, wait_s=STORE_WAIT_S) as store:
        global_store = GlobalStore()
        if loaded is None:
            target = store if scope == "memo" else global_store
            report["changed"] = target.add_reject(domain, args.note)
            _say_rejected(domain, scope, memo_dir, report["changed"])
            return 0
        from core.curation import on_domain, reject_domain

        before = {s.id: store.latest_source_set(s.id) for s in loaded.memo.sections}
        result = reject_domain(
            loaded,
            store,
            domain,
            scope=scope,
            settings=settings,  # type: ignore[arg-type]
            global_store=global_store,
            note=args.note,
        )
    report["changed"] = result.added
    _say_rejected(domain, scope, memo_dir, result.added)
    for sid, gone in result.removed.items():
        saved = result.saved[sid]
        report["sections"].append(  # type: ignore[attr-defined]
            {"section": sid, "set": saved.id, "sources": _sources_json((s.marker, s) for s in gone)}
        )
        print(f"  {_section_label(loaded, sid)}: removed from its frozen set ({before[sid].id} → {saved.id}):")
        for source in gone:
            print(_source_line(source.marker, source))
    dropped_omitted = sum(1 for sid in result.saved for o in before[sid].omitted if on_domain(o.source.url, domain))
    if dropped_omitted:
        print(f"  {dropped_omitted} source(s) from {domain} that the budget had left out were dropped too.")
    if result.removed:
        ids = sorted(result.removed, key=lambda sid: loaded.memo.section_index(sid))
        flags = " ".join(f"--section {sid}" for sid in ids)
        print(
            f"The remaining sources were renumbered: `sourcedesk run {shlex.quote(str(memo_dir))} {flags}` "
            "writes the notes from the curated sets."
        )
    elif result.added:
        print(f"No frozen source set of this memo held a source from {domain}.")
    return 0


def _say_rejected(domain: str, scope: str, memo_dir: Path | None, added: bool) -> None:
    if added:
        print(f"Rejected {domain} {_where(scope, memo_dir)}: it and its subdomains are excluded from retrieval.")
    else:
        print(f"{domain} was already rejected {_where(scope, memo_dir)}; nothing changed.")


# ---------------------------------------------------------------- un-reject


@_with_report
def _unreject(args, report) -> int:
    scope, memo_dir = _scope(args)
    shown = _shown(args.domain)
    report.update(domain=shown, scope=scope, memo=str(memo_dir) if memo_dir else None, changed=True)
    if memo_dir is None:  # --global alone: the list only
        if not GlobalStore().remove_reject(args.domain):
            raise _not_rejected(shown, scope, memo_dir)
        _say_unrejected(shown, scope, memo_dir)
        return 0
    loaded = _load(memo_dir)
    settings = args.settings
    with MemoStore(memo_dir, wait_s=STORE_WAIT_S) as store:
        global_store = GlobalStore()
        if loaded is None:
            target = store if scope == "memo" else global_store
            if not target.remove_reject(args.domain):
                raise _not_rejected(shown, scope, memo_dir)
            _say_unrejected(shown, scope, memo_dir)
            return 0
        from core.curation import rejected_scopes, unreject_domain

        if scope not in rejected_scopes(store, global_store, args.domain):
            raise _not_rejected(shown, scope, memo_dir)
        result = unreject_domain(
            loaded,
            store,
            args.domain,
            settings=settings,  # type: ignore[arg-type]
            global_store=global_store,
            scope=scope,
        )  # type: ignore[arg-type]
        still = rejected_scopes(store, global_store, result.domain)
    report.update(domain=result.domain, still_rejected=sorted(still))
    _say_unrejected(result.domain, scope, memo_dir)
    if still:
        other = "globally" if "global" in still else f"for memo {memo_dir}"
        print(f"It is still rejected {other}, so the frozen source sets are unchanged.")
        return 0
    for sid, back in result.restored.items():
        saved = result.saved[sid]
        markers = {s.url: s.marker for s in saved.sources}
        report["sections"].append(  # type: ignore[attr-defined]
            {"section": sid, "set": saved.id, "sources": _sources_json((markers.get(s.url), s) for s in back)}
        )
        print(f"  {_section_label(loaded, sid)}: put back into its frozen set ({saved.id}):")
        for source in back:
            print(_source_line(markers.get(source.url), source))
    refetch = sum(result.refetch.values())
    if refetch:
        print(
            f"  {refetch} result(s) were excluded when retrieved and were never stored: "
            f"`sourcedesk retrieve {shlex.quote(str(memo_dir))} --refresh` fetches them."
        )
    return 0


def _say_unrejected(shown: str, scope: str, memo_dir: Path | None) -> None:
    print(f"Un-rejected {shown} {_where(scope, memo_dir)}; it can be retrieved again.")


def _not_rejected(shown: str, scope: str, memo_dir: Path | None) -> UserError:
    return UserError(f"{shown} is not rejected {_where(scope, memo_dir)}", hint="`sourcedesk rejects` lists both lists")


def _shown(domain: str) -> str:
    try:
        return canonical_domain(domain)
    except UserError:
        return domain.strip()


# ---------------------------------------------------------------- list


def _list(args) -> int:
    want_memo = args.memo is not None or not args.global_
    want_global = args.global_ or args.memo is None
    out: dict[str, object] = {}
    memo_dir: Path | None = None
    if want_memo:
        if args.memo is not None:
            memo_dir = _memo_dir(args.memo)
        elif (Path.cwd() / MEMO_FILENAME).is_file():
            memo_dir = Path.cwd()
    if memo_dir is not None:
        with MemoStore(memo_dir, wait_s=STORE_WAIT_S) as store:
            out["memo"] = {"dir": str(memo_dir.resolve()), "rejects": store.reject_entries()}
    if want_global:
        store = GlobalStore()
        out["global"] = {"path": str(store.path), "rejects": store.reject_entries()}
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    for scope, block in out.items():
        entries = block["rejects"]  # type: ignore[index]
        title = f"memo {memo_dir}" if scope == "memo" else "global (every memo)"
        print(f"Rejected domains, {title}: {len(entries) or 'none'}")
        width = max((len(e["domain"]) for e in entries), default=0)
        for e in entries:
            note = f"  {e['note']}" if e.get("note") else ""
            print(f"  {e['domain']:<{width}}{note}")
    return 0
