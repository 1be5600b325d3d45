"""A thin async client for Exa's ``POST /search`` — the API and nothing else.

It knows Exa's wire shapes (camelCase request keys, tolerant response parsing)
and turns every failure into one ``ExaError`` with a plain-language message the
analyst can act on. Pins, exclusions, facts and budgets live in the provider
(``sourcedesk.core.sources.providers.exa.provider``): keeping this layer dumb is what lets the sandbox and the
real service be swapped by one base-URL setting.

The API key travels only in the ``Authorization`` header of each request: it is
never stored on a shared ``httpx`` client, logged, or included in an error.

Exa's answer is untrusted text. Each request has a total deadline (not per read)
and a size cap, both read as one bounded job (``sourcedesk.core.net.bounded``), and every
string of every result — titles, URLs, text, highlights, summaries, facts — and
every error sentence is cleaned here, where it enters the product
(``sourcedesk.core.text.safety``: no terminal control sequences, no bidi overrides, no API
key a server echoed back).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from pydantic import SecretStr

from sourcedesk.core.domain.costs import reported_dollars, unusable_amount
from sourcedesk.core.domain.errors import RetrievalError
from sourcedesk.core.net.bounded import ResponseTooLarge, describe_seconds, fetch_bounded
from sourcedesk.core.net.deadline import DeadlineExceeded, budget, current_deadline
from sourcedesk.core.net.policy import (
    EXA_RETRY,
    RetryOutcome,
    RetryPolicy,
    retry_after_note,
    send_with_retries,
    shared_limiter,
)
from sourcedesk.core.sources.facts import decode_json_object
from sourcedesk.core.text.safety import UNSAFE_CHARACTER, clean_text, clean_tree
from sourcedesk.core.text.secrets import MIN_SECRET_LEN, secret_values

log = logging.getLogger("sourcedesk.exa")

MAX_RESULTS = 100
MAX_DOMAINS = 1200  # per list, per Exa's docs
# Exa's categories as of late 2026. ``category`` is a soft hint Exa does not validate:
# an old value ("research paper", "github", …) is accepted and silently stops steering.
CATEGORIES = ("company", "publication", "news", "personal site", "financial report", "people")
CATEGORY_SUCCESSORS = {"research paper": "publication", "linkedin profile": "people"}
# Removed or deprecated request fields: never sent (numSentences becomes maxCharacters,
# Exa's own transition rate of about 1,333 characters a sentence).
RETIRED_FIELDS = frozenset(
    {"useAutoprompt", "numSentences", "highlightsPerUrl", "livecrawl", "startCrawlDate", "endCrawlDate"}
)
CHARS_PER_SENTENCE = 1333
# Exa's search types (``type``); Exa answers 400 to any other value.
SEARCH_TYPES = ("auto", "fast", "instant", "neural", "keyword", "hybrid", "deep", "deep-lite", "deep-reasoning", "lite")
# What ``contents.highlights`` takes today; the deprecated knobs above are dropped or mapped.
HIGHLIGHT_OPTIONS = ("query", "maxCharacters")
# Exa answers 400 when excludeDomains, excludeText or date filters are combined with these categories.
CATEGORIES_WITHOUT_FILTERS = frozenset({"company", "people"})
MAX_EXCLUDE_TEXT_WORDS = 5
# Exa counts requests on *arrival*, our limiter on *send*; two of the ten tokens are
# held back so arrivals bunched by up to 200 ms (connection set-up, a loaded machine)
# still fit the service's bucket. Twelve concurrent sections: eight searches at once,
# then one every 100 ms.
RESERVED_TOKENS = 2
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024

ErrorKind = Literal[
    "auth",
    "payment",
    "forbidden",
    "bad_request",
    "not_found",
    "rate_limited",
    "server",
    "timeout",
    "network",
    "malformed",
    "too_large",
]


class ExaError(RetrievalError):
    """Exa could not give us results. ``str()`` is a sentence an analyst can act on;
    it never contains the key, a header or a raw HTML page."""

    def __init__(self, kind: ErrorKind, status: int | None, message: str, *, requests: int = 0):
        self.kind = kind
        self.status = status
        super().__init__(message, requests=requests)

    def __repr__(self) -> str:
        return f"ExaError(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"


@dataclass
class ExaResult:
    """One result, parsed tolerantly: every field but ``url`` may be missing."""

    url: str
    title: str = ""
    id: str | None = None
    published_date: str | None = None
    author: str | None = None
    score: float | None = None
    text: str | None = None
    summary: str | dict[str, Any] | None = None  # a JSON *string* when a schema was sent
    highlights: list[str] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ExaSearchResult:
    results: list[ExaResult]
    warnings: list[str] = field(default_factory=list)  # Exa's own notices about this request
    cost_total: float = 0.0
    search_time_ms: float | None = None
    request_id: str | None = None
    requests: int = 1  # HTTP requests this call made (retries included)
    skipped: int = 0  # result items without a usable URL
    cost_problem: str | None = None  # costDollars held an amount that could not be counted
    controls_removed: int = 0  # results whose strings carried control sequences or bidi overrides
    keys_redacted: int = 0  # results that echoed an API key back


def current_category(category: str | None) -> str | None:
    """The category as Exa takes it today, or None for a value it no longer steers by."""
    if not category:
        return None
    value = " ".join(category.strip().lower().replace("_", " ").split())
    return value if value in CATEGORIES else None


def category_notice(category: str) -> str | None:
    """A one-line notice for a category Exa ignores (None for a current one)."""
    if current_category(category):
        return None
    value = " ".join(category.strip().lower().replace("_", " ").split())
    successor = CATEGORY_SUCCESSORS.get(value)
    instead = f"; use {successor!r}" if successor else ""
    return (
        f"category {category!r} is not one of Exa's categories ({', '.join(CATEGORIES)}) — Exa would ignore it, "
        f"so it is not sent{instead}"
    )


def exa_option_name(key: str) -> str:
    """An option as Exa spells it: memo.yaml's ``max-characters`` or ``max_characters``
    is ``maxCharacters`` (Exa 400s a name it does not know)."""
    head, *rest = key.replace("_", "-").split("-")
    return head + "".join(part[:1].upper() + part[1:] for part in rest if part)


def _highlights(value: dict[str, Any]) -> dict[str, Any]:
    """Highlight options in Exa's spelling, without the retired knobs (``numSentences`` → ``maxCharacters``)."""
    value = {exa_option_name(k) if isinstance(k, str) else k: v for k, v in value.items()}
    out = {k: v for k, v in value.items() if v is not None and k not in RETIRED_FIELDS}
    sentences = value.get("numSentences")
    if "maxCharacters" not in out and isinstance(sentences, int) and not isinstance(sentences, bool) and sentences > 0:
        out["maxCharacters"] = sentences * CHARS_PER_SENTENCE
    return out


def _without_retired(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_retired(v) for k, v in value.items() if k not in RETIRED_FIELDS}
    if isinstance(value, list):
        return [_without_retired(v) for v in value]
    return value


def build_search_body(
    query: str,
    *,
    num_results: int = 10,
    category: str | None = None,
    type: str | None = None,
    include_domains: list[str] | None = None,
    exclude_domains: list[str] | None = None,
    summary: dict[str, Any] | bool | None = None,
    text: dict[str, Any] | bool | None = None,
    highlights: dict[str, Any] | bool | None = None,
    start_published_date: str | None = None,
    end_published_date: str | None = None,
    exclude_text: list[str] | None = None,
) -> dict[str, Any]:
    """The camelCase ``/search`` body. Raises ValueError for what Exa would refuse anyway
    (so a caller's bug shows up here, not as a 400 at run time)."""
    if not query or not query.strip():
        raise ValueError("an Exa query must not be empty")
    if not 1 <= num_results <= MAX_RESULTS:
        raise ValueError(f"numResults must be 1–{MAX_RESULTS}, got {num_results}")
    for name, domains in (("includeDomains", include_domains), ("excludeDomains", exclude_domains)):
        if domains and len(domains) > MAX_DOMAINS:
            raise ValueError(f"{name} takes at most {MAX_DOMAINS} entries, got {len(domains)}")
    body: dict[str, Any] = {"query": query, "numResults": num_results}
    if current_category(category):
        body["category"] = current_category(category)
    if type:
        body["type"] = type
    if include_domains:
        body["includeDomains"] = list(include_domains)
    if exclude_domains:
        body["excludeDomains"] = list(exclude_domains)
    if start_published_date:
        body["startPublishedDate"] = start_published_date
    if end_published_date:
        body["endPublishedDate"] = end_published_date
    if exclude_text:
        # Exa takes one string of at most five words (a list, for future growth).
        if len(exclude_text) > 1 or len(exclude_text[0].split()) > MAX_EXCLUDE_TEXT_WORDS:
            raise ValueError("excludeText takes one phrase of at most five words")
        body["excludeText"] = list(exclude_text)
    contents: dict[str, Any] = {}
    for key, value in (("summary", summary), ("text", text), ("highlights", highlights)):
        if value is True:
            contents[key] = True if key == "text" else {}
        elif isinstance(value, dict):
            contents[key] = (
                _highlights(value) if key == "highlights" else {k: v for k, v in value.items() if v is not None}
            )
    if contents:
        body["contents"] = contents
    clean: dict[str, Any] = _without_retired(body)
    return clean


# ---------------------------------------------------------------- response parsing


def _str_or_none(v: Any, secrets: list[str] | None = None) -> str | None:
    if not isinstance(v, str):
        return None
    v = clean_text(v, secrets=secrets).strip()
    return v or None


def _usable_url(v: Any, secrets: list[str]) -> str | None:
    """An http(s) URL exactly as sent — or None: a URL carrying control or bidi characters
    is not repaired into some other address, it is unusable."""
    if not isinstance(v, str) or not v.strip() or UNSAFE_CHARACTER.search(v.strip()):
        return None
    url = clean_text(v.strip(), secrets=secrets)  # a key echoed in a query string is redacted
    return url if url.lower().startswith(("http://", "https://")) else None


def _summary(summary: Any, secrets: list[str]) -> str | dict[str, Any] | None:
    """A schema summary arrives as a JSON string; its decoded values are cleaned too
    (``\u001b`` inside JSON is an escape character once decoded)."""
    if isinstance(summary, str):
        decoded = decode_json_object(summary.strip())
        if decoded is not None:
            return clean_tree(decoded, secrets=secrets)  # type: ignore[return-value]  # a dict stays a dict
        return clean_text(summary, multiline=True, secrets=secrets)
    if isinstance(summary, dict):
        return clean_tree(summary, secrets=secrets)  # type: ignore[return-value]  # a dict stays a dict
    return None


# Control characters that mean trouble (line breaks, tabs and \r are ordinary text).
_HOSTILE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _taint(value: Any, secrets: list[str]) -> tuple[bool, bool]:
    """(carries control sequences, echoes a key) anywhere in a raw result, JSON summaries decoded."""
    controls = keys = False
    stack = [value]
    while stack and not (controls and keys):
        v = stack.pop()
        if isinstance(v, str):
            controls = controls or bool(_HOSTILE.search(v))
            keys = keys or any(k in v for k in secrets)
            decoded = decode_json_object(v.strip()) if v.lstrip()[:1] in ("{", '"', "`") else None
            if decoded is not None:
                stack.append(decoded)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return controls, keys


def _parse_result(raw: Any, secrets: list[str]) -> ExaResult | None:
    if not isinstance(raw, dict):
        return None
    url = _usable_url(raw.get("url"), secrets) or _usable_url(raw.get("id"), secrets)
    if not url:
        return None
    score = raw.get("score")
    highlights = raw.get("highlights")
    entities = raw.get("entities")
    if isinstance(entities, dict):
        entities = [entities]
    text = raw.get("text")
    return ExaResult(
        url=url,
        title=clean_text(raw["title"], secrets=secrets) if isinstance(raw.get("title"), str) else "",
        id=_str_or_none(raw.get("id"), secrets),
        published_date=_str_or_none(raw.get("publishedDate"), secrets),
        author=_str_or_none(raw.get("author"), secrets),
        score=float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
        text=clean_text(text, multiline=True, secrets=secrets) if isinstance(text, str) else None,
        summary=_summary(raw.get("summary"), secrets),
        highlights=[clean_text(h, multiline=True, secrets=secrets) for h in highlights if isinstance(h, str)]
        if isinstance(highlights, list)
        else [],
        entities=[clean_tree(e, secrets=secrets) for e in entities if isinstance(e, dict)]  # type: ignore[misc]  # dicts stay dicts
        if isinstance(entities, list)
        else [],
    )


_COST_DEPTH = 4  # a breakdown is {"search": {"neural": 0.005}}; nothing deeper is read


def _numeric_leaves(v: Any, depth: int = 0) -> float:
    if isinstance(v, dict):
        return sum(_numeric_leaves(x, depth + 1) for x in v.values()) if depth < _COST_DEPTH else 0.0
    return reported_dollars(v) or 0.0


def _bad_amounts(v: Any, depth: int = 0) -> list[str]:
    if isinstance(v, dict):
        return [bad for x in v.values() for bad in _bad_amounts(x, depth + 1)] if depth < _COST_DEPTH else []
    bad = unusable_amount(v)
    return [bad] if bad else []


def parse_cost(cost: Any) -> float:
    """``costDollars`` comes as ``{"total": …, "search": {…}}``, a bare number, or a
    breakdown without ``total``; ``total`` wins, else the breakdown is summed. Only
    finite, non-negative amounts count (``sourcedesk.core.domain.costs``)."""
    if isinstance(cost, dict):
        total = cost.get("total")
        if isinstance(total, (int, float)) and not isinstance(total, bool):
            return reported_dollars(total) or 0.0
        return _numeric_leaves(cost)
    return reported_dollars(cost) or 0.0


def cost_problem(cost: Any) -> str | None:
    """A warning when ``costDollars`` holds an amount that cannot be counted (NaN, negative…)."""
    total = cost.get("total") if isinstance(cost, dict) else None
    if isinstance(total, (int, float)) and not isinstance(total, bool):
        bad = [b for b in [unusable_amount(total)] if b]
    else:
        bad = _bad_amounts(cost)
    if not bad:
        return None
    return (
        f"Exa reported a cost of {', '.join(bad[:3])}, which is not a dollar amount; it was counted as $0, "
        "so this run's total may be low"
    )


def parse_warnings(value: Any, secrets: list[str] | None = None) -> list[str]:
    """Exa's ``warnings`` as lines: strings, or objects with a ``message`` (and maybe a ``code``),
    cleaned like every other string Exa sends."""
    items = [value] if isinstance(value, (str, dict)) else value if isinstance(value, list) else []
    out: list[str] = []
    for item in items:
        text = item if isinstance(item, str) else item.get("message") if isinstance(item, dict) else None
        if not isinstance(text, str) or not text.strip():
            continue
        code = item.get("code") if isinstance(item, dict) else None
        line = " ".join(clean_text(text, secrets=secrets).split())[:300]
        code = clean_text(code, secrets=secrets) if isinstance(code, str) else None
        out.append(f"{code}: {line}" if code and code.strip() else line)
    return out


def parse_search_response(data: Any, *, secrets: list[str] | None = None) -> ExaSearchResult:
    """Raise ExaError('malformed') unless ``data`` has the shape of a search answer.

    Every string is cleaned on the way in; ``secrets`` are the keys to redact
    (default: every known key)."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ExaError("malformed", 200, "Exa answered, but not with search results (no 'results' list)")
    keys = secret_values() if secrets is None else secrets
    parsed = [_parse_result(r, keys) for r in data["results"]]
    results = [r for r in parsed if r is not None]
    taints = [_taint(raw, keys) for raw, r in zip(data["results"], parsed, strict=True) if r is not None]
    search_time = data.get("searchTime")
    return ExaSearchResult(
        results=results,
        warnings=parse_warnings(data.get("warnings"), keys),
        cost_total=parse_cost(data.get("costDollars")),
        cost_problem=cost_problem(data.get("costDollars")),
        search_time_ms=float(search_time) if isinstance(search_time, (int, float)) else None,
        request_id=_str_or_none(data.get("requestId"), keys),
        skipped=len(parsed) - len(results),
        controls_removed=sum(c for c, _ in taints),
        keys_redacted=sum(k for _, k in taints),
    )


# ---------------------------------------------------------------- errors


def _exa_error_text(response: httpx.Response, secret: str | None) -> str:
    """Exa's own error sentence (``{"error": …}``), never an HTML page; short and key-free."""
    try:
        data = response.json()
    except (ValueError, RecursionError):  # not JSON, or nested past what Python can read
        return ""
    msg: Any = None
    if isinstance(data, dict):
        msg = data.get("error") or data.get("message") or data.get("detail")
        if isinstance(msg, dict):
            msg = msg.get("message")
    if not isinstance(msg, str):
        return ""
    return " ".join(clean_text(msg, secrets=[*([secret] if secret else []), *secret_values()]).split())[:300]


def _status_error(
    response: httpx.Response,
    attempts: int,
    secret: str | None,
    outcome: RetryOutcome | None = None,
    policy: RetryPolicy = EXA_RETRY,
) -> ExaError:
    status = response.status_code
    said = _exa_error_text(response, secret)
    detail = f": {said}" if said else ""
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    tries += retry_after_note(outcome, policy)
    if status == 401:
        return ExaError(
            "auth", status, f"Exa rejected the API key (401){detail} — check EXA_API_KEY", requests=attempts
        )
    if status == 402:
        return ExaError(
            "payment",
            status,
            f"Exa says the account has no credits left (402){detail} — top up the Exa account",
            requests=attempts,
        )
    if status == 403:
        return ExaError(
            "forbidden",
            status,
            f"Exa refused the request (403){detail} — the key may lack access to /search",
            requests=attempts,
        )
    if status == 404:
        return ExaError(
            "not_found", status, "Exa answered 404 for /search — check SOURCEDESK_EXA_URL", requests=attempts
        )
    if status == 429:
        return ExaError("rate_limited", status, f"Exa kept rate-limiting the search (429){tries}", requests=attempts)
    if status >= 500:
        return ExaError("server", status, f"Exa had a server error ({status}){tries}{detail}", requests=attempts)
    if 300 <= status < 400:
        location = response.headers.get("location", "")
        with contextlib.suppress(httpx.InvalidURL, ValueError):  # shown as sent when it does not resolve
            location = str(response.url.join(location)) if location else ""
        location = clean_text(location, secrets=[*([secret] if secret else []), *secret_values()])
        to = f" to {_display_url(location)}" if location else ""
        return ExaError(
            "bad_request",
            status,
            f"Exa answered with a redirect ({status}{to}) instead of search results — check SOURCEDESK_EXA_URL",
            requests=attempts,
        )
    return ExaError("bad_request", status, f"Exa rejected the search request ({status}){detail}", requests=attempts)


def _transport_error(
    exc: Exception, attempts: int, timeout_s: float, where: str, outcome: RetryOutcome | None = None
) -> ExaError:
    tries = f" ({attempts} attempts)" if attempts > 1 else ""
    stopped = f"; {outcome.stopped}" if outcome is not None and outcome.stopped else ""
    if isinstance(exc, DeadlineExceeded):
        if exc.what and exc.what in stopped:  # the deadline that stopped the retries is already named
            stopped = ""
        return ExaError("timeout", None, f"{exc}{tries}{stopped}", requests=attempts)
    if isinstance(exc, httpx.TimeoutException):
        return ExaError(
            "timeout", None, f"Exa did not answer within {timeout_s:g} s{tries}{stopped}", requests=attempts
        )
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return ExaError(
            "network",
            None,
            f"the connection to Exa at {where} broke off before the answer was complete "
            f"({type(exc).__name__}){tries}{stopped}",
            requests=attempts,
        )
    return ExaError(
        "network", None, f"could not reach Exa at {where} ({type(exc).__name__}){tries}{stopped}", requests=attempts
    )


def _display_url(base_url: str) -> str:
    """The base URL without credentials or query (someone may paste a key into it)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


# ---------------------------------------------------------------- client


class ExaClient:
    """Async ``/search`` client with retries, a shared 10/s limiter and a request counter.

    ``requests_sent`` counts HTTP requests that actually went out (an httpx event
    hook), so callers and tests can prove that a reused source set cost nothing.
    """

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr | str | None,
        *,
        http: httpx.AsyncClient | None = None,
        timeout: float = 30,
        retry: RetryPolicy = EXA_RETRY,
        rate_per_s: float = 10,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ):
        self.base_url = base_url.rstrip("/")
        self._key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self._key = (self._key or "").strip() or None
        self.timeout = float(timeout)  # one request in all (connect, wait, whole body), not per read
        self.max_response_bytes = int(max_response_bytes)
        self.retry = retry
        self.rate_per_s = rate_per_s
        self._sleep = sleep
        self._rng = rng
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(timeout=httpx.Timeout(self.timeout))
        self._http.event_hooks.setdefault("request", []).append(self._count_request)
        self.requests_sent = 0
        self.cost_total = 0.0

    def __repr__(self) -> str:  # never the key
        return f"ExaClient(base_url={_display_url(self.base_url)!r}, key={'set' if self._key else 'missing'})"

    @property
    def has_key(self) -> bool:
        return self._key is not None

    async def _count_request(self, request: httpx.Request) -> None:
        if request.url.path.endswith("/search"):
            self.requests_sent += 1

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> ExaClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def search(self, body: dict[str, Any]) -> ExaSearchResult:
        """One search (with retries). Raises ExaError; never returns a partial answer."""
        if not self._key:
            raise ExaError("auth", None, "no Exa API key is set — set EXA_API_KEY to retrieve sources")
        url = f"{self.base_url}/search"
        headers = {"Authorization": f"Bearer {self._key}", "Content-Type": "application/json"}
        limiter = shared_limiter(
            self.base_url, self.rate_per_s, 1.0, burst=max(int(self.rate_per_s) - RESERVED_TOKENS, 1)
        )

        spent_on: list[DeadlineExceeded] = []  # what the section's time went on, for the warning

        async def send() -> httpx.Response:
            seconds = budget(self.timeout)
            section = current_deadline() if seconds < self.timeout else None
            if section is not None and seconds <= 0:
                # A retry with no time left: the cause is the try that used the time up.
                raise spent_on[-1] if spent_on else section.exceeded()
            request = self._http.build_request("POST", url, json=body, headers=headers, timeout=self.timeout)
            try:
                return await fetch_bounded(
                    self._http,
                    request,
                    seconds=seconds,
                    max_bytes=self.max_response_bytes,
                    what="Exa",
                    setting="exa_max_response_bytes",
                )
            except DeadlineExceeded as exc:
                if section is None:
                    spent_on.append(exc)
                    raise
                spent_on.append(
                    DeadlineExceeded(
                        f"{exc}; {section.what} ran out ({describe_seconds(section.seconds)})",
                        seconds=section.seconds,
                        what=section.what,
                        received=exc.received,
                    )
                )
                raise spent_on[-1] from None

        tried = 0

        async def counted() -> httpx.Response:
            nonlocal tried
            tried += 1
            return await send()

        try:
            outcome: RetryOutcome = await send_with_retries(
                counted, self.retry, limiter=limiter, rng=self._rng, sleep=self._sleep
            )
        except ResponseTooLarge as exc:  # an answer, not an accident: no retry
            raise ExaError("too_large", 200, str(exc), requests=tried) from None
        except httpx.HTTPError as exc:  # not transient (bad URL, unsupported scheme): no retry
            raise _transport_error(exc, max(tried, 1), self.timeout, _display_url(self.base_url)) from None
        attempts = outcome.requests
        if outcome.response is None:
            raise _transport_error(
                outcome.error or RuntimeError("no response"),
                attempts,
                self.timeout,
                _display_url(self.base_url),
                outcome,
            )
        response = outcome.response
        if not 200 <= response.status_code < 300:
            raise _status_error(response, attempts, self._key, outcome, self.retry)
        try:
            data = response.json()
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            if isinstance(exc, RecursionError):
                kind = "a body nested too deeply to read"
            elif not response.content.strip():
                kind = "an empty body"
            elif "html" in response.headers.get("content-type", ""):
                kind = "an HTML page"
            elif isinstance(exc, UnicodeDecodeError):
                kind = "a body that is not UTF-8 text"
            else:
                kind = "a body that is not JSON (truncated or not JSON at all)"
            raise ExaError(
                "malformed",
                response.status_code,
                f"Exa answered with {kind} instead of search results",
                requests=attempts,
            ) from None
        try:
            own = [self._key] if self._key and len(self._key) >= MIN_SECRET_LEN else []  # "sandbox" is a word
            result = parse_search_response(data, secrets=[*own, *secret_values()])
        except ExaError as err:
            err.requests = attempts
            raise
        result.requests = attempts
        self.cost_total += result.cost_total
        log.info(
            "exa search: %d results, cost $%.4f, %s ms, request %s, %d HTTP request(s)",
            len(result.results),
            result.cost_total,
            f"{result.search_time_ms:.0f}" if result.search_time_ms is not None else "?",
            result.request_id or "?",
            attempts,
        )
        return result
