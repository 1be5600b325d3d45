"""Context budget packing and marker assignment (sourcedesk.core.sources.budget)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcedesk.core.domain.models import OmittedSource, Source
from sourcedesk.core.sources.budget import MARKER_PREFIXES, assign_markers, pack


def src(name: str, size: int, provider: str = "exa", marker: str | None = None) -> Source:
    return Source(provider=provider, url=f"https://example.org/{name}", title=name, summary="x" * size, marker=marker)


def urls(sources) -> list[str]:
    return [s.url.rsplit("/", 1)[1] for s in sources]


def test_seed_scenario_big_second_source_skipped_markers_have_no_hole():
    ranked = [src("a", 3000), src("big", 9500), src("c", 4000), src("d", 4000)]
    kept, omitted = pack(ranked, 12_000)
    assert urls(kept) == ["a", "c", "d"]
    assert [(urls([o.source])[0], o.size) for o in omitted] == [("big", 9500)]
    numbered = assign_markers(kept)
    assert [s.marker for s in numbered] == ["E1", "E2", "E3"]
    assert urls(numbered) == ["a", "c", "d"]


def test_first_source_stays_even_alone_over_budget():
    kept, omitted = pack([src("huge", 50_000), src("small", 10)], 12_000)
    assert urls(kept) == ["huge"]
    assert [(o.source.title, o.size) for o in omitted] == [("small", 10)]
    assert [s.marker for s in assign_markers(kept)] == ["E1"]


def test_everything_fits_nothing_omitted():
    ranked = [src("a", 100), src("b", 200)]
    kept, omitted = pack(ranked, 300)  # exactly the budget fits
    assert urls(kept) == ["a", "b"] and omitted == []


def test_empty_input():
    assert pack([], 12_000) == ([], [])
    assert assign_markers([]) == []


def test_omitted_sources_record_their_size_and_rank_order():
    ranked = [src("a", 5000), src("b", 8000), src("c", 7500), src("d", 6000), src("e", 1000)]
    kept, omitted = pack(ranked, 12_000)
    assert urls(kept) == ["a", "d", "e"]
    assert all(isinstance(o, OmittedSource) for o in omitted)
    assert [(o.source.title, o.size) for o in omitted] == [("b", 8000), ("c", 7500)]


def test_size_is_what_the_prompt_would_carry():
    full = Source(provider="exa", url="https://a.example/x", summary="s" * 10, text="t" * 5000, full_text=True)
    short = Source(provider="exa", url="https://a.example/y", summary="s" * 10, text="t" * 5000)
    kept, omitted = pack([src("first", 1), full, short], 1000)
    assert [s.url for s in kept] == ["https://example.org/first", "https://a.example/y"]
    assert [o.size for o in omitted] == [5000]


def test_mixed_providers_are_numbered_per_prefix():
    kept = [src("e1", 1), src("v1", 1, "files"), src("e2", 1), src("w1", 1, "writer"), src("v2", 1, "files")]
    assert [s.marker for s in assign_markers(kept)] == ["E1", "V1", "E2", "W1", "V2"]


def test_markers_are_assigned_on_copies_and_stale_markers_are_replaced():
    original = [src("a", 10, marker="E7"), src("b", 10, marker="E2"), src("c", 10_000, marker="E3")]
    kept, omitted = pack(original, 100)
    numbered = assign_markers(kept)
    assert [s.marker for s in numbered] == ["E1", "E2"]
    assert [s.marker for s in original] == ["E7", "E2", "E3"]  # caller's objects untouched
    assert omitted[0].source.marker is None  # an omitted source is not citable
    assert numbered[0] is not original[0]


def test_custom_prefix_map_admits_a_new_provider():
    prefixes = {**MARKER_PREFIXES, "vectors": "D"}
    kept = [src("a", 1, "vectors"), src("b", 1), src("c", 1, "vectors")]
    assert [s.marker for s in assign_markers(kept, prefixes)] == ["D1", "E1", "D2"]


def test_provider_without_a_prefix_is_an_error_not_an_uncitable_source():
    with pytest.raises(ValueError, match="vectors"):
        assign_markers([src("a", 1, "vectors")])


PROVIDERS = st.sampled_from(["exa", "files", "writer"])
SOURCES = st.lists(st.tuples(st.integers(min_value=0, max_value=5000), PROVIDERS), max_size=25)


@given(SOURCES, st.integers(min_value=0, max_value=20_000))
def test_property_packing_and_numbering(specs, budget):
    ranked = [src(str(i), size, provider) for i, (size, provider) in enumerate(specs)]
    kept, omitted = pack(ranked, budget)

    # every input source is kept or omitted exactly once, and rank order is preserved in both
    assert sorted(urls(kept) + [urls([o.source])[0] for o in omitted], key=int) == [str(i) for i in range(len(specs))]
    assert urls(kept) == sorted(urls(kept), key=int)
    if ranked:
        assert kept[0].url == ranked[0].url

    used = sum(s.size for s in kept)
    assert used <= budget or len(kept) == 1
    assert all(o.size == o.source.size for o in omitted)
    # greedy: nothing omitted would have fitted into what was left when it was reached
    for o in omitted:
        rank = int(urls([o.source])[0])
        used_before = sum(s.size for s in kept if int(urls([s])[0]) < rank)
        assert used_before + o.size > budget

    numbered = assign_markers(kept)
    per_prefix: dict[str, list[int]] = {}
    for s in numbered:
        match = re.fullmatch(r"([EVW])(\d+)", s.marker or "")
        assert match and match.group(1) == MARKER_PREFIXES[s.provider]
        per_prefix.setdefault(match.group(1), []).append(int(match.group(2)))
    for numbers in per_prefix.values():
        assert numbers == list(range(1, len(numbers) + 1))
    assert Counter(MARKER_PREFIXES[s.provider] for s in kept) == Counter({p: len(n) for p, n in per_prefix.items()})
