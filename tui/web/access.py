"""Who may open the desk in a browser, decided before any app process starts.

Whoever reaches the port gets the workbench with the analyst's API keys behind it, so:

- **The token.** Off loopback a token is required (``sourcedesk serve`` makes one when none is
  given). The page (``/?token=…``) is refused with 403 without it; the comparison takes the
  same time for every wrong token.
- **The Host.** Without a token (loopback only) the desk answers only to the loopback names
  with its own port: a web page whose DNS name was rebound to 127.0.0.1 cannot load it.
- **The Origin.** A page's script may open a websocket to any address (websockets have no
  same-origin rule), so the websocket must come from a page served by this desk: its Origin
  names the host the request was sent to.
- **One-use tickets.** The page carries a fresh random ticket in its websocket URL; a websocket
  without an unused, unexpired ticket starts nothing. The token itself never travels in the
  websocket URL, and a ticket cannot be replayed.
"""

from __future__ import annotations

import ipaddress
import secrets
import time
from collections.abc import Callable
from urllib.parse import urlsplit

MIN_TOKEN_LEN = 16
TICKET_TTL_S = 300.0  # the page connects at once; the slack is for a slow machine or a paused tab
MAX_TICKETS = 32  # pages loaded and never connected: the oldest are forgotten
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or ``localhost``: reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """An address that binds every interface (0.0.0.0, ::)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return host == ""


def url_host(host: str) -> str:
    """``host`` as it goes in a URL (an IPv6 literal in brackets)."""
    try:
        if ipaddress.ip_address(host.strip("[]")).version == 6:
            return f"[{host.strip('[]')}]"
    except ValueError:
        pass
    return host


def new_token() -> str:
    return secrets.token_urlsafe(24)  # 32 characters, 192 random bits


def token_problem(token: str) -> str | None:
    """Why ``token`` is unfit to guard the desk (None: it is fit)."""
    if len(token) < MIN_TOKEN_LEN:
        return f"the token must be at least {MIN_TOKEN_LEN} characters long"
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        return "the token must be printable ASCII without spaces (it goes in a URL)"
    return None


class AccessPolicy:
    """The checks of one running desk. ``port`` is set once the socket is bound (it may be 0 before)."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        token: str | None,
        clock: Callable[[], float] = time.monotonic,
        ticket_ttl_s: float = TICKET_TTL_S,
    ) -> None:
        if token is None and not is_loopback(host):
            raise ValueError(f"serving on {host} needs a token")
        self.host = host
        self.port = port
        self._token = token
        self._clock = clock
        self._ticket_ttl_s = ticket_ttl_s
        self._tickets: dict[str, float] = {}  # ticket -> when it expires

    @property
    def needs_token(self) -> bool:
        return self._token is not None

    def allowed_hosts(self) -> set[str]:
        names = {*LOOPBACK_NAMES, url_host(self.host)}
        return {f"{name}:{self.port}".lower() for name in names}

    def page_refusal(self, *, token: str | None, host_header: str) -> str | None:
        """Why the page is refused (None: serve it)."""
        if self._token is None:
            return self._host_refusal(host_header)
        if not token:
            return "This desk needs its token: open the address `sourcedesk serve` printed, with its ?token=…"
        if not secrets.compare_digest(token.encode("utf-8", "replace"), self._token.encode("utf-8")):
            return "This token does not open the desk: use the address `sourcedesk serve` printed."
        return None

    def socket_refusal(self, *, ticket: str, origin: str | None, host_header: str) -> str | None:
        """Why a websocket is refused (None: start its session). A refused ticket is spent too."""
        valid = self._claim(ticket)
        if self._token is None and (refusal := self._host_refusal(host_header)):
            return refusal
        if not origin or not _same_host(origin, host_header):
            return "This connection did not come from the desk's own page (its Origin is another site)."
        if not valid:
            return "This session link was used or has expired: reload the page."
        return None

    def issue_ticket(self) -> str:
        now = self._clock()
        self._tickets = {t: until for t, until in self._tickets.items() if until > now}
        while len(self._tickets) >= MAX_TICKETS:
            del self._tickets[next(iter(self._tickets))]  # the oldest (dicts keep insertion order)
        ticket = secrets.token_urlsafe(24)
        self._tickets[ticket] = now + self._ticket_ttl_s
        return ticket

    def _claim(self, ticket: str) -> bool:
        until = self._tickets.pop(ticket, None)
        return until is not None and until > self._clock()

    def _host_refusal(self, host_header: str) -> str | None:
        if host_header.lower() in self.allowed_hosts():
            return None
        return f"This desk answers only at 127.0.0.1:{self.port} or localhost:{self.port}."


def _same_host(origin: str, host_header: str) -> bool:
    """The Origin names the scheme and host:port the page came from; it must be where this
    request went (the Host header). http or https (a TLS proxy in front keeps the host)."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host_header) and parts.netloc.lower() == host_header.lower()
