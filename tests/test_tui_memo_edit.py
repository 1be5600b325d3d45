"""The pin toggle edits the analyst's memo.yaml minimally, or refuses and leaves it alone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.memo.pin_edit import set_section_pin, toggle_section_pin
from tests.conftest import exa_entries, exa_entry

MEMO = """\
# my memo — comments and layout must survive
title: "Kestra — profile"
subject: {name: Kestra, url: https://kestra.io}

sections:
  - id: overview      # the first one
    title: Overview
    include-sources:
      - provider: exa
        query: "{{subject}} overview"   # keep this comment
        pin: 'entity'
      - provider: files
        glob: notes/*.md
  - id: market
    title: Market
    include-sources:
      - provider: exa
        query: "{{subject}} competitors"
      - {provider: exa, query: "workflow orchestration market", num-results: 4}
"""


@pytest.fixture
def memo(tmp_path) -> Path:
    path = tmp_path / "memo.yaml"
    path.write_text(MEMO, encoding="utf-8")
    os.chmod(path, 0o644)
    return path


def _changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    a, b = before.splitlines(), after.splitlines()
    return [(x, y) for x, y in zip(a, b, strict=False) if x != y] + [("", y) for y in b[len(a) :]]


def test_an_existing_pin_value_is_replaced_in_place_keeping_its_quotes(memo):
    edit = toggle_section_pin(memo, "overview", ["entity"])
    assert (edit.old, edit.new, edit.changed) == (["entity"], "none", 1)
    after = memo.read_text(encoding="utf-8")
    assert _changed_lines(MEMO, after) == [("        pin: 'entity'", "        pin: 'none'")]
    assert exa_entry(load_memo(memo).memo.section("overview").include_sources[0]).pin == "none"
    assert stat.S_IMODE(memo.stat().st_mode) == 0o644


def test_a_missing_pin_is_inserted_in_block_and_flow_entries(memo):
    edit = set_section_pin(memo, "market", "none")
    assert edit.changed == 2
    after = memo.read_text(encoding="utf-8")
    assert '      - provider: exa\n        pin: none\n        query: "{{subject}} competitors"\n' in after
    assert '{provider: exa, query: "workflow orchestration market", num-results: 4, pin: none}' in after
    assert "# keep this comment" in after and after.startswith("# my memo")
    pins = [e.pin for e in exa_entries(load_memo(memo).memo.section("market").include_sources)]
    assert pins == ["none", "none"]
    # and back: the values flip, nothing else moves
    set_section_pin(memo, "market", "entity")
    back = memo.read_text(encoding="utf-8")
    assert back.count("pin: entity") == 2 and len(back.splitlines()) == len(after.splitlines())


def test_setting_the_mode_a_section_already_has_writes_nothing(memo):
    before = memo.stat().st_mtime_ns
    edit = set_section_pin(memo, "market", "entity")  # absent means entity
    assert edit.changed == 0 and memo.stat().st_mtime_ns == before


def test_a_section_without_exa_entries_or_an_unknown_section_is_refused(memo, tmp_path):
    with pytest.raises(UserError, match="no section with id 'nope'"):
        set_section_pin(memo, "nope", "none")
    memo.write_text(
        MEMO.replace(
            "provider: exa\n        query: \"{{subject}} overview\"   # keep this comment\n        pin: 'entity'",
            "provider: files\n        glob: a.md",
        ),
        encoding="utf-8",
    )
    with pytest.raises(UserError, match="no Exa entry"):
        set_section_pin(memo, "overview", "none")


def test_an_aliased_entry_is_refused_and_the_file_left_untouched(tmp_path):
    text = (
        MEMO.replace(
            '      - provider: exa\n        query: "{{subject}} competitors"\n',
            '      - &shared\n        provider: exa\n        query: "{{subject}} competitors"\n',
        )
        + "  - id: again\n    title: Again\n    include-sources: [*shared]\n"
    )
    path = tmp_path / "memo.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match="change more than the pin"):
        set_section_pin(path, "market", "none")
    assert path.read_text(encoding="utf-8") == text


ODD_LAYOUT = """\
title:   Kestra
subject: {name: Kestra,   url: 'https://kestra.io'}
sections:
- id: overview
  title: Overview     # two spaces would do; the analyst likes five
  include-sources: [{provider: exa,query: "{{subject}} overview"}]   # wide comment gap
- id: market
  title: Market
  include-sources:
  -   provider: exa
      query: market map
      pin: entity
"""


def test_a_layout_no_yaml_emitter_would_reproduce_is_left_exactly_as_written(tmp_path):
    """The edit is a text edit, not a re-emitted document: a round-tripping YAML library would
    normalise this file's spacing, indentation and comment gaps on every toggle."""
    path = tmp_path / "memo.yaml"
    path.write_text(ODD_LAYOUT, encoding="utf-8")
    set_section_pin(path, "overview", "none")
    set_section_pin(path, "market", "none")
    after = path.read_text(encoding="utf-8")
    assert _changed_lines(ODD_LAYOUT, after) == [
        (
            '  include-sources: [{provider: exa,query: "{{subject}} overview"}]   # wide comment gap',
            '  include-sources: [{provider: exa,query: "{{subject}} overview", pin: none}]   # wide comment gap',
        ),
        ("      pin: entity", "      pin: none"),
    ]
