"""Every way Exa can fail to give results, as one ``ExaError`` an analyst can act on.

Exa's own error sentence is kept (cleaned, one line, never an HTML page, never the
key); a status says what it means (401: check EXA_API_KEY, 402: top up the account,
a redirect: check SOURCEDESK_EXA_URL, …); a transport failure says whether Exa did not
answer, broke off, or could not be reached, and which deadline ran out.
"""

from __future__ import annotations

import contextlib
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from sourcedesk.core.domain.errors import RetrievalError
from sourcedesk.core.net.deadline import DeadlineExceeded
from sourcedesk.core.net.policy import EXA_RETRY, RetryOutcome, RetryPolicy, retry_after_note
from sourcedesk.core.text.safety import clean_text
from sourcedesk.core.text.secrets import secret_values

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


def exa_error_text(response: httpx.Response, secret: str | None) -> str:
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


def status_error(
    response: httpx.Response,
    attempts: int,
    secret: str | None,
    outcome: RetryOutcome | None = None,
    policy: RetryPolicy = EXA_RETRY,
) -> ExaError:
    status = response.status_code
    said = exa_error_text(response, secret)
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
        to = f" to {display_url(location)}" if location else ""
        return ExaError(
            "bad_request",
            status,
            f"Exa answered with a redirect ({status}{to}) instead of search results — check SOURCEDESK_EXA_URL",
            requests=attempts,
        )
    return ExaError("bad_request", status, f"Exa rejected the search request ({status}){detail}", requests=attempts)


def transport_error(
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


def display_url(base_url: str) -> str:
    """The base URL without credentials or query (someone may paste a key into it)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")
