"""Ground truth: what retrieval really returned, in the two citation namespaces.

* **retrieved** — the frozen source set: items that carry a ``marker`` (``E3``,
  ``V1``, ``W2``); the writer cites them as ``[^E3]``.
* **web** — this run's writer ``search_results``, an ordered list that a bare
  ``[N]`` indexes 1-based.

``reconcile(markdown, sources)`` takes one list: items WITH a marker are the
retrieved set, items WITHOUT one are the web results, in list order. When
``search_results=`` is passed explicitly it is the indexed list instead, and
unmarked items of ``sources`` still count as ground truth (they can verify a
cited URL or be substituted) but no bare ``[N]`` points at them.

Items may be dicts (Perplexity ``search_results`` entries as they are, Exa
results, SOURCES.json objects), ``sourcedesk.core.domain.models.Source`` objects, any object with
the same attributes, or a bare URL string. The first item with a given
normalised URL is that URL's canonical source: two citations of one page resolve
to one source, whichever namespace they came through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.net.urls import normalise_url
from sourcedesk.core.sources.facts import MAX_FACT_DEPTH
from sourcedesk.core.sources.name_rejects import NameReject

MARKER_RE = re.compile(r"^([A-Z])(\d+)$")
#: Marker prefixes every provider registry uses today (Exa, local files, promoted web results).
KNOWN_PREFIXES = frozenset({"E", "V", "W"})

_ALIASES: dict[str, tuple[str, ...]] = {
    "url": ("url", "link", "href"),
    "title": ("title", "name"),
    "marker": ("marker",),
    "published": ("published_date", "date", "publishedDate", "published"),
    "updated": ("last_updated", "lastUpdated", "updated", "updated_at"),
    "snippet": ("snippet",),
    "summary": ("summary",),
    "text": ("text",),
    "highlights": ("highlights",),
    "facts": ("facts",),
}


@dataclass(frozen=True, eq=False)
class GroundSource:
    """One retrieved document as the reconciler sees it (identity semantics: one object, one source)."""

    url: str
    norm: str
    title: str = ""
    published: str | None = None
    updated: str | None = None
    snippet: str = ""
    summary: str = ""
    highlights: tuple[str, ...] = ()
    marker: str | None = None
    rank: int = 0  # position in ground-truth order (retrieved first, then web)
    index: int | None = None  # 1-based position in the indexed web results
    blocked: bool = (
        False  # a web result the section does not accept (rejected domain or name, outside the pin): never citable
    )
    blocked_why: str = ""  # why, in words ("naming the rejected name 'Kestra Medical'")
    facts: tuple[str, ...] = ()  # cleaned structured facts, one "key: value" line each
    text: str = ""  # the stored page text, when the frozen set holds it
    about: dict[str, str] | None = None  # the source's about verdict ({"verdict", "reason"}), when given
    evidence_index: Mapping[str, Any] | None = None  # stored with a frozen set (core.citations.evidence_index)

    @property
    def namespace(self) -> str:
        return "retrieved" if self.marker else "web"

    def evidence_fields(self) -> list[tuple[str, str]]:
        """Everything stored for the source, by field: what a claim is checked against."""
        fields = [("title", self.title), ("snippet", self.snippet), ("summary", self.summary)]
        fields += [("highlights", h) for h in self.highlights]
        fields += [("facts", f) for f in self.facts]
        fields += [
            ("facts", f"{name}: {value}")
            for name, value in (("published", self.published), ("updated", self.updated))
            if value
        ]
        fields.append(("text", self.text))
        return fields


def _get(item: object, name: str) -> object:
    if type(item) is dict:  # the usual item, tested first (an ABC check costs more than the lookup)
        return item.get(name)
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def _getter(item: object) -> Callable[[str], object]:
    """How to read a field of ``item``: a dict (the usual item) answers directly."""
    return item.get if type(item) is dict else partial(_get, item)


def _text(get: Callable[[str], object], key: str, where: str, required: bool = False) -> str | None:
    for name in _ALIASES[key]:
        value = get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise UserError(
                f"{where}.{name}: expected text, got {type(value).__name__}",
                hint=f"give '{name}' as a JSON string",
            )
        if value.strip() or not required:
            return value.strip()
    if required:
        raise UserError(f"{where}: missing 'url'", hint="every source needs a non-empty 'url' string")
    return None


def _highlights(item: object, where: str) -> tuple[str, ...]:
    value = _get(item, "highlights")
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise UserError(f"{where}.highlights: expected a list of strings", hint='e.g. "highlights": ["…"]')


def coerce_source(item: object, where: str, rank: int = 0, index: int | None = None) -> GroundSource:
    """Read one source item; bad field types raise ``UserError`` naming ``where`` and the field."""
    if isinstance(item, str):
        item = {"url": item}
    elif item is None or isinstance(item, (int, float, bool, list, tuple)):
        raise UserError(f"{where}: expected an object with 'url' and 'title', got {type(item).__name__}")
    get = _getter(item)
    url = _text(get, "url", where, required=True)
    assert url is not None
    marker = _text(get, "marker", where) or None
    if marker is not None and not MARKER_RE.match(marker):
        raise UserError(f"{where}.marker: {marker!r} is not a marker", hint="markers look like E3, V1 or W2")
    return GroundSource(
        url=url,
        norm=normalise_url(url),
        title=" ".join((_text(get, "title", where) or "").split()),
        published=_text(get, "published", where) or None,
        updated=_text(get, "updated", where) or None,
        snippet=_text(get, "snippet", where) or "",
        summary=_text(get, "summary", where) or "",
        highlights=_highlights(item, where),
        marker=marker,
        rank=rank,
        index=index,
        facts=tuple(_fact_lines(get("facts"))),
        text=_text(get, "text", where) or "",
        about=_about(item, where),
        evidence_index=stored if isinstance(stored := _get(item, "evidence_index"), Mapping) else None,
    )


def _fact_lines(value: object, key: str = "", depth: int = 0) -> list[str]:
    """Facts as "key: value" lines (nested values flattened; keys are words a claim may use).
    Nothing deeper than ``MAX_FACT_DEPTH`` is read: a hostile nesting would exhaust the stack."""
    if value is None or isinstance(value, bool) or depth > MAX_FACT_DEPTH:
        return []
    if isinstance(value, Mapping):
        out: list[str] = []
        for k, v in value.items():
            label = str(k).replace("_", " ")
            out += _fact_lines(v, f"{key} {label}".strip(), depth + 1)
        parts = [str(v).strip() for v in value.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        if key and len(parts) == len(value) > 1 and all(parts):
            # Also read as one line, as a page writes it: "headquarters: Pleasanton, 94588, US"
            # (an address split into city, postal code and country says where the company is).
            out.append(f"{_spaced(key)}: {', '.join(parts)}")
        return out
    if isinstance(value, (list, tuple)):
        return [line for v in value for line in _fact_lines(v, key, depth + 1)]
    text = str(value).strip()
    if not text:
        return []
    spaced = _spaced(key)
    return [f"{spaced}: {text}" if spaced else text]


def _spaced(key: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).lower()


ABOUT_VERDICTS = ("subject", "namesake", "other", "unclear")


def _about(item: object, where: str) -> dict[str, str] | None:
    """A source's ``about`` verdict, passed through as ``{"verdict", "reason"}`` — given as that
    object (what ``retrieve --json`` prints), as the verdict alone, or as ``sourcedesk.core.sources.about.About``."""
    value = _get(item, "about")
    if value is None:
        return None
    verdict: object
    reason: object
    if isinstance(value, str):
        verdict, reason = value, ""
    elif isinstance(value, Mapping):
        verdict, reason = value.get("verdict"), value.get("reason")
    else:
        verdict, reason = getattr(value, "verdict", None), getattr(value, "reason", "")
    if verdict not in ABOUT_VERDICTS:
        raise UserError(
            f"{where}.about: expected an object with a verdict ({', '.join(ABOUT_VERDICTS)})",
            hint='e.g. "about": {"verdict": "namesake", "reason": "names Kestra Medical Technologies"}',
        )
    return {"verdict": str(verdict), "reason": reason if isinstance(reason, str) else ""}


@dataclass
class GroundTruth:
    """The frozen retrieved set ∪ this run's web results, with the lookups reconciliation needs."""

    sources: list[GroundSource] = field(default_factory=list)
    indexed: list[GroundSource] = field(default_factory=list)  # what bare [N] points at (canonicalised)
    by_marker: dict[str, GroundSource] = field(default_factory=dict)
    by_norm: dict[str, GroundSource] = field(default_factory=dict)
    prefix_counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        sources: Iterable[object] | None,
        search_results: Iterable[object] | None = None,
        *,
        exclude: Callable[[str], object] | None = None,
    ) -> GroundTruth:
        """``exclude(url)`` truthy marks a web result as blocked, and its value says why
        (``block_cause``: a rejected name, a rejected domain, e.g. one the
        writer's capped domain filter let through): it keeps its ``[N]`` slot, so other
        numbers do not shift, but nothing can be verified or substituted by it."""
        if isinstance(sources, (str, Mapping)) or (sources is not None and not isinstance(sources, Iterable)):
            raise UserError("sources: expected a list of source objects", hint="pass a list, even of one")
        items = list(sources or [])
        marked = [_marker_of(it) for it in items]
        retrieved_items = [(i, it) for i, it in enumerate(items) if marked[i]]
        unmarked = [(i, it) for i, it in enumerate(items) if not marked[i]]
        if search_results is None:
            indexed_items = [(f"sources[{i}]", it) for i, it in unmarked]
            extra_items: list[tuple[str, object]] = []
        else:
            if isinstance(search_results, (str, Mapping)):
                raise UserError("search_results: expected a list of results")
            indexed_items = [(f"search_results[{i}]", it) for i, it in enumerate(search_results)]
            extra_items = [(f"sources[{i}]", it) for i, it in unmarked]

        truth = cls()
        rank = 0
        seen: set[str] = set()
        for i, it in retrieved_items:
            src = coerce_source(it, f"sources[{i}]", rank)
            assert src.marker
            if src.marker in seen:
                raise UserError(f"sources[{i}].marker: {src.marker} is used twice", hint="markers are unique in a set")
            seen.add(src.marker)
            truth.sources.append(src)
            rank += 1
        for n, (where, it) in enumerate(indexed_items, 1):
            src = coerce_source(it, where, rank, index=n)
            if src.marker:
                raise UserError(f"{where}.marker: web results carry no marker", hint="put marked sources in 'sources'")
            truth.sources.append(_blocked(src, exclude))
            rank += 1
        for where, it in extra_items:
            truth.sources.append(_blocked(coerce_source(it, where, rank), exclude))
            rank += 1

        truth.sources = _merge_evidence(truth.sources)
        for src in truth.sources:
            if not src.blocked:
                truth.by_norm.setdefault(src.norm, src)
        for src in truth.sources:
            if src.marker:
                truth.by_marker[src.marker] = truth.canonical(src)
                prefix = src.marker[0]
                truth.prefix_counts[prefix] = truth.prefix_counts.get(prefix, 0) + 1
            if src.index is not None:
                truth.indexed.append(src if src.blocked else truth.canonical(src))
        return truth

    @property
    def empty(self) -> bool:
        return not self.sources

    @property
    def prefixes(self) -> frozenset[str]:
        return KNOWN_PREFIXES | frozenset(self.prefix_counts)

    def canonical(self, src: GroundSource) -> GroundSource:
        return self.by_norm[src.norm]

    def lookup_url(self, url: str) -> GroundSource | None:
        return self.by_norm.get(normalise_url(url))

    def is_marker_label(self, label: str) -> bool:
        m = MARKER_RE.match(label)
        return m is not None and m.group(1) in self.prefixes

    def candidates(self) -> list[GroundSource]:
        """Distinct sources in ground-truth order (the substitution candidates)."""
        return [s for s in self.sources if not s.blocked and self.by_norm[s.norm] is s]


def _blocked(src: GroundSource, exclude: Callable[[str], object] | None) -> GroundSource:
    cause = exclude(src.url) if exclude is not None else None
    return replace(src, blocked=True, blocked_why=block_cause(cause)) if cause else src


def block_cause(cause: object) -> str:
    """Why ``exclude`` refused a result, in words: a name reject names its phrase (the result is
    on no rejected domain); a text is the rejected domain that matched (``hosts.excluded_by``);
    anything else is the section's domain rules, which a truthy flag does not tell apart."""
    if isinstance(cause, NameReject):
        return f"naming the rejected name '{cause.phrase}'"
    if isinstance(cause, str):
        return f"on the rejected domain {cause}"
    return "on a rejected domain, outside the entity pin or on an aggregator"


def _merge_evidence(sources: list[GroundSource]) -> list[GroundSource]:
    """One page reached through both namespaces (a retrieved source that is also a web
    result) is one source whose evidence is everything either side said about it, so a
    claim quoted from the web snippet can still be matched to it."""
    groups: dict[str, list[GroundSource]] = {}
    for src in sources:
        if not src.blocked:
            groups.setdefault(src.norm, []).append(src)
    merged: dict[int, GroundSource] = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        first, rest = group[0], group[1:]

        def extra(attr: str, first: Any = first, rest: list[Any] = rest) -> str:
            seen = [getattr(first, attr)]
            for other in rest:
                value = getattr(other, attr)
                if value and value not in seen:
                    seen.append(value)
            return "\n".join(v for v in seen if v)

        highlights = list(first.highlights)
        for other in rest:
            highlights += [h for h in other.highlights if h not in highlights]
        facts = list(dict.fromkeys([f for src in group for f in src.facts]))
        merged[id(first)] = replace(
            first,
            snippet=extra("snippet"),
            summary=extra("summary"),
            highlights=tuple(highlights),
            text=extra("text"),
            facts=tuple(facts),
            about=first.about or next((o.about for o in rest if o.about), None),
        )
    return [merged.get(id(s), s) for s in sources]


def _marker_of(item: object) -> bool:
    """Whether an item claims a marker (a non-text marker counts, so coercion can reject it)."""
    if isinstance(item, str) or item is None:
        return False
    value = _get(item, "marker")
    if isinstance(value, str):
        return bool(value.strip())
    return value is not None
