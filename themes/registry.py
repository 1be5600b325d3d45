"""The two themes and where the analyst's choice between them is kept.

The choice is a UI preference, so it lives in the user config dir
(``ui.yaml`` beside ``config.yaml``) and never in a memo folder. It is a separate
file so that saving it can never rewrite — and lose the comments of — the
analyst's hand-written ``config.yaml``. A missing or unreadable file means dark.
"""

from __future__ import annotations

import logging
from pathlib import Path

import yaml
from textual.theme import Theme

from sourcedesk.core.config.settings import config_dir
from sourcedesk.core.files.atomic import atomic_write_text

log = logging.getLogger("sourcedesk.themes")

STYLESHEET = Path(__file__).with_name("sourcedesk.tcss")
UI_FILE = "ui.yaml"

DARK = Theme(
    name="sourcedesk-dark",
    primary="#5FA8D3",
    secondary="#62B6CB",
    accent="#E9C46A",
    warning="#F4A261",
    error="#E76F51",
    success="#6BBF59",
    foreground="#E3E7EB",
    background="#14181D",
    surface="#1C2128",
    panel="#262D36",
    dark=True,
    variables={
        "marker-foreground": "#E9C46A",
        "footer-key-foreground": "#5FA8D3",
        "block-cursor-text-style": "bold",
    },
)

LIGHT = Theme(
    name="sourcedesk-light",
    primary="#1D5F8A",
    secondary="#2A7F9E",
    accent="#9C6500",
    warning="#B45309",
    error="#B42318",
    success="#2E7D32",
    foreground="#1F2328",
    background="#F6F8FA",
    surface="#FFFFFF",
    panel="#E4E9EE",
    dark=False,
    variables={
        "marker-foreground": "#9C6500",
        "footer-key-foreground": "#1D5F8A",
        "block-cursor-text-style": "bold",
    },
)

THEMES = {DARK.name: DARK, LIGHT.name: LIGHT}


def toggled(name: str) -> str:
    """The other theme's name (anything unknown toggles to light, since dark is the default)."""
    return DARK.name if name == LIGHT.name else LIGHT.name


def _ui_path() -> Path:
    return config_dir() / UI_FILE


def load_theme_name() -> str:
    try:
        data = yaml.safe_load(_ui_path().read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return DARK.name
    name = data.get("theme") if isinstance(data, dict) else None
    return name if name in THEMES else DARK.name


def save_theme_name(name: str) -> bool:
    """Remember the theme; False (logged, not raised) when the config dir is not writable:
    a lost preference must never interrupt the analyst."""
    if name not in THEMES:
        raise ValueError(f"unknown theme {name!r}")
    path = _ui_path()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    data["theme"] = name
    try:
        atomic_write_text(
            path, "# sourcedesk UI preferences (written by the app)\n" + yaml.safe_dump(data, sort_keys=True)
        )
    except OSError as exc:
        log.warning("could not save the theme choice to %s: %s", path, exc)
        return False
    return True
