"""What Exa's ``POST /search`` accepts today, and the body built to that: nothing Exa would answer 400.

Sources, checked for issue 20 (the notes name the files): Exa's reference for
``/search`` and its coding-agent guide, the OpenAPI spec's versions, the SDKs.

- **Search types** (``type``): ``auto``, ``fast``, ``instant``, ``neural``,
  ``deep-lite``, ``deep``, ``deep-reasoning``, and ``lite`` in the newest SDK. Any
  other value is a 400; ``keyword`` and ``hybrid`` are gone (``auto`` combines
  methods now), so a memo naming them is stopped at load with the closest current one.
- **Categories** are a soft hint (a value outside the list is accepted and steers
  nothing), but some refuse filters with a 400. ``company`` and ``people`` refuse
  published-date filters, ``includeText``, ``excludeText`` and ``excludeDomains``;
  ``people`` takes only LinkedIn domains in ``includeDomains``; ``financial report``
  refuses ``excludeText``. The references disagree over time on a few of these
  (later text drops the text filters for both, and lets ``company`` exclude
  domains), so the union is kept: a filter not sent costs an over-fetch and a filter
  on our side, a 400 costs the section.
- **Limits**: ``numResults`` 1–100; ``includeDomains``/``excludeDomains`` 1,200
  each; ``excludeText`` one phrase of at most five words; ``maxCharacters`` at most
  10,000 for text and for highlights. ``numSentences`` (deprecated) becomes
  ``maxCharacters`` at Exa's own rate of about 1,333 characters a sentence, capped there.
"""

from __future__ import annotations

import difflib
from typing import Any

MAX_RESULTS = 100
MAX_DOMAINS = 1200  # per list
MAX_CONTENT_CHARS = 10_000  # contents.text.maxCharacters and contents.highlights.maxCharacters
MAX_EXCLUDE_TEXT_WORDS = 5
CHARS_PER_SENTENCE = 1333

CATEGORIES = ("company", "publication", "news", "personal site", "financial report", "people")
CATEGORY_SUCCESSORS = {"research paper": "publication", "linkedin profile": "people"}

SEARCH_TYPES = ("auto", "fast", "instant", "neural", "deep-lite", "deep", "deep-reasoning", "lite")
# Retired names whose nearest current type is not close in spelling.
RETIRED_SEARCH_TYPES = {"keyword": "auto", "hybrid": "auto", "magic": "auto"}

# Request fields a category answers 400 to (Exa's spelling).
DATE_FIELDS = ("startPublishedDate", "endPublishedDate")
CATEGORY_REFUSES: dict[str, frozenset[str]] = {
    "company": frozenset({*DATE_FIELDS, "includeText", "excludeText", "excludeDomains"}),
    "people": frozenset({*DATE_FIELDS, "includeText", "excludeText", "excludeDomains"}),
    "financial report": frozenset({"excludeText"}),
}
LINKEDIN_ONLY_CATEGORIES = frozenset({"people"})  # includeDomains must all be LinkedIn's

# Removed or deprecated request fields: never sent (numSentences becomes maxCharacters).
RETIRED_FIELDS = frozenset(
    {"useAutoprompt", "numSentences", "highlightsPerUrl", "livecrawl", "startCrawlDate", "endCrawlDate"}
)
HIGHLIGHT_OPTIONS = ("query", "maxCharacters")


def _category_key(category: str) -> str:
    return " ".join(category.strip().lower().replace("_", " ").split())


def current_category(category: str | None) -> str | None:
    """The category as Exa takes it today, or None for a value it no longer steers by."""
    if not category:
        return None
    value = _category_key(category)
    return value if value in CATEGORIES else None


def category_notice(category: str) -> str | None:
    """A one-line notice for a category Exa ignores (None for a current one)."""
    if current_category(category):
        return None
    successor = CATEGORY_SUCCESSORS.get(_category_key(category))
    instead = f"; use {successor!r}" if successor else ""
    return (
        f"category {category!r} is not one of Exa's categories ({', '.join(CATEGORIES)}) — Exa would ignore it, "
        f"so it is not sent{instead}"
    )


def refused_with(category: str | None) -> frozenset[str]:
    """The request fields Exa answers 400 to when they come with ``category``."""
    current = current_category(category)
    return CATEGORY_REFUSES.get(current, frozenset()) if current else frozenset()


def is_linkedin_domain(domain: str) -> bool:
    """``linkedin.com`` or a subdomain of it, written with or without a scheme or path."""
    host = domain.strip().lower()
    host = host.split("://", 1)[-1].split("/", 1)[0].rstrip(".")
    return host == "linkedin.com" or host.endswith(".linkedin.com")


def closest_search_type(name: str) -> str | None:
    """The current search type a retired or misspelt one most likely meant."""
    key = name.strip().lower()
    if key in RETIRED_SEARCH_TYPES:
        return RETIRED_SEARCH_TYPES[key]
    close = difflib.get_close_matches(key, SEARCH_TYPES, n=1, cutoff=0.5)
    return close[0] if close else None


def exa_option_name(key: str) -> str:
    """An option as Exa spells it: memo.yaml's ``max-characters`` or ``max_characters``
    is ``maxCharacters`` (Exa 400s a name it does not know)."""
    head, *rest = key.replace("_", "-").split("-")
    return head + "".join(part[:1].upper() + part[1:] for part in rest if part)


def _highlights(value: dict[str, Any]) -> dict[str, Any]:
    """Highlight options in Exa's spelling, without the retired knobs (``numSentences`` → ``maxCharacters``,
    never past the 10,000 Exa takes)."""
    value = {exa_option_name(k) if isinstance(k, str) else k: v for k, v in value.items()}
    out = {k: v for k, v in value.items() if v is not None and k not in RETIRED_FIELDS}
    sentences = value.get("numSentences")
    if "maxCharacters" not in out and isinstance(sentences, int) and not isinstance(sentences, bool) and sentences > 0:
        out["maxCharacters"] = min(sentences * CHARS_PER_SENTENCE, MAX_CONTENT_CHARS)
    return out


def _without_retired(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_retired(v) for k, v in value.items() if k not in RETIRED_FIELDS}
    if isinstance(value, list):
        return [_without_retired(v) for v in value]
    return value


def _check_limits(
    num_results: int,
    include_domains: list[str] | None,
    exclude_domains: list[str] | None,
    exclude_text: list[str] | None,
) -> None:
    if not 1 <= num_results <= MAX_RESULTS:
        raise ValueError(f"numResults must be 1–{MAX_RESULTS}, got {num_results}")
    for name, domains in (("includeDomains", include_domains), ("excludeDomains", exclude_domains)):
        if domains and len(domains) > MAX_DOMAINS:
            raise ValueError(f"{name} takes at most {MAX_DOMAINS} entries, got {len(domains)}")
    if exclude_text and (len(exclude_text) > 1 or len(exclude_text[0].split()) > MAX_EXCLUDE_TEXT_WORDS):
        raise ValueError("excludeText takes one phrase of at most five words")


def _check_category(body: dict[str, Any]) -> None:
    """A field Exa answers 400 to with the body's category is a caller's bug: say so here."""
    category = body.get("category")
    refused = sorted(f for f in refused_with(category) if body.get(f))
    if refused:
        raise ValueError(f"Exa refuses {', '.join(refused)} with category {category!r}")
    domains = body.get("includeDomains") or []
    if category in LINKEDIN_ONLY_CATEGORIES and not all(is_linkedin_domain(d) for d in domains):
        raise ValueError(f"Exa takes only LinkedIn domains in includeDomains with category {category!r}")


def _contents(
    summary: dict[str, Any] | bool | None, text: dict[str, Any] | bool | None, highlights: dict[str, Any] | bool | None
) -> dict[str, Any]:
    contents: dict[str, Any] = {}
    for key, value in (("summary", summary), ("text", text), ("highlights", highlights)):
        if value is True:
            contents[key] = True if key == "text" else {}
        elif isinstance(value, dict):
            contents[key] = (
                _highlights(value) if key == "highlights" else {k: v for k, v in value.items() if v is not None}
            )
    for key in ("text", "highlights"):
        chars = contents[key].get("maxCharacters") if isinstance(contents.get(key), dict) else None
        if isinstance(chars, int) and chars > MAX_CONTENT_CHARS:
            raise ValueError(f"contents.{key}.maxCharacters is at most {MAX_CONTENT_CHARS:,}, got {chars:,}")
    return contents


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
    """The camelCase ``/search`` body. Raises ValueError for what Exa would refuse anyway — a
    field the category refuses, a limit passed, an unknown type — so a caller's bug shows up
    here, not as a 400 at run time."""
    if not query or not query.strip():
        raise ValueError("an Exa query must not be empty")
    _check_limits(num_results, include_domains, exclude_domains, exclude_text)
    if type and type not in SEARCH_TYPES:
        raise ValueError(f"{type!r} is not an Exa search type ({', '.join(SEARCH_TYPES)})")
    body: dict[str, Any] = {"query": query, "numResults": num_results}
    optional: dict[str, Any] = {
        "category": current_category(category),
        "type": type,
        "includeDomains": list(include_domains or []),
        "excludeDomains": list(exclude_domains or []),
        "startPublishedDate": start_published_date,
        "endPublishedDate": end_published_date,
        "excludeText": list(exclude_text or []),  # one string, as a list (for future growth)
    }
    body.update({k: v for k, v in optional.items() if v})
    _check_category(body)
    contents = _contents(summary, text, highlights)
    if contents:
        body["contents"] = contents
    clean: dict[str, Any] = _without_retired(body)
    return clean
