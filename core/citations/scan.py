"""markdown-it, instrumented to say WHERE each inline construct sits in the source.

markdown-it-py (with mdit_py_plugins.footnote) decides what is a footnote
reference, a definition, a code span, a link…; its inline tokens carry no
positions, so every inline rule is wrapped: when a rule matches (non-silently)
at the top level of an inline block, the wrapper records the rule's name and the
content range it consumed. Spans recorded inside a link's text are marked
``nested``. The reconciler then knows exactly which characters are prose — the
only place a bare ``[N]`` can be a citation — and which belong to code, links,
autolinks, raw HTML, escapes or entities and must never be touched.

Footnotes are parsed with ``move_to_end=False`` so definitions stay in place with
their line maps (unreferenced ones too), and by default ``always_match_refs=True``:
a writer's ``[^7]`` without a definition is still a citation (an orphan to drop),
not literal text.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

_RECORDER = "_sourcedesk_inline_recorder"
#: Inline rules whose matches are prose: bare ``[N]`` markers may live in them.
PROSE_RULES = frozenset({"text", "newline", "emphasis", "strikethrough", "linkify"})


class Span(NamedTuple):
    """A range of an inline block's content consumed by one inline rule (a named tuple: a draft
    has many, and they are built on every parse)."""

    rule: str  # markdown-it rule name: "footnote_ref", "backticks", "link", ...
    start: int
    end: int
    nested: bool  # inside another construct's text (e.g. a link label)
    label: str | None = None  # footnote_ref label
    href: str | None = None  # link/autolink/image destination, as written (unescaped, not URL-encoded)
    text: str | None = None  # link text / code span content
    label_end: int | None = None  # link/image: content offset of the "]" closing the text (the text starts
    # after "[" / "![")
    in_note: bool = False  # inside an inline note ^[...]


class _Recorder:
    def __init__(self) -> None:
        self.state: StateInline | None = None
        self.depth = 0
        self.spans: list[Span] = []
        self.by_token: dict[int, list[Span]] = {}
        # Inline notes (^[...]) and image alt text are parsed in a fresh StateInline over their
        # own text; such a state is adopted here so what is inside gets block-content offsets.
        self.children: dict[int, tuple[StateInline, tuple[int, int]]] = {}  # id → (state, (offset, base depth))
        self.expect_child: tuple[int, bool] | None = None  # (offset, everything inside is nested)

    def context(self, state: StateInline) -> tuple[int, int] | None:
        """(offset, base depth) when ``state`` is the recorded block or an adopted child, else None.

        A span is ``nested`` when the depth exceeds the base: alt text is adopted with base -1.
        """
        if state is self.state:
            return 0, 0
        entry = self.children.get(id(state))
        if entry is not None and entry[0] is state:
            return entry[1]
        if self.expect_child is not None:
            offset, nested = self.expect_child
            # Keep the state itself: a finished child is freed, and a later child state could
            # otherwise be born at the same id and inherit this one's offset.
            self.children[id(state)] = (state, (offset, -1 if nested else self.depth))
            self.expect_child = None
            return self.children[id(state)][1]
        return None


InlineRule = Callable[[StateInline, bool], bool]


def _wrap(name: str, fn: InlineRule) -> InlineRule:
    def rule(state: StateInline, silent: bool) -> bool:
        rec: _Recorder | None = state.env.get(_RECORDER)
        ctx = None if rec is None or silent else rec.context(state)
        if rec is None or ctx is None:
            return fn(state, silent)
        offset, base = ctx
        start, first_token = state.pos, len(state.tokens)
        if name in ("footnote_inline", "image"):  # "^[" / "![" then the child's text
            rec.expect_child = (offset + start + 2, name == "image" or rec.depth > base)
        rec.depth += 1
        try:
            ok = fn(state, silent)
        finally:
            rec.depth -= 1
            rec.expect_child = None
        if ok:
            span = _span(name, state, start, first_token, nested=rec.depth > base)
            if offset:
                label_end = span.label_end + offset if span.label_end is not None else None
                span = span._replace(
                    start=span.start + offset, end=span.end + offset, label_end=label_end, in_note=base >= 0
                )
            rec.spans.append(span)
        return ok

    return rule


def _label_end(state: StateInline, open_bracket: int) -> int | None:
    """Where the link text that starts at ``open_bracket`` ends (markdown-it's own label parser)."""
    end = state.md.helpers.parseLinkLabel(state, open_bracket, False)
    return end if end >= 0 else None


def _span(name: str, state: StateInline, start: int, first_token: int, nested: bool) -> Span:
    # A rule's first push flushes pending prose as a text token, so look past it.
    pushed = state.tokens[first_token:]
    if name == "footnote_ref" and pushed:
        return Span(name, start, state.pos, nested, label=pushed[-1].meta.get("label"))
    opens = [i for i, t in enumerate(pushed) if t.type == "link_open"]
    if name in ("link", "autolink") and opens:
        head = pushed[opens[0]]
        href = head.attrGet("href")
        text = "".join(t.content for t in pushed[opens[0] + 1 :] if t.type in ("text", "code_inline", "text_special"))
        label_end = _label_end(state, start) if name == "link" else None
        return Span(
            name, start, state.pos, nested, href=str(href) if href is not None else None, text=text, label_end=label_end
        )
    images = [t for t in pushed if t.type == "image"]
    if name == "image" and images:
        src = images[0].attrGet("src")
        return Span(
            name,
            start,
            state.pos,
            nested,
            href=str(src) if src is not None else None,
            text=images[0].content,
            label_end=_label_end(state, start + 1),
        )
    if name == "backticks" and pushed:
        return Span(name, start, state.pos, nested, text=pushed[-1].content)
    return Span(name, start, state.pos, nested)


def _inline_core(state: StateCore) -> None:
    """Replacement for markdown-it's core ``inline`` rule that tags each inline state."""
    rec: _Recorder | None = state.env.get(_RECORDER)
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        istate = StateInline(token.content, state.md, state.env, token.children)
        if rec is not None:
            rec.state, rec.spans, rec.children = istate, [], {}
        state.md.inline.tokenize(istate)
        for rule2 in state.md.inline.ruler2.getRules(""):
            rule2(istate)
        if rec is not None:
            rec.by_token[id(token)] = rec.spans
            rec.state = None


def _identity(url: str) -> str:
    return url


# A footnote label is short ("E12", "note-3"); the plugin looks for its "]" up to the end of
# the paragraph, so "[^" written 30,000 times with no "]" cost 30,000 scans of the rest (minutes).
FOOTNOTE_LABEL_MAX = 256


def _bounded_footnote_ref(fn: InlineRule) -> InlineRule:
    """``footnote_ref`` that gives up on a label longer than ``FOOTNOTE_LABEL_MAX`` (it is text)."""

    def rule(state: StateInline, silent: bool) -> bool:
        src, pos = state.src, state.pos
        if src.startswith("[^", pos):
            stop = min(state.posMax, pos + 3 + FOOTNOTE_LABEL_MAX)
            if src.find("]", pos + 2, stop) < 0:
                return False
        return fn(state, silent)

    return rule


@lru_cache(maxsize=8)
def make_parser(always_match_refs: bool = True, code_blocks: bool = True) -> MarkdownIt:
    """The instrumented parser (CommonMark + GFM tables/strikethrough + footnotes).

    YAML front matter (a note's run record) is one opaque block: its text is never a citation.
    """
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin)
    md.use(footnote_plugin, inline=True, move_to_end=False, always_match_refs=always_match_refs)
    if not code_blocks:
        md.disable("code")
    # Keep link destinations as written: the one URL normaliser (sourcedesk.core.net.urls) compares them.
    md.normalizeLink = _identity  # type: ignore[method-assign]  # markdown-it's documented per-instance hook
    for rule in md.inline.ruler.__rules__:
        if rule.name == "footnote_ref":
            rule.fn = _bounded_footnote_ref(rule.fn)
        if rule.name not in PROSE_RULES:  # prose rules never nest and are not recorded
            rule.fn = _wrap(rule.name, rule.fn)
    md.inline.ruler.__cache__ = None
    md.core.ruler.at("inline", _inline_core)
    return md


def scan(
    src: str, *, always_match_refs: bool = True, code_blocks: bool = True, env: dict[str, Any] | None = None
) -> tuple[list[Token], dict[int, list[Span]]]:
    """Block tokens (inline children filled) and ``{id(inline token): [Span, ...]}``.

    Pass ``env`` to receive markdown-it's environment: ``references`` and
    ``duplicate_refs`` hold the link reference definitions (label, href, title, line map)."""
    md = make_parser(always_match_refs, code_blocks)
    rec = _Recorder()
    env = {} if env is None else env
    env[_RECORDER] = rec
    tokens = md.parse(src, env)
    del env[_RECORDER]
    return tokens, rec.by_token
