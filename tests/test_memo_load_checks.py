"""Fields that used to pass loading and fail after money was spent now fail at load, with file:line and a hint."""

from __future__ import annotations

import pytest

from sourcedesk.tui.cli import main
from tests.conftest import exa_requests

MEMO = """\
title: Acme
subject: {{name: Acme Robotics, url: https://acme-robotics.io}}
sections:
  - id: {section_id}
    title: Overview
    include-sources:
      - provider: exa
        query: {query}
{extra}"""


def _load_error(tmp_path, capsys, exa, *, section_id="overview", query='"{{subject}} overview"', extra=""):
    memo = tmp_path / "memo"
    memo.mkdir()
    (memo / "memo.yaml").write_text(MEMO.format(section_id=section_id, query=query, extra=extra), encoding="utf-8")
    code = main(["run", str(memo)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert exa_requests(exa) == 0  # nothing was spent
    assert not (memo / "sections").exists()
    return err


def test_a_section_id_longer_than_64_characters_fails_at_load(exa, tmp_path, capsys):
    err = _load_error(tmp_path, capsys, exa, section_id="a" * 300)
    assert "memo.yaml:4: sections[0].id: expected at most 64 characters, got 300 characters" in err
    assert "Hint:" in err and "note file" in err


def test_a_section_id_with_other_characters_fails_at_load(exa, tmp_path, capsys):
    err = _load_error(tmp_path, capsys, exa, section_id='"Über/view"')
    assert "memo.yaml:4: sections[0].id" in err and "lower-case id" in err and "Hint:" in err


@pytest.mark.parametrize("query", ['""', '"   "'])
def test_an_empty_query_fails_at_load(exa, tmp_path, capsys, query):
    err = _load_error(tmp_path, capsys, exa, query=query)
    assert "memo.yaml:8: sections[0].include-sources[0].query: the query is empty" in err and "Hint:" in err


def test_a_query_whose_variables_are_all_empty_fails_at_load(exa, tmp_path, capsys):
    err = _load_error(tmp_path, capsys, exa, query='"{{description}} {{aliases}}"')
    assert "memo.yaml:8:" in err and "empty once its variables are filled in" in err
    assert "{{description}}" in err and "Hint:" in err


@pytest.mark.parametrize(
    "extra, words",
    [
        (
            '        start-published-date: "last year"\n',
            "memo.yaml:9: sections[0].include-sources[0].start-published-date",
        ),
        ('        end-published-date: "2024-02-30"\n', "not a real calendar date"),
        ('        contents: {summary: {query: ""}}\n', "the summary query is empty"),
        (
            "        type: nueral\n",
            "memo.yaml:9: sections[0].include-sources[0].type: 'nueral' is not an Exa search type",
        ),
        ("        type: Fast\n", "did you mean 'fast'?"),
        (
            "        contents: {highlights: {max-chars: 500}}\n",
            "memo.yaml:9: sections[0].include-sources[0].contents.highlights.max-chars: 'max-chars' is not an "
            "Exa highlights option",
        ),
    ],
)
def test_values_exa_would_refuse_fail_at_load(exa, tmp_path, capsys, extra, words):
    err = _load_error(tmp_path, capsys, exa, extra=extra)
    assert words in err and "Hint:" in err


def test_an_empty_files_glob_fails_at_load(exa, tmp_path, capsys):
    err = _load_error(tmp_path, capsys, exa, extra='      - {provider: files, glob: ""}\n')
    assert "sections[0].include-sources[1].glob: the glob is empty" in err


WRITER_MEMO = """\
title: Acme
subject: {{name: Acme Robotics, url: https://acme-robotics.io}}
writer: {writer}
sections:
  - id: overview
    title: Overview
    writer: {section_writer}
    include-sources:
      - provider: exa
        query: "{{{{subject}}}} overview"
"""


@pytest.mark.parametrize(
    "writer, section_writer, words",
    [
        ("{temperature: 3}", "{}", "memo.yaml:3: writer.temperature: expected a number between 0 and 2, got 3"),
        ("{temperature: -0.5}", "{}", "writer.temperature: expected a number between 0 and 2"),
        ("{temperature: .nan}", "{}", "writer.temperature: expected a number between 0 and 2"),
        ("{temperature: true}", "{}", "writer.temperature: expected a number between 0 and 2, got true"),
        ('{temperature: "0.2"}', "{}", "writer.temperature: expected a number between 0 and 2"),
        ('{model: ""}', "{}", "memo.yaml:3: writer.model: the model is empty"),
        ("{model: '  '}", "{}", "writer.model: the model is empty"),
        ("{}", '{model: ""}', "memo.yaml:7: sections[0].writer.model: the model is empty"),
    ],
)
def test_writer_values_that_would_fail_after_retrieval_fail_at_load(
    exa, tmp_path, capsys, writer, section_writer, words
):
    memo = tmp_path / "memo"
    memo.mkdir()
    (memo / "memo.yaml").write_text(WRITER_MEMO.format(writer=writer, section_writer=section_writer), encoding="utf-8")
    code = main(["run", str(memo)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert words in err and "Hint:" in err, err
    assert exa_requests(exa) == 0


@pytest.mark.parametrize("temperature", ["0", "1", "0.2", "2"])
def test_a_temperature_in_range_loads(tmp_path, temperature):
    from sourcedesk.core.memo.loader import load_memo

    memo = tmp_path / "memo"
    memo.mkdir()
    text = WRITER_MEMO.format(writer=f"{{temperature: {temperature}}}", section_writer="{}")
    (memo / "memo.yaml").write_text(text, encoding="utf-8")
    assert load_memo(memo).memo.writer.temperature == float(temperature)


def test_highlight_options_in_memo_yaml_spelling_reach_exa_as_options_it_takes(exa, tmp_path, capsys):
    """``max-characters`` (the memo's kebab-case) used to go out as written and come back a 400."""
    import json

    memo = tmp_path / "memo"
    memo.mkdir()
    text = (
        "title: NATS\nsubject: {name: NATS, url: https://nats.io}\nsections:\n  - id: overview\n    title: Overview\n"
        "    include-sources:\n      - provider: exa\n        query: NATS JetStream overview\n"
        "        contents: {highlights: {query: JetStream, max-characters: 300, num-sentences: 2}}\n"
    )
    (memo / "memo.yaml").write_text(text, encoding="utf-8")
    code = main(["retrieve", "--json", str(memo)])
    out, err = capsys.readouterr()
    # max-characters is given, so num-sentences is not sent at all (the notice once said it was)
    assert code == 0 and "num-sentences is deprecated by Exa; not sent (max-characters is given)" in err
    [section] = json.loads(out)["sections"]
    assert section["degraded"] is False and section["sources"], section["warnings"]
    assert not any("400" in str(w) for w in section["warnings"])
