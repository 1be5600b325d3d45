"""Only http(s) links to retrieved sources survive, and raw HTML never runs script (issue 20, case 8).

A writer's answer carried ``[x](javascript:alert(1))``, ``data:``, ``vbscript:``,
``file:///etc/passwd``, ``<a href="jav&#x09;ascript:…">`` and ``<img src=x onerror=…>``
into the note and memo.md. Each one now becomes its text (a link) or loses the attribute
(raw HTML); the warning names what kind of thing went, never its payload; and screening
is linear in the answer (1 MB of unterminated HTML is as quick as 1 MB of prose).
"""

from __future__ import annotations

import pytest

from sourcedesk.core.citations import reconcile
from sourcedesk.core.citations.html_tokens import tokenize
from sourcedesk.core.citations.parse import parse
from sourcedesk.core.citations.screening import Screened, screen_body, screen_draft

SOURCES = [
    {"marker": "E1", "url": "https://acme-robotics.io/about", "title": "About", "snippet": "Acme builds robots."}
]
PAYLOADS = ("javascript", "vbscript", "data:text", "file:", "alert(", "onerror", "onclick", "onmouseover", "srcdoc")


def _run(draft: str):
    result = reconcile(draft, SOURCES)
    for payload in PAYLOADS:
        assert payload not in result.text, (payload, result.text)
    return result


@pytest.mark.parametrize(
    ("link", "kept"),
    [
        ("[x](javascript:alert(1))", "x"),
        ("[x](JavaScript:alert(1))", "x"),
        ("[x](&#106;avascript:alert(1))", "x"),
        ("[d](data:text/html;base64,PHNjcmlwdD4=)", "d"),
        ("![chart](data:image/png;base64,iVBORw0KGgo=)", "chart"),
        ("[v](vbscript:msgbox(1))", "v"),
        ("[f](file:///etc/passwd)", "f"),
        ("[m](mailto:ceo@acme-robotics.io)", "m"),
        ("[r](/about)", "r"),
        ('[t](<javascript:alert(1)> "title")', "t"),
    ],
)
def test_a_markdown_link_that_is_not_http_becomes_its_text(link, kept):
    result = _run(f"Acme builds robots. [^E1] See {link} now.\n")
    assert result.body == f"Acme builds robots. [^E1] See {kept} now.\n"
    assert any("only http(s) links to retrieved sources are kept" in w.message for w in result.report.warnings)


@pytest.mark.parametrize(
    ("autolink", "kept"),
    [
        ("<javascript:alert(1)>", "javascript:alert(1)"),
        ("<data:text/html,x>", "data:text/html,x"),
        ("<file:///etc/passwd>", "file:///etc/passwd"),
        ("<VBScript:msgbox(1)>", "VBScript:msgbox(1)"),
    ],
)
def test_an_autolink_the_parser_declined_loses_its_brackets_so_no_renderer_links_it(autolink, kept):
    """markdown-it leaves ``<javascript:…>`` as text; a renderer without its scheme check makes it a link."""
    result = reconcile(f"Acme builds robots. [^E1] See {autolink} now.\n", SOURCES)
    assert result.body == f"Acme builds robots. [^E1] See {kept} now.\n"
    assert any("only http(s) links to retrieved sources are kept" in w.message for w in result.report.warnings)


@pytest.mark.xfail(
    strict=True,
    reason="not done: the tag inside is an html_inline span, which splits the declined link across two gaps",
)
def test_a_declined_link_whose_address_holds_a_tag_becomes_its_text():
    result = reconcile("Acme builds robots. [^E1] See [x](data:text/html,<b>x</b>) now.\n", SOURCES)
    assert "data:" not in result.body, result.body


def test_a_reference_definition_that_is_not_http_goes_and_its_links_become_text():
    result = _run("Acme builds robots. [^E1] Mail [the CEO][ceo].\n\n[ceo]: mailto:ceo@acme-robotics.io\n")
    assert result.body == "Acme builds robots. [^E1] Mail the CEO.\n"


@pytest.mark.parametrize(
    ("html", "kept"),
    [
        ('<a href="jav&#x09;ascript:alert(2)">tab</a>', "<a>tab</a>"),
        ('<a href="javascript&colon;alert(2)">colon</a>', "<a>colon</a>"),
        ('<img src=x onerror="alert(3)">', "<img>"),
        ('<div onmouseover="alert(4)">hover</div>', "<div>hover</div>"),
        (
            '<a href="https://acme-robotics.io/about" onclick="alert(5)">ok</a>',
            '<a href="https://acme-robotics.io/about">ok</a>',
        ),
        ('<iframe srcdoc="&lt;script&gt;x&lt;/script&gt;"></iframe>', "<iframe></iframe>"),
        ('<meta http-equiv="refresh" content="0; url=javascript:alert(6)">', '<meta http-equiv="refresh">'),
        ('<svg><a xlink:href="javascript:alert(7)">s</a></svg>', "<svg><a>s</a></svg>"),
        ('<form action="data:text/html,x"><button>Go</button></form>', "<form><button>Go</button></form>"),
    ],
)
def test_raw_html_loses_handlers_and_every_url_attribute_that_is_not_http(html, kept):
    result = _run(f"Acme builds robots. [^E1]\n\n{html}\n")
    assert result.body == f"Acme builds robots. [^E1]\n\n{kept}\n"


def test_inline_html_is_screened_the_same_way_and_handlers_are_not_counted_as_links():
    result = _run('Acme <img src="x" onerror="alert(1)">builds robots. [^E1]\n')
    assert result.body == "Acme <img>builds robots. [^E1]\n"
    messages = [w.message for w in result.report.warnings]
    assert "removed a raw HTML onerror attribute: raw HTML never runs script" in messages
    assert "removed a raw HTML src attribute: only http(s) links to retrieved sources are kept" in messages
    assert result.report.links_removed == 1  # the src; the handler is script, not a link


def test_an_unterminated_tag_is_still_screened_and_what_follows_it_too():
    result = _run('Acme builds robots. [^E1]\n\n<img src=x onerror="alert(1)"\n')
    assert "onerror" not in result.text


SHAPES = ["<!--", "<a href=", '<a href="', "<img src=x onerror=alert(1) ", "[x](javascript:", "<b>x</b>", "</", "<!x"]


def _screening_reads(text: str, monkeypatch) -> int:
    """Characters link screening hands to its scanners (the tokenizer, the URL finders, a re-parse)."""
    read = [0]

    def counted(module, name):
        real = getattr(module, name)

        def wrapper(source, *args, **kwargs):
            text = source if isinstance(source, str) else source.source
            if name.startswith("find_"):  # (text, start, end): a window of the text
                start = args[0] if args else 0
                end = args[1] if len(args) > 1 and args[1] is not None else len(text)
                read[0] += end - start
            else:
                read[0] += len(text)
            return real(source, *args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    import sourcedesk.core.citations.html_links as html_links
    import sourcedesk.core.citations.links as links
    import sourcedesk.core.citations.screening as screening

    for module, name in ((html_links, "tokenize"), (html_links, "start_tag"), (links, "find_bare_urls")):
        counted(module, name)
    counted(links, "find_web_urls")
    counted(screening, "parse")
    doc = parse(text)
    screened = Screened()
    out = screen_draft(doc, frozenset(), lambda url: "acme-robotics.io" in url, screened)
    screen_body(out.source, frozenset(), lambda url: "acme-robotics.io" in url, screened)
    monkeypatch.undo()
    return read[0]


@pytest.mark.parametrize(
    "unit", SHAPES, ids=["comment", "href", "quoted", "handler", "declined-link", "tags", "end-tag", "bogus"]
)
def test_link_screening_reads_the_answer_a_bounded_number_of_times_whatever_its_shape(unit, monkeypatch):
    """Counted, not timed (a shared machine makes seconds meaningless): screening twice the text reads
    twice as much, and never more than a few passes over it. Python's html.parser re-read an
    unterminated tag's whole buffer on every feed: 1 MB of ``<a href=`` took minutes."""
    small = "Acme builds robots. [^E1]\n\n" + unit * (100_000 // len(unit))
    large = "Acme builds robots. [^E1]\n\n" + unit * (200_000 // len(unit))
    read_small, read_large = _screening_reads(small, monkeypatch), _screening_reads(large, monkeypatch)
    assert read_large <= 2.1 * read_small + 1_000, (read_small, read_large)
    assert read_large <= 8 * len(large), (read_large, len(large))


def test_the_tokenizer_moves_forward_every_step_whatever_the_shape():
    """Counted, not timed: each step of the tokenizer consumes input, so twice the input is twice the steps."""
    for unit in ("<!--", "<a href=", '<a href="', "<a", "<b>x</b>", "<!", "<?", "</3", "<script>", "<title><a "):
        small, large = tokenize(unit * 20_000), tokenize(unit * 40_000)
        assert large.steps <= 2 * small.steps + 2, unit
        assert large.steps <= len(unit * 40_000) + 1, unit


def test_the_tokenizer_follows_the_html_standard_where_it_decides_what_is_a_tag():
    tokens = tokenize('a <b x=1 y="2" z> c <!-- <i> --> <script>if (a<b) {}</script> <3 </p> e')
    assert [t.name for t in tokens.tags] == ["b", "script"]
    assert [(a.name, a.raw_value) for a in tokens.tags[0].attributes] == [("x", "1"), ("y", "2"), ("z", "")]
    text = "".join(
        'a <b x=1 y="2" z> c <!-- <i> --> <script>if (a<b) {}</script> <3 </p> e'[a:b] for a, b in tokens.text
    )
    assert "<i>" not in text and "if (a" not in text and "<3" in text
    open_comment = tokenize("x <!-- never closed <a href=//evil.io>")
    assert open_comment.tags == [] and open_comment.text == [(0, 2)]
