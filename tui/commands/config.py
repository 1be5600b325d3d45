"""``sourcedesk config path`` — where the global settings file lives."""

from __future__ import annotations

from core.settings import config_path


def register(sub) -> None:
    p = sub.add_parser("config", help="show configuration locations")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    path = csub.add_parser("path", help="print the path of the config file")
    path.set_defaults(func=_path)


def _path(args) -> int:
    print(config_path())
    return 0
