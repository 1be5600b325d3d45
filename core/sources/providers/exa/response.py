"""Exa's ``/search`` answer read tolerantly, and cleaned where it enters the product.

Response quirks, all real: ``title`` may be ``""``; fields are often omitted; with a
``summary.schema`` the summary arrives as a JSON *string*; ``entities`` is an array (or
one object); ``costDollars`` varies in shape (``total`` wins, else the breakdown is
summed); ``searchTime`` is milliseconds; ``warnings`` are strings or ``{code, message}``.

Every string of every result — titles, URLs, text, highlights, summaries, facts — and
every warning is cleaned here (``sourcedesk.core.text.safety``: no terminal control
sequence, bidi override, invisible character or lone surrogate, no API key a server
echoed back). A result's URL is not cleaned into shape: one carrying such characters,
or one two URL parsers read differently, makes the result unusable (it is skipped and
counted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sourcedesk.core.domain.costs import reported_dollars, unusable_amount
from sourcedesk.core.net.ambiguous_urls import why_unusable
from sourcedesk.core.sources.facts import decode_json_object
from sourcedesk.core.sources.providers.exa.errors import ExaError
from sourcedesk.core.text.safety import Taint, clean_text, clean_tree, tainted
from sourcedesk.core.text.secrets import secret_values


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
    invisible_removed: int = 0  # results whose strings carried invisible characters or lone surrogates
    keys_redacted: int = 0  # results that echoed an API key back


def _str_or_none(v: Any, secrets: list[str] | None = None) -> str | None:
    if not isinstance(v, str):
        return None
    v = clean_text(v, secrets=secrets).strip()
    return v or None


def _usable_url(v: Any, secrets: list[str]) -> str | None:
    """An http(s) URL exactly as sent — or None: a URL carrying control, bidi or invisible
    characters, or one whose host two URL parsers read differently, is not repaired into
    some other address, it is unusable (``sourcedesk.core.net.ambiguous_urls``)."""
    if not isinstance(v, str) or not v.strip() or why_unusable(v):
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


def _taint(value: Any, secrets: list[str]) -> Taint:
    """What cleaning takes out of a raw result, its JSON summary decoded."""
    found = tainted(value, secrets)
    summary = value.get("summary") if isinstance(value, dict) else None
    decoded = decode_json_object(summary.strip()) if isinstance(summary, str) else None
    if decoded is None:
        return found
    inner = tainted(decoded, secrets)
    return Taint(found.controls or inner.controls, found.invisible or inner.invisible, found.echoed or inner.echoed)


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
        controls_removed=sum(t.controls for t in taints),
        invisible_removed=sum(t.invisible for t in taints),
        keys_redacted=sum(t.echoed for t in taints),
    )
