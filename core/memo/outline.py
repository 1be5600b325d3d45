"""The standard company-profile outline that ``sourcedesk init`` writes.

The YAML is written as text (not ``yaml.dump``) so the file an analyst opens
first reads like a document: grouped keys, a comment where a choice matters.
Everything the analyst supplies (name, URL, domains, title) is emitted through
``yaml_scalar`` so quoting is always right; the result must load with
``sourcedesk.core.memo.loader.load_memo`` (tested).

Retrieval choices per section, and why:

- overview — ``category: company`` pinned to the subject's own domains, with a
  summary schema for the facts a profile always needs;
- product — the subject's docs and product pages (pinned), summaries only;
- market — wide (``pin: none``): the market and the competitors are other sites;
- team — the subject's own pages (pinned) plus a wide news query;
- traction — wide news with the subject's name *and* domain in the query, so
  namesakes rank low;
- funding — wide news with a schema for total / latest round / investors;
- risks — wide.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import yaml


def _one_line(text: str) -> str | None:
    if text.endswith("\n...\n"):
        text = text[: -len("...\n")]
    text = text.rstrip("\n")
    return None if "\n" in text else text


def yaml_scalar(value: str) -> str:
    """``value`` as a block-context YAML scalar on one line that reads back as the same
    string (plain when that is safe, quoted otherwise)."""
    candidates = (
        _one_line(yaml.safe_dump(value, allow_unicode=True, width=1_000_000)),
        _one_line(yaml.safe_dump(value, default_style='"', allow_unicode=True, width=1_000_000)),
    )
    for text in candidates:
        if text is not None and _reads_back(text, value):
            return text
    return json.dumps(value)  # ASCII with \u escapes: valid YAML double-quoted


def _reads_back(text: str, value: str) -> bool:
    try:
        return bool(yaml.safe_load(f"k: {text}\n") == {"k": value})
    except yaml.YAMLError:
        return False


def yaml_list(values: Iterable[str]) -> str:
    """A one-line flow list (flow context quotes more: commas, brackets)."""
    text = yaml.safe_dump(list(values), default_flow_style=True, allow_unicode=True, width=1_000_000)
    return _one_line(text) or "[]"


@dataclass(frozen=True)
class OutlineSection:
    id: str
    title: str
    target_words: int
    questions: tuple[str, ...]
    sources_yaml: str  # the include-sources list, indented for a section (6 spaces)


_COMPANY_SUMMARY = """\
        contents:
          summary:
            query: "What does the company do, when was it founded, where is it based, how much funding has it raised, and who are its notable customers?"
            schema:
              type: object
              properties:
                founded_year: {type: string}
                headquarters: {type: string}
                funding: {type: string}
                notable_customers: {type: array, items: {type: string}}"""

_FUNDING_SUMMARY = """\
        contents:
          summary:
            query: "How much funding has the company raised in total, what was its latest round, and who invested?"
            schema:
              type: object
              properties:
                funding_total: {type: string}
                latest_round: {type: string}
                investors: {type: array, items: {type: string}}"""

STANDARD_OUTLINE: tuple[OutlineSection, ...] = (
    OutlineSection(
        "overview",
        "Company overview",
        350,
        (
            "What does the company do, and for whom?",
            "When was it founded, where, and by whom?",
            "How much funding has it raised, and who are its notable customers?",
        ),
        f"""\
      - provider: exa
        query: "{{{{subject}}}} {{{{url}}}} overview product funding customers"
        category: company
        num-results: 6
        pin: entity            # only the subject's own domains (url + domains above)
{_COMPANY_SUMMARY}""",
    ),
    OutlineSection(
        "product",
        "Product",
        400,
        (
            "What are the main products and what problem does each solve?",
            "How is it deployed and priced?",
            "What is technically distinctive about it?",
        ),
        """\
      - provider: exa
        query: "{{subject}} product documentation features architecture pricing"
        num-results: 8
        pin: entity
        full-text: false       # summaries only; set true to budget full page text instead""",
    ),
    OutlineSection(
        "market",
        "Market and competitors",
        450,
        (
            "How large is the market and how fast is it growing?",
            "Who are the main competitors and alternatives, and how do they compare?",
            "What trends are shaping the category?",
        ),
        """\
      - provider: exa
        query: "{{subject}} ({{url_domain}}) market size, growth and trends"
        num-results: 6
        pin: none              # wide search: the market lives on other sites
      - provider: exa
        query: "alternatives to {{subject}} ({{url_domain}}) and how they compare"
        num-results: 8
        pin: none""",
    ),
    OutlineSection(
        "team",
        "Team",
        250,
        (
            "Who founded the company and who leads it today?",
            "What relevant experience does the leadership bring?",
            "How large is the team?",
        ),
        """\
      - provider: exa
        query: "{{subject}} founders leadership team about us"
        num-results: 5
        pin: entity
      - provider: exa
        query: "{{subject_name}} {{url_domain}} founder CEO interview"
        category: news
        num-results: 5
        pin: none""",
    ),
    OutlineSection(
        "traction",
        "Traction",
        300,
        (
            "Which customers and users does it have, and in which segments?",
            "What evidence is there of growth (revenue, usage, community)?",
            "Which partnerships matter?",
        ),
        """\
      - provider: exa
        query: "{{subject_name}} {{url_domain}} customers adoption growth partnership"
        category: news
        num-results: 8
        pin: none""",
    ),
    OutlineSection(
        "funding",
        "Funding",
        250,
        (
            "How much has the company raised, in which rounds, and when?",
            "Who are the investors?",
        ),
        f"""\
      - provider: exa
        query: "{{{{subject_name}}}} {{{{url_domain}}}} raises funding round investors"
        category: news
        num-results: 6
        pin: none
{_FUNDING_SUMMARY}""",
    ),
    OutlineSection(
        "risks",
        "Risks",
        300,
        (
            "What are the main competitive, technical and market risks?",
            "What criticism, incidents or legal issues have been reported?",
        ),
        """\
      - provider: exa
        query: "{{subject_name}} {{url_domain}} risks challenges criticism outage lawsuit"
        num-results: 6
        pin: none""",
    ),
)


_HEADER = """\
# sourcedesk memo — edit freely: `sourcedesk open DIR` to work on it, `sourcedesk run DIR` to write sections.
#
# Query templates may use {{subject}}, {{subject_name}}, {{basename}}, {{aliases}}, {{domains}}, {{url}},
# {{url_domain}}, {{description}}, {{section}} (the section title), {{section_id}}, {{title}}, {{firm}},
# {{firm_name}}, {{firm_context}}, {{today}}, {{year}} and every key under `vars:`.
# An unknown {{name}} is an error when the memo loads.
#
# pin: entity  keeps retrieval on the subject's own sites (subject.url + subject.domains);
# pin: none    searches the whole web (markets, competitors, news) minus rejected domains.
"""


def standard_memo_yaml(
    subject: str,
    url: str,
    *,
    domains: Iterable[str] = (),
    title: str | None = None,
    outline: Iterable[OutlineSection] = STANDARD_OUTLINE,
) -> str:
    """The text of a new memo.yaml with the standard outline."""
    title = title or f"{subject} — company profile"
    parts = [
        _HEADER,
        f"title: {yaml_scalar(title)}",
        "",
        "subject:",
        f"  name: {yaml_scalar(subject)}",
        f"  url: {yaml_scalar(url)}",
        f"  domains: {yaml_list(domains)}  # more domains that belong to the subject (pinned with pin: entity)",
        "  aliases: []  # other names it goes by",
        '  description: ""  # one line that tells it apart from namesakes',
        "  # Names that are NOT the subject — other organisations sharing or resembling its name.",
        "  # Each is a name, or {name, note} saying what it is. Sources naming them (and not the",
        "  # subject) are flagged as namesakes, never substituted, and the writer is told to avoid them.",
        "  # More are learned from look-alike sites the entity pin removes and from rejected domains.",
        "  # e.g. namesakes: [Kestra Medical Technologies, {name: Kestra Financial, note: a wealth advisor}]",
        "  namesakes: []",
        "",
        "firm:  # your side: frames the memo, never cited as a fact about the subject",
        '  name: ""',
        '  context: ""',
        "",
        "writer:",
        "  api: perplexity  # Perplexity's Agent API (perplexity-sonar: legacy chat completions; openai: any compatible API)",
        "  model: perplexity/sonar  # or preset: fast | low | medium | high | xhigh (sections with web search only)",
        "  web-search: true  # false: the writer may cite only the retrieved sources",
        "",
        "vars: {}  # your own {{template}} variables, e.g. vars: {product: JetStream}",
        "",
        "sections:",
    ]
    for section in outline:
        parts += [
            f"  - id: {section.id}",
            f"    title: {yaml_scalar(section.title)}",
            f"    target-words: {section.target_words}",
            "    questions:",
            *(f"      - {yaml_scalar(q)}" for q in section.questions),
            "    include-sources:",
            section.sources_yaml,
            "",
        ]
    return "\n".join(parts).rstrip() + "\n"
