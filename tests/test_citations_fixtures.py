"""Differential test: our marker/definition parser against mdit-py-plugins' own token stream.

For every fixture input in tests/data/footnotes/ (markdown-it fixture format:
title, ``.``, input, ``.``, expected HTML, ``.``) the footnote references and
definitions our parser reports — labels and counts — must equal what the
footnote plugin's tokens say (``footnote_ref`` tokens and their ``meta.label``;
``footnote_reference_open`` tokens for definitions).

Options named in fixture titles are honoured on both sides: ``DISABLE-CODEBLOCKS``
(markdown-it's ``code`` rule off) and ``ALWAYS_MATCH-REFS`` (the plugin's
``always_match_refs``); every other fixture uses the plugin's default (a ref
without a definition is text). The "prefixed" file is markdown-it-footnote's
``docId`` option, which only changes anchor ids in the HTML; mdit-py-plugins
takes it as ``env["docId"]``, so that file is included too — and, as a check
that the reference configuration is the one the fixtures were written for, the
reference renderer must reproduce each fixture's expected HTML (up to the ↩ /
↩︎ variant and two JS-only features named below).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin

from sourcedesk.core.citations.parse import parse
from tests.conftest import TESTDATA

FOOTNOTES = TESTDATA / "footnotes"
FILES = ("mdit-py-plugins-footnote.md", "markdown-it-footnote.txt", "markdown-it-footnote-prefixed.txt")
# Expected HTML that depends on renderer settings, not on footnote parsing: the JS suite runs
# with linkify on (a plugin markdown-it-py does not bundle), and the Python suite renders one
# case with a custom back-reference glyph ("<-"). Their token streams are still compared above.
# The JS suite runs this one with linkify on; linkify-it-py is installed (markdown-it-py[linkify]).
LINKIFY_FIXTURES = {("markdown-it-footnote.txt", "Should allow links in inline footnotes")}
# Back-reference glyphs as fixtures write them: one upstream fixture writes a raw "<-" (HTML-escaped
# "&lt;-") where the plugin renders "↩︎"; the glyph is presentation, everything else is compared.
BACKREF_GLYPHS = ("↩︎", "&lt;-", "<-")


def _backrefs_as_one_glyph(html: str) -> str:
    for glyph in BACKREF_GLYPHS:
        html = html.replace(glyph, "↩")
    return html


@dataclass(frozen=True)
class Fixture:
    file: str
    title: str
    source: str
    html: str

    @property
    def always_match(self) -> bool:
        return "ALWAYS_MATCH-REFS" in self.title

    @property
    def code_blocks(self) -> bool:
        return "DISABLE-CODEBLOCKS" not in self.title

    @property
    def doc_id(self) -> str | None:
        return "test-doc-id" if "prefixed" in self.file else None


def load(name: str) -> list[Fixture]:
    lines = Path(FOOTNOTES / name).read_text(encoding="utf-8").split("\n")
    out, i, title = [], 0, ""
    while i < len(lines):
        if lines[i] != ".":
            if lines[i].strip():
                title = lines[i].strip()
            i += 1
            continue
        j = lines.index(".", i + 1)
        k = lines.index(".", j + 1)
        out.append(Fixture(name, title, "\n".join(lines[i + 1 : j]) + "\n", "\n".join(lines[j + 1 : k]) + "\n"))
        title, i = "", k + 1
    return out


FIXTURES = [f for name in FILES for f in load(name)]


def reference(fx: Fixture, move_to_end: bool) -> MarkdownIt:
    linkify = (fx.file, fx.title) in LINKIFY_FIXTURES
    md = MarkdownIt("commonmark", {"xhtmlOut": False, "linkify": linkify})
    md.use(footnote_plugin, move_to_end=move_to_end, always_match_refs=fx.always_match)
    if not fx.code_blocks:
        md.disable("code")
    if linkify:
        md.enable("linkify")
    return md


def walk(tokens):
    for t in tokens:
        yield t
        if t.children:
            yield from walk(t.children)


def test_fixture_count_is_what_the_files_hold():
    # 20 + 14 + 1 = 35 cases; a misread of the fixture format would change this silently.
    assert Counter(f.file for f in FIXTURES) == {
        "mdit-py-plugins-footnote.md": 20,
        "markdown-it-footnote.txt": 14,
        "markdown-it-footnote-prefixed.txt": 1,
    }


def plugin_view(md: MarkdownIt, text: str, env: dict | None = None) -> tuple[Counter, int, Counter]:
    """(footnote reference labels, inline notes, definition labels) as the plugin's tokens say.

    ``md`` must use ``move_to_end=False`` so definitions stay in the stream (with it, unreferenced
    definitions and their contents vanish); inline notes' own tokens live in ``env``.
    """
    env = dict(env or {})
    stream = md.parse(text, env)
    notes = env.get("footnotes", {}).get("list", {})
    lists = [stream] + [entry["tokens"] for entry in notes.values() if "tokens" in entry]
    refs = [t for tokens in lists for t in walk(tokens) if t.type == "footnote_ref"]
    labels = Counter(t.meta["label"] for t in refs if t.meta.get("label") is not None)
    inline_notes = sum(1 for t in refs if t.meta.get("label") is None)
    defs = Counter(t.meta["label"] for t in stream if t.type == "footnote_reference_open")
    return labels, inline_notes, defs


def compare(fx: Fixture, always_match: bool) -> None:
    env = {"docId": fx.doc_id} if fx.doc_id else {}
    fx_opts = Fixture(fx.file, fx.title + (" ALWAYS_MATCH-REFS" if always_match else ""), fx.source, fx.html)
    expected_refs, expected_inline_notes, expected_defs = plugin_view(reference(fx_opts, False), fx.source, env)

    doc = parse(fx.source, always_match_refs=always_match, code_blocks=fx.code_blocks)
    ours = Counter(m.label for m in doc.markers if m.kind == "footnote") + Counter(doc.link_text_refs)
    assert ours == expected_refs
    assert len(doc.inline_notes) == expected_inline_notes
    assert Counter(d.label for d in doc.definitions) == expected_defs
    for m in doc.markers:  # every position maps back to the exact source text
        assert doc.source[m.start : m.end] == m.text


@pytest.mark.parametrize("fx", FIXTURES, ids=[f"{f.file}:{f.title}" for f in FIXTURES])
def test_references_and_definitions_match_the_plugin(fx):
    compare(fx, fx.always_match)


@pytest.mark.parametrize("fx", FIXTURES, ids=[f"{f.file}:{f.title}" for f in FIXTURES])
def test_product_mode_matches_the_plugin_with_always_match_refs(fx):
    # The reconciler parses with always_match_refs (a writer's undefined [^7] is an orphan to drop).
    compare(fx, True)


@pytest.mark.parametrize("fx", FIXTURES, ids=[f"{f.file}:{f.title}" for f in FIXTURES])
def test_reference_configuration_reproduces_the_fixture_html(fx):
    env = {"docId": fx.doc_id} if fx.doc_id else {}
    html = reference(fx, move_to_end=True).render(fx.source, env)
    assert _backrefs_as_one_glyph(html) == _backrefs_as_one_glyph(fx.html)
