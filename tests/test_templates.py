"""Query templates: what gets sent to the search API for a given memo and section."""

from __future__ import annotations

from datetime import date

import pytest

from sourcedesk.core.memo.spec import Memo
from sourcedesk.core.memo.templates import (
    BUILTIN_VARIABLES,
    TemplateError,
    render,
    syntax_errors,
    template_variables,
    unknown_variables,
)


def _memo(**subject) -> Memo:
    return Memo.model_validate(
        {
            "title": "Synadia — company profile",
            "subject": {
                "name": "NATS",
                "url": "https://www.Nats.io/about",
                "domains": ["synadia.com", "nats.dev"],
                "aliases": ["Synadia", "NATS.io"],
                **subject,
            },
            "firm": {"name": "Example Ventures", "context": "Early-stage infra fund"},
            "vars": {"product": "JetStream", "fund-name": "EV II"},
            "sections": [{"id": "competitors", "title": "Competitive landscape"}],
        }
    )


def test_every_documented_variable_has_the_expected_value():
    memo = _memo()
    v = template_variables(memo, memo.sections[0], today=date(2026, 3, 4))
    assert v["subject"] == v["subject_name"] == v["basename"] == "NATS"
    assert v["url"] == "https://www.Nats.io/about"
    assert v["url_domain"] == "nats.io"  # host, lower-case, without www
    assert v["section"] == "Competitive landscape" and v["section_id"] == "competitors"
    assert v["today"] == "2026-03-04" and v["year"] == "2026"
    assert v["title"] == "Synadia — company profile"
    assert v["firm"] == "Example Ventures" and v["firm_context"] == "Early-stage infra fund"
    assert v["aliases"] == "Synadia, NATS.io" and v["domains"] == "synadia.com, nats.dev"
    assert v["product"] == "JetStream" and v["fund-name"] == "EV II"
    assert set(BUILTIN_VARIABLES) <= set(v)


def test_subject_without_url_gives_empty_url_variables():
    v = template_variables(_memo(url=None), None)
    assert v["url"] == "" and v["url_domain"] == "" and v["section"] == ""


def test_render_fills_placeholders_with_or_without_inner_spaces():
    memo = _memo()
    v = template_variables(memo, memo.sections[0], today=date(2026, 3, 4))
    assert (
        render("{{subject}} {{ url_domain }} {{  section }} {{year}}", v) == "NATS nats.io Competitive landscape 2026"
    )
    assert (
        render("alternatives to {{subject}} {{product}} ({{fund-name}})", v) == "alternatives to NATS JetStream (EV II)"
    )


def test_render_collapses_the_gap_left_by_an_empty_variable():
    v = template_variables(_memo(url=None), None)
    assert render("{{subject}} {{url}} overview", v) == "NATS overview"


def test_render_never_sends_an_unknown_placeholder():
    v = template_variables(_memo(), None)
    with pytest.raises(TemplateError) as err:
        render("{{subjet}} overview", v)
    assert "{{subjet}}" in str(err.value) and "{{subject}}" in (err.value.hint or "")


def test_render_does_not_expand_braces_inside_values():
    assert render("{{a}} {{b}}", {"a": "{{b}}", "b": "x"}) == "{{b}} x"


def test_unknown_variables_are_listed_once_in_order():
    known = {"subject", "url"}
    assert unknown_variables("{{ foo }} {{subject}} {{bar}} {{foo}}", known) == ["foo", "bar"]
    assert unknown_variables("no placeholders", known) == []


@pytest.mark.parametrize("template", ["{{subject", "subject}}", "{{ }}", "{{sub ject}}", "{{{subject}}}"])
def test_broken_braces_are_syntax_errors(template):
    assert syntax_errors(template)
    with pytest.raises(TemplateError):
        render(template, {"subject": "NATS"})


def test_plain_text_has_no_syntax_errors():
    assert syntax_errors("NATS {messaging} overview") == []
