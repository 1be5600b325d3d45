"""What a rejected domain may be: a registrable domain, never a public suffix.

A rejection excludes a domain and all of its subdomains from retrieval, so a
rejection of a public suffix (``com``, ``co.uk``) would silently exclude whole
swathes of the web: those are refused, as is anything that is not a host name.
Only the ICANN part of the Public Suffix List counts here: rejecting a
privately-run suffix such as ``blogspot.com`` or ``github.io`` is a sensible
thing for an analyst to do.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache

from publicsuffixlist import PublicSuffixList

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.sources.exclusions import canonical_domain as exclusion_domain

_LABEL_RE = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$")
_EXAMPLE_HINT = "give a registrable domain such as example.com (a URL is fine: its host is used)"


@lru_cache(maxsize=1)
def _icann_suffixes() -> PublicSuffixList:
    # The bundled snapshot only: never fetched.
    return PublicSuffixList(only_icann=True)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


REJECT_CONSEQUENCE = "rejecting it would exclude every site registered under it"


def canonical_domain(text: str, *, consequence: str = REJECT_CONSEQUENCE) -> str:
    """``"https://WWW.Example.com/x"`` → ``"example.com"``; ``UserError`` for junk and public suffixes.

    ``consequence`` finishes the public-suffix message ("rejecting it would …").
    """
    raw = (text or "").strip()
    if not raw or raw in ("*.", "."):
        raise UserError("an empty domain name was given", hint=_EXAMPLE_HINT)
    host = exclusion_domain(raw)  # the same canonical form the exclusion matcher uses
    if not host:
        raise UserError(f"{text.strip()!r} is not a domain name", hint=_EXAMPLE_HINT)
    if _is_ip(host):
        return host
    labels = host.split(".")
    if not all(_LABEL_RE.match(label) for label in labels):
        raise UserError(f"{text.strip()!r} is not a domain name", hint=_EXAMPLE_HINT)
    if _icann_suffixes().is_public(host, accept_unknown=False):
        raise UserError(f"{host!r} is a public suffix: {consequence}", hint=_EXAMPLE_HINT)
    if len(labels) < 2:
        raise UserError(f"{host!r} is not a full domain name (it has no dot)", hint=_EXAMPLE_HINT)
    return host


__all__ = ["REJECT_CONSEQUENCE", "canonical_domain"]
