"""No unretrieved URL anywhere in a section, not just in its citations: a link in the prose
reaches the reader as surely as a footnote does.

The reconciler checks citations; a writer also puts URLs in inline links
``[text](url)``, autolinks ``<https://…>``, bare URLs in prose, link reference
definitions ``[ref]: url`` (and their usages ``[text][ref]``), raw HTML, and
inside the analyst's protected definitions (``[^internal]: https://…``). This
module finds each of them with the reconciler's own parser — so code spans and
code blocks are never touched — and keeps a URL only when it is in the ground
truth (``allowed``, the reconciler's lookup: same normaliser, rejected domains
excluded). Otherwise:

* an inline or reference link becomes its link text (the words are prose and
  stay); an image becomes its alt text;
* an autolink or bare URL is removed with its leading space, together with a
  pair of brackets, quotes or emphasis it leaves empty; URLs separated only by
  spaces or separators (``,`` ``;`` ``|`` …) go as one; a paragraph, list item or
  heading left with nothing goes with its line;
* a reference definition line is removed (its usages become their text);
* raw HTML (inline tags and HTML blocks) is read with a real HTML tokenizer
  (``html_links``): an attribute carrying an unretrieved URL is removed whole, the
  tag's text stays; a bare URL in the text between tags loses its characters;
* a draft's YAML front matter loses any unretrieved URL written in it;
* only http(s) links survive: a link or image whose destination is anything else
  (``javascript:``, ``vbscript:``, ``data:``, ``file:``, ``mailto:``, a relative path —
  also when the parser declined it as a link and left ``[x](javascript:…)`` as text a
  renderer may still link) becomes its text, and a raw HTML event handler, ``srcdoc``
  or a URL attribute holding no web URL is removed (``html_links``).

A link to a retrieved page is rewritten to the exact URL retrieval returned
(``exact``): a writer's variant — reordered query, ``m.``/AMP page, tracking
parameters, ``user:password@`` — never reaches the note.

``strip_remaining`` is the last resort after everything else: any unretrieved
URL still in the text outside code loses its characters, whatever holds it.

Perplexity-style ``[N](url)`` links are citations (``parse`` makes them bare
markers with a URL): they are left to the reconciler, as are the reference
definitions such a link goes through, and the writer's own footnote definitions
(their URL is the citation's written URL; the reconciler rebuilds them).
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Callable, Set

from markdown_it.common.utils import normalizeReference

from sourcedesk.core.citations.bare_urls import comparable, find_bare_urls
from sourcedesk.core.citations.html_links import screen_html, unsafe_attributes
from sourcedesk.core.citations.parse import InlineBlock, ParsedDoc, citation_link_label, is_web_url
from sourcedesk.core.citations.removed_links import LinkScreen, RemovedLink
from sourcedesk.core.citations.rewrite import Edit, apply_edits, removal_edit
from sourcedesk.core.citations.scan import Span
from sourcedesk.core.citations.web_urls import find_web_urls, may_hold_url

_RELEVANT = frozenset({"backticks", "footnote_ref", "footnote_inline", "html_inline", "autolink", "link", "image"})
_PAIRS = {"(": ")", "[": "]", "<": ">", '"': '"', "'": "'", "“": "”", "‘": "’", "*": "*", "_": "_", "~": "~"}
_SEPARATOR = re.compile(r"[\s,;|/·•–—-]*")
_HWS = " \t"
_REF_LABEL = re.compile(r"\s*(?:>\s*)*\[([^\]]*)\]:")
# A link written as text: ``[text](destination)``, ``![alt](destination)`` (one level of parentheses inside).
_DECLINED_LINK = re.compile(
    r"!?\[(?P<text>[^\[\]\n]{0,500})\]\((?P<dest>\s*<?[^()\s]{1,2000}(?:\([^()\s]{0,200}\)[^()\s]{0,200})*>?)(?:\s+\"[^\"\n]{0,200}\")?\s*\)"
)
# An autolink the parser declined (``<javascript:alert(1)>``, ``<file:///etc/passwd>``): a scheme, then no space.
_DECLINED_AUTOLINK = re.compile(r"<(?P<dest>[a-zA-Z][a-zA-Z0-9+.\-]{1,31}:[^<>\s]{0,2000})>")
_CITATION_LIKE = re.compile(r"\^?[A-Za-z]?\d{1,3}")
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]{0,31}:")
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")


def reference_label(content: str, span: Span) -> str | None:
    """The normalised reference label a link span went through; None for an inline link."""
    if span.rule != "link" or span.label_end is None:
        return None
    le = span.label_end
    if span.end == le + 1 or (span.end == le + 3 and content.startswith("[]", le + 1)):
        return normalizeReference(content[span.start + 1 : le])
    if content.startswith("[", le + 1) and span.end > le + 2:
        return normalizeReference(content[le + 2 : span.end - 1])
    return None


def citation_references(doc: ParsedDoc) -> set[str]:
    """Reference labels that ``[N]``-citation links go through (the reconciler removes those definitions)."""
    out = set()
    for block in doc.blocks:
        for s in block.spans:
            if s.rule == "link" and not s.nested and citation_link_label(block.content, s) is not None:
                label = reference_label(block.content, s)
                if label is not None:
                    out.add(label)
    return out


Exact = Callable[[str], str | None]


def _html_edits(
    source: str, start: int, end: int, allowed: Callable[[str], bool], exact: Exact | None, screen: LinkScreen
) -> list[Edit]:
    """Screen the HTML in ``source[start:end]``: attributes by the tokenizer, bare URLs in its text."""
    edits: list[Edit] = []
    fragment = source[start:end]
    for change in screen_html(fragment, allowed, exact):
        edits.append(Edit(start + change.start, start + change.end, change.text))
        if change.kind in ("handler", "scheme"):  # refused attributes: named by kind, counted
            names = ", ".join(change.removed[:3])
            screen.removed.append(RemovedLink(names, str(change.count), change.kind, position=start + change.start))
            continue
        for url in change.removed:
            screen.removed.append(RemovedLink(url, kind=change.kind, position=start + change.start))
    if not may_hold_url(fragment):
        return edits  # no URL can be written in its text
    taken = sorted((edit.start, edit.end) for edit in edits)
    starts = [x for x, _ in taken]
    for a, b in find_bare_urls(source, start, end):
        k = bisect_right(starts, a) - 1  # the edit starting last at or before the URL (edits never overlap)
        if k >= 0 and a < taken[k][1]:
            continue
        url = comparable(source[a:b])
        if not allowed(url):
            edits.append(Edit(a, b, ""))
            screen.removed.append(RemovedLink(url, kind="html", position=a))
        elif exact is not None and (to := exact(url)) is not None and to != source[a:b]:
            edits.append(Edit(a, b, html.escape(to, quote=False)))  # the URL retrieval returned, never a variant
    return edits


def _front_matter(
    doc: ParsedDoc, allowed: Callable[[str], bool], screen: LinkScreen, exact: Exact | None = None
) -> None:
    """A draft's YAML front matter is text a renderer may show or a tool may follow: no unretrieved URL in
    it, and a retrieved one as retrieval returned it."""
    if doc.front_matter is None:
        return
    start, end = doc.line_span(*doc.front_matter)
    for a, b in find_web_urls(doc.source, start, end):
        url = comparable(doc.source[a:b])
        if not allowed(url):
            screen.edits.append(Edit(a, b, ""))
            screen.removed.append(RemovedLink(url, kind="front matter", position=a))
        elif exact is not None and (to := exact(url)) is not None and to != doc.source[a:b]:
            screen.edits.append(Edit(a, b, to))


def screen_links(
    doc: ParsedDoc,
    allowed: Callable[[str], bool],
    *,
    skip_blocks: Set[int] = frozenset(),
    skip_lines: Set[int] = frozenset(),
    exact: Exact | None = None,
) -> LinkScreen:
    """Edits that take every unretrieved web URL out of ``doc`` (see the module docstring).

    ``skip_blocks``/``skip_lines`` are left alone (definitions the reconciler rebuilds, lines it deletes).
    ``exact(url)`` is the URL retrieval returned for a retrieved page: links to it are rewritten to it."""
    screen = LinkScreen()
    gone = _references(doc, allowed, screen, skip_lines, exact)
    for a, b in doc.html_blocks:
        if not any(ln in skip_lines for ln in range(a, b)):
            start, end = doc.line_span(a, b)
            screen.edits += _html_edits(doc.source, start, end, allowed, exact, screen)
    _front_matter(doc, allowed, screen, exact)
    shared: set[int] | None = None
    for bi, block in enumerate(doc.blocks):
        if bi in skip_blocks or block.line in skip_lines or block.html or not _may_hold_link(block):
            continue
        if shared is None:
            shared = _shared_lines(doc)
        owner = doc.definitions[block.definition].label if block.definition is not None else None
        exclusive = not (shared & set(range(block.line, block.line_end)))
        _BlockScreen(doc, block, allowed, screen, owner, gone, skip_lines, exact).run(exclusive)
    screen.removed.sort(key=lambda r: r.position)
    return screen


def strip_remaining(doc: ParsedDoc, allowed: Callable[[str], bool]) -> LinkScreen:
    """The last resort, whatever holds it: an unretrieved URL still in the text outside code loses its
    characters (for text whose structure an edit changed, e.g. a line that became a reference definition)."""
    screen = LinkScreen()
    opaque = [doc.line_span(a, b) for a, b in doc.code_blocks]
    for block in doc.blocks:
        opaque += [(block.src_start(s.start), block.src_end(s.end)) for s in block.spans if s.rule == "backticks"]
    for a, b in find_bare_urls(doc.source):
        url = comparable(doc.source[a:b])
        if not allowed(url) and not any(x <= a < y for x, y in opaque):
            screen.edits.append(Edit(a, b, ""))
            screen.removed.append(RemovedLink(url, kind="bare", position=a))
    return screen


def _references(
    doc: ParsedDoc, allowed: Callable[[str], bool], screen: LinkScreen, skip_lines: Set[int], exact: Exact | None = None
) -> set[str]:
    """Screen reference definitions; the labels whose definition line goes (its warning covers its links)."""
    gone: set[str] = set()
    citing = citation_references(doc) if doc.references else set()
    for ref in doc.references:
        lines = range(ref.line_start, ref.line_end)
        if not ref.href.strip() or any(ln in skip_lines for ln in lines):
            continue
        start, end = doc.line_span(ref.line_start, ref.line_end)
        if not is_web_url(ref.href):  # mailto:, a relative path …: only http(s) links survive
            written = _REF_LABEL.match(doc.source, start)
            screen.lines.update(lines)
            screen.removed.append(
                RemovedLink(ref.href, written.group(1) if written else ref.label, "nonweb", position=start)
            )
            if not ref.duplicate:
                gone.add(ref.label)
            continue
        if not allowed(ref.href):
            if ref.label in citing and not ref.duplicate:
                continue  # a citation goes through it: the reconciler decides it and removes the line
            written = _REF_LABEL.match(doc.source, start)
            label = written.group(1) if written else ref.label
            screen.lines.update(lines)
            screen.removed.append(RemovedLink(ref.href, label, "reference", position=start))
            if not ref.duplicate:
                gone.add(ref.label)
            continue
        to = exact(ref.href) if exact is not None else None
        if to is not None and to != ref.href and ref.label not in citing:
            at = doc.source.find(ref.href, start, end)
            if at >= 0:
                screen.edits.append(Edit(at, at + len(ref.href), _destination(to)))
        for s, e in find_bare_urls(doc.source, start, end):  # a URL in the title
            url = comparable(doc.source[s:e])
            if not allowed(url) and not ref.href.startswith(url):
                screen.edits.append(Edit(s, e, ""))
                screen.removed.append(RemovedLink(url, kind="bare", position=s))
    return gone


def _destination(url: str) -> str:
    """A URL as a markdown link destination (angle brackets when it holds spaces or parentheses)."""
    if any(ch in url for ch in " ()<>"):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


def _shared_lines(doc: ParsedDoc) -> set[int]:
    """Source lines holding more than one inline block (table rows): never deleted for one block."""
    seen: dict[int, int] = {}
    for block in doc.blocks:
        for ln in range(block.line, max(block.line_end, block.line + 1)):
            seen[ln] = seen.get(ln, 0) + 1
    return {ln for ln, n in seen.items() if n > 1}


def _may_hold_link(block: InlineBlock) -> bool:
    """Whether a URL can be in the block (a reference link's URL is not in its text): a cheap test
    that lets most prose blocks be skipped."""
    c = block.content
    return (
        "//" in c
        or ":/" in c
        or "](" in c  # a link the parser declined ([x](javascript:…)) is still text to screen
        or ("<" in c and ("=" in c or ":" in c))  # so is a tag or an autolink left as text (<javascript:…>)
        or ":\\" in c
        or "www." in c.lower()
        or any(s.rule in ("link", "image", "html_inline", "autolink") for s in block.spans)
    )


def _tree(spans: list[Span]) -> dict[int | None, list[Span]]:
    """Children of each span (by id) and the top-level spans (key None), by containment."""
    children: dict[int | None, list[Span]] = {None: []}
    stack: list[Span] = []
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        while stack and stack[-1].end <= s.start:
            stack.pop()
        parent = stack[-1] if stack and s.end <= stack[-1].end else None
        children.setdefault(id(parent) if parent is not None else None, []).append(s)
        stack.append(s)
    return children


class _BlockScreen:
    def __init__(
        self,
        doc: ParsedDoc,
        block: InlineBlock,
        allowed: Callable[[str], bool],
        screen: LinkScreen,
        owner: str | None,
        gone: Set[str] = frozenset(),
        skip_lines: Set[int] = frozenset(),
        exact: Exact | None = None,
    ):
        self.doc, self.block, self.allowed, self.screen, self.owner = doc, block, allowed, screen, owner
        self.exact = exact
        self.gone, self.skip_lines = gone, skip_lines  # reference labels whose definition goes; lines left alone
        self.c = block.content
        self.citations = {doc.markers[i].cstart for i in block.markers if doc.markers[i].url is not None}

    def _skipped(self, cstart: int) -> bool:
        return bool(self.skip_lines) and self.doc.line_of(self.block.src_start(cstart)) in self.skip_lines

    def _record(self, url: str, cstart: int, kind: str, text: str = "") -> None:
        text = " ".join(text.split())
        if len(text) > 80:
            text = text[:79] + "…"
        self.screen.removed.append(RemovedLink(url, text, kind, self.owner, self.block.src_start(cstart)))

    def run(self, exclusive: bool) -> None:
        if not _may_hold_link(self.block):
            return
        tree = _tree([s for s in self.block.spans if s.rule in _RELEVANT])
        edits, removals = self._range(0, len(self.c), tree.get(None, []), tree)
        if not removals:
            self.screen.edits += edits
            return
        ranges = [_enclose(self.c, cs, ce, 0, len(self.c)) for cs, ce in _clusters(self.c, removals)]
        leftover = list(self.c)
        for cs, ce in ranges:
            leftover[cs:ce] = [" "] * (ce - cs)
        if exclusive and self.block.definition is None and not self.block.cell and not "".join(leftover).strip():
            self.screen.lines.update(range(self.block.line, max(self.block.line_end, self.block.line + 1)))
            return
        # an unlinked link right after a removal is its text, not its "[": glue against that
        starts = {e.start: e.text for e in edits}
        self.screen.edits += edits + [
            removal_edit(self.block, cs, ce, starts.get(self.block.src_start(ce))) for cs, ce in ranges
        ]

    def _range(
        self, lo: int, hi: int, children: list[Span], tree: dict[int | None, list[Span]]
    ) -> tuple[list[Edit], list[tuple[int, int]]]:
        """Edits (source offsets) and removals (content ranges) for content [lo, hi)."""
        c, block = self.c, self.block
        edits: list[Edit] = []
        removals: list[tuple[int, int]] = []
        gaps, pos = [], lo
        for s in children:
            gaps.append((pos, s.start))
            pos = s.end
            if s.rule in ("backticks", "footnote_ref") or self._skipped(s.start):
                continue
            if s.rule == "html_inline":
                if "=" not in c[s.start : s.end] and not may_hold_url(c[s.start : s.end]):
                    continue  # <b>, </p>: no attribute and no URL, nothing to screen
                a0, b0 = block.src_start(s.start), block.src_end(s.end)
                if self.doc.source[a0:b0] == c[s.start : s.end]:  # a tag on one line: screen it in place
                    local = LinkScreen()
                    edits += _html_edits(self.doc.source, a0, b0, self.allowed, self.exact, local)
                    for removed in local.removed:
                        self._record(removed.url, s.start, removed.kind, removed.text)
                elif unsafe_attributes(c[s.start : s.end]):  # a tag over several lines that runs script: all of it
                    removals.append((s.start, s.end))
                    self._record("tag's", s.start, "handler")
                else:
                    for a, b in find_web_urls(c, s.start, s.end):
                        url = comparable(c[a:b])
                        if not self.allowed(url):
                            edits.append(Edit(block.src_start(a), block.src_end(b), ""))
                            self._record(url, a, "html")
            elif s.rule == "autolink":
                if is_web_url(s.href) and not self.allowed(s.href or ""):
                    removals.append((s.start, s.end))
                    self._record(s.href or "", s.start, "autolink")
                elif is_web_url(s.href):
                    edits += self._exact(s.start + 1, s.end - 1, s.href or "")
            elif s.rule == "footnote_inline":
                inner, inner_removals = self._range(s.start + 2, s.end - 1, tree.get(id(s), []), tree)
                edits += inner + self._nested_removals(inner_removals, s.start + 2, s.end - 1)
            elif s.rule in ("link", "image"):
                edits_, removal = self._link(s, tree)
                edits += edits_
                removals += removal
        gaps.append((pos, hi))
        for a0, b0 in gaps:
            gap_edits, gap_removals = self._gap(a0, b0)
            edits += gap_edits
            removals += gap_removals
        removals.sort()
        return edits, removals

    def _gap(self, a0: int, b0: int) -> tuple[list[Edit], list[tuple[int, int]]]:
        """Text between spans: links the parser declined, tag-like text the parser left as text, bare URLs."""
        c = self.c
        covered: list[tuple[int, int]] = []  # declined links, replaced whole: nothing inside is edited again
        edits = self._declined_links(a0, b0, covered)
        edits += self._tag_like_text(a0, b0, covered)
        removals: list[tuple[int, int]] = []
        for a, b in find_bare_urls(c, a0, b0):
            url = comparable(c[a:b])
            if self._skipped(a) or any(x < b and a < y for x, y in covered):
                continue
            if not self.allowed(url):
                removals.append((a, b))
                self._record(url, a, "bare")
            elif self.block.definition is None:
                edits += self._exact(a, b, url)
        return edits, removals

    def _tag_like_text(self, lo: int, hi: int, covered: list[tuple[int, int]]) -> list[Edit]:
        """A tag the parser left as text (``<img src=x onerror=…`` with no ``>``): another renderer, or the
        HTML that follows it in a note, may still make it a tag, so it loses its handlers and non-web URLs."""
        c = self.c
        if "<" not in c[lo:hi] or "=" not in c[lo:hi] or self._skipped(lo):
            return []
        fragment = c[lo:hi]
        edits: list[Edit] = []
        for change in screen_html(fragment, lambda url: True):
            a, b = lo + change.start, lo + change.end
            if not change.removed or any(x < b and a < y for x, y in covered):
                continue
            edits.append(Edit(self.block.src_start(a), self.block.src_end(b), ""))
            if change.kind in ("handler", "scheme"):
                self._record(", ".join(change.removed[:3]), a, change.kind, str(change.count))
            else:
                for url in change.removed:
                    self._record(url, a, change.kind)
        return edits

    def _declined_links(self, lo: int, hi: int, covered: list[tuple[int, int]]) -> list[Edit]:
        """``[x](javascript:…)``, ``![a](data:…)``, ``<javascript:…>``: links the parser declined (a script
        or data scheme) and left as text, which another renderer may still link. A link becomes its
        text, an autolink its address without the brackets (plain text no renderer links)."""
        c = self.c
        edits: list[Edit] = []
        found = _DECLINED_LINK.finditer(c, lo, hi) if "](" in c[lo:hi] else iter(())
        autolinks = _DECLINED_AUTOLINK.finditer(c, lo, hi) if "<" in c[lo:hi] else iter(())
        for m, text in [*((m, m.group("text")) for m in found), *((m, m.group("dest")) for m in autolinks)]:
            if self._skipped(m.start()) or any(x < m.end() and m.start() < y for x, y in covered):
                continue
            dest = comparable(m.group("dest")).translate(_TAB_OR_NEWLINE).strip().lstrip("<").rstrip(">")
            if not _SCHEME.match(dest) or is_web_url(dest):
                continue
            covered.append((m.start(), m.end()))
            edits.append(Edit(self.block.src_start(m.start()), self.block.src_end(m.end()), text))
            self._record(dest, m.start(), "nonweb", text)
        return edits

    def _exact(self, a: int, b: int, url: str) -> list[Edit]:
        """Content [a, b) holds the retrieved ``url``: an edit pointing it at the exact URL retrieval returned."""
        to = self.exact(url) if self.exact is not None else None
        if to is None or to == url or to == self.c[a:b]:
            return []
        return [Edit(self.block.src_start(a), self.block.src_end(b), to)]

    def _link(self, s: Span, tree: dict[int | None, list[Span]]) -> tuple[list[Edit], list[tuple[int, int]]]:
        c, block = self.c, self.block
        if s.label_end is None or (s.rule == "link" and s.start in self.citations):
            return [], []  # a [N](url) citation: the reconciler's
        la, lb = s.start + (2 if s.rule == "image" else 1), s.label_end
        inner, inner_removals = self._range(la, lb, tree.get(id(s), []), tree)
        inner += self._nested_removals(inner_removals, la, lb)
        href = s.href or ""
        nonweb = bool(href.strip()) and not is_web_url(href)
        bad = nonweb or (is_web_url(href) and not self.allowed(href))
        if not bad:  # a URL in the title makes the whole link go
            bad = any(
                not self.allowed(url)
                for url in (comparable(c[a:b]) for a, b in find_bare_urls(c, lb + 1, s.end))
                if not href.startswith(url)
            )
        if not bad:
            if is_web_url(href) and block.definition is None:  # a link's or an image's destination
                inner += self._link_destination(s, href)
            return inner, []
        start, end = block.src_start(la), block.src_end(lb)
        text = apply_edits(self.doc.source[start:end], [Edit(e.start - start, e.end - start, e.text) for e in inner])
        if reference_label(c, s) not in self.gone:  # else its definition's warning speaks for it
            self._record(href, s.start, "nonweb" if nonweb else s.rule, text)
        if not text.strip() or (nonweb and _CITATION_LIKE.fullmatch(text)):
            return [], [(s.start, s.end)]  # nothing to keep; "[2]" pointing at a file is a citation to nothing
        return [Edit(block.src_start(s.start), block.src_end(s.end), text)], []

    def _link_destination(self, s: Span, href: str) -> list[Edit]:
        """An inline link to a retrieved page: its destination becomes the exact URL retrieval returned."""
        to = self.exact(href) if self.exact is not None else None
        if to is None or to == href or s.label_end is None:
            return []
        c = self.c
        i = s.label_end + 1
        if not c.startswith("(", i):
            return []  # a reference link: its definition is rewritten instead
        i += 1
        while i < s.end and c[i] in " \t\n":
            i += 1
        if c.startswith("<", i):
            j = c.find(">", i)
            if j < 0 or j >= s.end:
                return []
            a, b = i, j + 1
        else:
            j, depth = i, 0
            while j < s.end:
                ch = c[j]
                if ch == "\\" and j + 1 < s.end:
                    j += 2
                    continue
                if ch in " \t\n" or (ch == ")" and depth == 0):
                    break
                depth += 1 if ch == "(" else -1 if ch == ")" else 0
                j += 1
            a, b = i, j
        if a == b:
            return []
        return [Edit(self.block.src_start(a), self.block.src_end(b), _destination(to))]

    def _nested_removals(self, removals: list[tuple[int, int]], lo: int, hi: int) -> list[Edit]:
        """Removals inside link text or an inline note: the URL and its leading space, nothing outside."""
        edits = []
        for cs, ce in _clusters(self.c, removals):
            cs, ce = _enclose(self.c, cs, ce, lo, hi)
            while cs > lo and self.c[cs - 1] in _HWS:
                cs -= 1
            edits.append(Edit(self.block.src_start(cs), self.block.src_end(ce), ""))
        return edits


def _clusters(c: str, removals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Removals separated only by spaces or separators (``a, b``) go as one range."""
    out: list[tuple[int, int]] = []
    for cs, ce in sorted(removals):
        if out and _SEPARATOR.fullmatch(c, out[-1][1], cs):
            out[-1] = (out[-1][0], max(out[-1][1], ce))
        else:
            out.append((cs, ce))
    return out


def _enclose(c: str, cs: int, ce: int, lo: int, hi: int) -> tuple[int, int]:
    """Widen a removal over brackets, quotes or emphasis it would leave empty: ``(url)``, ``**url**``."""
    while True:
        left, right = cs, ce
        while left > lo and c[left - 1] in _HWS:
            left -= 1
        while right < hi and c[right] in _HWS:
            right += 1
        if left > lo and right < hi and _PAIRS.get(c[left - 1]) == c[right]:
            cs, ce = left - 1, right + 1
        else:
            return cs, ce
