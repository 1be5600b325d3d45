"""``sourcedesk reject`` / ``unreject`` / ``rejects`` — manage rejected domains from the shell.

A rejected domain (and every subdomain) is excluded from retrieval: for one
memo (``--memo DIR``) or for every memo (``--global``). With neither flag, the
memo in the current folder is meant, if there is one.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.errors import UserError
from core.memo_loader import MEMO_FILENAME
from store.global_store import GlobalStore
from store.memo_store import MemoStore
from store.rejections import canonical_domain

STORE_WAIT_S = 2.0


def register(sub) -> None:
    for name, helptext in (
        ("reject", "exclude a domain (and its subdomains) from retrieval"),
        ("unreject", "remove a domain from the rejection list"),
    ):
        p = sub.add_parser(name, help=helptext, description=helptext + ".")
        p.add_argument("domain", metavar="DOMAIN", help="a domain or a URL (its host is used), e.g. kestra.com")
        scope = p.add_mutually_exclusive_group()
        scope.add_argument("--memo", metavar="DIR", type=Path, help="this memo only (default: the memo in .)")
        scope.add_argument("--global", dest="global_", action="store_true", help="every memo")
        if name == "reject":
            p.add_argument("--note", default="", help="why (shown in listings)")
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
    if args.global_:
        return "global", None
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


def _reject(args) -> int:
    scope, memo_dir = _scope(args)
    if scope == "global":
        store = GlobalStore()
        added = store.add_reject(args.domain, args.note)
    else:
        with MemoStore(memo_dir, wait_s=STORE_WAIT_S) as store:
            added = store.add_reject(args.domain, args.note)
    domain = canonical_domain(args.domain)  # valid: add_reject accepted it
    if added:
        print(f"Rejected {domain} {_where(scope, memo_dir)}: it and its subdomains are excluded from retrieval.")
    else:
        print(f"{domain} was already rejected {_where(scope, memo_dir)}; nothing changed.")
    return 0


def _unreject(args) -> int:
    scope, memo_dir = _scope(args)
    if scope == "global":
        removed = GlobalStore().remove_reject(args.domain)
    else:
        with MemoStore(memo_dir, wait_s=STORE_WAIT_S) as store:
            removed = store.remove_reject(args.domain)
    shown = _shown(args.domain)
    if removed:
        print(f"Un-rejected {shown} {_where(scope, memo_dir)}; it can be retrieved again.")
        return 0
    raise UserError(
        f"{shown} is not rejected {_where(scope, memo_dir)}",
        hint="`sourcedesk rejects` lists both lists",
    )


def _shown(domain: str) -> str:
    try:
        return canonical_domain(domain)
    except UserError:
        return domain.strip()


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
