"""``sourcedesk config path [--json]`` — where the global settings file lives.

It answers even when the settings are broken: that is how the analyst finds the
file to fix. ``--json`` prints ``{"path", "exists"}``.
"""

from __future__ import annotations

import json

from sourcedesk.core.config.settings import config_path


def register(sub) -> None:
    p = sub.add_parser(
        "config",
        help="show configuration locations",
        description="Where sourcedesk reads its settings (config.yaml) from.",
    )
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    path = csub.add_parser("path", help="print the path of the config file")
    path.add_argument("--json", action="store_true", help='print {"path": …, "exists": …} as JSON')
    path.set_defaults(func=_path)


def _path(args) -> int:
    where = config_path()
    if args.json:
        print(json.dumps({"path": str(where), "exists": where.is_file()}, indent=2))
    else:
        print(where)
    return 0
