"""The product's single URL normaliser and host extractor.

Every comparison of URLs (reconciliation, dedup on export, exclusion checks,
frozen-set lookups) goes through ``normalise_url`` so that two parts of the
product can never disagree about whether two citations are the same page.

Host extraction follows the WHATWG URL standard where it matters for deciding
*which site* a URL points at (tab/newline removal, backslashes in http(s),
percent-encoded and IDN hosts, the numeric IPv4 forms browsers accept such as
``0x7f.1``): a host that a browser would resolve differently from us would be a
hole in pin, exclusion and private-address checks. The one deliberate
difference: a trailing dot is dropped (``cresta.com.`` is ``cresta.com``).
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlencode, urlsplit

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
OPAQUE_SCHEMES = frozenset({"file", "mailto", "urn", "data", "tel", "doi"})
_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
# "http:example.com" / "https:/example.com": browsers read these as absolute URLs.
_HTTP_PREFIX_RE = re.compile(r"^(https?):[/\\]*", re.IGNORECASE)
# Schemes whose URLs treat "\" like "/" (WHATWG "special" schemes).
_SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_C0_AND_SPACE = "".join(chr(i) for i in range(0x21))
_DROP_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
# WHATWG forbidden domain code points (checked on the ASCII form of the host).
_FORBIDDEN_IN_HOST = frozenset("\x7f #%/:<>?@[\\]^|") | frozenset(chr(i) for i in range(0x20))
_HEX_RE = re.compile(r"^[0-9a-fA-F]*$")
_OCT_RE = re.compile(r"^[0-7]*$")
_DEC_RE = re.compile(r"^[0-9]+$")
# A host name needing no further check: it can be no IPv4 address (its last label starts with a
# letter), nor carry a forbidden character or an empty or over-long label.
_PLAIN_HOST = re.compile(r"(?:[a-z0-9-]{1,63}\.)*[a-z][a-z0-9-]{0,62}")


def _slashes_before_query(rest: str) -> str:
    """In special schemes "\\" is a path separator, but only up to the query/fragment."""
    if "\\" not in rest:
        return rest
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    return rest[:cut].replace("\\", "/") + rest[cut:]


def _prepare(url: str) -> str:
    """An absolute ``scheme://…`` string a standard parser agrees with browsers on."""
    url = url.strip(_C0_AND_SPACE)
    if "\t" in url or "\n" in url or "\r" in url:
        url = url.translate(_DROP_TAB_NEWLINE)
    http = _HTTP_PREFIX_RE.match(url)
    if http:
        return f"{http.group(1).lower()}://{_slashes_before_query(url[http.end() :])}"
    if _SCHEME_RE.match(url):
        scheme, rest = url.split("://", 1)
        if scheme.lower() in _SPECIAL_SCHEMES:
            return f"{scheme}://{_slashes_before_query(rest)}"
        return url
    return "http://" + _slashes_before_query(url).lstrip("/")


def _split(url: str) -> SplitResult:
    prepared = _prepare(url)
    if prepared.startswith(("http://", "https://")) and prepared.isascii() and "?" not in prepared:
        # What urlsplit returns for it, without its general parsing: the host is up to the first
        # "/", the rest is the path (no query; a fragment or an IPv6 host go the long way).
        scheme, _, rest = prepared.partition("://")
        cut = rest.find("/")
        netloc, path = (rest, "") if cut < 0 else (rest[:cut], rest[cut:])
        if "#" not in rest and "[" not in netloc and "]" not in netloc:
            return SplitResult(scheme, netloc, path, "", "")
    return urlsplit(prepared)


def _ipv4_number(part: str) -> int | None:
    """One dotted part in any form browsers accept: decimal, 0x-hex, 0-octal."""
    if part[:2] in ("0x", "0X"):
        digits, radix, pattern = part[2:], 16, _HEX_RE
    elif len(part) > 1 and part[0] == "0":
        digits, radix, pattern = part[1:], 8, _OCT_RE
    else:
        digits, radix, pattern = part, 10, _DEC_RE
    if not part or not pattern.match(digits):
        return None
    return int(digits, radix) if digits else 0


def _parse_ipv4(host: str) -> str | None:
    """WHATWG IPv4 parser; "" when the host ends in a number but is no valid address."""
    parts = host.split(".")
    if not parts[-1] or (not _DEC_RE.match(parts[-1]) and _ipv4_number(parts[-1]) is None):
        return None  # does not end in a number: a domain name
    parsed = [_ipv4_number(p) for p in parts]
    numbers = [n for n in parsed if n is not None]
    if len(parts) > 4 or len(numbers) != len(parsed):
        return ""
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return ""
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return str(ipaddress.IPv4Address(value))


def _to_ascii(host: str) -> str | None:
    """UTS #46 to-ASCII; falls back to plain mapping + Punycode for code points IDNA2008
    disallows but browsers still resolve (e.g. symbol domains)."""
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError:
        pass
    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        return ".".join(
            label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
            for label in mapped.split(".")
        )
    except (idna.IDNAError, UnicodeError):
        return None


def _valid_a_label(label: str) -> bool:
    """An ``xn--`` label must decode to a non-empty, already-mapped Unicode label
    (browsers refuse hosts like ``xn--`` or ``xn--pokxncvks``)."""
    try:
        decoded = label[4:].encode("ascii").decode("punycode")
        return bool(decoded) and not decoded.isascii() and idna.uts46_remap(decoded, std3_rules=False) == decoded
    except (UnicodeError, idna.IDNAError):
        return False


def canonical_host(host: str) -> str | None:
    """Lower-case, IDNA-encode and strip a trailing dot; None when not a usable host.

    Numeric IPv4 spellings (``0x7f.1``, ``2130706433``) become dotted quads, so
    "is this a private address" questions cannot be dodged by re-spelling."""
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        try:
            return "[" + str(ipaddress.IPv6Address(host[1:-1])) + "]"
        except ValueError:
            return None
    if "%" in host:
        host = unquote(host, errors="replace")
    if not host.isascii():
        host = _to_ascii(host) or ""
    host = host.rstrip(".").lower()
    if _PLAIN_HOST.fullmatch(host) and "xn--" not in host:
        return host  # letters, digits and hyphens in labels of 1 to 63, the last one not a number
    if not host or not _FORBIDDEN_IN_HOST.isdisjoint(host):
        return None
    ipv4 = _parse_ipv4(host)
    if ipv4 is not None:
        return ipv4 or None
    labels = host.split(".")
    if any(not label or len(label) > 63 for label in labels):
        return None
    if any(label.startswith("xn--") and not _valid_a_label(label) for label in labels):
        return None
    return host


def _authority_host(prepared: str) -> str:
    """The host part of ``scheme://[userinfo@]host[:port]/…`` (userinfo ends at the last "@")."""
    rest = prepared.split("://", 1)[1] if "://" in prepared else ""
    end = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    hostport = rest[:end].rpartition("@")[2]
    if hostport.startswith("["):
        close = hostport.find("]")
        return hostport[: close + 1] if close > 0 else ""
    return hostport.partition(":")[0]


@lru_cache(maxsize=16384)
def host_of(url_or_host: str | None) -> str | None:
    """The canonical host of a URL or bare host name ("https://Docs.Cresta.com/x" → "docs.cresta.com")."""
    if not url_or_host:
        return None
    bare = url_or_host.strip()
    if ":" in bare and "/" not in bare:
        try:  # a bare IPv6 address without brackets
            return "[" + str(ipaddress.IPv6Address(bare)) + "]"
        except ValueError:
            pass
    host = _authority_host(_prepare(url_or_host))
    return canonical_host(host) if host else None


def strip_www(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


def _is_tracking(key: str) -> bool:
    k = key.lower()
    return k.startswith("utm_") or k in TRACKING_PARAMS


# RFC 3986 unreserved, plus RFC 2396's "mark" characters ( ) ! * ' that servers and
# browsers treat the same escaped or not (Wikipedia's /wiki/NATS_(company)).
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~()!*'")
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
# A path of these characters only (no "%") is its own normal form: nothing to encode or decode.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9/:@!$&'()*+,;=._~-]*")
_REPEATED_SLASHES = re.compile(r"/{2,}")


def _normalise_path(path: str) -> str:
    """RFC 3986 §6.2.2 path equivalence: ``%7E`` is ``~``, ``%c3%a9`` is ``%C3%A9`` is ``é``.

    Non-ASCII and other unsafe characters are percent-encoded (UTF-8), escapes of
    unreserved characters are decoded and the rest are upper-cased — so the same
    page written three ways compares equal, while ``%2F`` stays distinct from ``/``."""
    if _PLAIN_PATH.fullmatch(path):
        return path
    encoded = quote(_STRAY_PERCENT.sub("%25", path), safe="/:@!$&'()*+,;=-._~%")

    def fix(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in _UNRESERVED else "%" + m.group(1).upper()

    return _ESCAPE.sub(fix, encoded)


# Hosts that serve the same page for phones or as an AMP copy: "m.x.com/a" is "x.com/a".
_VARIANT_HOSTS = ("m.", "mobile.", "amp.")
# Query parameters that ask for the AMP rendering of the same page.
_AMP_FLAGS = {"amp": ("", "1", "true", "yes"), "outputtype": ("amp",)}


def _page_host(host: str) -> str:
    """The host without ``www.`` and without a mobile/AMP prefix (``m.``, ``mobile.``, ``amp.``),
    as long as a registrable-looking name remains (``m.com`` stays)."""
    host = strip_www(host)
    for prefix in _VARIANT_HOSTS:
        if host.startswith(prefix) and host.count(".") >= 2:
            return strip_www(host[len(prefix) :])
    return host


def _is_amp_flag(key: str, value: str) -> bool:
    return value.lower() in _AMP_FLAGS.get(key.lower(), ())


@lru_cache(maxsize=16384)
def normalise_url(url: str) -> str:
    """Comparison key for a URL: the page it names, whatever variant was written.

    Scheme-insensitive; no ``www.``, no credentials, no trailing slash, no fragment, no
    tracking parameters; query parameters sorted; the mobile and AMP variants of a page
    (``m.``/``mobile.``/``amp.`` hosts, a trailing ``/amp`` path segment, ``?amp=1``) are
    the page itself. Path case is kept (paths are case-sensitive). Cached: a run compares
    the same few hundred URLs many times.

    Opaque non-web URLs (``file:notes/a.md``, ``mailto:``) have no host to
    canonicalise: they are compared as written, minus any fragment."""
    stripped = url.strip()
    if stripped.split(":", 1)[0].lower() in OPAQUE_SCHEMES:
        return stripped.split("#", 1)[0]
    try:
        parts = _split(url)
        host = host_of(url) or (parts.hostname or "")
    except ValueError:
        return url.strip()
    host = _page_host(host)
    port = ""
    try:
        if parts.port and parts.port not in (80, 443):
            port = f":{parts.port}"
    except ValueError:
        pass
    path = parts.path or ""
    if "//" in path:
        path = _REPEATED_SLASHES.sub("/", path)
    path = path.rstrip("/")
    if path.lower().endswith("/amp"):
        path = path[:-4]
    path = _normalise_path(path)
    query = (
        sorted(
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if not _is_tracking(k) and not _is_amp_flag(k, v)
        )
        if parts.query
        else []
    )
    q = ("?" + urlencode(query)) if query else ""
    return f"{host}{port}{path}{q}"


def same_url(a: str, b: str) -> bool:
    return normalise_url(a) == normalise_url(b)
