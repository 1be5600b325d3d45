"""``sourcedesk reject`` / ``unreject`` / ``rejects`` — rejected domains and names from the shell.

A rejected domain (and every subdomain) is excluded from retrieval; a rejected name
("Kestra Medical") removes every result whose title or text contains it — the way to
keep out third-party coverage of a namesake, which no domain reject catches. Either is
kept for one memo (``--memo DIR``) or for every memo (``--global``). With neither flag,
the memo in the current folder is meant, if there is one.

    sourcedesk reject nats.aero kestramedical.com --memo DIR     # many domains at once
    sourcedesk reject --from domains.txt --global                # one per line, # comments
    sourcedesk reject --name "Kestra Medical" --memo DIR
    sourcedesk unreject nats.aero --name "Kestra Medical" --memo DIR
    sourcedesk unreject --namesake "Grupo Cresta" --memo DIR     # forget a learned namesake
    sourcedesk rejects [--memo DIR] [--global] [--json]          # domains, names, namesakes

When a memo is named, ``reject`` / ``unreject`` do exactly what the app's curation does
(``sourcedesk.core.sources.curation``): the sources leave (or come back to) that memo's frozen source sets at
once, markers are re-packed, and what changed is printed. A set the rejection does not
touch keeps its version and is reused as it is.

Decision for ``--global``: alone, it edits the global list only (it cannot know which
memos exist); each memo's next run takes the rejected sources out of its frozen sets
(no new search). Combined with ``--memo DIR`` it edits the global list *and* curates
that memo's sets at once, as the app does for the memo it has open.

``--json`` on reject / unreject prints one object instead of the text:
``{"domain", "scope", "memo", "changed", "sections": [{"section", "set", "sources":
[{"marker", "title", "url"}]}], "still_rejected": [scopes]}`` — ``domain`` is the (first)
domain, ``changed`` says whether a list changed, ``sections`` the frozen sets that lost
(reject) or got back (unreject) sources, and ``set`` the id of each new version. Every
domain and name given is listed, whatever their number: ``"domains": [{"domain", "added"}]``
and ``"names": [{"name", "added"}]`` (un-reject: ``{"domain"|"name", "removed",
"still_rejected"}``, the name as it was stored), then ``"learned_namesakes"`` (reject) or
``"namesakes_forgotten"`` and ``"refresh"`` (un-reject), empty lists when there are none.
Un-rejecting what is not rejected is no error: ``changed`` is false and the text says so,
as rejecting what is already rejected does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from sourcedesk.core.domain.errors import MemoError, UserError
from sourcedesk.core.memo.loader import MEMO_FILENAME, LoadedMemo, load_memo
from sourcedesk.core.sources.name_rejects import canonical_name
from sourcedesk.core.sources.reject_domains import canonical_domain
from sourcedesk.store.api import MemoStoreAPI, RejectListsAPI
from sourcedesk.tui.stores import global_store as open_global
from sourcedesk.tui.stores import memo_store as open_memo
from sourcedesk.tui.stores import waiting_line

Scope = Literal["memo", "global"]

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def register(sub) -> None:
    for name, helptext in (
        ("reject", "exclude domains (and their subdomains) or names from retrieval"),
        ("unreject", "lift rejected domains or names; forget a learned namesake"),
    ):
        verb = "take their sources out of" if name == "reject" else "put their sources back into"
        p = sub.add_parser(name, help=helptext, description=helptext + ".")
        p.add_argument(
            "domains",
            nargs="*",
            metavar="DOMAIN",
            help="domains or URLs (their hosts are used), e.g. kestramedical.com nats.aero",
        )
        if name == "reject":
            p.add_argument(
                "--from",
                dest="from_file",
                metavar="FILE",
                type=Path,
                help="read more domains from FILE, one per line (# starts a comment; - reads stdin)",
            )
        p.add_argument(
            "--name",
            dest="names",
            action="append",
            default=[],
            metavar="PHRASE",
            help="a name (repeatable): results whose title or text contain it as whole words, "
            'any case or punctuation, e.g. --name "Kestra Medical"',
        )
        if name == "unreject":
            p.add_argument(
                "--namesake",
                dest="namesakes",
                action="append",
                default=[],
                metavar="NAME",
                help="stop treating a learned namesake as one (memo only; declared ones live in memo.yaml)",
            )
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
        p.add_argument(
            "--wait",
            type=float,
            default=0.0,
            metavar="SECONDS",
            help="wait this long for sections someone else is running before leaving their frozen sets as they are",
        )
        p.add_argument("--json", action="store_true", help="print what changed as a JSON object")
        p.set_defaults(func=_reject if name == "reject" else _unreject)

    p = sub.add_parser(
        "rejects",
        help="list rejected domains and names, and the memo's namesakes",
        description="List rejected domains and names — the memo's (--memo DIR, default the memo in .) and the "
        "global list — and the memo's namesakes (declared in memo.yaml or learned).",
    )
    p.add_argument("--memo", metavar="DIR", type=Path, help="the memo's lists")
    p.add_argument("--global", dest="global_", action="store_true", help="the global lists")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_list)


def _memo_dir(path: Path) -> Path:
    if not (path / MEMO_FILENAME).is_file():
        raise UserError(
            f"{path} is not a memo folder (no {MEMO_FILENAME})",
            hint="pass --memo DIR for a memo folder, or --global for the list that applies to every memo",
        )
    return path


def _scope(args) -> tuple[Scope, Path | None]:
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
            "each section's next run applies the rejections",
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


def _read_domains(path: Path) -> list[tuple[str, str]]:
    """``(domain as written, where)`` for every line of FILE (``-``: stdin)."""
    if str(path) == "-":
        text, shown = sys.stdin.read(), "stdin"
    else:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise UserError(
                f"cannot read {path}: {exc.strerror or exc}", hint="check the path given to --from"
            ) from None
        except UnicodeDecodeError:
            raise UserError(f"{path} is not UTF-8 text", hint="one domain per line, plain text") from None
        shown = str(path)
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        value = line.split("#", 1)[0].strip()
        if value:
            out.append((value, f"{shown}:{number}"))
    return out


def _domains(args, *, from_file: bool) -> list[str]:
    """Every domain given, canonical, checked before anything is written; a bad one is named."""
    given = [(d, "") for d in args.domains]
    if from_file and getattr(args, "from_file", None) is not None:
        given += _read_domains(args.from_file)
    out: list[str] = []
    for raw, where in given:
        try:
            domain = canonical_domain(raw)
        except UserError as exc:
            if where:
                raise UserError(f"{where}: {exc.message}", hint=exc.hint) from None
            raise
        if domain not in out:
            out.append(domain)
    return out


def _names(args) -> list[str]:
    out: list[str] = []
    for raw in args.names:
        shown, _key = canonical_name(raw)
        if shown not in out:
            out.append(shown)
    return out


def _emit(args, document: dict[str, Any], lines: list[str]) -> None:
    if args.json:
        print(json.dumps(_shaped(document, unreject=args.func is _unreject), indent=2, ensure_ascii=False))
    else:
        for line in lines:
            print(line)


def _shaped(document: dict[str, Any], *, unreject: bool) -> dict[str, Any]:
    """The ``--json`` object, one shape whatever was given: the first domain's keys first (kept
    for scripts written against one domain), then every domain and name, each as a list."""
    domains = document.get("domains") or []
    names = document.get("names") or []
    forgotten = document.get("namesakes_forgotten") or []
    if unreject:
        changed = any(d["removed"] for d in domains) or any(n["removed"] for n in names) or bool(forgotten)
        still = sorted(domains[0].get("still_rejected") or []) if domains else []
    else:
        changed = any(d["added"] for d in domains) or any(n["added"] for n in names)
        still = []
    out: dict[str, Any] = {
        "domain": domains[0]["domain"] if domains else None,
        "scope": document.get("scope"),
        "memo": document.get("memo"),
        "changed": changed,
        "sections": [
            {"section": sid, "set": block["set"], "sources": block.get("removed") or block.get("restored") or []}
            for sid, block in (document.get("sections") or {}).items()
        ],
        "still_rejected": still,
        "domains": domains,
        "names": names,
    }
    if unreject:
        out["namesakes_forgotten"] = forgotten
        out["refresh"] = document.get("refresh") or []  # sections whose search the rejection was sent to
    else:
        out["learned_namesakes"] = document.get("learned_namesakes") or []
    return out


def _sources_json(sources) -> list[dict[str, Any]]:
    return [{"marker": s.marker, "title": s.title, "url": s.url} for s in sources]


# ---------------------------------------------------------------- reject


def _reject(args) -> int:
    domains = _domains(args, from_file=True)  # junk is refused before anything is opened
    names = _names(args)
    if not domains and not names:
        raise UserError(
            "say what to reject: one or more domains, --from FILE, or --name PHRASE",
            hint='e.g. sourcedesk reject nats.aero --memo DIR, or sourcedesk reject --name "Kestra Medical" --memo DIR',
        )
    scope, memo_dir = _scope(args)
    document: dict[str, Any] = {"scope": scope, "memo": str(memo_dir) if memo_dir else None}
    lines: list[str] = []
    if memo_dir is None:  # --global alone: the lists only
        everywhere = open_global(args.settings)
        had = set(everywhere.rejects())
        everywhere.add_rejects(domains, args.note)
        added_names = [n for n in names if everywhere.add_reject_name(n, args.note)]
        document["domains"] = [{"domain": d, "added": d not in had} for d in domains]
        document["names"] = [{"name": n, "added": n in added_names} for n in names]
        document["sections"] = {}
        lines += [_said_domain(d, d not in had, scope, memo_dir) for d in domains]
        lines += [_said_name(n, n in added_names, scope, memo_dir) for n in names]
        if any(d not in had for d in domains) or added_names:
            lines.append(
                "Frozen source sets are not changed now: each memo's next run takes the rejected sources out "
                "of its sets, with no new search (--memo DIR does it for that memo at once)."
            )
        _emit(args, document, lines)
        return 0
    loaded = _load(memo_dir)
    with open_memo(memo_dir, args.settings) as store:
        global_store = open_global(args.settings)
        target = store if scope == "memo" else global_store
        if loaded is None:
            had = set(target.rejects())
            target.add_rejects(domains, args.note)
            added_names = [n for n in names if target.add_reject_name(n, args.note)]
            document["domains"] = [{"domain": d, "added": d not in had} for d in domains]
            document["names"] = [{"name": n, "added": n in added_names} for n in names]
            document["sections"] = {}
            lines += [_said_domain(d, d not in had, scope, memo_dir) for d in domains]
            lines += [_said_name(n, n in added_names, scope, memo_dir) for n in names]
            _emit(args, document, lines)
            return 0
        from sourcedesk.core.sources.curation import reject_domains, reject_name

        with _curating(args, store, loaded, lines, document) as curated:
            before = {s.id: store.latest_source_set(s.id) for s in loaded.memo.sections}
            results = []
            if domains:
                results.append(
                    reject_domains(curated, store, domains, scope=scope, global_store=global_store, note=args.note)
                )
            for name in names:
                results.append(
                    reject_name(curated, store, name, scope=scope, global_store=global_store, note=args.note)
                )
    _report_reject(args, loaded, memo_dir, scope, before, results, document, lines)
    _emit(args, document, lines)
    return 0


@contextlib.contextmanager
def _curating(
    args, store: MemoStoreAPI, loaded: LoadedMemo, lines: list[str], document: dict[str, Any]
) -> Iterator[LoadedMemo]:
    """The memo with only the sections this command holds now: their frozen sets are curated at
    once. A section someone else is running (``--wait`` gives them time) keeps its set, and the
    analyst is told who holds it; the rejection lists change either way."""
    from sourcedesk.tui.headless import held_sections

    ids = [s.id for s in loaded.memo.sections]
    with held_sections(
        store,
        ids,
        purpose="curating its sources",
        wait_s=args.wait,
        on_wait=lambda sid: waiting_line(sid, args.wait),
    ) as (held, refused):
        refused = {sid: exc for sid, exc in refused.items() if store.latest_source_set(sid) is not None}
        document["held_elsewhere"] = {sid: exc.message for sid, exc in refused.items()}
        for exc in refused.values():
            lines.append(
                f"  {_clean(exc.message)}: its frozen set was left as it is (its next run applies the rejections; "
                "--wait SECONDS waits for it)"
            )
        memo = loaded.memo.model_copy(update={"sections": [s for s in loaded.memo.sections if s.id in held]})
        yield dataclasses.replace(loaded, memo=memo)


def _report_reject(args, loaded, memo_dir, scope, before, results, document, lines) -> None:
    domain_results = [r for r in results if not r.name]
    name_results = [r for r in results if r.name]
    document["domains"] = [{"domain": d, "added": d in r.added_domains} for r in domain_results for d in r.domains]
    document["names"] = [{"name": r.name, "added": r.added} for r in name_results]
    for r in domain_results:
        lines += [_said_domain(d, d in r.added_domains, scope, memo_dir) for d in r.domains]
    for r in name_results:
        lines.append(_said_name(r.name, r.added, scope, memo_dir))
    sections: dict[str, dict[str, Any]] = {}
    final: dict[str, Any] = {}
    removed: dict[str, list] = {}
    omitted = 0
    for r in results:
        for sid, saved in r.saved.items():
            final[sid] = saved
        for sid, gone in r.removed.items():
            removed.setdefault(sid, []).extend(gone)
        omitted += sum(len(v) for v in r.removed_omitted.values())
    for sid in sorted(final, key=loaded.memo.section_index):
        gone = removed.get(sid, [])
        sections[sid] = {"set": final[sid].id, "removed": _sources_json(gone)}
        if gone:
            was = before[sid].id if before.get(sid) is not None else "-"
            lines.append(f"  {_section_label(loaded, sid)}: removed from its frozen set ({was} → {final[sid].id}):")
            lines += [_source_line(s.marker, s) for s in gone]
    document["sections"] = sections
    if omitted:
        lines.append(
            f"  {omitted} source(s) outside the writer's set (left out by the budget, or held out as a namesake's) were dropped too."
        )
    learned = [n for r in domain_results for n in r.learned]
    document["learned_namesakes"] = learned
    if learned:
        lines.append(
            "Learned namesake(s) from those pages' titles: "
            + ", ".join(f"'{_clean(n)}'" for n in learned)
            + f" (`sourcedesk unreject --namesake NAME --memo {shlex.quote(str(memo_dir))}` forgets one)."
        )
    if removed:
        ids = sorted(removed, key=loaded.memo.section_index)
        flags = " ".join(f"--section {sid}" for sid in ids)
        lines.append(
            f"The remaining sources were renumbered: `sourcedesk run {shlex.quote(str(memo_dir))} {flags}` "
            "writes the notes from the curated sets."
        )
    elif any(r.added for r in results) and not omitted:
        lines.append("No frozen source set of this memo held a source it covers.")


def _said_domain(domain: str, added: bool, scope: str, memo_dir: Path | None) -> str:
    if added:
        return f"Rejected {domain} {_where(scope, memo_dir)}: it and its subdomains are excluded from retrieval."
    return f"{domain} was already rejected {_where(scope, memo_dir)}; nothing changed."


def _said_name(name: str, added: bool, scope: str, memo_dir: Path | None) -> str:
    if added:
        return (
            f"Rejected the name '{_clean(name)}' {_where(scope, memo_dir)}: results whose title or text "
            "contain it are removed from retrieval and from the writer's search results."
        )
    return f"The name '{_clean(name)}' was already rejected {_where(scope, memo_dir)}; nothing changed."


# ---------------------------------------------------------------- un-reject


def _unreject(args) -> int:
    names = [canonical_name(n)[0] for n in args.names]  # a phrase no reject could hold is refused
    namesakes = [" ".join(n.split()) for n in args.namesakes if n.strip()]
    if not args.domains and not names and not namesakes:
        raise UserError(
            "say what to un-reject: one or more domains, --name PHRASE or --namesake NAME",
            hint="`sourcedesk rejects` lists what is rejected",
        )
    scope, memo_dir = _scope(args)
    if namesakes and memo_dir is None:
        raise UserError("learned namesakes belong to a memo", hint="add --memo DIR")
    document: dict[str, Any] = {"scope": scope, "memo": str(memo_dir) if memo_dir else None}
    lines: list[str] = []
    domain_docs: list[dict[str, Any]] = []
    name_docs: list[dict[str, Any]] = []
    if memo_dir is None:  # --global alone: the lists only
        everywhere = open_global(args.settings)
        _refuse_junk(args.domains, everywhere)
        for raw in args.domains:
            removed = everywhere.remove_reject(raw)
            domain_docs.append(_lifted_domain(raw, removed, [], scope, memo_dir, lines))
        for name in names:
            stored = _stored_name(everywhere, name)
            removed = stored is not None and everywhere.remove_reject_name(name)
            name_docs.append(_lifted_name(stored or name, removed, [], scope, memo_dir, lines))
        document.update(domains=domain_docs, names=name_docs, sections={})
        _emit(args, document, lines)
        return 0
    from sourcedesk.core.sources.curation import rejected_name_scopes, rejected_scopes, unreject_domain, unreject_name

    loaded = _load(memo_dir)
    sections: dict[str, dict[str, Any]] = {}
    refresh: dict[str, None] = {}  # sections only a refresh can give back what the rejection kept out
    with open_memo(memo_dir, args.settings) as store, contextlib.ExitStack() as stack:
        global_store = open_global(args.settings)
        target = store if scope == "memo" else global_store
        _refuse_junk(args.domains, target)
        if loaded is None:
            for raw in args.domains:
                removed = target.remove_reject(raw)
                still = rejected_scopes(store, global_store, raw)
                domain_docs.append(_lifted_domain(raw, removed, still, scope, memo_dir, lines))
            for name in names:
                stored = _stored_name(target, name)
                removed = stored is not None and target.remove_reject_name(name)
                still = rejected_name_scopes(store, global_store, name)
                name_docs.append(_lifted_name(stored or name, removed, still, scope, memo_dir, lines))
        else:
            loaded = stack.enter_context(_curating(args, store, loaded, lines, document))
            results: list[Any] = []  # in the order given; None where nothing was rejected
            for raw in args.domains:
                if scope in rejected_scopes(store, global_store, raw):
                    results.append(unreject_domain(loaded, store, raw, global_store=global_store, scope=scope))
                else:
                    still = rejected_scopes(store, global_store, raw)
                    domain_docs.append(_lifted_domain(raw, False, still, scope, memo_dir, lines))
            for name in names:
                stored = _stored_name(target, name)
                if stored is not None:
                    result = unreject_name(loaded, store, name, global_store=global_store, scope=scope)
                    result.name = stored  # shown as stored (as first typed), not as typed now
                    results.append(result)
                else:
                    still = rejected_name_scopes(store, global_store, name)
                    name_docs.append(_lifted_name(name, False, still, scope, memo_dir, lines))
            for r in results:
                if r.name:
                    still = rejected_name_scopes(store, global_store, r.name)
                    name_docs.append(_lifted_name(r.name, True, still, scope, memo_dir, lines))
                else:
                    still = rejected_scopes(store, global_store, r.domain)
                    domain_docs.append(_lifted_domain(r.domain, True, still, scope, memo_dir, lines))
                if still:
                    continue
                for sid, back in r.restored.items():
                    saved = r.saved[sid]
                    markers = {s.url: s.marker for s in saved.sources}
                    lines.append(f"  {_section_label(loaded, sid)}: put back into its frozen set ({saved.id}):")
                    lines += [_source_line(markers.get(s.url), s) for s in back]
                    sections.setdefault(sid, {"set": saved.id, "restored": []})
                    sections[sid]["set"] = saved.id
                    sections[sid]["restored"] += [
                        {"marker": markers.get(s.url), "title": s.title, "url": s.url} for s in back
                    ]
                refetch = sum(r.refetch.values())
                if refetch:
                    lines.append(
                        f"  {refetch} result(s) were excluded when retrieved and were never stored: "
                        f"`sourcedesk retrieve {shlex.quote(str(memo_dir))} --refresh` fetches them."
                    )
                for sid in r.refresh:
                    refresh.setdefault(sid, None)
                    lines.append(
                        f"  {_section_label(loaded, sid)}: retrieved while it was rejected, so the search never "
                        f"returned its results; `sourcedesk retrieve {shlex.quote(str(memo_dir))} --section "
                        f"{shlex.quote(sid)} --refresh` fetches them."
                    )
        order = {_shown(raw): i for i, raw in reversed(list(enumerate(args.domains)))}
        domain_docs.sort(key=lambda d: order.get(d["domain"], len(order)))  # as given on the command line
        forgotten = _forget_namesakes(store, loaded, namesakes, lines)
    document.update(
        domains=domain_docs, names=name_docs, sections=sections, refresh=list(refresh), namesakes_forgotten=forgotten
    )
    _emit(args, document, lines)
    return 0


def _refuse_junk(domains: list[str], lists: RejectListsAPI) -> None:
    """A non-domain is bad input, as for reject — unless the list holds it (junk stored before
    domains were checked can still be lifted). Checked before anything changes."""
    stored = set(lists.rejects())
    for raw in domains:
        try:
            canonical_domain(raw)
        except UserError:
            if raw.strip().lower() not in stored:
                raise


def _stored_name(lists: RejectListsAPI, name: str) -> str | None:
    """The rejected name as it was stored (first typed) that ``name`` stands for, or None."""
    from sourcedesk.core.text.phrases import normalise_phrase

    key = normalise_phrase(name)
    return next((n for n in lists.reject_names() if normalise_phrase(n) == key), None)


def _lifted_domain(
    raw: str, removed: bool, still: list[str], scope: str, memo_dir: Path | None, lines: list[str]
) -> dict[str, Any]:
    """One domain's un-reject, said in ``lines``; its ``--json`` entry returned."""
    shown = _shown(raw)
    lines.append(_said_lifted(shown, removed, still, scope, memo_dir, f"sourcedesk unreject {shlex.quote(shown)}"))
    return {"domain": shown, "removed": removed, "still_rejected": sorted(still)}


def _lifted_name(
    name: str, removed: bool, still: list[str], scope: str, memo_dir: Path | None, lines: list[str]
) -> dict[str, Any]:
    shown = f"the name '{_clean(name)}'"
    lines.append(
        _said_lifted(shown, removed, still, scope, memo_dir, f"sourcedesk unreject --name {shlex.quote(name)}")
    )
    return {"name": name, "removed": removed, "still_rejected": sorted(still)}


def _said_lifted(shown: str, removed: bool, still: list[str], scope: str, memo_dir: Path | None, how: str) -> str:
    if removed:
        said = _said_unrejected(shown, scope, memo_dir)
        if still:
            other = "globally" if "global" in still else f"for memo {memo_dir}"
            said += f"\nIt is still rejected {other}, so the frozen source sets are unchanged."
        return said
    subject = "The" + shown[3:] if shown.startswith("the ") else shown  # a domain keeps its case
    said = f"{subject} is not rejected {_where(scope, memo_dir)}; nothing changed."
    if "global" in still and scope == "memo":
        said += f" It is rejected globally: `{how} --global` lifts that."
    elif "memo" in still and scope == "global" and memo_dir is not None:
        said += f" It is rejected for this memo: `{how} --memo {shlex.quote(str(memo_dir))}` lifts that."
    return said


def _forget_namesakes(store: MemoStoreAPI, loaded: LoadedMemo | None, names: list[str], lines: list[str]) -> list[str]:
    from sourcedesk.core.text.phrases import normalise_phrase

    forgotten = []
    for name in names:
        learned = {normalise_phrase(n.name): n for n in store.learned_namesakes()}
        item = learned.get(normalise_phrase(name))
        if item is None or not store.remove_learned_namesake(name):
            declared = [n.name for n in loaded.memo.subject.namesakes] if loaded is not None else []
            if normalise_phrase(name) in {normalise_phrase(d) for d in declared}:
                raise UserError(
                    f"'{name}' is declared in memo.yaml (subject.namesakes), not learned",
                    hint="edit memo.yaml to remove it",
                )
            known = ", ".join(f"'{n.name}'" for n in learned.values()) or "none"
            raise UserError(f"no learned namesake '{name}'", hint=f"learned namesakes: {known}")
        lines.append(f"Forgot the learned namesake '{_clean(item.name)}' (from {item.where}); it is not learned again.")
        forgotten.append(item.name)
    return forgotten


def _said_unrejected(shown: str, scope: str, memo_dir: Path | None) -> str:
    return f"Un-rejected {shown} {_where(scope, memo_dir)}; it can be retrieved again."


def _shown(domain: str) -> str:
    try:
        return canonical_domain(domain)
    except UserError:
        return domain.strip()


# ---------------------------------------------------------------- list


def _namesake_entries(memo_dir: Path, store: MemoStoreAPI) -> list[dict[str, Any]]:
    try:
        declared = load_memo(memo_dir).memo.subject.namesakes
    except MemoError:
        declared = []
    out: list[dict[str, Any]] = [
        {"name": n.name, "note": n.note, "learned": False, "from": "memo.yaml"} for n in declared
    ]
    out += [
        {"name": n.name, "note": "", "learned": True, "from": n.where, "title": n.title}
        for n in store.learned_namesakes()
    ]
    return out


def _list(args) -> int:
    want_memo = args.memo is not None or not args.global_
    want_global = args.global_ or args.memo is None
    out: dict[str, dict[str, Any]] = {}
    memo_dir: Path | None = None
    if want_memo:
        if args.memo is not None:
            memo_dir = _memo_dir(args.memo)
        elif (Path.cwd() / MEMO_FILENAME).is_file():
            memo_dir = Path.cwd()
    if memo_dir is not None:
        with open_memo(memo_dir, args.settings) as store:
            out["memo"] = {
                "dir": str(memo_dir.resolve()),
                "rejects": store.reject_entries(),
                "names": store.reject_name_entries(),
                "namesakes": _namesake_entries(memo_dir, store),
            }
    if want_global:
        everywhere = open_global(args.settings)
        out["global"] = {
            "path": everywhere.describe_location(),
            "rejects": everywhere.reject_entries(),
            "names": everywhere.reject_name_entries(),
        }
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    for scope, block in out.items():
        entries = block["rejects"]
        names = block["names"]
        title = f"memo {memo_dir}" if scope == "memo" else "global (every memo)"
        print(f"Rejected domains, {title}: {len(entries) or 'none'}")
        width = max((len(e["domain"]) for e in entries), default=0)
        for e in entries:
            note = f"  {e['note']}" if e.get("note") else ""
            print(f"  {e['domain']:<{width}}{note}")
        print(f"Rejected names, {title}: {len(names) or 'none'}")
        for e in names:
            note = f"  {e['note']}" if e.get("note") else ""
            print(f"  {_clean(e['name'])}{note}")
        if scope == "memo":
            namesakes = block["namesakes"]
            print(f"Namesakes (not the subject), {title}: {len(namesakes) or 'none'}")
            for n in namesakes:
                what = f" — {_clean(n['note'])}" if n["note"] else ""
                origin = f"learned from {n['from']}" if n["learned"] else "memo.yaml"
                print(f"  {_clean(n['name'])}{what}  ({origin})")
            if any(n["learned"] for n in namesakes):
                print(
                    f"  `sourcedesk unreject --namesake NAME --memo {shlex.quote(str(memo_dir))}` forgets a learned one."
                )
    return 0
