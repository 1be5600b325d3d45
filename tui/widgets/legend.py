"""What every symbol of the workbench means — one list, for the help screen and the tables' tooltips.

A symbol that appears in a cell (``4✓ 0≈ 3✗``, ``1#``, ``?1``, ``⚠2``, ``⚑1``, ``✓ subject``…)
is explained here, in words no stronger than the check behind it; the help (``?``) lists every
group, and each table's tooltip the groups its cells use.
"""

from __future__ import annotations

from rich.text import Text

CITATIONS = (
    ("N✓", "citations verified: the cited page is in the frozen set (retitled ones, whose title was fixed, included)"),
    ("N≈", "citations substituted: the writer's URL was swapped for the retrieved source that has the claim"),
    ("N✗", "citations dropped: their URL was never retrieved, so the marker was taken out"),
    ("N#", "citations out of range: a number beyond the sources ([11] of 6), taken out"),
    ("weak", "verified, but the source's text does not support the claim"),
)
FLAGS = (
    ("✂N", "N sources omitted by the context budget"),
    ("⚠N", "N warnings (the Warnings tab lists them)"),
    ("✗N", "N problems the last check of the current note found (dead URL, figure not in its source…)"),
    ("?N", "N claims left without a citation"),
    ("⚑N", "the note cites N sources about a namesake"),
    ("●", "a section or a check at work; its stage follows"),
)
ABOUT = (
    ("✓ subject", "the page is about the memo's subject"),
    ("✗ namesake", "the page is about another company or thing of the same name"),
    ("· other", "the page is about something else (a market, a competitor)"),
    ("? unclear", "the judge could not tell; read it"),
)
WARNINGS = (
    ("✂", "truncated: sources left out by the context budget"),
    ("⚠", "degraded retrieval, a pin without a URL, damaged data set aside"),
    ("✗", "namesakes removed from the results"),
    ("−", "excluded by the entry's own rules"),
    ("⏲", "stale: an older frozen set was kept"),
    ("#", "out of range citations"),
    ("✎", "the writer's own warning"),
    ("ℹ", "what the search service said"),
)
GROUPS = {"citations": CITATIONS, "flags": FLAGS, "about": ABOUT, "warnings": WARNINGS}
EVERY_SYMBOL = (*FLAGS, *CITATIONS, *ABOUT, *WARNINGS)  # flags first: the memo screen's badges


def legend_text(*groups: str) -> Text:
    """The groups' symbols, one per line (a table's tooltip)."""
    out = Text()
    for name in groups:
        for symbol, meaning in GROUPS[name]:
            if out:
                out.append("\n")
            out.append(symbol, style="bold")
            out.append(f"  {meaning}")
    return out
