"""``sourcedesk init DIR --subject NAME --url URL [--json]`` — start a memo with the standard outline.

``--json`` prints ``{"memo": path of memo.yaml, "dir", "subject", "url", "domains", "sections": [ids]}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.files.atomic import atomic_write_text
from sourcedesk.core.memo.loader import MEMO_FILENAME, load_memo
from sourcedesk.core.memo.outline import STANDARD_OUTLINE, standard_memo_yaml
from sourcedesk.core.net.urls import host_of
from sourcedesk.core.sources.reject_domains import canonical_domain
from sourcedesk.store.memo_store import STORE_DIRNAME

PIN_CONSEQUENCE = "pinning it would admit every site registered under it"


def register(sub) -> None:
    p = sub.add_parser(
        "init",
        help="create a memo folder with a standard company-profile outline",
        description="Create DIR/memo.yaml with a standard outline (overview, product, market, team, "
        "traction, funding, risks), a sections/ folder, and a .gitignore that keeps the store out of git.",
    )
    p.add_argument("dir", metavar="DIR", help="memo folder (created if missing)")
    p.add_argument("--subject", required=True, metavar="NAME", help="the company or project the memo is about")
    p.add_argument("--url", required=True, metavar="URL", help="the subject's own website (pinned retrieval)")
    p.add_argument(
        "--domain",
        action="append",
        default=[],
        metavar="D",
        help="another domain that belongs to the subject (repeatable)",
    )
    p.add_argument("--title", metavar="T", help="memo title (default: '<subject> — company profile')")
    p.add_argument("--force", action="store_true", help="overwrite an existing memo.yaml")
    p.add_argument("--json", action="store_true", help="print what was created as a JSON object")
    p.set_defaults(func=run)


def _subject_url(raw: str) -> str:
    url = raw.strip()
    if "://" not in url:
        url = "https://" + url.lstrip("/")
    host = host_of(url)
    if not host:
        raise UserError(f"--url {raw!r} is not a web address", hint="e.g. --url https://nats.io")
    canonical_domain(host, consequence=PIN_CONSEQUENCE)
    return url


def _ensure_gitignored(memo_dir: Path) -> None:
    ignore = memo_dir / ".gitignore"
    entry = f"{STORE_DIRNAME}/"
    existing = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    if any(line.strip() in (entry, STORE_DIRNAME, f"/{entry}") for line in existing.splitlines()):
        return
    prefix = existing if not existing or existing.endswith("\n") else existing + "\n"
    atomic_write_text(ignore, prefix + "# sourcedesk's local store (retrieved sources, runs)\n" + entry + "\n")


def run(args) -> int:
    subject = args.subject.strip()
    if not subject:
        raise UserError("--subject must not be empty", hint='e.g. --subject "NATS"')
    url = _subject_url(args.url)
    domains: list[str] = []
    for raw in args.domain:
        domain = canonical_domain(raw, consequence=PIN_CONSEQUENCE)
        if domain not in domains:
            domains.append(domain)
    memo_dir = Path(args.dir)
    target = memo_dir / MEMO_FILENAME
    if memo_dir.exists() and not memo_dir.is_dir():
        raise UserError(f"{memo_dir} exists and is not a folder", hint="choose another DIR")
    if target.exists() and not args.force:
        raise UserError(
            f"{target} already exists",
            hint="use --force to overwrite it (sections/ and the store are kept), or choose another DIR",
        )
    text = standard_memo_yaml(subject, url, domains=domains, title=(args.title or "").strip() or None)
    try:
        memo_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, text)
        (memo_dir / "sections").mkdir(exist_ok=True)
        _ensure_gitignored(memo_dir)
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}", hint="check that DIR is writable") from None
    loaded = load_memo(target)  # what we wrote must load; fails loudly if not
    if getattr(args, "json", False):
        document = {
            "memo": str(target),
            "dir": str(memo_dir),
            "subject": subject,
            "url": url,
            "domains": domains,
            "sections": [s.id for s in loaded.memo.sections],
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    ids = ", ".join(s.id for s in loaded.memo.sections)
    print(f"Created {target}: {len(STANDARD_OUTLINE)} sections ({ids}).")
    print(f"Next: edit it, then `sourcedesk open {memo_dir}` or `sourcedesk run {memo_dir} --section overview`.")
    return 0
