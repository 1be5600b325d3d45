"""The writer's own web search results: flattened, numbered, and cleaned of junk.

A bare ``[N]`` in the writer's text points at one of these results, so the
numbering is the contract. It follows the API:

- Perplexity's Agent API numbers its inline references ``[1]``, ``[2]`` … by the
  ``id`` of each result in its ``search_results`` output items (its docs map a
  reference to the result whose ``id`` it names). When every usable result
  carries a distinct positive integer ``id``, ``[N]`` means the result with
  ``id`` N.
- Otherwise (Sonar chat completions, OpenAI-compatible servers, ids missing or
  repeated) ``[N]`` is the N-th result in API order: output items in order,
  results in order.

Either way a number is fixed *before* anything is filtered or skipped: a
malformed item (``{"title": "x"}``, ``"str"``, ``{"url": null}``) is skipped with
a warning, and its number stays reserved, so no other citation shifts. In the
list handed to the reconciler (:meth:`WebResults.indexed`) a reserved number
holds a placeholder on the reserved ``.invalid`` domain, which the pipeline
blocks: a citation to it is removed, never resolved.

Every field is outside text and is cleaned as it is read (``sourcedesk.core.text.safety``):
no control sequence, bidi override or echoed key survives into a result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

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
    if not isinstance(value, str) or not value.strip():
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
    return "url is empty" if not url.strip() else f"url {shown!r} is not a web address"


def _id(item: Any) -> int | None:
    value = item.get("id") if isinstance(item, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_NUMBER:
        return value
    return None


def read_results(items: Iterable[Any], *, use_ids: bool = True, secrets: list[str] | None = None) -> WebResults:
    """Flattened result items (API order) as numbered :class:`WebResults`, every field cleaned.

    ``use_ids`` False forces positional numbering (APIs whose results carry no ids);
    ``secrets`` are the keys to redact (default: every known key)."""
    keys = secret_values() if secrets is None else secrets
    items = list(items)
    usable = [
        (i, item)
        for i, item in enumerate(items)
        if _usable_url(item.get("url") if isinstance(item, dict) else None, keys)
    ]
    ids = [_id(item) for _, item in usable]
    by_id = use_ids and bool(usable) and all(ids) and len(set(ids)) == len(ids)
    out = WebResults(numbering="id" if by_id else "position")
    if use_ids and usable and any(ids) and not by_id:
        out.warnings.append(
            "writer: its search results carry missing or repeated ids, so [N] was read as the N-th result in API order"
        )
    for position, item in enumerate(items, 1):
        number = _id(item) if by_id else (position if position <= MAX_NUMBER else None)
        url = _usable_url(item.get("url") if isinstance(item, dict) else None, keys)
        if url is None or number is None:
            why = _why_unusable(item, keys) if url is None else "numbered past 999"
            out.skipped.append(SkippedResult(number, why))
            continue
        out.results.append(
            WebResult(
                number,
                url,
                title=_text(item.get("title"), keys),
                date=_text(item.get("date"), keys),
                last_updated=_text(item.get("last_updated"), keys),
                snippet=_text(item.get("snippet"), keys, multiline=True),
                source=_text(item.get("source"), keys),
            )
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
