"""Registrable domains, entity pins and exclusions (sourcedesk.core.net.hosts)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcedesk.core.net.hosts import (
    PinRefused,
    excluded_by,
    host_matches_any,
    host_matches_pin,
    is_public_suffix,
    registrable_domain,
    validate_pin,
)
from tests.conftest import TESTDATA


def _psl_cases() -> list[tuple[str | None, str | None]]:
    cases = []
    for line in (TESTDATA / "psl" / "tests.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        given_text, expected = line.split()
        cases.append((None if given_text == "null" else given_text, None if expected == "null" else expected))
    return cases


PSL_CASES = _psl_cases()
REGISTRABLE_PAIRS = [(host, expected) for host, expected in PSL_CASES if expected is not None]
# Inputs the PSL says have no registrable domain because they *are* a public suffix
# (the null input and leading-dot inputs are not host names at all).
PUBLIC_SUFFIX_INPUTS = [host for host, expected in PSL_CASES if expected is None and host and not host.startswith(".")]


def test_psl_case_count_matches_readme():
    assert len(PSL_CASES) == 78
    assert len(REGISTRABLE_PAIRS) == 52
    assert len(PUBLIC_SUFFIX_INPUTS) == 21  # + 1 null input + 4 leading-dot inputs = 26 nulls


@pytest.mark.parametrize(("host", "expected"), PSL_CASES, ids=[repr(c[0]) for c in PSL_CASES])
def test_registrable_domain_psl_suite(host, expected):
    assert registrable_domain(host) == expected


@pytest.mark.parametrize(("host", "pin"), REGISTRABLE_PAIRS, ids=[c[0] for c in REGISTRABLE_PAIRS])
def test_psl_pair_host_matches_its_registrable_domain_as_pin(host, pin):
    assert validate_pin(pin)  # every registrable domain is a usable pin
    assert host_matches_pin(host, pin)
    assert host_matches_any(host, ["nats.io", pin]) == pin


@pytest.mark.parametrize(("host", "pin"), REGISTRABLE_PAIRS, ids=[c[0] for c in REGISTRABLE_PAIRS])
def test_psl_pair_prefixed_lookalike_does_not_match(host, pin):
    assert not host_matches_pin("x" + pin, pin)
    assert not host_matches_pin("https://x" + pin + "/about", pin)


@pytest.mark.parametrize(("host", "pin"), REGISTRABLE_PAIRS, ids=[c[0] for c in REGISTRABLE_PAIRS])
def test_psl_pair_public_suffix_above_the_pin_is_refused(host, pin):
    suffix = pin.split(".", 1)[1]
    assert is_public_suffix(suffix)
    with pytest.raises(PinRefused):
        validate_pin(suffix)
    assert not host_matches_pin(host, suffix)


@pytest.mark.parametrize("suffix", PUBLIC_SUFFIX_INPUTS)
def test_psl_public_suffix_inputs_are_refused_pins(suffix):
    assert is_public_suffix(suffix)
    with pytest.raises(PinRefused):
        validate_pin(suffix)
    assert not host_matches_pin("example." + suffix, suffix)
    assert not host_matches_pin(suffix, suffix)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("docs.cresta.com", "cresta.com"),
        ("https://Docs.Cresta.com/product?x=1", "cresta.com"),
        ("cresta.com.au", "cresta.com.au"),
        ("www.cresta.com.au", "cresta.com.au"),
        ("grupocresta.com.gt", "grupocresta.com.gt"),
        ("co.uk", None),
        ("bbc.co.uk.", "bbc.co.uk"),
        ("localhost", None),
        ("127.0.0.1", None),
        ("http://[::1]:8080/", None),
        ("nats-io.github.io", "nats-io.github.io"),  # private PSL section: each tenant is its own site
        ("", None),
    ],
)
def test_registrable_domain_of_hosts_and_urls(host, expected):
    assert registrable_domain(host) == expected


CRESTA_IMPOSTORS = [
    "alcresta.com",
    "codecresta.com",
    "cresta.com.au",
    "grupocresta.com.gt",
    "ridgecresta.com",
    "cresta.co",
    "cresta.com.evil.net",
    "https://notcresta.com/cresta.com",
    "https://cresta.com.mx/",
]


@pytest.mark.parametrize("impostor", CRESTA_IMPOSTORS)
def test_cresta_impostors_do_not_match_the_pin(impostor):
    assert not host_matches_pin(impostor, "cresta.com")
    assert not host_matches_pin(impostor, "https://www.cresta.com/")
    assert host_matches_any(impostor, ["cresta.com"]) is None


@pytest.mark.parametrize(
    "host",
    [
        "cresta.com",
        "docs.cresta.com",
        "www.cresta.com",
        "https://WWW.CRESTA.COM/blog/post",
        "https://a.b.docs.cresta.com:8443/x#y",
        "cresta.com.",
        "http://user@cresta.com/",
    ],
)
def test_cresta_own_hosts_match(host):
    assert host_matches_pin(host, "cresta.com")
    assert host_matches_pin(host, "https://www.Cresta.com./")


def test_www_is_insignificant_on_either_side():
    assert host_matches_pin("www.cresta.com", "cresta.com")
    assert host_matches_pin("cresta.com", "www.cresta.com")
    assert host_matches_pin("docs.cresta.com", "www.cresta.com")
    assert validate_pin("https://WWW.Cresta.com/") == "cresta.com"
    # ...but a www label that is itself the registrable part stays (www.ck is a site, ck a suffix)
    assert validate_pin("www.ck") == "www.ck"
    assert host_matches_pin("www.www.ck", "www.ck")
    assert not host_matches_pin("other.ck", "www.ck")


def test_subdomain_pin_does_not_match_its_parent_or_siblings():
    assert host_matches_pin("docs.cresta.com", "docs.cresta.com")
    assert host_matches_pin("v2.docs.cresta.com", "docs.cresta.com")
    assert not host_matches_pin("cresta.com", "docs.cresta.com")
    assert not host_matches_pin("blog.cresta.com", "docs.cresta.com")


def test_nats_pins_admit_nats_and_synadia_but_not_air_traffic_services():
    pins = ["https://nats.io", "synadia.com"]
    assert host_matches_any("https://docs.nats.io/nats-concepts/overview", pins) == "https://nats.io"
    assert host_matches_any("https://www.synadia.com/blog/x", pins) == "synadia.com"
    for namesake in ["https://www.nats.aero/about-us/", "nats.co.uk", "natsholdings.com", "nats.io.example.com"]:
        assert host_matches_any(namesake, pins) is None


def test_kestra_pin_rejects_the_other_kestras():
    assert host_matches_pin("https://kestra.io/docs", "kestra.io")
    assert host_matches_pin("https://blog.kestra.io/", "kestra.io")
    for namesake in ["kestramedical.com", "https://www.kestrafinancial.com/", "kestra.com", "kestra.io.co"]:
        assert not host_matches_pin(namesake, "kestra.io")


def test_idn_hosts_and_pins_in_either_script():
    assert validate_pin("食狮.公司.cn") == "xn--85x722f.xn--55qx5d.cn"
    assert host_matches_pin("https://www.食狮.公司.cn/", "xn--85x722f.xn--55qx5d.cn")
    assert host_matches_pin("www.xn--85x722f.xn--55qx5d.cn", "食狮.公司.cn")
    assert host_matches_pin("https://Bücher.example.de/", "xn--bcher-kva.example.de")
    assert not host_matches_pin("bucher.example.de", "bücher.example.de")
    assert registrable_domain("a.Bücher.de") == "bücher.de"
    assert registrable_domain("a.xn--bcher-kva.de") == "xn--bcher-kva.de"


def test_case_and_trailing_dot_are_insignificant():
    assert host_matches_pin("DOCS.CRESTA.COM.", "Cresta.Com")
    assert validate_pin("CRESTA.COM.") == "cresta.com"
    assert registrable_domain("WWW.BBC.CO.UK.") == "bbc.co.uk"


@pytest.mark.parametrize(
    ("pin", "says"),
    [
        ("co.uk", "public suffix"),
        ("https://co.uk/", "public suffix"),
        ("com", "public suffix"),
        ("github.io", "public suffix"),  # private PSL section: shared hosting
        ("localhost", "registrable domain"),
        ("", "not a host name"),
        ("https://", "not a host name"),
        (".cresta.com", "not a host name"),
        ("*.cresta.com", "wildcards"),
        ("cresta..com", "not a host name"),
    ],
)
def test_unusable_pins_are_refused_with_a_reason(pin, says):
    with pytest.raises(PinRefused) as refused:
        validate_pin(pin)
    assert says in str(refused.value)
    assert isinstance(refused.value, ValueError)
    assert not host_matches_pin("www.cresta.com", pin)


def test_refused_pins_are_skipped_by_host_matches_any():
    assert host_matches_any("bbc.co.uk", ["co.uk", "bbc.co.uk"]) == "bbc.co.uk"
    assert host_matches_any("bbc.co.uk", ["co.uk"]) is None
    assert host_matches_any("bbc.co.uk", []) is None


def test_ip_pins_match_only_the_same_address():
    assert validate_pin("http://127.0.0.1:8080/") == "127.0.0.1"
    assert host_matches_pin("http://127.0.0.1/x", "127.0.0.1")
    assert not host_matches_pin("http://10.127.0.0.1/", "127.0.0.1")
    assert not host_matches_pin("127.0.0.2", "127.0.0.1")


def test_unusable_hosts_match_nothing():
    for host in [None, "", "http://", "not a host"]:
        assert not host_matches_pin(host, "cresta.com")
        assert excluded_by(host, ["cresta.com"]) is None


def test_excluded_by_returns_the_rule_that_matched():
    rules = ["github.com", "*.wikipedia.org", ".medium.com", "www.linkedin.com", "co.uk"]
    assert excluded_by("https://github.com/nats-io/nats-server", rules) == "github.com"
    assert excluded_by("https://gist.github.com/x", rules) == "github.com"
    assert excluded_by("https://en.wikipedia.org/wiki/NATS", rules) == "*.wikipedia.org"
    assert excluded_by("https://wikipedia.org/", rules) == "*.wikipedia.org"
    assert excluded_by("https://blog.medium.com/p", rules) == ".medium.com"
    assert excluded_by("https://linkedin.com/company/synadia", rules) == "www.linkedin.com"
    assert excluded_by("https://www.bbc.co.uk/news", rules) == "co.uk"  # exclusions may be suffixes


def test_excluded_by_respects_label_boundaries():
    rules = ["github.com", "medium.com"]
    for host in ["notgithub.com", "github.com.au", "github.io", "mymedium.com", "medium.co"]:
        assert excluded_by(host, rules) is None


# Labels that are valid LDH host labels (no leading/trailing hyphen, not www).
LABEL = st.from_regex(r"\A[a-z0-9](?:[a-z0-9-]{0,14}[a-z0-9])?\Z").filter(lambda s: s != "www" and s[2:4] != "--")
PINS = st.sampled_from(["cresta.com", "nats.io", "kestra.io", "bbc.co.uk", "synadia.com", "example.com.au"])


@given(st.lists(LABEL, min_size=1, max_size=4), PINS)
def test_property_any_subdomain_of_a_pin_matches(labels, pin):
    host = ".".join(labels) + "." + pin
    assert host_matches_pin(host, pin)
    assert host_matches_pin(f"https://{host.upper()}/path", pin)


@given(st.lists(LABEL, min_size=1, max_size=4), PINS)
def test_property_prefix_without_a_dot_never_matches(labels, pin):
    glued = "".join(labels) + pin
    assert not host_matches_pin(glued, pin)
    assert not host_matches_pin(".".join(labels) + "-" + pin, pin)
