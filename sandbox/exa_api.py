"""The sandbox's Exa ``POST /search``: real request validation, real response quirks.

Quirks reproduced on purpose (each one has bitten the product in the field):
substring domain filters (see ``sourcedesk.sandbox.search``), 400 exactly where Exa answers it —
``excludeDomains``, ``includeText``, ``excludeText`` or date filters with ``category:
company``/``people``, an ``includeDomains`` that is not LinkedIn's with ``people``,
``excludeText`` with ``financial report``, a search type Exa no longer takes
(``keyword``, ``hybrid``), ``maxCharacters`` over 10,000 —, schema summaries returned as a
JSON *string* with the word ``"null"`` for facts the page lacks, company
``entities`` as an array with explicit nulls, ``title: ""`` for some pages,
omitted ``score``/``author``/``publishedDate`` and a ``costDollars`` whose shape
varies (``total`` is always there).

Exa as of late 2026: ``resolvedSearchType`` and ``highlightScores`` are gone from
responses; ``category`` is an unvalidated soft hint, so a value outside today's
list (``research paper``, ``github``, …) is accepted and simply does not steer;
``startCrawlDate``/``endCrawlDate`` are silently ignored; ``numSentences`` maps to
``maxCharacters`` (about 1,333 characters a sentence) and ``highlightsPerUrl``,
``useAutoprompt`` and ``livecrawl`` are deprecated. The response's ``warnings``
(``[{"code", "message"}]``) say when any of that happened.

Sandbox rule (not documented by Exa, but the product must cope with the refusal):
``includeDomains`` and ``excludeDomains`` both non-empty in one call → 400.

Every "sometimes" is decided by a hash of the seed and the page/query, so the same
request always gets the same answer.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from sourcedesk.sandbox.corpus import SANDBOX_LABEL, Page
from sourcedesk.sandbox.http import (
    Reply,
    Request,
    SandboxContext,
    bearer_or_api_key,
    json_reply,
    key_accepted,
    request_id,
    service_error,
)
from sourcedesk.sandbox.search import rank, terms

MAX_DOMAINS = 1200
# Exa's search types today; "keyword" and "hybrid" are gone (a 400 like any unknown type).
SEARCH_TYPES = frozenset({"auto", "fast", "instant", "neural", "deep-lite", "deep", "deep-reasoning", "lite"})
CATEGORIES = frozenset({"company", "publication", "news", "personal site", "financial report", "people"})
CHARS_PER_SENTENCE = 1333
DEPRECATED = {
    "useAutoprompt": "useAutoprompt is deprecated and has no effect",
    "livecrawl": "livecrawl is superseded by maxAgeHours; the value was ignored",
    "startCrawlDate": "startCrawlDate is no longer supported and was ignored",
    "endCrawlDate": "endCrawlDate is no longer supported and was ignored",
}
# What each category answers 400 to (written here, not imported: the sandbox stands in for the real service,
# so a regression in the product's own table must meet a refusal, not its mirror image).
_REFUSED_WITH = {
    "company": ("startPublishedDate", "endPublishedDate", "includeText", "excludeText", "excludeDomains"),
    "people": ("startPublishedDate", "endPublishedDate", "includeText", "excludeText", "excludeDomains"),
    "financial report": ("excludeText",),
}
MAX_CONTENT_CHARS = 10_000  # contents.text.maxCharacters and contents.highlights.maxCharacters
_DATE_KEYS = ("startPublishedDate", "endPublishedDate")  # crawl dates are ignored (see DEPRECATED)
PRICE_SEARCH = 0.007  # includes up to 10 results
PRICE_EXTRA_RESULT = 0.001
PRICE_CONTENT_PAGE = 0.001  # per page per content type


class BadRequest(Exception):
    def __init__(self, message: str, tag: str = "INVALID_REQUEST_BODY") -> None:
        super().__init__(message)
        self.message, self.tag = message, tag


@dataclass
class SearchParams:
    query: str
    num_results: int = 10
    type: str = "auto"
    category: str | None = None
    include_domains: list[str] = field(default_factory=list)
    exclude_domains: list[str] = field(default_factory=list)
    start: str | None = None
    end: str | None = None
    text: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    highlights: dict[str, Any] | None = None
    exclude_text: str | None = None  # one phrase of at most five words
    warnings: list[dict[str, str]] = field(default_factory=list)

    @property
    def content_types(self) -> int:
        return sum(x is not None for x in (self.text, self.summary, self.highlights))


def _h(seed: int, *parts: object) -> int:
    """A stable hash (Python's ``hash`` is salted per process)."""
    raw = "\x1f".join([str(seed), *map(str, parts)]).encode("utf-8")
    return int.from_bytes(hashlib.sha256(raw).digest()[:8], "big")


def blank_title(page: Page, seed: int) -> bool:
    """Whether this page's ``title`` comes back as ``""`` (about one page in eight)."""
    return _h(seed, "title", page.url) % 8 == 0


# ----------------------------------------------------------------------------- request


def _option(value: Any, name: str, allowed: set[str]) -> dict[str, Any] | None:
    """``true`` / ``{...}`` / absent → options dict or None."""
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if isinstance(value, dict):
        unknown = set(value) - allowed
        if unknown:
            raise BadRequest(f"contents.{name}: unknown option(s) {', '.join(sorted(unknown))}")
        return dict(value)
    raise BadRequest(f"contents.{name} must be true or an object")


def _positive_int(options: dict[str, Any], key: str, where: str) -> int | None:
    value = options.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadRequest(f"{where}.{key} must be a positive integer")
    return value


def _domains(body: dict[str, Any], key: str) -> list[str]:
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
        raise BadRequest(f"{key} must be an array of strings")
    if len(value) > MAX_DOMAINS:
        raise BadRequest(f"{key} accepts at most {MAX_DOMAINS} entries (got {len(value)})")
    return [d for d in value if d.strip()]


def _iso(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    try:
        datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"{key} must be an ISO 8601 date, e.g. 2024-01-31T00:00:00.000Z") from None
    return str(value)


MAX_TEXT_FILTER_WORDS = 5


def _text_filter(body: dict[str, Any], key: str) -> str | None:
    """``includeText``/``excludeText``: a list with one string of at most five words (Exa's current limits)."""
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"{key} must be an array of strings")
    phrases = [v for v in value if v.strip()]
    if len(phrases) > 1:
        raise BadRequest(f"{key} currently supports only 1 string")
    if phrases and len(phrases[0].split()) > MAX_TEXT_FILTER_WORDS:
        raise BadRequest(f"{key} strings may have at most {MAX_TEXT_FILTER_WORDS} words")
    return phrases[0] if phrases else None


def _is_linkedin(domain: str) -> bool:
    host = domain.strip().lower().split("://", 1)[-1].split("/", 1)[0].rstrip(".")
    return host == "linkedin.com" or host.endswith(".linkedin.com")


def _category_refusals(category: str | None, body: dict[str, Any]) -> None:
    """The 400s some categories answer to a filter (and ``people`` to a domain that is not LinkedIn's)."""
    if category is None:
        return
    for key in _REFUSED_WITH.get(category, ()):
        if body.get(key):
            what = "date filters are" if key.endswith("PublishedDate") else f"{key} is"
            raise BadRequest(f"{what} not supported with category '{category}'", "INVALID_REQUEST")
    include = body.get("includeDomains") or []
    if category == "people" and any(not _is_linkedin(d) for d in include if isinstance(d, str)):
        raise BadRequest("includeDomains only accepts LinkedIn domains with category 'people'", "INVALID_REQUEST")


def _max_characters(options: dict[str, Any], where: str) -> None:
    value = _positive_int(options, "maxCharacters", where)
    if value is not None and value > MAX_CONTENT_CHARS:
        raise BadRequest(f"{where}.maxCharacters must be at most {MAX_CONTENT_CHARS} (got {value})")


def _contents(body: dict[str, Any], warnings: list[dict[str, str]]) -> tuple[Any, Any, Any]:
    """``contents``: text, summary and highlights options checked like the API checks them."""
    contents = body.get("contents") or {}
    if not isinstance(contents, dict):
        raise BadRequest("contents must be an object")
    text = _option(contents.get("text"), "text", {"maxCharacters", "includeHtmlTags", "verbosity"})
    if "livecrawl" in contents:  # in contents is where it lived; "true" silently meant "never"
        warnings.append({"code": "deprecated_parameter", "message": DEPRECATED["livecrawl"]})
    if text is not None:
        _max_characters(text, "contents.text")
    summary = _option(contents.get("summary"), "summary", {"query", "schema"})
    if summary is not None:
        schema = summary.get("schema")
        if schema is not None and (not isinstance(schema, dict) or not isinstance(schema.get("properties", {}), dict)):
            raise BadRequest("contents.summary.schema must be a JSON Schema object", "INVALID_JSON_SCHEMA")
    highlights = _option(
        contents.get("highlights"), "highlights", {"numSentences", "highlightsPerUrl", "query", "maxCharacters"}
    )
    if highlights is not None:
        for key in ("numSentences", "highlightsPerUrl"):
            _positive_int(highlights, key, "contents.highlights")
        _max_characters(highlights, "contents.highlights")
        if "numSentences" in highlights:
            warnings.append(
                {"code": "deprecated_parameter", "message": "numSentences is deprecated; use maxCharacters"}
            )
            highlights.setdefault(
                "maxCharacters", min(highlights["numSentences"] * CHARS_PER_SENTENCE, MAX_CONTENT_CHARS)
            )
        if "highlightsPerUrl" in highlights:
            warnings.append(
                {"code": "deprecated_parameter", "message": "highlightsPerUrl is deprecated and was ignored"}
            )
    return text, summary, highlights


def parse_search(body: Any) -> SearchParams:
    """Validate a ``/search`` body like the API does; BadRequest names the field."""
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise BadRequest("query is required and must be a non-empty string")
    num = body.get("numResults", 10)
    if isinstance(num, bool) or not isinstance(num, int) or not 1 <= num <= 100:
        raise BadRequest(f"numResults must be an integer from 1 to 100 (got {num!r})", "INVALID_NUM_RESULTS")
    kind = body.get("type", "auto")
    if kind not in SEARCH_TYPES:
        raise BadRequest(f"type must be one of {', '.join(sorted(SEARCH_TYPES))}")
    warnings: list[dict[str, str]] = []
    category = body.get("category")
    if category is not None and not isinstance(category, str):
        raise BadRequest("category must be a string")
    if category is not None and category not in CATEGORIES:
        warnings.append(
            {
                "code": "unknown_category",
                "message": f"category '{category}' is not recognised and was ignored; "
                f"categories: {', '.join(sorted(CATEGORIES))}",
            }
        )
        category = None  # a soft hint: accepted, and it steers nothing
    for key, message in DEPRECATED.items():
        if key in body:
            warnings.append({"code": "deprecated_parameter", "message": message})
    include, exclude = _domains(body, "includeDomains"), _domains(body, "excludeDomains")
    dates = {key: _iso(body, key) for key in _DATE_KEYS}
    exclude_text = _text_filter(body, "excludeText")
    _text_filter(body, "includeText")
    _category_refusals(category, body)
    if include and exclude:
        raise BadRequest("includeDomains and excludeDomains cannot be combined in one request", "INVALID_REQUEST")

    text, summary, highlights = _contents(body, warnings)
    return SearchParams(
        query=query.strip(),
        num_results=num,
        type=kind,
        category=category,
        include_domains=include,
        exclude_domains=exclude,
        start=dates["startPublishedDate"],
        end=dates["endPublishedDate"],
        text=text,
        summary=summary,
        highlights=highlights,
        exclude_text=exclude_text,
        warnings=warnings,
    )


# ----------------------------------------------------------------------------- contents

# Fact spellings that mean the same thing (schema property → corpus fact).
_FACT_GROUPS = [
    {"foundedyear", "founded", "yearfounded", "foundingyear", "founded_year"},
    {"headquarters", "hq", "location", "headquarterslocation", "hqlocation"},
    {"funding", "fundingtotal", "totalfunding", "fundingraised", "totalraised", "funding_total"},
    {"latestround", "lastround", "fundinglatestround", "mostrecentround", "latest_round"},
    {"investors", "keyinvestors", "notableinvestors", "leadinvestors"},
    {"notablecustomers", "customers", "keycustomers", "customerlogos", "notable_customers"},
    {"employees", "headcount", "employeecount", "workforce", "teamsize", "numberofemployees"},
]


def _norm_key(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def _fact(facts: dict[str, Any], prop: str) -> Any:
    wanted = _norm_key(prop)
    by_norm = {_norm_key(k): v for k, v in facts.items()}
    if wanted in by_norm:
        return by_norm[wanted]
    for group in _FACT_GROUPS:
        normalised = {_norm_key(g) for g in group}
        if wanted in normalised:
            for key in sorted(normalised):
                if key in by_norm:
                    return by_norm[key]
    return None


def _coerce(value: Any, prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string":
        if isinstance(value, list):
            return ", ".join(map(str, value))
        if isinstance(value, dict):
            return "; ".join(f"{k}: {v}" for k, v in value.items())
        return str(value)
    if kind == "array":
        return value if isinstance(value, list) else [value]
    if kind in ("integer", "number") and isinstance(value, str):
        digits = re.sub(r"[^0-9.]", "", value)
        try:
            return int(digits) if kind == "integer" else float(digits)
        except ValueError:
            return value
    if kind == "object" and isinstance(value, dict) and isinstance(prop.get("properties"), dict):
        return {k: _coerce(v, prop["properties"].get(k, {})) for k, v in value.items()}
    return value


def schema_summary(page: Page, schema: dict[str, Any], seed: int) -> str:
    """The summary Exa returns for a schema: a JSON *string*. A fact the page lacks comes
    back as the word ``"null"`` (string-typed fields) or ``null``/``[]`` on some pages,
    and is simply omitted on others — deterministic per page and field."""
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        value = _fact(page.facts, name)
        if value not in (None, "", [], {}):
            out[name] = _coerce(value, prop)
            continue
        if _h(seed, "missing", page.url, name) % 2 == 0:
            continue  # omitted
        kind = prop.get("type")
        if kind == "array":
            out[name] = []
        elif kind in ("integer", "number", "boolean", "object"):
            out[name] = None
        else:
            out[name] = "null"
    return json.dumps(out, ensure_ascii=False)


_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")


def _sentences(page: Page) -> list[str]:
    """Prose sentences of the page (no label, headings markup, code blocks or tables)."""
    body = re.sub(r"```.*?```", " ", page.text.replace(SANDBOX_LABEL, " "), flags=re.S)
    parts: list[str] = []
    for block in re.split(r"\n\s*\n", body):
        lines = [line.strip() for line in block.splitlines() if not line.strip().startswith("|")]
        text = re.sub(r"\*\*|`", "", " ".join(line.lstrip("#*- ").strip() for line in lines)).strip()
        parts.extend(s.strip() for s in _SENTENCE_RE.split(text) if len(s.strip()) > 20)
    return parts


def highlights_for(page: Page, query: str, options: dict[str, Any]) -> list[str]:
    """The passage that best overlaps the query, as Exa's ``highlights`` (one per page,
    within ``maxCharacters``; Exa no longer returns scores for them)."""
    sentences = _sentences(page)
    if not sentences:
        return []
    q_terms = set(terms(options.get("query") or query))
    max_chars = options.get("maxCharacters") or 2 * CHARS_PER_SENTENCE
    scored = []
    for i, sentence in enumerate(sentences):
        words = set(terms(sentence))
        overlap = len(q_terms & words) / (len(q_terms) or 1)
        scored.append((overlap, -i))
    best = -max(scored)[1]
    text = sentences[best]
    for following in sentences[best + 1 :]:
        if len(text) + 1 + len(following) > max_chars:
            break
        text += " " + following
    return [text[:max_chars]]


_ENTITY_SHAPE: dict[str, Any] = {
    "name": None,
    "description": None,
    "foundedYear": None,
    "workforce": {"total": None},
    "headquarters": {"address": None, "city": None, "postalCode": None, "country": None},
    "financials": {
        "revenueAnnual": None,
        "fundingTotal": None,
        "fundingLatestRound": {"name": None, "date": None, "amount": None},
    },
    "webTraffic": {"visitsMonthly": None},
}


def _fill(shape: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Every key of ``shape`` present; a sub-object the data lacks is an explicit null."""
    out: dict[str, Any] = {}
    for key, sub in shape.items():
        value = data.get(key)
        if isinstance(sub, dict):
            out[key] = _fill(sub, value) if isinstance(value, dict) else None
        else:
            out[key] = value
    return out


def entity_for(page: Page) -> list[dict[str, Any]]:
    """Exa's company ``entities``: an array, payload under ``properties``, explicit nulls."""
    props = _fill(_ENTITY_SHAPE, page.entity or {})
    slug = re.sub(r"[^a-z0-9]+", "-", str(props["name"] or page.title).lower()).strip("-")
    return [{"id": f"https://exa.ai/library/company/{slug}", "type": "company", "version": 1, "properties": props}]


# ----------------------------------------------------------------------------- response


def _published(page: Page) -> str | None:
    if not page.published:
        return None
    text = page.published
    return text if "T" in text else f"{text}T00:00:00.000Z"


def _result(page: Page, raw_score: float, params: SearchParams, seed: int, with_score: bool) -> dict[str, Any]:
    item: dict[str, Any] = {"id": page.url, "title": "" if blank_title(page, seed) else page.title, "url": page.url}
    published = _published(page)
    if published:
        item["publishedDate"] = published
    if page.author and _h(seed, "author", page.url) % 10 < 6:
        item["author"] = page.author
    if with_score:
        item["score"] = round(0.12 + 0.8 * raw_score / (raw_score + 12.0), 6)
    if page.entity and _h(seed, "favicon", page.url) % 2 == 0:
        item["favicon"] = f"https://{urlsplit(page.url).netloc}/favicon.ico"
    if params.text is not None:
        limit = params.text.get("maxCharacters")
        item["text"] = page.text[:limit] if limit else page.text
    if params.summary is not None:
        schema = params.summary.get("schema")
        item["summary"] = schema_summary(page, schema, seed) if schema else page.summary
    if params.highlights is not None:
        item["highlights"] = highlights_for(page, params.query, params.highlights)
    if params.category == "company" and page.entity:
        item["entities"] = entity_for(page)
    return item


def cost_dollars(n_results: int, params: SearchParams, variant: int) -> dict[str, Any]:
    """$0.007 per search (≤10 results) + $0.001 per extra result + $0.001 per page per content type."""
    search = PRICE_SEARCH + PRICE_EXTRA_RESULT * max(0, n_results - 10)
    per_type = {
        name: round(PRICE_CONTENT_PAGE * n_results, 6)
        for name, opt in (("text", params.text), ("summary", params.summary), ("highlights", params.highlights))
        if opt is not None
    }
    total = round(search + sum(per_type.values()), 6)
    search = round(search, 6)
    if variant == 0:
        return {"total": total}
    if variant == 1:
        out: dict[str, Any] = {"total": total, "search": {"neural": search}}
        if per_type:
            out["contents"] = per_type
        return out
    breakdown: dict[str, Any] = {"neuralSearch": search}
    for name, value in per_type.items():
        breakdown["content" + name.capitalize()] = value
    return {
        "total": total,
        "breakDown": [{"search": search, "contents": round(sum(per_type.values()), 6), "breakdown": breakdown}],
    }


def search_response(params: SearchParams, ctx: SandboxContext) -> dict[str, Any]:
    started = time.perf_counter()
    ranked = rank(
        params.query,
        ctx.pages,
        limit=params.num_results,
        include_domains=params.include_domains,
        exclude_domains=params.exclude_domains,
        category=params.category,
        start=params.start,
        end=params.end,
        exclude_text=params.exclude_text,
    )
    query_hash = _h(ctx.seed, "query", params.query, params.type)
    with_score = query_hash % 3 != 0  # scores are often left out
    results = [_result(page, score, params, ctx.seed, with_score=with_score) for page, score in ranked]
    response: dict[str, Any] = {"requestId": request_id()}
    if (query_hash >> 8) % 2:
        response["searchType"] = params.type
    elapsed_ms = (time.perf_counter() - started) * 1000
    response["results"] = results
    response["searchTime"] = round(elapsed_ms + 150 + (query_hash >> 16) % 900 + ((query_hash >> 32) % 10) / 10, 1)
    response["costDollars"] = cost_dollars(len(results), params, (query_hash >> 24) % 3)
    if params.warnings:
        response["warnings"] = params.warnings
    return response


def handle(req: Request, ctx: SandboxContext) -> Reply:
    sent = bearer_or_api_key(req)
    if not key_accepted(sent, ctx.api_keys.get("exa")):
        message = "Invalid API key" if sent else "Missing API key: send 'x-api-key' or 'Authorization: Bearer'"
        return service_error("exa", 401, message, tag="INVALID_API_KEY")
    try:
        params = parse_search(req.json())
    except ValueError as exc:
        return service_error("exa", 400, str(exc), tag="INVALID_REQUEST_BODY")
    except BadRequest as exc:
        return service_error("exa", 400, exc.message, tag=exc.tag)
    return json_reply(200, search_response(params, ctx))
