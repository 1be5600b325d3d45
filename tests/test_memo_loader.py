"""Loading memo.yaml: a valid file becomes a Memo, anything else one clear MemoError
naming the file, the line, the field as written, and a hint."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcedesk.core.domain.errors import MemoError
from sourcedesk.core.memo.loader import LoadedMemo, MemoValidationError, load_memo
from tests.conftest import exa_entry, examples_per_pass

DESIGN_SAMPLE = """\
title: Synadia — company profile
subject: {name: NATS, url: https://nats.io, domains: [synadia.com], aliases: [Synadia]}
firm: {name: Example Ventures, context: "Early-stage infra fund"}   # never leaks into subject facts
writer: {model: sonar-pro, web_search: true}
sections:
  - id: overview
    title: Company overview
    questions: ["What does it do?", "Founded when, by whom?", "Funding to date?"]
    include-sources:
      - provider: exa
        query: "{{subject}} {{url}} overview product funding customers"
        category: company
        num-results: 6
        pin: entity
        contents: {summary: {query: "Founded when, funding raised, customers?",
                             schema: {type: object, properties: {founded_year: {type: string}}}}}
  - id: competitors
    title: Competitive landscape
    include-sources: [{provider: exa, query: "alternatives to {{subject}} messaging", pin: none}]
"""


def _write(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "memo"
    d.mkdir(exist_ok=True)
    (d / "memo.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    return d


def _error(tmp_path: Path, text: str) -> MemoError:
    d = _write(tmp_path, text)
    with pytest.raises(MemoError) as err:
        load_memo(d)
    return err.value


HEAD = """\
title: T
subject: {name: NATS, url: https://nats.io}
sections:
"""


def test_the_design_sample_loads(tmp_path):
    loaded = load_memo(_write(tmp_path, DESIGN_SAMPLE))
    assert isinstance(loaded, LoadedMemo)
    assert loaded.dir == tmp_path / "memo" and loaded.path == tmp_path / "memo" / "memo.yaml"
    memo = loaded.memo
    assert [s.id for s in memo.sections] == ["overview", "competitors"]
    entry = exa_entry(memo.sections[0].include_sources[0])
    assert entry.num_results == 6 and entry.pin == "entity" and entry.category == "company"
    assert exa_entry(memo.sections[1].include_sources[0]).pin == "none"
    assert loaded.section_lines == {"overview": 6, "competitors": 17}
    assert load_memo(tmp_path / "memo" / "memo.yaml").memo == memo  # the file path works too


def test_bad_integer_names_line_path_expectation_and_value(tmp_path):
    text = HEAD + textwrap.dedent(
        """\
          - id: overview
            title: Overview
          - id: product
            title: Product
          - id: team
            title: Team
            include-sources:
              - provider: exa
                query: "{{subject}} founders"
                pin: entity
                num-results: six
        """
    )
    err = _error(tmp_path, text)
    lines = text.splitlines()
    line = next(i for i, text_line in enumerate(lines, 1) if "num-results" in text_line)
    assert line == 14
    assert err.message.endswith(
        "memo.yaml:14: sections[2].include-sources[0].num-results: expected an integer between 1 and 100, got 'six'"
    )
    assert err.hint and "num-results: 5" in err.hint
    assert "Traceback" not in str(err)


def test_out_of_range_integer_is_the_same_clear_message(tmp_path):
    err = _error(
        tmp_path,
        HEAD + "  - {id: a, title: A, include-sources: [{provider: exa, query: q, num-results: 500}]}\n",
    )
    assert (
        "memo.yaml:4: sections[0].include-sources[0].num-results: expected an integer between 1 and 100, got 500"
        in err.message
    )


@pytest.mark.parametrize(
    "text, where, suggestion",
    [
        (
            HEAD + "  - id: a\n    title: A\n    questons: [x]\n",
            "memo.yaml:6: sections[0].questons: unknown key",
            "'questions'",
        ),
        (
            "title: T\nsubject: {name: N}\nsectons: []\nsections: [{id: a, title: A}]\n",
            "memo.yaml:3: sectons: unknown key",
            "'sections'",
        ),
        (
            HEAD
            + "  - id: a\n    title: A\n    include-sources:\n      - provider: exa\n        query: q\n        num_result: 3\n",
            "memo.yaml:9: sections[0].include-sources[0].num_result: unknown key",
            "'num-results'",
        ),
    ],
)
def test_unknown_keys_get_did_you_mean(tmp_path, text, where, suggestion):
    err = _error(tmp_path, text)
    assert where in err.message
    assert suggestion in err.hint


def test_wrong_choice_gets_did_you_mean(tmp_path):
    err = _error(tmp_path, HEAD + "  - {id: a, title: A, include-sources: [{provider: exa, query: q, pin: entiti}]}\n")
    assert "sections[0].include-sources[0].pin: expected 'entity' or 'none', got 'entiti'" in err.message
    assert "'entity'" in err.hint


def test_unknown_and_missing_provider(tmp_path):
    err = _error(
        tmp_path, HEAD + "  - id: a\n    title: A\n    include-sources:\n      - provider: exaa\n        query: q\n"
    )
    assert "memo.yaml:7: sections[0].include-sources[0].provider: expected 'exa' or 'files', got 'exaa'" in err.message
    assert "'exa'" in err.hint
    err = _error(tmp_path, HEAD + "  - id: a\n    title: A\n    include-sources:\n      - query: q\n")
    assert "memo.yaml:7: sections[0].include-sources[0].provider: required key is missing" in err.message
    assert "provider: exa" in err.hint


def test_missing_required_key_points_at_its_parent(tmp_path):
    err = _error(tmp_path, "title: T\nsubject:\n  url: https://nats.io\nsections: [{id: a, title: A}]\n")
    assert "memo.yaml:2: subject.name: required key is missing" in err.message
    assert "name:" in err.hint


def test_union_alternatives_are_one_problem(tmp_path):
    err = _error(
        tmp_path,
        HEAD
        + "  - id: a\n    title: A\n    include-sources:\n      - {provider: exa, query: q, contents: {summary: 5}}\n",
    )
    assert err.message.count("\n") == 0
    assert "contents.summary: expected a mapping or true/false, got 5" in err.message


def test_a_problem_inside_the_mapping_alternative_is_the_one_reported(tmp_path):
    err = _error(
        tmp_path,
        HEAD
        + "  - {id: a, title: A, include-sources: [{provider: exa, query: q, contents: {text: {max-characters: 5}}}]}\n",
    )
    assert err.message.count("\n") == 0
    assert "contents.text.max-characters: expected an integer between 100 and 10000, got 5" in err.message


def test_section_id_format(tmp_path):
    err = _error(tmp_path, HEAD + "  - id: Market Map\n    title: A\n")
    assert "memo.yaml:4: sections[0].id: expected a lower-case id" in err.message
    assert "'market-map'" in err.hint


def test_duplicate_section_ids_point_at_the_second(tmp_path):
    err = _error(tmp_path, HEAD + "  - id: a\n    title: A\n  - id: a\n    title: B\n")
    assert "memo.yaml:6: sections[1].id: section id 'a' is already used by sections[0] (line 4)" in err.message


def test_duplicate_keys_are_not_silently_overwritten(tmp_path):
    err = _error(tmp_path, HEAD + "  - id: a\n    title: A\n    title: B\n")
    assert "memo.yaml:6: sections[0].title: duplicate key (also on line 5)" in err.message


def test_several_problems_each_with_its_line(tmp_path):
    text = HEAD + "".join(
        f"  - {{id: s{i}, title: S, include-sources: [{{provider: exa, query: q, num-results: x{i}}}]}}\n"
        for i in range(7)
    )
    err = _error(tmp_path, text)
    assert err.message.splitlines()[0].endswith("memo.yaml has 7 problems:")
    for i in range(5):
        assert f"memo.yaml:{4 + i}: sections[{i}].include-sources[0].num-results" in err.message
    assert "sections[5]" not in err.message and "… and 2 more" in err.message
    assert isinstance(err, MemoValidationError) and len(err.problems) == 7


def test_unknown_template_variable_is_a_load_error_with_the_query_line(tmp_path):
    text = HEAD + textwrap.dedent(
        """\
          - id: a
            title: A
            include-sources:
              - provider: exa
                query: "{{subjet}} overview {{section}}"
        """
    )
    err = _error(tmp_path, text)
    assert "memo.yaml:8: sections[0].include-sources[0].query: unknown template variable {{subjet}}" in err.message
    assert "did you mean {{subject}}?" in err.hint


def test_summary_query_templates_are_checked_too(tmp_path):
    text = HEAD + "  - id: a\n    title: A\n    include-sources:\n      - provider: exa\n        query: q\n"
    text += "        contents:\n          summary:\n            query: 'What did {{ceo}} say?'\n"
    err = _error(tmp_path, text)
    assert (
        "memo.yaml:11: sections[0].include-sources[0].contents.summary.query: unknown template variable {{ceo}}"
        in err.message
    )


def test_domain_templates_are_checked_too(tmp_path):
    text = HEAD + "  - id: a\n    title: A\n    include-sources:\n      - provider: exa\n        query: q\n"
    text += "        domains: ['{{url_domain}}', '{{url_domian}}']\n        exclude-domains: ['{{nope}}']\n"
    err = _error(tmp_path, text)
    assert (
        "memo.yaml:9: sections[0].include-sources[0].domains[1]: unknown template variable {{url_domian}}"
        in err.message
    )
    assert (
        "memo.yaml:10: sections[0].include-sources[0].exclude-domains[0]: unknown template variable {{nope}}"
        in err.message
    )


def test_memo_vars_are_template_variables(tmp_path):
    text = (
        "vars: {ceo: Derek Collison}\n"
        + HEAD
        + "  - {id: a, title: A, include-sources: [{provider: exa, query: '{{ceo}} {{ subject }}'}]}\n"
    )
    assert load_memo(_write(tmp_path, text)).memo.vars == {"ceo": "Derek Collison"}


def test_vars_may_not_redefine_builtins(tmp_path):
    err = _error(tmp_path, "vars:\n  subject: other\n" + HEAD + "  - {id: a, title: A}\n")
    assert "memo.yaml:2: vars.subject: {{subject}} is a built-in template variable" in err.message


def test_broken_placeholder_braces(tmp_path):
    err = _error(
        tmp_path, HEAD + "  - {id: a, title: A, include-sources: [{provider: exa, query: '{{subject overview'}]}\n"
    )
    assert "memo.yaml:4: sections[0].include-sources[0].query: unbalanced" in err.message


def test_dates_stay_text(tmp_path):
    text = (
        HEAD + "  - {id: a, title: A, include-sources: [{provider: exa, query: q, start-published-date: 2024-01-31}]}\n"
    )
    entry = exa_entry(load_memo(_write(tmp_path, text)).memo.sections[0].include_sources[0])
    assert entry.start_published_date == "2024-01-31"


@pytest.mark.parametrize(
    "text, line, hint_part",
    [
        ("title: T\nsubject:\n\tname: NATS\n", 3, "spaces, not tabs"),
        ("title: T\nsubject: {name: NATS\nsections: []\n", 3, "started on line 2"),
        ("title: Kestra: the workflow engine\n", 1, "quoted"),
        ('title: "unclosed\nsections: []\n', 3, "line"),
    ],
)
def test_yaml_syntax_errors_name_their_line(tmp_path, text, line, hint_part):
    err = _error(tmp_path, text)
    assert f"memo.yaml:{line}: YAML syntax error" in err.message
    assert hint_part in str(err)


def test_missing_memo_suggests_init(tmp_path):
    with pytest.raises(MemoError) as err:
        load_memo(tmp_path)
    assert "no memo.yaml in" in err.value.message
    assert "sourcedesk init DIR --subject NAME --url URL" in err.value.hint
    with pytest.raises(MemoError, match="does not exist"):
        load_memo(tmp_path / "other.yaml")
    with pytest.raises(MemoError, match="not-created-yet does not exist"):
        load_memo(tmp_path / "not-created-yet")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "is empty"),
        ("# only a comment\n", "is empty"),
        ("- a\n- b\n", "expected a mapping of keys"),
        ("just words\n", "expected a mapping of keys"),
        ("title: T\nsubject: {name: N}\nsections: []\n", "sections: expected at least 1 item"),
        ("title: T\nsubject: {name: N}\nsections: []\n---\ntitle: U\n", "one YAML document"),
    ],
)
def test_degenerate_files(tmp_path, text, expected):
    err = _error(tmp_path, text)
    assert expected in str(err)


def test_non_utf8_file(tmp_path):
    d = tmp_path / "memo"
    d.mkdir()
    (d / "memo.yaml").write_bytes(b"title: T\nsubject: {name: Soci\xe9t\xe9}\n")
    with pytest.raises(MemoError) as err:
        load_memo(d)
    assert "memo.yaml:2: not valid UTF-8" in err.value.message


# -- fuzzing: never anything but a Memo or a MemoError ------------------------------------

_TOKENS = [
    *list("abcxyz019 :-_[]{},'\"#&*!|>%@?\n\t\\."),
    "{{",
    "}}",
    "sections:",
    "id:",
    "title:",
    "subject:",
    "- ",
    "\n  ",
]
YAMLISH = st.lists(st.sampled_from(_TOKENS), max_size=120).map("".join)


def _must_be_memo_or_memo_error(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8", errors="replace"))
    try:
        load_memo(path)
    except MemoError as err:
        assert str(err).strip()
        assert "Traceback" not in str(err)


@settings(
    max_examples=examples_per_pass(250),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=YAMLISH)
def test_fuzz_random_yamlish_text(tmp_path, text):
    _must_be_memo_or_memo_error(tmp_path / "memo.yaml", text)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 500),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["exa", "files", "entity", "none", "{{subject}}", "{{nope}}", "2024-02-30", "six"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=12), children, max_size=3)
    ),
    max_leaves=8,
)
_KEYS = st.sampled_from(
    [
        "title",
        "subject",
        "name",
        "url",
        "sections",
        "id",
        "include-sources",
        "provider",
        "query",
        "num-results",
        "pin",
        "contents",
        "summary",
        "schema",
        "vars",
        "writer",
        "glob",
        "questions",
        "firm",
        "bogus",
    ]
)


@settings(
    max_examples=examples_per_pass(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzz_mutated_valid_memos(tmp_path, data):
    memo = yaml.safe_load(DESIGN_SAMPLE)
    for _ in range(data.draw(st.integers(1, 4))):
        node = memo
        for _ in range(data.draw(st.integers(0, 4))):
            if isinstance(node, dict) and node:
                nxt = node[data.draw(st.sampled_from(sorted(node, key=str)))]
            elif isinstance(node, list) and node:
                nxt = data.draw(st.sampled_from(node))
            else:
                break
            if not isinstance(nxt, (dict, list)):
                break
            node = nxt
        if isinstance(node, dict):
            node[data.draw(_KEYS)] = data.draw(_VALUES)
        elif isinstance(node, list):
            node.append(data.draw(_VALUES))
    _must_be_memo_or_memo_error(tmp_path / "memo.yaml", yaml.safe_dump(memo, allow_unicode=True))


@settings(
    max_examples=examples_per_pass(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(cut=st.integers(0, len(DESIGN_SAMPLE)), junk=YAMLISH)
def test_fuzz_spliced_valid_memo(tmp_path, cut, junk):
    _must_be_memo_or_memo_error(tmp_path / "memo.yaml", DESIGN_SAMPLE[:cut] + junk + DESIGN_SAMPLE[cut:])


# ---------------------------------------------------------------- writer api, model and preset


def test_writer_api_preset_and_section_preset_load(tmp_path):
    d = _write(
        tmp_path,
        HEAD.replace("sections:", "writer: {api: perplexity, preset: pro-search}\nsections:")
        + "  - {id: a, title: A, writer: {preset: high}}\n  - {id: b, title: B, writer: {model: perplexity/sonar}}\n",
    )
    memo = load_memo(d).memo
    assert memo.writer.api == "perplexity" and memo.writer.preset == "pro-search"
    assert memo.sections[0].writer.preset == "high" and memo.sections[1].writer.model == "perplexity/sonar"


@pytest.mark.parametrize(
    "writer, fragment",
    [
        ("{api: perplexty}", "unknown writer API 'perplexty'; use one of: perplexity, perplexity-sonar, openai"),
        ("{preset: turbo}", "unknown preset 'turbo'; the Agent API presets are fast, low, medium, high, xhigh"),
        ("{model: perplexity/sonar, preset: low}", "give either model (perplexity/sonar) or preset (low), not both"),
    ],
)
def test_bad_writer_choices_are_load_errors(tmp_path, writer, fragment):
    err = _error(tmp_path, HEAD.replace("sections:", f"writer: {writer}\nsections:") + "  - {id: a, title: A}\n")
    assert fragment in str(err) and "memo.yaml:3" in str(err)


@pytest.mark.parametrize("where", ["memo", "section"])
def test_an_unknown_preset_has_a_hint_listing_the_valid_presets(tmp_path, where):
    if where == "memo":
        text = HEAD.replace("sections:", "writer: {preset: hihg}\nsections:") + "  - {id: a, title: A}\n"
    else:
        text = HEAD + "  - {id: a, title: A, writer: {preset: hihg}}\n"
    err = _error(tmp_path, text)
    assert "unknown preset 'hihg'" in str(err)
    assert err.hint is not None and "\nHint: " in str(err)
    assert "did you mean 'high'?" in err.hint
    assert "valid presets: fast, low, medium, high, xhigh" in err.hint and "pro-search" in err.hint


def test_a_strict_section_that_names_a_preset_is_a_load_error_naming_the_conflict(tmp_path):
    err = _error(
        tmp_path,
        HEAD + "  - id: a\n    title: A\n    web-search: false\n    writer: {preset: low}\n",
    )
    text = str(err)
    assert "memo.yaml:7: sections[0].writer.preset" in text
    assert "section 'a' is strict (web-search: false) but names preset low" in text
    assert "cannot drop its bundled web search" in text and "remove the preset, or set web-search: true" in err.hint


def test_a_preset_with_web_search_off_for_the_whole_memo_is_a_load_error(tmp_path):
    err = _error(
        tmp_path,
        HEAD.replace("sections:", "writer: {preset: low, web-search: false}\nsections:") + "  - {id: a, title: A}\n",
    )
    assert "writer.preset" in str(err) and "conflicts with web-search: false" in str(err)
    # a memo-level preset is fine when a strict section simply runs on a model
    d = _write(
        tmp_path,
        HEAD.replace("sections:", "writer: {preset: low}\nsections:") + "  - {id: a, title: A, web-search: false}\n",
    )
    assert load_memo(d).memo.writer.preset == "low"


def test_model_choice_per_section_and_old_names():
    from sourcedesk.core.memo.spec import Memo
    from sourcedesk.core.writing.choice import choose

    memo = Memo.model_validate(
        {
            "title": "T",
            "subject": {"name": "NATS"},
            "writer": {"model": "sonar-deep-research"},
            "sections": [
                {"id": "web", "title": "W"},
                {"id": "strict", "title": "S", "web-search": False},
                {"id": "own", "title": "O", "writer": {"preset": "fast"}},
                {"id": "sonar", "title": "X", "writer": {"model": "sonar"}},
            ],
        }
    )
    picks = {s.id: choose(memo, s, has_presets=True) for s in memo.sections}
    assert (picks["web"].model, picks["web"].preset, picks["web"].legacy) == (None, "medium", "sonar-deep-research")
    assert (picks["strict"].model, picks["strict"].preset) == ("perplexity/sonar", None)
    assert (picks["own"].model, picks["own"].preset) == (None, "fast")
    assert (picks["sonar"].model, picks["sonar"].preset) == ("perplexity/sonar", None)
    # a backend without presets sends the model as written
    assert choose(memo, memo.sections[0], has_presets=False).model == "sonar-deep-research"


def test_writer_settings_an_api_cannot_honour_load_with_a_notice(tmp_path):
    d = _write(
        tmp_path,
        HEAD.replace("sections:", "writer: {api: openai, preset: low}\nsections:") + "  - {id: a, title: A}\n",
    )
    [notice] = load_memo(d).notices
    assert "writer.preset" in notice and "has no presets, so the preset is ignored" in notice
    d = _write(
        tmp_path,
        HEAD.replace("sections:", "writer: {model: perplexity/sonar}\nsections:") + "  - {id: a, title: A}\n",
    )
    assert load_memo(d).notices == []
    [notice] = load_memo(d, writer_api="perplexity-sonar").notices
    assert "writer.model (perplexity/sonar): an Agent API model slug" in notice


def test_retired_exa_highlight_options_load_with_a_notice(tmp_path):
    d = _write(
        tmp_path,
        HEAD
        + "  - id: a\n    title: A\n    include-sources:\n      - provider: exa\n        query: q\n"
        + "        contents: {highlights: {numSentences: 2, highlightsPerUrl: 1, query: funding}}\n",
    )
    notices = load_memo(d).notices
    assert len(notices) == 2 and all(":9: sections[0].include-sources[0].contents.highlights." in n for n in notices)
    assert "highlightsPerUrl is deprecated by Exa; not sent" in notices[0]
    assert "numSentences is deprecated by Exa; sent as maxCharacters" in notices[1]


def test_one_marker_per_source_per_paragraph_is_an_opt_in_setting(tmp_path):
    assert load_memo(_write(tmp_path, DESIGN_SAMPLE)).memo.settings.one_marker_per_source_per_paragraph is False
    on = DESIGN_SAMPLE.replace("sections:\n", "settings: {one-marker-per-source-per-paragraph: true}\nsections:\n", 1)
    assert load_memo(_write(tmp_path, on)).memo.settings.one_marker_per_source_per_paragraph is True
