"""Deterministic relevance ranking over the corpus, shared by the Exa and writer halves.

BM25 over weighted fields (title, summary, topics, text, URL) plus a boost when a
query word *is* part of the page's host name — so "cresta" ranks cresta.com first,
while the look-alike hosts still surface. Domain filters reproduce Exa's real
behaviour: ``includeDomains``/``excludeDomains`` match by **substring** of the host
(pinning ``cresta.com`` returns ``alcresta.com`` too). Same inputs, same order:
ties break on the URL.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from urllib.parse import urlsplit

from sourcedesk.core.net.urls import host_of
from sourcedesk.core.text.phrases import contains_phrase
from sourcedesk.sandbox.corpus import Page

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "http",
        "https",
        "www",
        "com",
        "org",
        "net",
        "io",
        "html",
    ]
)

_TOKEN_RE = re.compile(r"[a-z0-9]+")
_FIELD_WEIGHTS = {"title": 3.0, "summary": 2.0, "topics": 2.0, "url": 2.0, "text": 1.0}
_K1, _B = 1.2, 0.75
_HOST_LABEL_BOOST = 2.5  # query word equals a label of the host (cresta → cresta.com, docs.cresta.com)
_HOST_SUBSTRING_BOOST = 0.8  # query word inside a label (cresta → alcresta.com)
_CATEGORY_PREFERENCE = 1.6


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()


def _stem(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens without stop words (not stemmed)."""
    return [t for t in _TOKEN_RE.findall(_fold(text)) if t not in STOPWORDS and (len(t) > 1 or t.isdigit())]


def terms(text: str) -> list[str]:
    """Stemmed tokens (what the ranking compares)."""
    return [_stem(t) for t in tokenize(text)]


def _bare_host(url: str) -> str:
    host = host_of(url) or ""
    return host[4:] if host.startswith("www.") else host


def _filter_key(domain: str) -> str:
    d = domain.strip().lower()
    d = re.sub(r"^[a-z][a-z0-9+.-]*://", "", d)
    d = d[4:] if d.startswith("www.") else d
    return d.rstrip("/")


def domain_matches(url: str, domain: str) -> bool:
    """Exa's domain filter: a plain substring test against the host (or host+path when
    the filter has a path). This is the real, surprising behaviour, kept on purpose."""
    return _key_matches(_filter_key(domain), _bare_host(url), urlsplit(url).path or "/")


def _key_matches(key: str, host: str, path: str) -> bool:
    if not key:
        return False
    if "/" in key:
        return key in host + path
    return key in host


class _Indexed:
    __slots__ = ("host", "labels", "length", "page", "path", "tf")

    def __init__(self, page: Page) -> None:
        self.page = page
        self.tf: dict[str, float] = {}  # term -> weighted frequency
        url_words = " ".join(filter(None, [_bare_host(page.url), urlsplit(page.url).path]))
        fields = {
            "title": page.title,
            "summary": page.summary,
            "topics": " ".join(page.topics),
            "url": url_words,
            "text": page.text,
        }
        for name, value in fields.items():
            for term in terms(value):
                self.tf[term] = self.tf.get(term, 0.0) + _FIELD_WEIGHTS[name]
        self.length = sum(self.tf.values())
        self.host = _bare_host(page.url)
        self.path = urlsplit(page.url).path or "/"
        self.labels = set(re.split(r"[.\-]", self.host))


_INDEX: dict[int, _Indexed] = {}


def _indexed(page: Page) -> _Indexed:
    entry = _INDEX.get(id(page))
    if entry is None or entry.page is not page:
        entry = _INDEX[id(page)] = _Indexed(page)
    return entry


def warm(pages: Iterable[Page]) -> None:
    """Index the pages now, so the first search is as fast as the rest (latency tests rely on it)."""
    for page in pages:
        _indexed(page)


def _as_date(value: str | date | datetime | None) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value).strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        return date.fromisoformat(text[:10])


def is_company_page(page: Page) -> bool:
    """What Exa's ``category: company`` keeps: a company's own pages and company profiles."""
    return page.entity is not None or page.kind == "company" or "company" in page.topics


def _prefers(page: Page, category: str) -> bool:
    host = _bare_host(page.url)
    cat = category.strip().lower()
    topics = {t.lower() for t in page.topics}
    if cat in topics or page.kind == cat:
        return True
    hints = {
        "news": page.kind == "news",
        "people": host.endswith("linkedin.com") or "people" in topics,
        "financial report": bool(topics & {"annual report", "financial report"}),
        "publication": "research" in topics or page.url.lower().endswith(".pdf"),
        "personal site": page.kind == "blog",
    }
    return hints.get(cat, False)


def _passes(
    entry: _Indexed,
    include: Sequence[str],
    exclude: Sequence[str],
    category: str | None,
    start: date | None,
    end: date | None,
) -> bool:
    page = entry.page
    if include and not any(_key_matches(k, entry.host, entry.path) for k in include):
        return False
    if exclude and any(_key_matches(k, entry.host, entry.path) for k in exclude):
        return False
    if category and category.strip().lower() == "company" and not is_company_page(page):
        return False
    if start or end:
        published = _as_date(page.published)
        if published is None:
            return False
        if (start and published < start) or (end and published > end):
            return False
    return True


def _contains_text(page: Page, phrase: str) -> bool:
    first_words = " ".join(page.text.split()[:1000])
    return contains_phrase([page.title, first_words], phrase)


def rank(
    query: str,
    pages: Sequence[Page],
    *,
    limit: int,
    include_domains: Iterable[str] = (),
    exclude_domains: Iterable[str] = (),
    category: str | None = None,
    start: str | date | datetime | None = None,
    end: str | date | datetime | None = None,
    exclude_text: str | None = None,
) -> list[tuple[Page, float]]:
    """The best ``limit`` pages for ``query`` (score > 0), best first, with their raw scores.

    Filters: domain substring include/exclude, ``category`` (``company`` filters to company
    pages; any other category only prefers matching pages), published-date window (pages
    without a date are dropped when a window is given), ``exclude_text`` (pages whose title or
    first 1000 words contain the phrase, ignoring case and punctuation, as Exa documents it).
    Raises ValueError on a bad date.
    """
    include = [k for k in (_filter_key(d) for d in include_domains or ()) if k]
    exclude = [k for k in (_filter_key(d) for d in exclude_domains or ()) if k]
    start_d, end_d = _as_date(start), _as_date(end)
    raw_words = list(dict.fromkeys(tokenize(query)))
    q_terms = list(dict.fromkeys(_stem(w) for w in raw_words))
    if not q_terms or limit < 1:
        return []
    indexed = [_indexed(p) for p in pages]
    n = len(indexed)
    avg_len = (sum(e.length for e in indexed) / n) if n else 1.0
    df = {t: sum(1 for e in indexed if t in e.tf) for t in q_terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in q_terms}

    scored: list[tuple[Page, float]] = []
    for entry in indexed:
        page = entry.page
        if not _passes(entry, include, exclude, category, start_d, end_d):
            continue
        if exclude_text and _contains_text(page, exclude_text):
            continue
        score = 0.0
        norm = _K1 * (1 - _B + _B * entry.length / avg_len)
        for t in q_terms:
            tf = entry.tf.get(t, 0.0)
            if tf:
                score += idf[t] * tf * (_K1 + 1) / (tf + norm)
        for word in raw_words:
            if len(word) < 3:
                continue
            weight = idf.get(_stem(word), 1.0)
            if word in entry.labels:
                score += _HOST_LABEL_BOOST * weight
            elif len(word) >= 4 and word in entry.host:
                score += _HOST_SUBSTRING_BOOST * weight
        if score <= 0:
            continue
        if category and category.strip().lower() != "company" and _prefers(page, category):
            score *= _CATEGORY_PREFERENCE
        scored.append((page, score))
    scored.sort(key=lambda item: (-item[1], item[0].url))
    return scored[:limit]
