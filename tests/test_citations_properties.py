"""Properties of reconcile/tidy over generated drafts and ground truths (hypothesis).

* no inline marker lacks a definition afterwards (protected keys aside), no
  definition is left uncited, and no bare ``[N]`` survives;
* prose is unchanged: with markers, definitions and the house headings removed,
  the non-whitespace characters are identical, in order;
* ``tidy`` and ``reconcile`` are idempotent;
* the parser agrees with mdit-py-plugins' token stream on random markdown.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin

from core.citations import DEFAULT_PROTECTED, reconcile, tidy
from core.citations.house import HOUSE_HEADINGS
from core.citations.parse import parse
from tests.test_citations_fixtures import plugin_view

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORDS = ["Synadia", "raised", "funding", "NATS", "messaging", "open", "source", "cloud", "weather", "storms",
         "$25M", "2022", "Series", "customers", "growth", "analysts", "expect", "margins", "the", "a", "and"]
FOOTNOTE_LABELS = ["1", "2", "3", "7", "E1", "E2", "E5", "E9", "V1", "deck", "x", "note"]
POOL = {
    "E1": ("https://nats.io/about", "About NATS", "NATS open source messaging system for cloud"),
    "E2": ("https://synadia.com/blog/series-a", "Synadia raises $25M", "Synadia raised $25M Series A funding 2022"),
    "E3": ("https://nats.io/blog", "NATS blog", "Customers growth analysts"),
    "E4": ("https://docs.nats.io", "Docs", "JetStream persistence"),
    "V1": ("file:///notes/call.md", "Call notes", "margins expect growth"),
}
WEB_POOL = [
    ("https://news.org/storms", "Storms", "weather storms expect growth"),
    ("https://news.org/funding", "Funding news", "Synadia funding Series customers"),
    ("https://blog.org/cloud", "Cloud", "cloud messaging"),
    ("https://www.nats.io/about/", "NATS again", "duplicate of E1 by URL"),
]
URLS = [u for u, _, _ in POOL.values()] + [u for u, _, _ in WEB_POOL] + [
    "https://example.com/x", "https://bloomberg.com/news/XXXX", "https://synadia.com/invented", "https://a.org/p"]


@st.composite
def marker(draw):
    if draw(st.booleans()):
        return f"[^{draw(st.sampled_from(FOOTNOTE_LABELS))}]"
    return f"[{draw(st.integers(0, 6))}]"


@st.composite
def sentence(draw):
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=8))
    words[0] = words[0].capitalize()
    pieces = []
    for w in words:
        pieces.append(w)
        if draw(st.integers(0, 9)) == 0:
            pieces.append(draw(st.sampled_from(["", " "])) + draw(marker()))
        if draw(st.integers(0, 14)) == 0:
            pieces.append("`" + draw(marker()) + "`")
    text = " ".join(pieces)
    end = draw(st.sampled_from([".", "!", "?"]))
    placement = draw(st.integers(0, 3))
    if placement == 1:
        text += draw(marker()) + end
    elif placement == 2:
        text += end + draw(st.sampled_from(["", " "])) + draw(marker()) + draw(marker())
    else:
        text += end
    return text


@st.composite
def paragraph(draw):
    body = " ".join(draw(st.lists(sentence(), min_size=1, max_size=4)))
    kind = draw(st.sampled_from(["p", "p", "li", "quote", "lines", "heading", "table", "alone"]))
    if kind == "heading":
        return "## " + body.replace("\n", " ")
    if kind == "table":
        return "| Claim | Note |\n|---|---|\n| " + body + " | " + draw(marker()) + " |"
    if kind == "alone":
        return body + "\n" + draw(marker()) + "\n" + draw(sentence())
    if kind == "li":
        return "- " + body
    if kind == "quote":
        return "> " + body
    if kind == "lines":
        return body.replace(". ", ".\n", 1)
    return body


@st.composite
def draft(draw):
    paras = draw(st.lists(paragraph(), min_size=1, max_size=4))
    if draw(st.booleans()):
        paras.insert(draw(st.integers(0, len(paras))), "```\ncode [^1] [2] x[^E9].\n```")
    defs = []
    for label in draw(st.lists(st.sampled_from(FOOTNOTE_LABELS), max_size=6, unique=True)):
        if label == "deck":
            defs.append("[^deck]: Board deck, slide 3")
        else:
            url = draw(st.sampled_from(URLS))
            form = draw(st.integers(0, 2))
            defs.append(f"[^{label}]: " + ([f"[Some title]({url})", f"<{url}>", f"{url} 2021-01-05"][form]))
    text = "\n\n".join(paras)
    if defs:
        text += "\n\n" + "\n".join(defs)
    return text + "\n"


@st.composite
def ground_truth(draw):
    retrieved = draw(st.lists(st.sampled_from(sorted(POOL)), unique=True, max_size=5))
    web = draw(st.lists(st.sampled_from(WEB_POOL), unique=True, max_size=4))
    items = [{"marker": m, "url": POOL[m][0], "title": POOL[m][1], "summary": POOL[m][2], "date": "2022-03-01"}
             for m in retrieved]
    items += [{"url": u, "title": t, "snippet": s} for u, t, s in web]
    return items


def prose_signature(text: str) -> str:
    """Non-whitespace characters outside markers, definitions and the house headings."""
    doc = parse(text)
    drop = [(m.start, m.end) for m in doc.markers]
    drop += [(d.start, d.end) for d in doc.definitions]
    out, pos = [], 0
    for a, b in sorted(drop):
        if a >= pos:
            out.append(doc.source[pos:a])
            pos = b
        else:
            pos = max(pos, b)
    out.append(doc.source[pos:])
    kept = "".join(out)
    lines = [ln for ln in kept.split("\n") if ln.strip() not in HOUSE_HEADINGS]
    return "".join("".join(lines).split())


@SETTINGS
@given(draft(), ground_truth())
def test_reconcile_invariants(text, sources):
    result = reconcile(text, sources)
    doc = parse(result.text)
    defined = {d.label for d in doc.definitions}
    # No orphan: every unprotected marker has a definition, every definition is cited, no bare [N] left.
    for m in doc.markers:
        assert m.kind == "footnote", f"bare marker left: {m.text}"
        if m.label.lower() not in DEFAULT_PROTECTED:
            assert m.label in defined, f"orphan {m.text} in {result.text!r}"
    for d in doc.definitions:
        if d.label.lower() not in DEFAULT_PROTECTED:
            assert any(m.label == d.label for m in doc.markers), f"unused definition [^{d.label}]"
    # Prose words are never rewritten.
    assert prose_signature(result.text) == prose_signature(text)
    # The counts are the statuses of the rows; nothing is verified against nothing.
    report = result.report.to_json()
    statuses = Counter(c["status"] for c in report["citations"])
    for status in ("verified", "substituted", "dropped", "out_of_range", "protected"):
        assert report[status] == statuses[status]
    assert report["retitled"] <= report["verified"]
    if not sources:
        assert report["verified"] == report["substituted"] == 0
    # Idempotent: the finished text is already reconciled and tidy.
    assert reconcile(result.text, sources).text == result.text
    assert tidy(result.text) == result.text


@SETTINGS
@given(draft())
def test_tidy_is_idempotent_and_keeps_prose(text):
    once = tidy(text)
    assert tidy(once) == once
    assert prose_signature(once) == prose_signature(text)


PIECES = ["word", "Text.", "[^a]", "[^1]", "[^b c]", "`code [^a]`", "``x [^1] y``", "[link [2]](http://x.y/z)",
          "[t [^a]](http://x.y)", "![img [^c]](i.png)", "**bold [^1]**", "\\[^a]", "<span>[^d]</span>", "^[inline [^a]]",
          "[3]", "[^", "]", "[^e]:", "*", "_x_", "<http://a.b/[^1]>", "&amp;", "[^a][^1]", "~~s[^f]~~"]
LINE_PREFIX = ["", "", "", "> ", "- ", "1. ", "    ", "# ", "[^a]: ", "[^1]: ", "| ", "```\n"]


@st.composite
def random_markdown(draw):
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        prefix = draw(st.sampled_from(LINE_PREFIX))
        body = " ".join(draw(st.lists(st.sampled_from(PIECES), min_size=0, max_size=6)))
        lines.append(prefix + body)
        if draw(st.booleans()):
            lines.append("")
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None)
@given(random_markdown())
def test_parser_agrees_with_the_plugin_token_stream(text):
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.use(footnote_plugin, always_match_refs=True, move_to_end=False)
    labels, inline_notes, defs = plugin_view(md, text)
    doc = parse(text)
    assert Counter(m.label for m in doc.markers if m.kind == "footnote") + Counter(doc.link_text_refs) == labels
    assert len(doc.inline_notes) == inline_notes
    assert Counter(d.label for d in doc.definitions) == defs
    assert doc.unmapped == 0
    for m in doc.markers:
        assert doc.source[m.start : m.end] == m.text
