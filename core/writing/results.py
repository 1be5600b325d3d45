"""The writer's own web search results: flattened, numbered, and cleaned of junk.

A bare ``[N]`` in the writer's text points at one of these results, so the
numbering is the contract. It follows the API:

- Perplexity's Agent API numbers its inline references ``[1]``, ``[2]`` … by the
  integer ``id`` of each result in its ``search_results`` output items, and maps
  them the way its own MCP server does (``formatAgentResponseText`` in
  perplexityai/modelcontextprotocol): ``[N]`` is the result whose ``id`` is N
  whenever the ids are consistent — the same id coming back with the same URL is
  the same result, not a conflict.
- Only ids that truly conflict (one id, two URLs) or that cannot be a marker
  (missing, not a whole number, out of range) make the ids unusable; ``[N]`` is
  then the N-th *unique URL* in API order (a repeat of a URL takes no new number,
  an item with no URL at all takes none), with a warning that names the problem.
- Sonar chat completions and OpenAI-compatible servers give no ids: ``[N]`` is the
  N-th result in API order (output items in order, results in order).

Either way a number is fixed *before* anything is filtered or skipped: a
malformed item (``{"title": "x"}``, ``"str"``, ``{"url": null}``) is skipped with
a warning, and its number stays reserved, so no other citation shifts. In the
list handed to the reconciler (:meth:`WebResults.indexed`) a reserved number
holds a placeholder on the reserved ``.invalid`` domain, which the pipeline
blocks: a citation to it is removed, never resolved.

Every field is outside text and is cleaned as it is read (``sourcedesk.core.text.safety``):
no control sequence, bidi override or echoed key survives into a result. A URL is not
cleaned into shape: one carrying a CR/LF, a control, bidi or invisible character, or
one whose host browsers and the HTTP client read differently, makes its result
malformed (``sourcedesk.core.net.ambiguous_urls``) — ``…/a\r\nSet-Cookie: x=1`` must
never become ``…/a Set-Cookie: x=1``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from sourcedesk.core.net.ambiguous_urls import why_unusable
from sourcedesk.core.net.urls import host_of, normalise_url
from sourcedesk.core.text.safety import clean_text
from sourcedesk.core.text.secrets import secret_values

RESULT_FIELDS = ("url", "title", "date", "last_updated", "snippet", "source")
MAX_NUMBER = 999  # a bare citation has at most three digits
PLACEHOLDER_HOST = "skipped-result.invalid"  # RFC 2606: can never resolve


@dataclass(frozen=True)
class WebResult:
    number: int  # what a bare [number] in the text means
    url: str
    title: str | None = None
    date: str | None = None
    last_updated: str | None = None
    snippet: str | None = None
    source: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.number, **{k: getattr(self, k) for k in RESULT_FIELDS}}


@dataclass(frozen=True)
class SkippedResult:
    number: int | None  # None: it could not be given a number (no id while results are numbered by id)
    reason: str


@dataclass
class WebResults:
    results: list[WebResult] = field(default_factory=list)
    skipped: list[SkippedResult] = field(default_factory=list)
    numbering: Literal["position", "id"] = "position"
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.results)

    def indexed(self) -> list[dict[str, Any]]:
        """One item per number 1…max, in order: the result, or a placeholder for a reserved number."""
        by_number = {r.number: r for r in self.results}
        top = max([*by_number, *(s.number for s in self.skipped if s.number is not None)], default=0)
        return [by_number[n].as_dict() if n in by_number else placeholder(n) for n in range(1, top + 1)]

    def number_for(self, url: str) -> int | None:
        """The number of the first result at ``url`` (normalised), if any."""
        key = normalise_url(url)
        for r in self.results:
            if normalise_url(r.url) == key:
                return r.number
        return None

    def skipped_numbers(self) -> dict[int, str]:
        return {s.number: s.reason for s in self.skipped if s.number is not None}


def placeholder(number: int) -> dict[str, Any]:
    return {"n": number, "url": f"https://{PLACEHOLDER_HOST}/search-result-{number}", "title": ""}


def is_placeholder(url: str) -> bool:
    return (host_of(url) or "") == PLACEHOLDER_HOST


def _text(value: Any, secrets: list[str], *, multiline: bool = False) -> str | None:
    if isinstance(value, str):
        return clean_text(value, multiline=multiline, secrets=secrets)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _usable_url(value: Any, secrets: list[str]) -> str | None:
    if not isinstance(value, str) or not value.strip() or why_unusable(value):
        return None
    url = clean_text(value.strip(), secrets=secrets)  # a key echoed in a query string is redacted
    if not url.lower().startswith(("http://", "https://")) or not host_of(url):
        return None
    return url


def _why_unusable(item: Any, secrets: list[str]) -> str:
    if not isinstance(item, dict):
        return f"not an object ({type(item).__name__})"
    url = item.get("url")
    if url is None:
        return "no url"
    if not isinstance(url, str):
        return f"url is {type(url).__name__}, not text"
    shown = clean_text(url[:80], secrets=secrets)
    if not url.strip():
        return "url is empty"
    refused = why_unusable(url)
    if refused:  # named by its host: the rest of it is what was refused
        return f"a url on {clean_text(host_of(url) or 'no host', secrets=secrets)} refused: {refused}"
    return f"url {shown!r} is not a web address"


def _id(item: Any) -> int | None:
    value = item.get("id") if isinstance(item, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_NUMBER:
        return value
    return None


@dataclass
class _Item:
    """One result item as the API sent it, read once."""

    raw: Any
    url: str | None  # usable, cleaned; None when the item is malformed
    has_url: bool  # it names some URL (usable or not): it holds a place when results are numbered by position


def _items(items: Iterable[Any], secrets: list[str]) -> list[_Item]:
    out = []
    for item in items:
        raw_url = item.get("url") if isinstance(item, dict) else None
        has_url = isinstance(raw_url, str) and bool(raw_url.strip())
        out.append(_Item(item, _usable_url(raw_url, secrets), has_url))
    return out


def _id_problems(items: list[_Item]) -> list[str]:
    """Why the ids cannot number the results (empty: ``[N]`` is the result whose id is N)."""
    seen: dict[int, str] = {}
    conflicts: list[str] = []
    unusable: list[str] = []
    for item in items:
        if item.url is None:
            continue  # a malformed item keeps its id reserved, or takes none: it never decides
        number = _id(item.raw)
        if number is None:
            value = item.raw.get("id") if isinstance(item.raw, dict) else None
            unusable.append("missing" if value is None else f"{clean_text(repr(value)[:20])}")
            continue
        key = normalise_url(item.url)
        if number in seen and normalise_url(seen[number]) != key:
            conflicts.append(f"id {number} is given to {seen[number]} and to {item.url}")
        seen.setdefault(number, item.url)
    problems = []
    if conflicts:
        problems.append("its search results give one id to different pages (" + "; ".join(conflicts[:3]) + ")")
    if unusable and seen:  # no id at all (a server that sends none) is numbering by position, not a problem
        shown = ", ".join(dict.fromkeys(unusable[:5]))
        problems.append(
            f"{len(unusable)} of its search results carry no id a marker can name (a whole number 1-999; got {shown})"
        )
    return problems


def _by_id(items: list[_Item], out: WebResults, secrets: list[str]) -> None:
    taken: set[int] = set()
    for item in items:
        number = _id(item.raw)
        if item.url is None:
            out.skipped.append(SkippedResult(number, _why_unusable(item.raw, secrets)))
        elif number is not None and number not in taken:  # a repeat of an id at its URL is the same result
            taken.add(number)
            out.results.append(_result(number, item.url, item.raw, secrets))


def _by_unique_url(items: list[_Item], out: WebResults, secrets: list[str]) -> None:
    """``[N]`` is the N-th unique URL in API order (a repeated URL takes no new number)."""
    numbers: dict[str, int] = {}
    position = 0
    for item in items:
        if item.url is not None and normalise_url(item.url) in numbers:
            continue
        if not item.has_url:
            out.skipped.append(SkippedResult(None, _why_unusable(item.raw, secrets)))
            continue
        position += 1
        number = position if position <= MAX_NUMBER else None
        if item.url is None or number is None:
            out.skipped.append(
                SkippedResult(number, _why_unusable(item.raw, secrets) if number else "numbered past 999")
            )
            continue
        numbers[normalise_url(item.url)] = number
        out.results.append(_result(number, item.url, item.raw, secrets))


def _by_position(items: list[_Item], out: WebResults, secrets: list[str]) -> None:
    for position, item in enumerate(items, 1):
        number = position if position <= MAX_NUMBER else None
        if item.url is None or number is None:
            why = _why_unusable(item.raw, secrets) if item.url is None else "numbered past 999"
            out.skipped.append(SkippedResult(number, why))
            continue
        out.results.append(_result(number, item.url, item.raw, secrets))


def _result(number: int, url: str, item: dict[str, Any], keys: list[str]) -> WebResult:
    return WebResult(
        number,
        url,
        title=_text(item.get("title"), keys),
        date=_text(item.get("date"), keys),
        last_updated=_text(item.get("last_updated"), keys),
        snippet=_text(item.get("snippet"), keys, multiline=True),
        source=_text(item.get("source"), keys),
    )


def read_results(items: Iterable[Any], *, use_ids: bool = True, secrets: list[str] | None = None) -> WebResults:
    """Flattened result items (API order) as numbered :class:`WebResults`, every field cleaned.

    ``use_ids`` False forces positional numbering (APIs whose results carry no ids);
    ``secrets`` are the keys to redact (default: every known key)."""
    keys = secret_values() if secrets is None else secrets
    read = _items(items, keys)
    if not use_ids:
        out = WebResults(numbering="position")
        _by_position(read, out, keys)
    else:
        problems = _id_problems(read)
        numbered = any(_id(item.raw) is not None for item in read if item.url is not None)
        out = WebResults(numbering="id" if numbered and not problems else "position")
        if out.numbering == "position":
            _by_unique_url(read, out, keys)
        else:
            _by_id(read, out, keys)
        if problems:
            out.warnings.append(
                "writer: "
                + "; ".join(problems)
                + ", so [N] was read as the N-th different page in API order, as Perplexity's own MCP server reads it"
            )
    if out.skipped:
        out.warnings.append(_skipped_warning(out.skipped))
    return out


def _skipped_warning(skipped: list[SkippedResult]) -> str:
    parts = [f"{'#' + str(s.number) if s.number is not None else 'one'} ({s.reason})" for s in skipped[:5]]
    more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    noun = "result" if len(skipped) == 1 else "results"
    return (
        f"writer: skipped {len(skipped)} malformed search {noun}: {', '.join(parts)}{more}; "
        "the other results keep their numbers, and a citation to a skipped one is removed"
    )
