"""The house definition format and the two Sources sections."""

from __future__ import annotations

from sourcedesk.core.citations import format_definition, render_sources_sections
from sourcedesk.core.citations.house import HouseDefinition, escape_text
from sourcedesk.core.citations.parse import parse
from sourcedesk.core.domain.models import Source


def test_full_definition():
    src = {
        "url": "https://www.nats.io/about/",
        "title": "About NATS",
        "date": "2024-03-05",
        "last_updated": "2024-04-01",
    }
    assert format_definition("3", src) == (
        "[^3]: 2024, Mar 05. [About NATS](https://www.nats.io/about/). nats.io. "
        "Published: 2024-03-05 · Updated: 2024-04-01"
    )


def test_parts_are_omitted_when_unknown():
    assert format_definition("1", {"url": "https://a.org/x", "title": ""}) == "[^1]: [a.org/x](https://a.org/x). a.org."
    assert format_definition("2", {"url": "https://a.org", "title": "T", "last_updated": "2023-11"}) == (
        "[^2]: 2023, Nov. [T](https://a.org). a.org. Updated: 2023-11"
    )
    assert format_definition(
        "E1", Source(provider="exa", url="https://a.org", title="T", published_date="2023-11-16T01:36:32.547Z")
    ) == ("[^E1]: 2023, Nov 16. [T](https://a.org). a.org. Published: 2023-11-16")


def test_untrusted_title_and_url_cannot_inject_markup():
    src = {"url": "https://evil.org/a b)(c", "title": "x](javascript:alert(1)) *bold* <b>\n[^9]: fake"}
    line = format_definition("1", src)
    assert "\n" not in line
    doc = parse(line + "\n")
    assert [d.label for d in doc.definitions] == ["1"] and doc.markers == []
    assert escape_text("[a]*b*_c_`d`<e>") == r"\[a\]\*b\*\_c\_\`d\`\<e\>"


def test_local_files_render_as_code():
    assert format_definition("V1", {"url": "file:///memo/notes.md", "title": "Call notes"}) == (
        "[^V1]: Call notes. `file:///memo/notes.md`."
    )


def test_sections_group_and_sort():
    defs: list[HouseDefinition | tuple[str, object]] = [
        HouseDefinition("E2", _s("https://e2.org")),
        ("10", {"url": "https://ten.org", "title": "Ten"}),
        HouseDefinition("2", _s("https://two.org")),
        HouseDefinition("V1", _s("https://v.org")),
        HouseDefinition("E10", _s("https://e10.org")),
    ]
    text = render_sources_sections(defs)
    assert text == (
        "## Sources (web search)\n\n[^2]: [x](https://two.org). two.org.\n[^10]: [Ten](https://ten.org). ten.org.\n\n"
        "## Sources (retrieved)\n\n[^E2]: [x](https://e2.org). e2.org.\n[^E10]: [x](https://e10.org). e10.org.\n"
        "[^V1]: [x](https://v.org). v.org.\n"
    )
    assert render_sources_sections([]) == ""
    only_retrieved = render_sources_sections([HouseDefinition("E1", _s("https://e.org"))])
    assert only_retrieved.startswith("## Sources (retrieved)") and "web search" not in only_retrieved


def _s(url):
    from sourcedesk.core.citations.ground import coerce_source

    return coerce_source({"url": url, "title": "x"}, "t")
