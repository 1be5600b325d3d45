"""sourcedesk's look: two Textual themes (light and dark), the shared stylesheet, and the
analyst's choice between them, remembered in the user config dir (never in a memo)."""

from sourcedesk.themes.registry import DARK, LIGHT, STYLESHEET, THEMES, load_theme_name, save_theme_name, toggled

__all__ = ["DARK", "LIGHT", "STYLESHEET", "THEMES", "load_theme_name", "save_theme_name", "toggled"]
