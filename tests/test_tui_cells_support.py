"""Memo-screen cells for the support check: weak citations and uncited claims, literal and coloured."""

from __future__ import annotations

from sourcedesk.tui.widgets.cells import Palette, citations_bar, flags_cell


def test_the_citations_bar_says_how_many_verified_citations_are_weak():
    palette = Palette()
    bar = citations_bar({"verified": 6, "substituted": 1, "dropped": 1, "weak": 2}, palette)
    assert bar.plain.endswith(" 6✓ 1≈ 1✗ 2 weak")
    assert any(palette.error in str(span.style) for span in bar.spans if "weak" in bar.plain[span.start : span.end])
    assert "weak" not in citations_bar({"verified": 6, "weak": 0}, palette).plain


def test_the_flags_cell_counts_uncited_claims():
    palette = Palette()
    assert flags_cell(1, 2, palette, 1, uncited=3).plain == "✂1 ⚠2 ✗1 ?3"
    assert flags_cell(0, 0, palette).plain == ""
