"""URLs that must be refused rather than repaired: they would be read as another address.

Two ways a URL from outside (an Exa result, a writer's search result or annotation, a
note being checked) can mean something other than what it seems to mean:

* **Characters a URL never carries raw.** A CR/LF, tab, control, bidi or invisible
  character, or a lone surrogate. Cleaning them out would *repair* the URL into a
  different one (``…/a\\r\\nSet-Cookie: x=1`` became ``…/a Set-Cookie: x=1``;
  ``…/\\u202egpj.exe`` shows as ``…/exe.jpg``), so such a URL is refused instead.
* **Parsers that disagree about the host.** The product decides which site a URL
  names with the WHATWG rules browsers use (``sourcedesk.core.net.urls.host_of``); the
  HTTP client connects to the host *its* parser finds. ``http://93.184.216.34\\@127.0.0.1/``
  is the public address to a browser (``\\`` is a path separator) and loopback to
  httpx (``\\`` is part of the user name): a guard that vets one host while the client
  connects to the other is no guard. A URL on which the two disagree is refused
  everywhere — it reaches neither a frozen set nor a note, and ``check-urls`` never
  requests it, with ``--allow-private`` or without.
"""

from __future__ import annotations

import re
from functools import lru_cache

import httpx

from sourcedesk.core.net.urls import canonical_host, host_of

# CR, LF, tab and every other control, bidi control, invisible character or lone surrogate.
_NEVER_IN_A_URL = re.compile(
    "[\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff\\ud800-\\udfff]"
)


def client_host(url: str) -> str | None:
    """The host httpx would connect to for ``url``, canonicalised like ``host_of``'s (None when
    httpx cannot read a host in it: it would connect nowhere)."""
    try:
        host = httpx.URL(url.strip()).host
    except (httpx.InvalidURL, ValueError, TypeError, UnicodeError):
        return None
    if not host:
        return None
    return canonical_host(f"[{host}]" if ":" in host else host)


@lru_cache(maxsize=4096)
def host_disagreement(url: str) -> str | None:
    """Why browsers and the HTTP client would reach different hosts for ``url``, or None."""
    theirs = client_host(url)
    if theirs is None:
        return None
    ours = host_of(url)
    if ours == theirs:
        return None
    return (
        f"browsers read its host as {ours or 'nothing usable'} but the HTTP client would connect to {theirs}: "
        "a URL two parsers read differently is refused"
    )


def why_unusable(url: str) -> str | None:
    """Why ``url`` is refused as it stands (raw control or invisible characters, or hosts that
    two parsers read differently), or None when it may be used."""
    bad = _NEVER_IN_A_URL.search(url.strip())
    if bad is not None:
        return f"it carries the character U+{ord(bad.group()):04X}, which would turn it into another address"
    return host_disagreement(url)


__all__ = ["client_host", "host_disagreement", "why_unusable"]
