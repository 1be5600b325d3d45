"""Clean facts: structured fields from providers, with placeholders removed.

Schema summaries and entity payloads are full of answers that are not answers
(``"null"``, ``"N/A"``, ``"Not specified"``, empty objects). Passed to a writer
they read as facts ("Founded: unknown") and get cited, so they are stripped at
every depth. Key spellings are collapsed (``foundedYear`` = ``founded_year`` =
``Founded Year``) so one fact is shown — and cited — once.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

# Case-insensitive, trimmed, trailing punctuation ignored. "Undisclosed" and
# "Bootstrapped" are deliberately absent from this list: they are real answers.
ABSENT_STRINGS = frozenset(
    {
        "null",
        "none",
        "n/a",
        "na",
        "nil",
        "unknown",
        "undefined",
        "not specified",
        "not found",
        "not available",
        "no data",
        "not applicable",
    }
)
_TRAILING_PUNCTUATION = ".!?,;:…"
# Fields of a schema summary that are the summary's prose rather than a fact.
PROSE_FIELDS = ("summary", "description", "overview")
_FENCE_RE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


def is_absent(value: Any) -> bool:
    """None, blank or placeholder strings, NaN, and empty containers mean "no answer"."""
    if value is None:
        return True
    if isinstance(value, str):
        text = " ".join(value.split()).rstrip(_TRAILING_PUNCTUATION).strip().lower()
        return not text or text in ABSENT_STRINGS
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        return len(value) == 0
    return False


def fact_key(key: Any) -> str:
    """snake_case spelling of a field name: ``foundedYear``, ``Founded Year`` → ``founded_year``."""
    raw = str(key).strip()
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", raw)  # HTTPServer → HTTP_Server
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)  # foundedYear → founded_Year
    text = re.sub(r"[\W_]+", "_", text.lower()).strip("_")
    return text or raw  # a key made only of punctuation keeps its spelling


def _put(target: dict[str, Any], key: Any, value: Any, depth: int = 0) -> None:
    """Add one cleaned fact; on a key collision the first real value wins, objects merge."""
    cleaned = clean_facts(value, depth + 1)
    if is_absent(cleaned):
        return
    name = fact_key(key)
    if name not in target:
        target[name] = cleaned
    elif isinstance(target[name], dict) and isinstance(cleaned, dict):
        for sub_key, sub_value in cleaned.items():
            _put(target[name], sub_key, sub_value, depth + 1)


# No fact is nested this deep; a provider answer that is (JSON allows hundreds of levels)
# would otherwise exhaust Python's recursion limit here and in everything that reads facts.
MAX_FACT_DEPTH = 16


def clean_facts(obj: Any, depth: int = 0) -> Any:
    """Recursively drop absent values and collapse key spellings.

    Returns a new structure (dicts with snake_case keys, lists, trimmed strings,
    other scalars as they are); the caller's object is not modified. A dict or
    list that ends up empty disappears from its parent; at the top level a dict
    becomes ``{}``, a list ``[]`` and an absent scalar ``None``. Whatever lies deeper than
    ``MAX_FACT_DEPTH`` is dropped."""
    if depth > MAX_FACT_DEPTH and isinstance(obj, (Mapping, list, tuple, set, frozenset)):
        return None
    if isinstance(obj, Mapping):
        result: dict[str, Any] = {}
        for key, value in obj.items():
            _put(result, key, value, depth)
        return result
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [c for c in (clean_facts(item, depth + 1) for item in items) if not is_absent(c)]
    if isinstance(obj, str):
        return None if is_absent(obj) else obj.strip()
    return None if is_absent(obj) else obj


def merge_facts(*dicts: Mapping[str, Any] | None) -> dict[str, Any]:
    """One fact set from several (entity facts, schema summary): first wins per canonical key."""
    merged: dict[str, Any] = {}
    for facts in dicts:
        if isinstance(facts, Mapping):
            for key, value in facts.items():
                _put(merged, key, value)
    return merged


def _decode_json_object(text: str) -> dict[str, Any] | None:
    fenced = _FENCE_RE.match(text)
    if fenced:  # models like to wrap JSON in ```json fences
        text = fenced.group(1).strip()
    if not text.startswith(("{", '"')):
        return None
    try:
        value = json.loads(text)
        if isinstance(value, str):  # double-encoded: a JSON string holding the object
            value = json.loads(value)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


decode_json_object = _decode_json_object  # the same reading for callers outside this module


def parse_summary(summary: str | Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """Split an Exa ``summary`` into (prose, facts). Never raises.

    With a ``summary.schema`` Exa returns the answer as a JSON *string*; without
    one it is prose. A JSON object becomes facts; its ``summary``/``description``/
    ``overview`` string field (first present) is surfaced as the prose instead of
    a fact, so the writer reads it as text and it is shown once. Anything that is
    not a JSON object is prose; a placeholder ("null", "N/A") is no prose at all."""
    try:
        if summary is None:
            return "", {}
        if isinstance(summary, Mapping):
            data: dict[str, Any] | None = dict(summary)
        elif isinstance(summary, str):
            text = summary.strip()
            data = _decode_json_object(text)
            if data is None:
                return ("" if is_absent(text) else text), {}
        else:
            return "", {}
        facts = clean_facts(data)
        for field in PROSE_FIELDS:
            if isinstance(facts.get(field), str):
                return facts.pop(field), facts
        return "", facts
    except Exception:  # noqa: BLE001 - a malformed provider field must never stop a run
        return ("" if not isinstance(summary, str) or is_absent(summary) else summary.strip()), {}


# Company entity fields in reading order: (fact name, path in the cleaned properties).
_COMPANY_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("name", ("name",)),
    ("description", ("description",)),
    ("founded_year", ("founded_year",)),
    ("headquarters", ("headquarters",)),
    ("employees", ("workforce", "total")),
    ("revenue_annual", ("financials", "revenue_annual")),
    ("funding_total", ("financials", "funding_total")),
    ("funding_latest_round", ("financials", "funding_latest_round")),
    ("web_visits_monthly", ("web_traffic", "visits_monthly")),
)
_TAKEN_WHOLE = {path[0] for _, path in _COMPANY_FIELDS if len(path) == 1}
_WRAPPERS: dict[str, set[str]] = {}
for _, _path in _COMPANY_FIELDS:
    if len(_path) == 2:
        _WRAPPERS.setdefault(_path[0], set()).add(_path[1])


def _company_facts(properties: Mapping[str, Any]) -> dict[str, Any]:
    clean = clean_facts(properties)  # spellings collapsed and nulls gone before lifting
    facts: dict[str, Any] = {}
    for name, path in _COMPANY_FIELDS:
        value: Any = clean
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        _put(facts, name, value)
    # Whatever else the entity carries (fields Exa adds later, the rest of a
    # wrapper, a wrapper that is not an object) follows; nothing is dropped.
    for key, value in clean.items():
        if key in _WRAPPERS:
            if isinstance(value, dict):
                value = {k: v for k, v in value.items() if k not in _WRAPPERS[key]}
        elif key in _TAKEN_WHOLE:
            continue
        _put(facts, key, value)
    return facts


def entity_facts(entities: Any) -> dict[str, Any]:
    """Flatten Exa ``entities`` (``[{id, type, version, properties}]``) into clean facts.

    Company properties are lifted out of their wrappers (``workforce.total`` →
    ``employees``, ``financials.fundingTotal`` → ``funding_total``) and keep
    nesting only where it reads well in YAML (``headquarters``,
    ``funding_latest_round``). Other entity types contribute their cleaned
    properties. Several entities merge, first wins. Malformed input → ``{}``."""
    if isinstance(entities, Mapping):
        entities = [entities]
    if not isinstance(entities, list):
        return {}
    merged: dict[str, Any] = {}
    for entity in entities:
        if not isinstance(entity, Mapping):
            continue
        properties = entity.get("properties")
        if not isinstance(properties, Mapping):
            continue
        if str(entity.get("type") or "").lower() == "company":
            facts = _company_facts(properties)
        else:
            facts = clean_facts(properties)
        merged = merge_facts(merged, facts)
    return merged
