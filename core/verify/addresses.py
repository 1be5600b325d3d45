r"""Never fetch private, loopback or link-local addresses (unless the analyst allows it).

A note is untrusted input: a writer (or a pasted draft) can cite
``http://169.254.169.254/…`` or a public name that resolves to ``10.0.0.5``, and a
liveness check that follows it would probe the analyst's own network. So every
URL — and every redirect hop — is vetted before a request is sent:

* the host is canonicalised by ``sourcedesk.core.net.urls.host_of`` (``0x7f.1`` and
  ``2130706433`` are ``127.0.0.1``; IPv6 brackets; IDNA), and it must be the host the
  HTTP client will really connect to: a URL that browsers and httpx read as two hosts
  (``http://93.184.216.34\@127.0.0.1/``) is refused outright, private addresses allowed
  or not (``sourcedesk.core.net.ambiguous_urls``);
* literal addresses are judged as they are; ``localhost``/``*.localhost`` and the
  non-public suffixes ``.local``, ``.internal``, ``.home.arpa`` are refused by name;
* other names are resolved, and **every** address they resolve to must be public
  (not private, loopback, link-local, reserved, multicast, unspecified, nor
  anything else that is not globally routable; IPv4-mapped/6to4/Teredo IPv6
  forms are unwrapped first).

The resolver is a parameter so tests never do real DNS. Known limit: the HTTP
client resolves the name again when it connects; a hostile DNS server that
answers differently the second time (rebinding) is not caught here.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sourcedesk.core.net.ambiguous_urls import host_disagreement
from sourcedesk.core.net.urls import host_of

Resolver = Callable[[str], Awaitable[list[str]]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_PRIVATE_NAMES = ("localhost",)
_PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa")


class HostNotFound(Exception):
    """The name does not exist (NXDOMAIN / no address): permanent, unlike a DNS outage."""


class ResolutionFailed(Exception):
    """DNS could not answer (no resolver reachable, timeout, temporary failure)."""


@dataclass(frozen=True)
class AddressVerdict:
    """Whether a URL's host may be fetched, and why not."""

    allowed: bool
    host: str | None
    reason: str = ""  # why it was refused
    addresses: tuple[str, ...] = ()
    ambiguous: bool = False  # refused because two URL parsers read different hosts in it


def _unwrap(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address):
        for inner in (ip.ipv4_mapped, ip.sixtofour, ip.teredo[1] if ip.teredo else None):
            if inner is not None:
                return inner
    return ip


def is_public_address(address: str | IPAddress) -> bool:
    """True only for globally routable unicast addresses."""
    ip = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
    for candidate in {ip, _unwrap(ip)}:
        if (
            candidate.is_private
            or candidate.is_loopback
            or candidate.is_link_local
            or candidate.is_reserved
            or candidate.is_multicast
            or candidate.is_unspecified
            or not candidate.is_global
        ):
            return False
    return True


def literal_address(host: str) -> IPAddress | None:
    """The address when ``host`` (canonical, from ``host_of``) is an IP literal."""
    try:
        return ipaddress.ip_address(host[1:-1] if host.startswith("[") else host)
    except ValueError:
        return None


def is_private_name(host: str) -> bool:
    return host in _PRIVATE_NAMES or host.endswith(_PRIVATE_SUFFIXES)


async def system_resolve(host: str, timeout_s: float = 10.0) -> list[str]:
    """The system resolver (``getaddrinfo``), bounded by ``timeout_s``."""
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(loop.getaddrinfo(host, None, type=socket.SOCK_STREAM), timeout_s)
    except TimeoutError:
        raise ResolutionFailed(f"DNS lookup of {host} timed out") from None
    except socket.gaierror as exc:
        permanent = {getattr(socket, name) for name in ("EAI_NONAME", "EAI_NODATA") if hasattr(socket, name)}
        if exc.errno in permanent:
            raise HostNotFound(f"DNS: no such host {host}") from None
        raise ResolutionFailed(f"DNS lookup of {host} failed ({exc.strerror or exc})") from None
    except (OSError, UnicodeError) as exc:
        raise ResolutionFailed(f"DNS lookup of {host} failed ({exc})") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def vet_url(url: str, resolve: Resolver, *, allow_private: bool = False) -> AddressVerdict:
    """May ``url`` be fetched? Resolves the host (also when private addresses are
    allowed, so a name that does not exist is still reported).

    Raises ``HostNotFound`` / ``ResolutionFailed`` from the resolver."""
    host = host_of(url)
    if not host:
        return AddressVerdict(False, None, "not a usable URL (no valid host)")
    disagreement = host_disagreement(url)
    if disagreement is not None:
        return AddressVerdict(False, host, disagreement, ambiguous=True)
    literal = literal_address(host)
    if literal is not None:
        if allow_private or is_public_address(literal):
            return AddressVerdict(True, host, addresses=(str(literal),))
        return AddressVerdict(False, host, f"{host} is a private, loopback or link-local address", (str(literal),))
    if is_private_name(host) and not allow_private:
        return AddressVerdict(False, host, f"{host} is a local-only host name")
    addresses = tuple(await resolve(host))
    if not addresses:
        raise HostNotFound(f"DNS: no address for {host}")
    if not allow_private:
        for address in addresses:
            try:
                public = is_public_address(address)
            except ValueError:
                public = False
            if not public:
                return AddressVerdict(
                    False, host, f"{host} resolves to {address}, a private, loopback or link-local address", addresses
                )
    return AddressVerdict(True, host, addresses=addresses)
