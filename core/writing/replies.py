"""What an HTTP answer from the writer means: its error in the analyst's words, its JSON, its body.

A non-200 answer becomes one ``WriterError`` naming the cause (the key, request
headers and the prompt never appear; a server's own words are cleaned like every
other outside text, ``Scrubber``); a 200 answer's body is JSON or a ``malformed``
error that says what the body really is (empty, an HTML page, not text in its
charset, truncated, not JSON) — nothing is decoded with replacement characters and
passed on as content.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import re
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from sourcedesk.core.net.deadline import DeadlineExceeded
from sourcedesk.core.net.policy import WRITER_RETRY, RetryOutcome, RetryPolicy, retry_after_note
from sourcedesk.core.text.safety import clean_text
from sourcedesk.core.text.secrets import MIN_SECRET_LEN, secret_values
from sourcedesk.core.writing.base import ErrorKind, WriterError

WHAT = "the writer"  # how bounded reads name the server in their messages
CAP_SETTING = "writer_max_response_bytes"
CHARS_SETTING = "writer_max_answer_chars"
_MAX_MESSAGE = 300
_HTML_RE = re.compile(rb"^\s*(<!doctype\s+html|<html|<head|<body)", re.IGNORECASE)
_BEARER_RE = re.compile(r"Bearer\s+\S+", re.IGNORECASE)


class Scrubber:
    """Outside text for a message: cleaned (no control sequence, no key), one line, bounded."""

    def __init__(self, key: str | None):
        self.key = key
        self.secrets = [*([key] if key and len(key) >= MIN_SECRET_LEN else []), *secret_values()]

    def __call__(self, text: str) -> str:
        text = clean_text(text, secrets=self.secrets)
        text = _BEARER_RE.sub("Bearer [redacted]", text)
        text = " ".join(text.split())
        return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def is_html(response: httpx.Response, body: bytes | str) -> bool:
    ctype = response.headers.get("content-type", "").lower()
    start = body[:512].encode("utf-8", "replace") if isinstance(body, str) else body[:512]
    return "text/html" in ctype or bool(_HTML_RE.match(start))


def error_message(data: Any) -> str | None:
    """The server's own sentence from an ``{"error": {message, param}}``-style body, if any."""
    if not isinstance(data, dict):
        return None
    err = data.get("error", data)
    if isinstance(err, str):
        return err
    if isinstance(err, dict):
        for key in ("message", "detail", "error", "type"):
            if isinstance(err.get(key), str) and err[key].strip():
                text: str = err[key]
                param = err.get("param")
                if isinstance(param, str) and param.strip() and param not in text:
                    text += f" (field: {param})"
                return text
    detail = data.get("detail")
    return detail if isinstance(detail, str) else None


def _detail(body: str) -> str | None:
    """The server's own words in an error body: its JSON error message, else its text
    (a JSON body without a message says nothing)."""
    try:
        return error_message(json.loads(body))
    except (ValueError, RecursionError):  # not JSON, or nested past what Python can read
        return body.strip() or None


def charset_of(response: httpx.Response) -> str:
    """The declared charset if Python knows it, else UTF-8 (what JSON and SSE must be)."""
    declared = response.charset_encoding
    if declared:
        try:
            return codecs.lookup(declared).name
        except LookupError:
            pass
    return "utf-8"


def shown_charset(charset: str) -> str:
    return "UTF-8" if charset == "utf-8" else charset


def _error_body(response: httpx.Response) -> str | None:
    """An error answer's body as text; None when it is not text in its charset."""
    try:
        return response.content.decode(charset_of(response))
    except UnicodeDecodeError:
        return None


def display_url(url: str) -> str:
    """A URL without credentials or query (someone may paste a key into a base URL)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


# status → (kind, what the analyst reads); "{d}" is the server's own message, if any.
_CLIENT_ERRORS: dict[int, tuple[ErrorKind, str]] = {
    401: ("auth", "the writer rejected the API key (HTTP 401){d}"),
    402: ("payment", "the writer refused for billing reasons (HTTP 402){d}"),
    403: ("forbidden", "the writer refused the request (HTTP 403){d}"),
    404: ("not_found", "the writer URL answered HTTP 404{d} — check SOURCEDESK_WRITER_URL"),
    408: ("timeout", "the writer timed out the request (HTTP 408){d}"),
    413: ("bad_request", "the request was too large for the writer (HTTP 413){d}"),
    429: ("rate_limited", "the writer is rate limiting requests (HTTP 429){d}"),
}


def error_for(
    response: httpx.Response,
    attempts: int,
    scrub: Scrubber,
    outcome: RetryOutcome | None = None,
    policy: RetryPolicy = WRITER_RETRY,
) -> WriterError:
    """The failure a non-200 answer means, in the analyst's words."""
    status = response.status_code
    body = _error_body(response)
    html = is_html(response, response.content)
    if body is None:
        detail: str | None = "a body that is not UTF-8 text"
    else:
        detail = None if html else _detail(body)
    d = f": {scrub(detail)}" if detail else ""
    after = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
    after += retry_after_note(outcome, policy)
    if 300 <= status < 400:
        location = response.headers.get("location", "")
        with contextlib.suppress(httpx.InvalidURL, ValueError):  # shown as sent when it does not resolve
            location = str(response.url.join(location)) if location else ""
        to = f" to {display_url(scrub(location))}" if location else ""
        return WriterError(
            "bad_request",
            status,
            f"the writer answered with a redirect (HTTP {status}{to}) instead of an answer — "
            "check SOURCEDESK_WRITER_URL",
            requests=attempts,
        )
    if status in _CLIENT_ERRORS:
        kind, text = _CLIENT_ERRORS[status]
        return WriterError(kind, status, text.format(d=d) + after, requests=attempts)
    if status >= 500 or status == 409:
        text = f"HTTP {status} from writer gateway (HTML page)" if html else f"HTTP {status} from writer{d}"
        return WriterError("server", status, text + after, requests=attempts)
    if 400 <= status < 500:
        what = "an HTML page" if html else (d[2:] or "no details")
        return WriterError(
            "bad_request", status, f"the writer rejected the request (HTTP {status}): {what}", requests=attempts
        )
    return WriterError("malformed", status, f"unexpected HTTP {status} from the writer", requests=attempts)


def transport_error(
    exc: BaseException, attempts: int, timeout: float, url: str, outcome: RetryOutcome | None = None
) -> WriterError:
    after = f" (after {attempts} attempts)" if attempts > 1 else ""
    stopped = f"; {outcome.stopped}" if outcome is not None and outcome.stopped else ""
    if isinstance(exc, DeadlineExceeded):  # it already says which deadline ran out
        return WriterError("timeout", None, f"{exc}{after}", requests=attempts)
    if isinstance(exc, httpx.TimeoutException):
        return WriterError(
            "timeout",
            None,
            f"the writer did not answer within {timeout:g} s (writer_timeout_s){after}{stopped}",
            requests=attempts,
        )
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return WriterError(
            "network",
            None,
            f"the connection to the writer at {display_url(url)} broke off before the answer was complete "
            f"({type(exc).__name__}){after}{stopped}",
            requests=attempts,
        )
    return WriterError(
        "network",
        None,
        f"could not reach the writer at {display_url(url)}: {type(exc).__name__}{after}{stopped}",
        requests=attempts,
    )


def decode_answer(response: httpx.Response, attempts: int) -> Any:
    """A 200 answer's JSON, or a ``malformed`` WriterError naming what the body really is."""
    body = response.content
    status = response.status_code

    def malformed(what: str) -> WriterError:
        return WriterError(
            "malformed",
            status,
            f"the writer answered HTTP {status} with {what} instead of an answer",
            requests=attempts,
        )

    if not body.strip():
        raise malformed("an empty body")
    if is_html(response, body):
        raise malformed("an HTML page")
    charset = charset_of(response)
    try:
        return orjson.loads(body if charset == "utf-8" else body.decode(charset))
    except UnicodeDecodeError:
        raise malformed(f"a body that is not {shown_charset(charset)} text") from None
    except orjson.JSONDecodeError:
        pass
    # Only a broken body gets here: find out how it is broken (the cost is no longer a concern).
    try:
        text = body.decode(charset)
    except UnicodeDecodeError as exc:
        raise malformed(f"a body that is not {shown_charset(charset)} text (byte {exc.start:,})") from None
    try:
        # A lone surrogate escape ("\ud800") is valid JSON that orjson refuses: read it here, and let
        # cleaning replace it with U+FFFD where the text enters. NaN and Infinity are not JSON at all.
        return json.loads(text, parse_constant=_not_a_number)
    except RecursionError:
        raise malformed("a JSON body nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise malformed(f"a truncated JSON body (it breaks off after {len(body):,} bytes)") from None
        raise malformed(f"a body that is not JSON ({exc.msg} at byte {exc.pos:,})") from None
    except ValueError:  # NaN, Infinity
        raise malformed("a body that is not JSON") from None


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")
