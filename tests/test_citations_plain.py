"""The plain-draft path gives exactly what the full markdown-it parse gives.

``sourcedesk.core.citations.plain`` builds a plain draft's tokens without running markdown-it; the
reconciler's whole view of a draft (markers, definitions, blocks with their source
offsets and spans, headings, references, …) must be identical either way. Checked on
generated drafts — plain ones, and ones salted with every construct the plain path
must refuse — and on the footnote fixtures, the adversarial drafts and the bench's
generated section.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcedesk.core.citations.parse import parse
from sourcedesk.core.citations.plain import plain_tokens
from sourcedesk.sandbox.bench import reconcile_section
from sourcedesk.sandbox.bench_adversarial import load as load_adversarial
from tests.conftest import examples_per_pass
from tests.test_citations_fixtures import FIXTURES


def same_either_way(text: str) -> None:
    for malformed in (False, True):
        assert parse(text, malformed=malformed) == parse(text, malformed=malformed, plain=False), text


WORDS = st.sampled_from(
    ["Lumora", "raised", "$125M", "in", "2023", "led", "by", "Tiger", "Global", "über", "云舟科技", "R&D", "—", "x"]
)
MARKERS = st.sampled_from(["[^1]", "[^E2]", "[^deck]", "[1]", "[2, 3]", "[1-3]", "[^ E1]", "[2019]", "[a]"])
LINKS = st.sampled_from(
    ["[TechCrunch](https://techcrunch.com/a?b=1&c=2)", "[1](https://x.io/p)", "[](https://y.io)", "[a b](/rel)"]
)
# Constructs the plain path must refuse (or get exactly right): every one is a markdown-it construct.
SALT = st.sampled_from(
    [
        "`code`",
        "<b>x</b>",
        "&amp;",
        "\\[",
        "![img](https://i.io/a.png)",
        "^[note]",
        "*em*",
        "__strong__",
        "[^1](https://x.io)",
        "[a](javascript:alert(1))",
        '[a](https://x.io "t")',
        "[[^1]]",
        "[a [b] c](https://x.io)",
        "[^a[b]",
        "[^]",
        "|",
        "~~s~~",
        "https://bare.io",
        "<https://auto.io>",
        "[a]\n\n[a]: https://ref.io",
    ]
)
PROSE_LINE = st.lists(st.one_of(WORDS, MARKERS, LINKS), min_size=1, max_size=8).map(" ".join)
SALTED_LINE = st.lists(st.one_of(WORDS, MARKERS, LINKS, SALT), min_size=1, max_size=8).map(" ".join)
BLOCK_LINE = st.one_of(
    PROSE_LINE,
    PROSE_LINE.map(lambda s: f"## {s}"),
    PROSE_LINE.map(lambda s: f"[^{len(s) % 7}]: {s}"),
    PROSE_LINE.map(lambda s: f"[^E{len(s) % 5}]: [{s[:12]}](https://s{len(s)}.example.org/p)"),
    st.just(""),
    st.just("   "),
)
ODD_LINE = st.one_of(
    SALTED_LINE,
    st.sampled_from(
        [
            "    indented code",
            "  two spaces",
            "- item",
            "1. item",
            "2) item",
            "> quote",
            "```",
            "~~~",
            "---",
            "===",
            "***",
            "# ",
            "#tag",
            "###### six",
            "####### seven",
            "## closing ##",
            "| a | b |",
            "|---|---|",
            "<div>",
            "[ref]: https://ref.io",
            "[^1]:",
            "[^1]:  two spaces",
            "[^1]: - list in a note",
            "[^1]: [^2]: nested",
            "[^1]: # heading",
            "trailing space ",
            "\ttab",
        ]
    ),
)


@settings(max_examples=examples_per_pass(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(BLOCK_LINE, min_size=0, max_size=12), st.booleans())
def test_plain_drafts_parse_the_same_either_way(lines, final_newline):
    text = "\n".join(lines) + ("\n" if final_newline else "")
    same_either_way(text)


@settings(max_examples=examples_per_pass(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(BLOCK_LINE, ODD_LINE), min_size=1, max_size=12))
def test_drafts_with_any_construct_parse_the_same_either_way(lines):
    same_either_way("\n".join(lines) + "\n")


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f"{f.file}:{f.title}")
def test_footnote_fixtures_parse_the_same_either_way(fixture):
    same_either_way(fixture.source)


def test_adversarial_drafts_parse_the_same_either_way():
    _, drafts = load_adversarial()
    for case in drafts:
        same_either_way(case["draft"])


def test_the_plain_path_takes_plain_drafts_and_refuses_the_rest():
    draft, _ = reconcile_section(50, 20)
    assert plain_tokens(draft) is not None  # the bench's section: prose, markers, definitions, a heading
    same_either_way(draft)
    plain = "Lumora raised $125M.[^1] It was founded in 2017 [2].\n\n## Sources\n\n[^1]: [TC](https://tc.com/a)\n"
    assert plain_tokens(plain) is not None
    for odd in ("Code `x`.[^1]\n", "- a list [^1]\n", "<p>html [^1]</p>\n", "A &amp; B [^1]\n", "    code\n"):
        assert plain_tokens(odd) is None, odd
