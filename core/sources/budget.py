"""Context budget: which retrieved sources go into the writer prompt, and their markers.

Markers are assigned only *after* packing. Numbering before trimming left holes
(``E1, E3, E4``) that made the writer renumber and re-point every citation; a
set numbered after packing is always ``E1…En``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sourcedesk.core.domain.models import OmittedSource, Source

# Marker prefix per provider; the caller may pass its own map (new providers).
MARKER_PREFIXES: Mapping[str, str] = {"exa": "E", "files": "V", "writer": "W"}


def pack(sources: Sequence[Source], budget_chars: int) -> tuple[list[Source], list[OmittedSource]]:
    """Greedy whole-source packing in the caller's rank order.

    The first source always stays, even alone over budget (a section with no
    source text at all is worse than one over budget). After a source is skipped
    for size, smaller later ones are still tried. Every skipped source is
    returned with its size so it can be shown to the analyst; skipped sources
    carry no marker. The caller's objects are not modified."""
    kept: list[Source] = []
    omitted: list[OmittedSource] = []
    used = 0
    for index, source in enumerate(sources):
        size = source.size
        if index == 0 or used + size <= budget_chars:
            kept.append(source)
            used += size
        else:
            unmarked = source.model_copy(update={"marker": None}) if source.marker else source
            omitted.append(OmittedSource(source=unmarked, size=size))
    return kept, omitted


def assign_markers(kept: Sequence[Source], prefixes: Mapping[str, str] = MARKER_PREFIXES) -> list[Source]:
    """Copies of ``kept`` numbered 1…n per prefix in order (E1, V1, E2, …), no holes.

    Providers sharing a prefix share one sequence. A provider without a prefix is
    a registry mistake and raises ValueError rather than producing an uncitable source."""
    counters: dict[str, int] = {}
    numbered: list[Source] = []
    for source in kept:
        prefix = prefixes.get(source.provider)
        if not prefix:
            raise ValueError(f"no marker prefix for provider {source.provider!r} (known: {', '.join(prefixes)})")
        counters[prefix] = counters.get(prefix, 0) + 1
        numbered.append(source.model_copy(update={"marker": f"{prefix}{counters[prefix]}"}))
    return numbered
