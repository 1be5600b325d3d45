"""Which site a result belongs to: registrable domains, entity pins, exclusions.

Exa's ``includeDomains`` is a substring match (pinning ``cresta.com`` returns
``alcresta.com`` and ``cresta.com.au``), so every result is re-checked here on
label boundaries. Registrable domains come from the Public Suffix List snapshot
bundled with ``publicsuffixlist`` — never downloaded, so a run is reproducible
and offline.

Which PSL sections: the *whole* list, ICANN and private entries alike. The
private section names shared hosting suffixes (``github.io``, ``herokuapp.com``,
``blogspot.com``) under which every tenant is a different owner: a pin on
``github.io`` would admit every project on GitHub Pages, which is exactly the
namesake problem pins exist to prevent, so such a pin is refused like ``co.uk``;
and ``nats-io.github.io`` is its own registrable domain. The PSL's own test
suite (``tests.txt``) is written against the full list too. Unknown TLDs follow
the PSL's implicit ``*`` rule (``example.example`` → ``example.example``).

Hosts and pins are accepted as bare names or URLs, any case, with a trailing
dot, in Unicode or Punycode; all parsing goes through ``sourcedesk.core.net.urls``.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import re
from collections.abc import Iterable

import idna
from publicsuffixlist import PublicSuffixList

from sourcedesk.core.net.urls import host_of


@functools.cache
def _psl() -> PublicSuffixList:
    """Built from the bundled snapshot (no source argument → the packaged file) on first use:
    building it takes tens of milliseconds that a command which never looks at a host
    (``sourcedesk --help``) should not pay."""
    return PublicSuffixList(accept_unknown=True, only_icann=False)


_HOST_LABEL_RE = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$")


class PinRefused(ValueError):
    """A pin that cannot restrict retrieval to one organisation (public suffix, not a host)."""


def _is_ip(host: str) -> bool:
    if host.startswith("["):
        return True
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def _drop_www(host: str) -> str:
    """``www.`` is insignificant — unless what remains is a public suffix (``www.ck`` is a site)."""
    if host.startswith("www.") and not _psl().is_public(host[4:]):
        return host[4:]
    return host


def _in_callers_script(result: str, given: str) -> str:
    """Answer each ``xn--`` label in Unicode when the caller wrote that label in Unicode.

    The PSL test suite expects ``食狮.com.cn`` back for a Unicode input and
    ``xn--85x722f.com.cn`` for a Punycode one; comparisons inside this module
    always use the Punycode form."""
    if given.isascii():
        return result
    lowered = given.lower()
    labels = []
    for label in result.split("."):
        if label.startswith("xn--") and label not in lowered:
            try:
                label = idna.decode(label)
            except (idna.IDNAError, UnicodeError):
                with contextlib.suppress(
                    UnicodeError
                ):  # symbol labels IDNA2008 refuses but sourcedesk.core.net.urls accepts
                    label = label[4:].encode("ascii").decode("punycode")
        labels.append(label)
    return ".".join(labels)


def registrable_domain(host: str | None) -> str | None:
    """The eTLD+1 ("docs.cresta.com" → "cresta.com", "cresta.com.au" → "cresta.com.au").

    None for public suffixes themselves ("co.uk", "com"), single-label names
    ("localhost"), IP addresses (they have no registrable domain) and anything
    that is not a host (empty, leading dot, empty labels)."""
    if not host:
        return None
    canonical = host_of(host)
    if not canonical or _is_ip(canonical):
        return None
    found = _psl().privatesuffix(canonical)
    return _in_callers_script(found, host) if found else None


def is_public_suffix(host: str | None) -> bool:
    """True for "com", "co.uk", "github.io", an unknown single label such as "localhost"."""
    canonical = host_of(host) if host else None
    if not canonical or _is_ip(canonical):
        return False
    return _psl().is_public(canonical)


def _pin_host(pin: str | None) -> str:
    """Canonical pin host, or PinRefused saying why it cannot be one."""
    shown = repr(pin)
    host = host_of(pin) if isinstance(pin, str) else None
    if not host:
        raise PinRefused(
            f"pin {shown} is not a host name (no leading dot, spaces or empty labels); "
            "write it like 'cresta.com' or 'https://cresta.com'"
        )
    if _is_ip(host):
        return host
    if not all(_HOST_LABEL_RE.match(label) for label in host.split(".")):
        raise PinRefused(
            f"pin {shown} is not a plain host name (no wildcards or leading dots); "
            "a pin already covers every subdomain, so write it like 'cresta.com'"
        )
    if _psl().is_public(host, accept_unknown=False):
        raise PinRefused(
            f"pin {shown} is a public suffix: it would admit every site registered under it; "
            "pin the organisation's own domain instead (e.g. 'example.co.uk')"
        )
    if _psl().is_public(host):
        raise PinRefused(
            f"pin {shown} is a bare name under no known top-level domain, not a registrable domain; "
            "pin the organisation's own domain instead (e.g. 'cresta.com')"
        )
    return _drop_www(host)


def validate_pin(pin: str) -> str:
    """The canonical host a pin stands for ("https://WWW.Cresta.com/" → "cresta.com").

    Raises PinRefused (a ValueError) for public suffixes and for things that are no host."""
    return _pin_host(pin)


def host_matches_pin(host_or_url: str | None, pin: str | None) -> bool:
    """True iff the host is the pinned host or a true subdomain of it (label boundary).

    "docs.cresta.com" matches "cresta.com"; "alcresta.com", "cresta.com.au" do not.
    A refused pin matches nothing: a refused pin must never widen retrieval."""
    try:
        pinned = _pin_host(pin)
    except PinRefused:
        return False
    host = host_of(host_or_url) if host_or_url else None
    if not host:
        return False
    if _is_ip(pinned) or _is_ip(host):
        return host == pinned
    host = _drop_www(host)
    return host == pinned or host.endswith("." + pinned)


def host_matches_any(host_or_url: str | None, pins: Iterable[str]) -> str | None:
    """The first pin (as given) the host matches, or None."""
    for pin in pins:
        if host_matches_pin(host_or_url, pin):
            return pin
    return None


def _exclusion_host(rule: str) -> str | None:
    """Exclusions tolerate "*.example.com" and ".example.com" — widening a removal is safe."""
    text = rule.strip()
    if text.startswith("*."):
        text = text[2:]
    return host_of(text.lstrip("."))


def excluded_by(host_or_url: str | None, domains: Iterable[str]) -> str | None:
    """The first exclusion rule (as given) whose domain is the host or a parent of it.

    Unlike pins, an exclusion may be a public suffix: an analyst who rejects a
    whole suffix gets exactly that (removing too much is visible and reversible;
    admitting too much is the failure this product exists to prevent)."""
    host = host_of(host_or_url) if host_or_url else None
    if not host:
        return None
    host = _drop_www(host)
    for rule in domains:
        excluded = _exclusion_host(rule) if isinstance(rule, str) else None
        if not excluded:
            continue
        if _is_ip(excluded) or _is_ip(host):
            if host == excluded:
                return rule
            continue
        excluded = _drop_www(excluded)
        if host == excluded or host.endswith("." + excluded):
            return rule
    return None
