"""The ``about`` verdict as table cells: the verdict, coloured, and why (plain, untrusted text)."""

from __future__ import annotations

from rich.text import Text

from sourcedesk.core.sources.about import About
from sourcedesk.tui.widgets.cells import Palette, plain

GLYPHS = {"subject": "✓", "namesake": "✗", "other": "·", "unclear": "?"}


def verdict_cell(about: About | None, palette: Palette) -> Text:
    if about is None:
        return Text("")
    style = {
        "subject": palette.success,
        "namesake": f"bold {palette.error}",
        "other": palette.dim,
        "unclear": palette.warning,
    }[about.verdict]
    return Text(f"{GLYPHS[about.verdict]} {about.verdict}", style=style)


def reason_cell(about: About | None) -> Text:
    """Why, as written by the judge; names and phrases in it come from pages, so literal."""
    return plain(
        about.reason if about is not None else "", style="" if about is None or about.verdict != "other" else "dim"
    )


def about_block(about: About | None, palette: Palette, *, hints: bool = True) -> Text:
    """For the detail pane: "About: ✗ namesake — names 'Kestra Medical Technologies', never kestra.io"
    (``hints``: then which keys act on it — left out where the pane says its own keys once)."""
    out = Text()
    if about is None:
        return out
    out.append("About: ", style="bold")
    out.append_text(verdict_cell(about, palette))
    out.append(" — ")
    out.append(about.reason)
    if hints and about.verdict in ("namesake", "unclear"):
        out.append("\nn rejects a name", style="dim")
        if about.phrase:
            out.append(" (offers ", style="dim")
            out.append(about.phrase, style="dim italic")
            out.append(")", style="dim")
        out.append("; x rejects the domain.", style="dim")
    out.append("\n")
    return out
