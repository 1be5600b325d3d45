"""The one URL normaliser and host extractor (sourcedesk.core.net.urls), checked against WHATWG's URL tests."""

from __future__ import annotations

import json
import re

import pytest

from sourcedesk.core.net.urls import canonical_host, host_of, normalise_url, same_url, strip_www
from tests.conftest import TESTDATA

_C0_AND_SPACE = "".join(chr(i) for i in range(0x21))
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$", re.DOTALL)


def _whatwg_cases() -> list[dict]:
    data = json.loads((TESTDATA / "url" / "urltestdata.json").read_text(encoding="utf-8"))
    return [case for case in data if isinstance(case, dict)]  # strings are section comments


def _resolved_against_base(case: dict) -> bool:
    """host_of takes no base URL, so cases whose answer comes from ``base`` do not apply.

    Per WHATWG, input without a scheme is relative; so is ``http:foo`` (zero or one
    slash after the colon) when the base has the same scheme."""
    text = case["input"].strip(_C0_AND_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    scheme = _SCHEME.match(text)
    if not scheme:
        return True
    base = (case.get("base") or "").lower()
    same_scheme = base.startswith(scheme.group(1).lower() + ":")
    return same_scheme and not re.match(r"^[/\\]{2}", scheme.group(2))


ALL_CASES = _whatwg_cases()
# Only http(s): the product only ever handles web pages (other schemes — file:, data:,
# mailto:, made-up ones — have no host in the sense of "which site is this").
HTTP_CASES = [c for c in ALL_CASES if "failure" not in c and c["protocol"] in ("http:", "https:")]
HOST_CASES = [c for c in HTTP_CASES if not _resolved_against_base(c)]
HTTP_FAILURES = [
    c
    for c in ALL_CASES
    if "failure" in c and not c.get("base") and re.match(r"^https?://", c["input"].strip(_C0_AND_SPACE), re.I)
]


def _fails_only_for_its_port(url: str) -> bool:
    authority = re.match(r"^https?://([^/?#]*)", url.strip(_C0_AND_SPACE), re.I).group(1).rpartition("@")[2]
    if authority.startswith("["):
        return False
    host, _, port = authority.partition(":")
    return bool(host) and bool(port) and not port.isdigit()


# host_of answers "which site"; it does not validate ports. Failures caused only by
# a bad port are therefore out of scope for it.
HOST_FAILURES = [c for c in HTTP_FAILURES if not _fails_only_for_its_port(c["input"])]


def _expected_host(hostname: str) -> str | None:
    """WHATWG's hostname in our canonical form.

    Two deliberate differences: a trailing dot is dropped (``canonical_host`` does
    that), and a host with empty labels (``.``, ``..``, ``foo.09..``) — which WHATWG
    accepts but no site can have — is no host at all. IPv6 keeps its brackets on both sides."""
    if not hostname.startswith("[") and "" in hostname.removesuffix(".").split("."):
        return None
    expected = canonical_host(hostname)
    assert expected is not None, hostname
    return expected


def test_whatwg_case_counts():
    assert len(ALL_CASES) == 869
    assert sum("failure" in c for c in ALL_CASES) == 273
    assert len(HTTP_CASES) == 229
    assert len(HOST_CASES) == 168  # 61 http(s) cases resolve against their base URL
    assert len(HTTP_FAILURES) == 145
    assert len(HOST_FAILURES) == 144  # "http://foo:-80/" fails only for its port
    assert sum(_expected_host(c["hostname"]) is None for c in HOST_CASES) == 3  # empty labels


@pytest.mark.parametrize("case", HOST_CASES, ids=[repr(c["input"]) for c in HOST_CASES])
def test_host_of_agrees_with_whatwg(case):
    assert host_of(case["input"]) == _expected_host(case["hostname"])


@pytest.mark.parametrize("case", HOST_FAILURES, ids=[repr(c["input"]) for c in HOST_FAILURES])
def test_host_of_refuses_urls_browsers_refuse(case):
    assert host_of(case["input"]) is None


@pytest.mark.parametrize(
    ("given", "host"),
    [
        ("https://Docs.Cresta.com/x", "docs.cresta.com"),
        ("cresta.com", "cresta.com"),
        ("cresta.com/about", "cresta.com"),
        ("//cresta.com/about", "cresta.com"),
        ("CRESTA.COM.", "cresta.com"),
        ("https://user:pw@cresta.com:8443/", "cresta.com"),
        ("https://Bücher.de/", "xn--bcher-kva.de"),
        ("https://0x7f.1/", "127.0.0.1"),  # numeric spellings of loopback are loopback
        ("http://2130706433/", "127.0.0.1"),
        ("http://[::1]:8080/", "[::1]"),
        ("::1", "[::1]"),
        ("  https://cresta.com/\n", "cresta.com"),
        ("", None),
        (None, None),
        ("https://", None),
        ("http://exa mple.com/", None),
        ("https://1.2.3.4.5/", None),
    ],
)
def test_host_of_direct_cases(given, host):
    assert host_of(given) == host


def test_strip_www_only_strips_a_leading_www_label():
    assert strip_www("www.cresta.com") == "cresta.com"
    assert strip_www("wwwcresta.com") == "wwwcresta.com"
    assert strip_www("docs.www.cresta.com") == "docs.www.cresta.com"


@pytest.mark.parametrize(
    "variant",
    [
        "https://cresta.com/blog/post",
        "http://cresta.com/blog/post",
        "https://www.cresta.com/blog/post",
        "https://cresta.com/blog/post/",
        "HTTPS://CRESTA.COM/blog/post",
        "https://cresta.com/blog/post#section-2",
        "https://cresta.com/blog/post?utm_source=x&utm_medium=y",
        "https://cresta.com/blog/post?UTM_Campaign=z&gclid=abc&fbclid=q",
        "cresta.com/blog/post",
        "https://cresta.com:443/blog/post",
        "https://cresta.com./blog/post",
    ],
)
def test_normalise_url_makes_the_same_page_equal(variant):
    assert normalise_url(variant) == "cresta.com/blog/post"
    assert same_url(variant, "https://cresta.com/blog/post")


def test_normalise_url_keeps_what_identifies_a_document():
    assert not same_url("https://cresta.com/blog/a", "https://cresta.com/blog/b")
    assert not same_url("https://cresta.com/Blog", "https://cresta.com/blog")  # paths are case-sensitive
    assert not same_url("https://cresta.com/p?id=1", "https://cresta.com/p?id=2")
    assert not same_url("https://docs.cresta.com/x", "https://cresta.com/x")
    assert not same_url("https://cresta.com:8080/x", "https://cresta.com/x")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://example.org/%7Euser/page", "https://example.org/~user/page"),  # unreserved escape
        ("https://example.org/caf%c3%a9", "https://example.org/café"),  # lower-case escape, raw UTF-8
        ("https://example.org/caf%C3%A9", "https://example.org/caf%c3%a9"),
        ("https://en.wikipedia.org/wiki/NATS_(company)", "https://en.wikipedia.org/wiki/NATS_%28company%29"),
        ("https://example.org/a%20b", "https://example.org/a b"),
        ("https://example.org/100%", "https://example.org/100%25"),  # a stray % is a literal percent
    ],
)
def test_normalise_url_treats_equivalent_path_escapes_as_one_page(a, b):
    assert same_url(a, b), (normalise_url(a), normalise_url(b))


def test_normalise_url_keeps_escaped_delimiters_distinct():
    assert not same_url("https://example.org/a%2Fb", "https://example.org/a/b")  # %2F is not a segment break
    assert not same_url("https://example.org/a%3Fb", "https://example.org/a?b")


def test_normalise_url_sorts_query_parameters():
    # servers read parameters by name: the same page whichever order a writer typed them in
    assert normalise_url("https://cresta.com/s?b=2&utm_source=x&a=1") == "cresta.com/s?a=1&b=2"
    assert same_url("https://cresta.com/s?b=2&a=1", "https://cresta.com/s?a=1&b=2")
    assert not same_url("https://cresta.com/s?a=1&b=2", "https://cresta.com/s?a=1&b=3")


@pytest.mark.parametrize(
    "variant",
    [
        "https://m.techbriefs.io/2023/lumora",
        "https://mobile.techbriefs.io/2023/lumora",
        "https://amp.techbriefs.io/2023/lumora",
        "https://techbriefs.io/2023/lumora/amp",
        "https://techbriefs.io/2023/lumora/amp/",
        "https://techbriefs.io/2023/lumora?amp=1",
        "https://techbriefs.io/2023/lumora?amp",
        "https://www.techbriefs.io/2023/lumora?outputType=amp",
        "https://user:pw@techbriefs.io/2023/lumora#top",
    ],
)
def test_mobile_amp_and_credentialed_variants_are_the_page_itself(variant):
    assert same_url(variant, "https://techbriefs.io/2023/lumora")


def test_a_page_about_amp_is_not_an_amp_variant():
    assert not same_url("https://techbriefs.io/amp-explained", "https://techbriefs.io/explained")
    assert not same_url("https://techbriefs.io/a?amp=0", "https://techbriefs.io/a")
    assert not same_url("https://m.com/a", "https://com/a")


def test_normalise_url_root_and_bare_host_agree():
    assert normalise_url("https://www.cresta.com/") == normalise_url("cresta.com") == "cresta.com"


def test_local_file_urls_stay_distinct():
    from sourcedesk.core.net.urls import normalise_url

    assert normalise_url("file:notes/x.md") != normalise_url("file:other/x.md")
    assert normalise_url("file:a.md") != normalise_url("file:b.md")
    assert normalise_url("file:notes/x.md#part") == "file:notes/x.md"


def test_a_plain_url_is_normalised_without_the_escaping_pass(monkeypatch):
    """Every URL of a new draft is normalised once: a path with nothing to escape and no query
    skips percent-encoding and query parsing (the same key, a fraction of the work)."""
    import sourcedesk.core.net.urls as urls

    normalise_url.cache_clear()

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a plain URL needs no escaping or query parsing")

    monkeypatch.setattr(urls, "quote", refuse)
    monkeypatch.setattr(urls, "parse_qsl", refuse)
    assert normalise_url("https://www.Invented-7.example.net//reports/2024/q3-results/") == (
        "invented-7.example.net/reports/2024/q3-results"
    )
    monkeypatch.undo()
    normalise_url.cache_clear()
    assert normalise_url("https://x.org/caf%C3%A9?b=2&utm_source=z&a=1") == "x.org/caf%C3%A9?a=1&b=2"


@pytest.mark.parametrize("host", ["Docs.Cresta.COM.", "a-1.example.net", "x" * 63 + ".io", "site7.example.org"])
def test_an_ordinary_host_name_is_canonical_without_the_address_checks(monkeypatch, host):
    """A host of letters, digits and hyphens whose last label starts with a letter can be no IPv4
    address and has no label to check: it is canonical at once, lower-cased, trailing dot gone."""
    import sourcedesk.core.net.urls as urls

    def refuse(_host: str) -> None:
        raise AssertionError("an ordinary host name needs no IPv4 parsing")

    monkeypatch.setattr(urls, "_parse_ipv4", refuse)
    assert canonical_host(host) == host.rstrip(".").lower()


@pytest.mark.parametrize(
    ("host", "canonical"),
    [("0x7f.1", "127.0.0.1"), ("1.2.3.4", "1.2.3.4"), ("a.1", None), ("x" * 64 + ".io", None), ("xn--", None)],
)
def test_hosts_that_are_not_ordinary_names_are_still_checked(host, canonical):
    assert canonical_host(host) == canonical


def test_an_http_url_without_query_or_fragment_is_split_without_the_general_parser(monkeypatch):
    import sourcedesk.core.net.urls as urls

    normalise_url.cache_clear()

    def refuse(_url: str) -> None:
        raise AssertionError("a plain http(s) URL needs no general URL parser")

    monkeypatch.setattr(urls, "urlsplit", refuse)
    assert normalise_url("HTTPS://Site7.Example.org:443/page/7/") == "site7.example.org/page/7"
    assert normalise_url("http://site7.example.org:8080") == "site7.example.org:8080"
    monkeypatch.undo()
    normalise_url.cache_clear()
    assert normalise_url("https://site7.example.org/page?b=1#top") == "site7.example.org/page?b=1"
    assert normalise_url("http://[::1]:8080/x") == "[::1]:8080/x"
