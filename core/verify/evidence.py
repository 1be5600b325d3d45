"""The stored text behind each cited page, and which pages retrieval really returned.

Grounding needs "that source's stored text"; the 401/403 rule needs "was this URL
in the retrieved set". Both come from what the run persisted, looked up by the
product's one URL normaliser (``sourcedesk.core.net.urls.normalise_url``):

* a frozen ``SourceSet`` — every kept source *and* every source omitted by the
  budget (both were returned by a retrieval call): title, summary, text,
  highlights and the values of its cleaned facts (nested values included);
* the run record's writer ``search_results`` — title and snippet of each web
  result (what Perplexity said the page contains).

A page reached both ways gets all of its texts. Titles are kept apart: a quote
found in a title is supported, but a title alone does not make a page's text
*known* (a figure missing from a headline is not missing from the article).
Nothing here guesses: a URL with no stored text has no evidence, and grounding
then says "unverifiable".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sourcedesk.core.domain.records import RunRecord
from sourcedesk.core.net.urls import normalise_url


def _flatten(value: Any) -> list[str]:
    """Every scalar inside a facts value, as text (keys are labels, not the source's words)."""
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, Mapping):
        return [t for v in value.values() for t in _flatten(v)]
    if isinstance(value, (list, tuple, set)):
        return [t for v in value for t in _flatten(v)]
    text = str(value).strip()
    return [text] if text else []


def _get(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _title(item: Any) -> list[str]:
    title = _get(item, "title")
    return [title] if isinstance(title, str) and title.strip() else []


def source_texts(source: Any) -> list[str]:
    """The body texts of one retrieved source (a ``sourcedesk.core.domain.models.Source`` or a dict of the same shape)."""

    def get(name: str) -> Any:
        return _get(source, name)

    texts: list[str] = []
    for name in ("summary", "text"):
        value = get(name)
        if isinstance(value, str) and value.strip():
            texts.append(value)
    highlights = get("highlights") or []
    if isinstance(highlights, str):
        highlights = [highlights]
    texts += [h for h in highlights if isinstance(h, str) and h.strip()]
    texts += _flatten(get("facts") or {})
    return texts


def search_result_texts(result: Mapping[str, Any]) -> list[str]:
    snippet = result.get("snippet")
    return [snippet] if isinstance(snippet, str) and snippet.strip() else []


@dataclass
class Evidence:
    """Stored texts by normalised URL, and the URLs of the retrieved (frozen) set."""

    texts: dict[str, list[str]] = field(default_factory=dict)
    titles: dict[str, list[str]] = field(default_factory=dict)
    retrieved: set[str] = field(default_factory=set)
    sets: int = 0  # frozen source sets added (0: the retrieved set is unknown, not empty)

    def add(
        self, url: str | None, texts: Iterable[str], *, titles: Iterable[str] = (), retrieved: bool = False
    ) -> None:
        if not isinstance(url, str) or not url.strip():
            return
        key = normalise_url(url)
        for store, values in ((self.texts, texts), (self.titles, titles)):
            bucket = store.setdefault(key, [])
            bucket += [t for t in values if t not in bucket]
        if retrieved:
            self.retrieved.add(key)

    def add_source_set(self, source_set: Any) -> None:
        """Kept and budget-omitted sources of a frozen ``SourceSet``."""
        self.sets += 1
        for source in getattr(source_set, "sources", None) or []:
            self.add(getattr(source, "url", None), source_texts(source), titles=_title(source), retrieved=True)
        for omitted in getattr(source_set, "omitted", None) or []:
            source = getattr(omitted, "source", None)
            if source is not None:
                self.add(getattr(source, "url", None), source_texts(source), titles=_title(source), retrieved=True)

    def add_search_results(self, results: Iterable[Any]) -> None:
        for result in results or []:
            if isinstance(result, Mapping):
                self.add(result.get("url"), search_result_texts(result), titles=_title(result))

    def merge(self, other: Evidence) -> None:
        for mine, theirs in ((self.texts, other.texts), (self.titles, other.titles)):
            for key, values in theirs.items():
                bucket = mine.setdefault(key, [])
                bucket += [t for t in values if t not in bucket]
        self.retrieved |= other.retrieved
        self.sets += other.sets

    def texts_for(self, url: str | None) -> list[str]:
        """The page's stored body texts (summary, text, highlights, facts, snippets)."""
        if not url:
            return []
        return [t for t in self.texts.get(normalise_url(url), []) if t.strip()]

    def titles_for(self, url: str | None) -> list[str]:
        if not url:
            return []
        return [t for t in self.titles.get(normalise_url(url), []) if t.strip()]

    def in_retrieved_set(self, url: str | None) -> bool:
        return url is not None and bool(url) and normalise_url(url) in self.retrieved


def run_search_results(run: RunRecord | None) -> list[dict[str, Any]]:
    """The writer's web results recorded with a run (empty when the run has none): the
    normalised ``web_results`` (any writer API), else a chat-completions ``search_results``."""
    return run.writer_results() if run is not None else []
