"""``sourcedesk init``: a memo folder an analyst can run straight away and read by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.memo.outline import standard_memo_yaml
from sourcedesk.core.memo.spec import ExaEntry, SummarySpec
from sourcedesk.core.memo.templates import render, template_variables
from sourcedesk.tui.cli import main
from tests.conftest import exa_entries, exa_entry, examples_per_pass


def _init(tmp_path: Path, *extra: str, name: str = "nats") -> tuple[int, Path]:
    d = tmp_path / name
    code = main(["init", str(d), "--subject", "NATS", "--url", "https://nats.io", *extra])
    return code, d


def test_init_writes_a_memo_that_loads_with_the_standard_outline(tmp_path, capsys):
    code, d = _init(tmp_path, "--domain", "synadia.com")
    assert code == 0
    assert "memo.yaml" in capsys.readouterr().out
    assert (d / "sections").is_dir()
    assert ".sourcedesk/" in (d / ".gitignore").read_text().splitlines()

    loaded = load_memo(d)
    memo = loaded.memo
    assert memo.title == "NATS — company profile"
    assert memo.subject.name == "NATS" and memo.subject.url == "https://nats.io"
    assert memo.subject.domains == ["synadia.com"]
    assert [s.id for s in memo.sections] == ["overview", "product", "market", "team", "traction", "funding", "risks"]
    for section in memo.sections:
        assert section.questions and section.target_words and section.include_sources
        variables = template_variables(memo, section)
        for entry in section.include_sources:
            assert isinstance(entry, ExaEntry)
            query = render(entry.query, variables)
            assert "{{" not in query and "NATS" in query

    by_id = {s.id: s for s in memo.sections}
    overview = exa_entry(by_id["overview"].include_sources[0])
    assert overview.category == "company" and overview.pin == "entity"
    assert isinstance(overview.contents.summary, SummarySpec)
    assert set(overview.contents.summary.schema_["properties"]) == {
        "founded_year",
        "headquarters",
        "funding",
        "notable_customers",
    }
    product = exa_entry(by_id["product"].include_sources[0])
    assert product.pin == "entity" and product.full_text is False
    assert all(e.pin == "none" for e in exa_entries(by_id["market"].include_sources))
    assert {e.pin for e in exa_entries(by_id["team"].include_sources)} == {"entity", "none"}
    assert any(e.category == "news" and e.pin == "none" for e in exa_entries(by_id["team"].include_sources))
    traction = exa_entry(by_id["traction"].include_sources[0])
    assert traction.category == "news" and traction.pin == "none" and "{{subject_name}}" in traction.query
    funding = exa_entry(by_id["funding"].include_sources[0])
    assert funding.category in ("news", "company")
    assert isinstance(funding.contents.summary, SummarySpec)
    assert set(funding.contents.summary.schema_["properties"]) == {"funding_total", "latest_round", "investors"}
    assert all(e.pin == "none" for e in exa_entries(by_id["risks"].include_sources))


def test_the_file_reads_well_by_hand(tmp_path):
    _, d = _init(tmp_path)
    text = (d / "memo.yaml").read_text()
    assert text.startswith("# sourcedesk memo")
    assert "pin: entity" in text and "# only the subject's own domains" in text
    assert "{{url_domain}}" in text and "{{section}}" in text  # the header documents the variables
    assert "include-sources:" in text and "num-results:" in text  # kebab-case keys as in the design
    assert "!!" not in text and "&id" not in text  # no dumper artefacts


def test_refuses_to_overwrite_without_force(tmp_path, capsys):
    _, d = _init(tmp_path)
    memo_yaml = d / "memo.yaml"
    memo_yaml.write_text(memo_yaml.read_text() + "# my edits\n")
    before = memo_yaml.read_text()
    code, _ = _init(tmp_path)
    err = capsys.readouterr().err
    assert code == 2
    assert "already exists" in err and "--force" in err and "Traceback" not in err
    assert memo_yaml.read_text() == before


def test_force_overwrites_the_memo_but_keeps_notes_and_gitignore(tmp_path):
    d = tmp_path / "nats"
    d.mkdir()
    (d / ".gitignore").write_text("*.pdf")  # no trailing newline
    _init(tmp_path)
    (d / "sections" / "01-overview.md").write_text("my note")
    (d / "memo.yaml").write_text("broken: [")
    code, _ = _init(tmp_path, "--force", "--title", "NATS: a profile")
    assert code == 0
    assert load_memo(d).memo.title == "NATS: a profile"
    assert (d / "sections" / "01-overview.md").read_text() == "my note"
    assert (d / ".gitignore").read_text().splitlines().count(".sourcedesk/") == 1
    assert (d / ".gitignore").read_text().splitlines()[0] == "*.pdf"


def test_url_and_domains_are_normalised(tmp_path):
    d = tmp_path / "kestra"
    code = main(
        [
            "init",
            str(d),
            "--subject",
            "Kestra",
            "--url",
            "kestra.io",
            "--domain",
            "https://www.Kestra.dev/about",
            "--domain",
            "kestra.dev",
        ]
    )
    assert code == 0
    subject = load_memo(d).memo.subject
    assert subject.url == "https://kestra.io" and subject.domains == ["kestra.dev"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--url", "https://co.uk"], "public suffix"),
        (["--url", "not a url"], "not a web address"),
        (["--url", "https://kestra.io", "--domain", "com"], "public suffix"),
        (["--url", "https://kestra.io", "--subject", "  "], "--subject"),
    ],
)
def test_bad_arguments_are_clear_errors(tmp_path, capsys, args, message):
    argv = ["init", str(tmp_path / "m"), "--subject", "Kestra", *args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "m" / "memo.yaml").exists()


_NAMES = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40).filter(lambda s: s.strip())


@settings(
    max_examples=examples_per_pass(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(subject=_NAMES, title=_NAMES)
def test_any_subject_name_and_title_round_trip(tmp_path, subject, title):
    path = tmp_path / "memo.yaml"
    path.write_text(standard_memo_yaml(subject, "https://nats.io", title=title), encoding="utf-8")
    memo = load_memo(path).memo
    assert memo.subject.name == subject and memo.title == title


def test_generated_yaml_is_plain_yaml_too():
    data = yaml.safe_load(standard_memo_yaml("NATS", "https://nats.io", domains=["synadia.com"]))
    assert data["subject"] == {
        "name": "NATS",
        "url": "https://nats.io",
        "domains": ["synadia.com"],
        "aliases": [],
        "description": "",
        "namesakes": [],
    }
