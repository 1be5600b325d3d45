"""The sandbox writer's own web search: corpus ranking plus Perplexity's domain filter.

Perplexity documents ``search_domain_filter`` as a list of at most 20 domains or
URLs, either all allow-list entries or all ``-``-prefixed deny-list entries,
never mixed. A domain entry matches its host and every subdomain (``nats.io``
matches ``docs.nats.io``; ``www.`` is ignored on both sides) — unlike Exa's
substring match, which the Exa half of the sandbox reproduces. An entry with a
path (``nats.io/blog``) restricts to that section of the site.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from sourcedesk.core.net.urls import host_of, normalise_url, strip_www
from sourcedesk.sandbox.corpus import Page

MAX_DOMAIN_FILTER = 20
SNIPPET_CHARS = 300


class FilterError(ValueError):
    """The request's search_domain_filter is unacceptable (the API answers 400)."""


@dataclass(frozen=True)
class DomainRule:
    host: str  # canonical host without www.
    path: str = ""  # "" for a domain entry, "/blog" for a URL entry

    def matches(self, url: str) -> bool:
        host = strip_www(host_of(url) or "")
        if not host or not (host == self.host or host.endswith("." + self.host)):
            return False
        if not self.path:
            return True
        norm = normalise_url(url)
        path = norm[len(host) :] if norm.startswith(host) else norm.partition("/")[2]
        return path == self.path or path.startswith((self.path + "/", self.path + "?"))


@dataclass(frozen=True)
class DomainFilter:
    mode: str  # "allow", "deny" or "none"
    rules: tuple[DomainRule, ...] = ()

    def admits(self, url: str) -> bool:
        if self.mode == "allow":
            return any(r.matches(url) for r in self.rules)
        if self.mode == "deny":
            return not any(r.matches(url) for r in self.rules)
        return True


def parse_domain_filter(value: Any) -> DomainFilter:
    """Validate ``search_domain_filter`` as the real API does; raises FilterError."""
    if value is None:
        return DomainFilter("none")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FilterError("search_domain_filter must be a list of domain strings")
    entries = [v.strip() for v in value if v.strip()]
    if len(entries) > MAX_DOMAIN_FILTER:
        raise FilterError(
            f"search_domain_filter accepts at most {MAX_DOMAIN_FILTER} domains or URLs, got {len(entries)}"
        )
    if not entries:
        return DomainFilter("none")
    denies = [e.startswith("-") for e in entries]
    if any(denies) and not all(denies):
        raise FilterError(
            "search_domain_filter cannot mix allowlist and denylist entries; "
            "use either all allowlist entries or all '-' prefixed denylist entries"
        )
    rules = []
    for entry in entries:
        raw = entry[1:].strip() if entry.startswith("-") else entry
        host = strip_www(host_of(raw) or "")
        if not host or "." not in host:
            raise FilterError(f"search_domain_filter entry {entry!r} is not a domain or URL")
        norm = normalise_url(raw)
        path = norm[len(host) :] if norm.startswith(host) else ""
        rules.append(DomainRule(host, path.split("?")[0].rstrip("/")))
    return DomainFilter("deny" if denies[0] else "allow", tuple(rules))


def _passages(text: str) -> list[str]:
    """Prose paragraphs of a page body: no headings, lists, tables, emphasis or the sandbox label."""
    found = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        if not lines or lines[0].startswith(("#", "[sourcedesk", "|", "```", ">")):
            continue
        if any(re.match(r"^(?:[-*+]|\d+[.)])\s+", ln) for ln in lines):
            continue  # list items read as fragments, not sentences
        joined = re.sub(r"[*_`]+", "", " ".join(lines))
        if len(joined) >= 60:
            found.append(joined)
    return found


def snippet_of(page: Page, query: str = "") -> str:
    """What Perplexity shows as ``snippet``: an extract of the page — the passage that best
    matches the query — cut mid-text like the real ones; the summary when the page has no prose."""
    words = set(re.findall(r"[a-z0-9]+", query.lower()))
    passages = _passages(page.text)
    if passages:
        text = max(passages, key=lambda p: (len(words & set(re.findall(r"[a-z0-9]+", p.lower()))), -passages.index(p)))
    else:
        text = " ".join(page.summary.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    head = text[:SNIPPET_CHARS]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    cut = head[: end + 1] if end >= 80 else head.rsplit(" ", 1)[0]
    return cut + " ..."


def last_updated(published: str | None, salt: int) -> str:
    """A crawl date on or after publication (Perplexity returns both)."""
    try:
        base = date.fromisoformat((published or "")[:10])
    except ValueError:
        base = date(2025, 1, 1)
    return (base + timedelta(days=3 + salt % 240)).isoformat()


def search_result(page: Page, salt: int, query: str = "") -> dict[str, Any]:
    published = (page.published or "")[:10] or None
    return {
        "title": page.title,
        "url": page.url,
        "date": published,
        "last_updated": last_updated(published, salt),
        "snippet": snippet_of(page, query),
        "source": "web",
    }


def own_search(query: str, pages: Sequence[Page], domain_filter: DomainFilter, limit: int) -> list[Page]:
    """The writer's web search: the corpus ranking, then the domain filter applied exactly."""
    from sourcedesk.sandbox.search import rank  # imported late: the search module belongs to the server half

    if not query.strip() or limit <= 0:
        return []
    ranked = rank(query, pages, limit=max(len(pages), 1))
    found: list[Page] = []
    seen: set[str] = set()
    for page, _score in ranked:
        key = normalise_url(page.url)
        if key in seen or not domain_filter.admits(page.url):
            continue
        seen.add(key)
        found.append(page)
        if len(found) >= limit:
            break
    return found
