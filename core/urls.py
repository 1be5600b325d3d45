"""The product's single URL normaliser and host extractor.

Every comparison of URLs (reconciliation, dedup on export, exclusion checks,
frozen-set lookups) goes through ``normalise_url`` so that two parts of the
product can never disagree about whether two citations are the same page.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, urlencode, urlsplit

import idna

# Query parameters that identify a campaign or a click, never a document.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "yclid",
        "igshid",
        "ref_src",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "spm",
    }
)
_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def _split(url: str):
    url = url.strip()
    if not _SCHEME_RE.match(url):
        url = "http://" + url.lstrip("/")
    return urlsplit(url)


def canonical_host(host: str) -> str | None:
    """Lower-case, IDNA-encode and strip a trailing dot; None when not a usable host."""
    host = host.strip().rstrip(".").lower()
    if not host or any(c in host for c in " /\\@?#"):
        return None
    if host.startswith("[") and host.endswith("]"):
        try:
            return "[" + str(ipaddress.IPv6Address(host[1:-1])) + "]"
        except ValueError:
            return None
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    if host.isascii():
        labels = host.split(".")
        if any(not label or len(label) > 63 for label in labels):
            return None
        return host
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError:
        return None


def host_of(url_or_host: str | None) -> str | None:
    """The canonical host of a URL or bare host name ("https://Docs.Cresta.com/x" → "docs.cresta.com")."""
    if not url_or_host:
        return None
    try:
        parts = _split(url_or_host)
        host = parts.hostname
    except ValueError:
        return None
    if host is None:
        return None
    if parts.netloc.startswith("[") or ":" in host:
        return canonical_host("[" + host + "]")
    return canonical_host(host)


def strip_www(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


def _is_tracking(key: str) -> bool:
    k = key.lower()
    return k.startswith("utm_") or k in TRACKING_PARAMS


def normalise_url(url: str) -> str:
    """Comparison key for a URL: scheme-insensitive, no ``www.``, no trailing slash,
    no tracking parameters, no fragment. Path case is kept (paths are case-sensitive)."""
    try:
        parts = _split(url)
        host = host_of(url) or (parts.hostname or "")
    except ValueError:
        return url.strip()
    host = strip_www(host)
    port = ""
    try:
        if parts.port and parts.port not in (80, 443):
            port = f":{parts.port}"
    except ValueError:
        pass
    path = re.sub(r"/{2,}", "/", parts.path or "").rstrip("/")
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(k)]
    q = ("?" + urlencode(query)) if query else ""
    return f"{host}{port}{path}{q}"


def same_url(a: str, b: str) -> bool:
    return normalise_url(a) == normalise_url(b)
