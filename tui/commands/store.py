"""``sourcedesk store migrate|copy|status`` — the team store (PostgreSQL) from the shell.

    sourcedesk store migrate [--url URL]          # create or upgrade the tables (once per version)
    sourcedesk store copy --from tinydb --to URL DIR...   # an analyst's memos (and global lists) in
    sourcedesk store status [DIR]                 # which store, its schema, who holds which section

``--url`` / ``--to`` default to the configured ``store-url`` (``SOURCEDESK_STORE_URL``). Every
URL is printed without its password.
"""

from __future__ import annotations

from pathlib import Path

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.memo.loader import MEMO_FILENAME
from sourcedesk.core.text.safety import clean_text
from sourcedesk.store.backend import backend_of


def register(sub) -> None:
    p = sub.add_parser(
        "store",
        help="the team store: migrate its schema, copy TinyDB stores into it, status",
        description="The team store (PostgreSQL): create or upgrade its tables, copy memos' TinyDB stores "
        "into it, and say what it holds.",
    )
    verbs = p.add_subparsers(dest="store_command", metavar="VERB", required=True)
    m = verbs.add_parser("migrate", help="create or upgrade the team store's tables (run once per new version)")
    m.add_argument("--url", help="the PostgreSQL URL (default: store-url / SOURCEDESK_STORE_URL)")
    m.set_defaults(func=_migrate)
    c = verbs.add_parser("copy", help="copy TinyDB stores (memos and global lists) into the team store")
    c.add_argument("--from", dest="source", default="tinydb", choices=["tinydb"], help="where from (tinydb)")
    c.add_argument("--to", dest="url", help="the PostgreSQL URL (default: store-url / SOURCEDESK_STORE_URL)")
    c.add_argument("dirs", nargs="*", type=Path, metavar="DIR", help="memo folders to copy (default: the memo in .)")
    c.add_argument("--no-global", dest="global_", action="store_false", help="leave the global lists out")
    c.set_defaults(func=_copy)
    s = verbs.add_parser("status", help="which store a memo uses, and who holds which of its sections")
    s.add_argument("dir", nargs="?", type=Path, default=Path("."), help="the memo folder (default: .)")
    s.set_defaults(func=_status)


def _team_url(args, given: str | None) -> str:
    url = (given or args.settings.store_url or "").strip()
    if backend_of(url) != "postgresql":
        raise UserError(
            "no team store is configured",
            hint="give --url postgresql://USER:PASSWORD@HOST:5432/DB, or set SOURCEDESK_STORE_URL",
        )
    return url


def _migrate(args) -> int:
    from sourcedesk.store.postgres.connection import database, release
    from sourcedesk.store.postgres.opening import migrate_database

    db = database(_team_url(args, args.url))
    try:
        before, after = migrate_database(db)
    finally:
        release(db)
    if before == after:
        print(f"The team store {db.shown} is at schema version {after}; nothing to do.")
    else:
        print(f"Migrated the team store {db.shown} from schema version {before} to {after}.")
    return 0


def _copy(args) -> int:
    from sourcedesk.store.copy import copy_global, copy_memo
    from sourcedesk.store.global_store import GlobalStore
    from sourcedesk.store.memo_store import MemoStore, store_dir
    from sourcedesk.store.postgres.global_store import PgGlobalStore
    from sourcedesk.store.postgres.memo_store import PgMemoStore

    url = _team_url(args, args.url)
    dirs = args.dirs or ([Path(".")] if (Path(".") / MEMO_FILENAME).is_file() else [])
    if not dirs and not args.global_:
        raise UserError("nothing to copy", hint="name memo folders: sourcedesk store copy --to URL DIR…")
    for memo_dir in dirs:
        if not (store_dir(memo_dir) / "db.json").is_file():
            raise UserError(f"{memo_dir} has no TinyDB store (.sourcedesk/db.json)", hint="name a memo folder")
    for memo_dir in dirs:
        with MemoStore(memo_dir) as source, PgMemoStore(memo_dir, url) as target:
            for line in copy_memo(source, target).lines():
                print(clean_text(line))
    if args.global_:
        target_lists = PgGlobalStore(url)
        try:
            for line in copy_global(GlobalStore(), target_lists).lines():
                print(clean_text(line))
        finally:
            target_lists.close()
    return 0


def _status(args) -> int:
    from sourcedesk.tui.stores import memo_store

    url = args.settings.store_url
    with memo_store(args.dir, args.settings) as store:
        print(f"store: {store.backend} — {store.describe_location()}")
        holders = store.section_holders()
    if not holders:
        print("No section is held.")
    for section, holder in sorted(holders.items()):
        what = "the workbench window" if section.startswith("window-") else f"section {section}"
        print(clean_text(f"  {what}: {holder.describe()}"))
    if backend_of(url) == "tinydb":
        print("TinyDB: the store is this folder's .sourcedesk/ (set store-url for a team's PostgreSQL server).")
    return 0
