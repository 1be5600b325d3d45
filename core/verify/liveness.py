"""Is a cited page alive? One real GET per URL, redirects followed hop by hop.

Order of checks for one URL, cheapest and safest first:

1. not ``http(s)`` (a local file source, ``mailto:``) → ``skipped``, no request;
2. a placeholder or fabrication pattern (``sourcedesk.core.citations.placeholders``) →
   ``placeholder``, no request — not even DNS;
3. each hop is vetted by ``addresses.vet_url`` (private, loopback, link-local →
   ``blocked_private``, no request to it) and then fetched with the shared retry
   policy (``sourcedesk.core.net.policy.send_with_retries``: 429/5xx/connection errors
   retried with backoff); redirects are followed here, not by httpx, so a public
   URL that redirects to ``127.0.0.1`` is refused at that hop;
4. the final answer is classified: 200 (after a body sniff for soft-404 and
   paywall stubs, and a check for "deep link redirected to the home page"),
   404/410 dead, 401/403 ``auth`` (whether that proves anything depends on the
   retrieved set — decided by the caller), 402 paywall, other answers error.

Time and size are bounded: each request has a total deadline (``timeout_s``,
headers and body together — a server trickling one byte a second is cut off),
only the first ``max_body_bytes`` of a page are read, and a redirect back to an
address already visited is a loop, reported at once. The caller bounds each URL
and the whole check (``sourcedesk.core.verify.check``). Everything a page says that reaches
a report (its title, a phrase, a ``Location``) is cleaned (``sourcedesk.core.text.safety``).

DNS: a name that does not exist is reported as ``dns_failed``; the caller turns
it into ``dead`` only when some other URL got an HTTP answer from a public
address in the same check (the internet works, so the name really is gone) and
into ``unreachable`` otherwise — an offline machine must not call every URL dead,
and a loopback or intranet server answering proves nothing about public names. Connection
failures are ``unreachable``, never ``dead``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from sourcedesk.core.citations.placeholders import is_placeholder_url
from sourcedesk.core.net.bounded import describe_seconds, describe_size
from sourcedesk.core.net.deadline import DeadlineExceeded, budget, current_deadline
from sourcedesk.core.net.decoding import DecodedTooLarge, UndecodableBody, decoded_chunks
from sourcedesk.core.net.policy import RetryPolicy, send_with_retries
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.text.safety import UNSAFE_CHARACTER, clean_text
from sourcedesk.core.verify.addresses import HostNotFound, ResolutionFailed, Resolver, is_public_address, vet_url
from sourcedesk.core.verify.sniff import redirected_home, sniff_page

#: Checks are polite: fewer, shorter retries than the API clients (a page is not a paid call).
CHECK_RETRY = RetryPolicy(max_retries=2, base_delay_s=0.5, max_delay_s=4.0, max_retry_after_s=10.0)
USER_AGENT = "Mozilla/5.0 (compatible; sourcedesk-check-urls/0.1; citation liveness check)"
HEADERS = {"User-Agent": USER_AGENT, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
MAX_REDIRECTS = 10
MAX_BODY_BYTES = 512 * 1024  # the default of check_max_page_bytes

# Fetch statuses (the caller maps auth/dns_failed to citation statuses).
OK, REDIRECTED, DEAD, SOFT_404, PAYWALL = "ok", "redirected", "dead", "soft_404", "paywall"
AUTH, DNS_FAILED = "auth", "dns_failed"
ERROR, UNREACHABLE, PLACEHOLDER, BLOCKED_PRIVATE, SKIPPED = (
    "error",
    "unreachable",
    "placeholder",
    "blocked_private",
    "skipped",
)


@dataclass
class Fetch:
    """What fetching one URL observed."""

    url: str
    status: str
    http_status: int | None = None
    final_url: str | None = None  # set once a request was answered (equals url without redirects)
    redirects: list[str] = field(default_factory=list)  # every Location followed, in order
    detail: str = ""
    requests: int = 0
    public: bool = False  # every hop that answered was at a public address

    @property
    def answered(self) -> bool:
        """A public server answered over HTTP: proof that the internet is reachable (a
        loopback or intranet server answering proves nothing about public names)."""
        return self.http_status is not None and self.public


@dataclass(frozen=True)
class FetchOptions:
    timeout_s: float = 10.0
    allow_private: bool = False
    retry: RetryPolicy = CHECK_RETRY
    max_redirects: int = MAX_REDIRECTS
    max_body_bytes: int = MAX_BODY_BYTES


def _is_public(address: str) -> bool:
    try:
        return is_public_address(address)
    except ValueError:
        return False


def is_web_url(url: str) -> bool:
    return url.strip().lower().startswith(("http://", "https://"))


def _tries(n: int) -> str:
    return "1 try" if n == 1 else f"{n} tries"


def _transport_failure(fetch: Fetch, exc: Exception, tries: int) -> Fetch:
    if isinstance(exc, DeadlineExceeded):
        fetch.status, fetch.detail = ERROR, f"{exc} ({_tries(tries)})"
    elif isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        fetch.status = UNREACHABLE
        what = "connection timed out" if isinstance(exc, httpx.ConnectTimeout) else "could not connect"
        fetch.detail = f"{what} after {_tries(tries)} (network down or host refusing connections)"
    elif isinstance(exc, httpx.TimeoutException):
        fetch.status, fetch.detail = ERROR, f"timed out after {_tries(tries)}"
    else:
        fetch.status, fetch.detail = ERROR, f"{type(exc).__name__} after {_tries(tries)}"
    return fetch


@dataclass
class PageStart:
    """The start of a page as read: cleaned text, and why reading stopped early (if it did)."""

    text: str
    cut: str = ""  # "" when the whole page was read


async def _read_start(response: httpx.Response, limit: int, seconds: float) -> PageStart:
    """The first ``limit`` bytes of the body within ``seconds``, decoded leniently and cleaned
    (a broken or trickling stream keeps what arrived, and says so)."""
    chunks: list[bytes] = []
    size = 0
    cut = ""
    timeout = asyncio.timeout(max(seconds, 0.0))
    larger = f"page larger than {describe_size(limit)} (check_max_page_bytes): judged on its start"
    try:
        async with timeout:
            async for chunk in decoded_chunks(response, limit):
                chunks.append(chunk)
                size += len(chunk)
                if size >= limit:
                    cut = larger + (" (counted decompressed)" if response.headers.get("content-encoding") else "")
                    break
    except DecodedTooLarge:  # sent compressed: inflated only up to the cap
        cut = larger + " (counted decompressed)"
    except UndecodableBody as exc:
        cut = f"{exc}: judged on what could be read ({size:,} bytes)"
    except TimeoutError:
        if not timeout.expired():
            raise
        cut = f"the page was still arriving after {describe_seconds(seconds)} ({size:,} bytes): judged on what arrived"
    except httpx.HTTPError as exc:
        cut = f"the connection broke off after {size:,} bytes ({type(exc).__name__}): judged on what arrived"
    finally:
        await response.aclose()
    raw = b"".join(chunks)[:limit]
    try:
        text = raw.decode(response.charset_encoding or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        text = raw.decode("utf-8", errors="replace")
    return PageStart(clean_text(text, multiline=True), cut)


async def _answer_headers(client: httpx.AsyncClient, request: httpx.Request, seconds: float) -> httpx.Response:
    """The response's status and headers within ``seconds`` (the body is read afterwards)."""
    if seconds <= 0:
        deadline = current_deadline()
        what = deadline.what if deadline is not None else "the deadline"
        raise DeadlineExceeded(f"not requested: {what} had run out", seconds=0.0, what=what)
    timeout = asyncio.timeout(seconds)
    try:
        async with timeout:
            return await client.send(request, stream=True, follow_redirects=False)
    except TimeoutError:
        if not timeout.expired():
            raise
        raise DeadlineExceeded(
            f"no answer within {describe_seconds(seconds)} (the connection stalled)", seconds=seconds, what="the page"
        ) from None


def _canonical(url: str) -> str:
    try:
        return str(httpx.URL(url))
    except (httpx.InvalidURL, ValueError):
        return url


def _classify_answer(fetch: Fetch, response_status: int, body: str, content_type: str, tries: int) -> Fetch:
    fetch.http_status = response_status
    if response_status in (404, 410):
        fetch.status, fetch.detail = DEAD, f"HTTP {response_status}"
    elif response_status in (401, 403):
        fetch.status, fetch.detail = AUTH, f"HTTP {response_status}"
    elif response_status == 402:
        fetch.status, fetch.detail = PAYWALL, "HTTP 402 (payment required)"
    elif 200 <= response_status < 300:
        sniff = sniff_page(body, content_type)
        if sniff is not None:
            fetch.status, fetch.detail = sniff.status, sniff.reason
        elif fetch.redirects and redirected_home(fetch.url, fetch.final_url or fetch.url):
            fetch.status, fetch.detail = SOFT_404, "a deep link redirected to the site's home page"
        elif fetch.final_url and normalise_url(fetch.final_url) != normalise_url(fetch.url):
            fetch.status, fetch.detail = REDIRECTED, f"{len(fetch.redirects)} redirect(s)"
        else:
            fetch.status = OK
    elif response_status == 429 or response_status >= 500:
        fetch.status, fetch.detail = ERROR, f"HTTP {response_status} after {_tries(tries)}"
    else:
        fetch.status, fetch.detail = ERROR, f"HTTP {response_status}"
    return fetch


def _next_hop(fetch: Fetch, response: httpx.Response, visited: set[str], hop: int) -> str | None:
    """Where a redirect leads (recorded on ``fetch``), or None when it leads nowhere a check may follow
    (an unusable ``Location``, a non-web URL, a loop): ``fetch`` then says why."""
    location = response.headers.get("location", "")
    fetch.http_status = response.status_code
    try:
        if UNSAFE_CHARACTER.search(location):
            raise ValueError("control characters in Location")
        current = clean_text(str(response.url.join(location)))  # a key echoed in it is redacted
    except (httpx.InvalidURL, ValueError):
        fetch.status, fetch.detail = ERROR, f"HTTP {response.status_code} with an unusable Location header"
        return None
    fetch.redirects.append(current)
    fetch.final_url = current
    if not is_web_url(current):
        fetch.status, fetch.detail = ERROR, f"redirected to a non-web URL ({current})"
        return None
    if _canonical(current) in visited:
        fetch.status = ERROR
        fetch.detail = f"redirect loop: hop {hop + 1} leads back to {current}"
        return None
    visited.add(_canonical(current))
    return current


async def fetch_url(
    url: str,
    client: httpx.AsyncClient,
    resolve: Resolver,
    options: FetchOptions = FetchOptions(),
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
    into: Fetch | None = None,
) -> Fetch:
    """Fetch ``url`` (see the module docstring); never raises for network or HTTP trouble.

    ``into``: a record to fill as the hops happen, so a caller that stops the fetch
    (a deadline) still knows how far it got."""
    fetch = into if into is not None else Fetch(url=url, status=ERROR)
    if not is_web_url(url):
        fetch.status, fetch.detail = SKIPPED, "not a web URL (local file or other scheme): nothing to fetch"
        return fetch
    if is_placeholder_url(url):
        fetch.status, fetch.detail = PLACEHOLDER, "placeholder or fabricated URL pattern; not requested"
        return fetch
    current = url
    visited = {_canonical(url)}
    for hop in range(options.max_redirects + 1):
        where = "" if hop == 0 else f"redirect {hop} to {current}: "
        try:
            verdict = await vet_url(current, resolve, allow_private=options.allow_private)
        except HostNotFound as exc:
            fetch.status, fetch.detail = DNS_FAILED, f"{where}{exc}"
            return fetch
        except ResolutionFailed as exc:
            fetch.status, fetch.detail = UNREACHABLE, f"{where}{exc}"
            return fetch
        if verdict.ambiguous:
            fetch.status, fetch.detail = ERROR, f"{where}{verdict.reason}; not requested"
            return fetch
        if not verdict.allowed:
            status = BLOCKED_PRIVATE if verdict.host else DEAD  # no usable host: no page can be there
            hint = "; not requested (--allow-private to check it)" if verdict.host else ""
            fetch.status, fetch.detail = status, f"{where}{verdict.reason}{hint}"
            return fetch
        fetch.public = (hop == 0 or fetch.public) and all(_is_public(a) for a in verdict.addresses)

        def send(target: str = current) -> Awaitable[httpx.Response]:
            request = client.build_request("GET", target, headers=HEADERS)
            return _answer_headers(client, request, budget(options.timeout_s))

        try:
            outcome = await send_with_retries(send, options.retry, sleep=sleep, rng=rng)
        except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:  # not transient: bad URL, TLS setup…
            fetch.requests += 1
            return _transport_failure(fetch, exc, 1)
        fetch.requests += outcome.requests
        response = outcome.response
        if response is None:
            assert outcome.error is not None
            return _transport_failure(fetch, outcome.error, outcome.requests)
        fetch.final_url = str(response.url)
        if response.is_redirect:
            await response.aclose()
            following = _next_hop(fetch, response, visited, hop)
            if following is None:
                return fetch
            current = following
            continue
        page = PageStart("")
        if 200 <= response.status_code < 300:
            page = await _read_start(response, options.max_body_bytes, budget(options.timeout_s))
        else:
            await response.aclose()
        content_type = clean_text(response.headers.get("content-type", ""))
        _classify_answer(fetch, response.status_code, page.text, content_type, outcome.requests)
        if page.cut:
            fetch.detail = f"{fetch.detail}; {page.cut}" if fetch.detail else page.cut
        return fetch
    fetch.status, fetch.detail = ERROR, f"more than {options.max_redirects} redirects"
    return fetch
