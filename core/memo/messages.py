"""Word a pydantic ``ValidationError`` on memo.yaml as ``LINE: path.as.written: what is wrong`` + hint.

Why a module of its own: pydantic reports a location in the *schema's* terms (``sections, 2,
include-sources, 0, exa, num_results``) and a terse type code; an analyst editing the file
needs the line, the key as they spelt it, and what to write instead. That translation walks
the schema's types (to find bounds, literals, union tags) and the YAML node tree (to find
lines) — a job separate from reading and checking the file, which ``sourcedesk.core.memo.loader`` does.
"""

from __future__ import annotations

import difflib
import inspect
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import annotated_types
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from sourcedesk.core.memo.spec import Memo


@dataclass
class Problem:
    """One thing wrong in memo.yaml, located by line and by path as written."""

    line: int
    path: str
    message: str = ""
    hint: str | None = None
    expected: str | None = None  # for type errors: "an integer between 1 and 100"
    got: str | None = None

    def render(self, shown: str) -> str:
        what = f"expected {self.expected}, got {self.got}" if self.expected else self.message
        return f"{shown}:{self.line}: {self.path}: {what}" if self.path else f"{shown}:{self.line}: {what}"


# -- the YAML node tree -------------------------------------------------------------------


def node_line(node: yaml.Node | None) -> int:
    return node.start_mark.line + 1 if node is not None else 1


def mapping_get(node: yaml.Node | None, *keys: str) -> tuple[yaml.Node, yaml.Node] | None:
    """(key node, value node) of the first of ``keys`` in a mapping node, else None."""
    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value in keys:
            return key_node, value_node
    return None


def locate(root: yaml.Node | None, loc: tuple[Any, ...], *, missing: bool = False) -> tuple[int, str, yaml.Node | None]:
    """Line, path as written, and node of a location. Keys match in either spelling
    (``num_results``/``num-results``); elements absent from the YAML (union tags such as
    ``exa`` or ``bool``) are skipped; with ``missing`` the last element is named anyway."""
    node, shown, key_node = root, "", None
    for n, el in enumerate(loc):
        if isinstance(el, int) and isinstance(node, yaml.SequenceNode) and 0 <= el < len(node.value):
            node, shown, key_node = node.value[el], f"{shown}[{el}]", None
            continue
        spellings = (str(el), str(el).replace("_", "-"), str(el).replace("-", "_"))
        got = mapping_get(node, *spellings) if el != "[key]" else None
        if got:
            key_node, node = got
            shown = f"{shown}.{key_node.value}" if shown else key_node.value
        elif missing and n == len(loc) - 1 and isinstance(el, str):
            shown = f"{shown}.{el}" if shown else el
    return node_line(key_node if key_node is not None else node), shown, node


# -- the schema: which field an error location names ---------------------------------------


@dataclass
class _FieldAt:
    model: type[BaseModel] | None = None  # the model holding the last field reached
    name: str | None = None
    info: FieldInfo | None = None


def _unwrap(tp: Any) -> Any:
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def _is_model(tp: Any) -> bool:
    return inspect.isclass(tp) and issubclass(tp, BaseModel)


def _model_field(model: type[BaseModel], key: Any) -> tuple[str, FieldInfo] | None:
    if not isinstance(key, str):
        return None
    for name, info in model.model_fields.items():
        if key in (name, info.alias, name.replace("_", "-")):
            return name, info
    return None


def _tag_values(model: type[BaseModel]) -> list[str]:
    """Literal values a model can be selected by (its discriminator)."""
    values: list[str] = []
    for info in model.model_fields.values():
        if typing.get_origin(info.annotation) is typing.Literal and info.is_required():
            values += [str(v) for v in typing.get_args(info.annotation)]
    return values


def _field_at(loc: tuple[Any, ...]) -> _FieldAt:
    """Follow an error location through the schema's types to the field it names."""
    at = _FieldAt()
    tp: Any = Memo
    i = 0
    while i < len(loc) and tp is not None:
        el = loc[i]
        tp = _unwrap(tp)
        origin = typing.get_origin(tp)
        if _is_model(tp):
            found = _model_field(tp, el)
            at.model, at.name, at.info = tp, (found[0] if found else None), (found[1] if found else None)
            tp = found[1].annotation if found else None
        elif origin in (list, tuple, set, frozenset):
            tp = typing.get_args(tp)[0] if isinstance(el, int) and typing.get_args(tp) else None
        elif origin is dict:
            args = typing.get_args(tp)
            tp = (args[0] if el == "[key]" else args[1]) if args else None
        elif origin in (typing.Union, types.UnionType):
            members = [_unwrap(m) for m in typing.get_args(tp) if m is not type(None)]
            chosen = next(
                (
                    m
                    for m in members
                    if (_is_model(m) and str(el) in _tag_values(m)) or getattr(m, "__name__", None) == el
                ),
                None,
            )
            if chosen is not None:  # the element was a union tag ("exa", "bool")
                tp, i = chosen, i + 1
                continue
            models = [m for m in members if _is_model(m)]
            if len(models) == 1:
                tp = models[0]
                continue  # same element, now against the model
            tp = None
        else:
            tp = None
        i += 1
    return at


# -- wording one error -------------------------------------------------------------------


def _got(value: Any) -> str:
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return repr(text)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


def _bounds(info: FieldInfo | None) -> tuple[Any, Any]:
    lo: object = None
    hi: object = None
    for meta in info.metadata if info else ():
        if isinstance(meta, annotated_types.Ge):
            lo = meta.ge
        elif isinstance(meta, annotated_types.Gt):
            lo = meta.gt
        elif isinstance(meta, annotated_types.Le):
            hi = meta.le
        elif isinstance(meta, annotated_types.Lt):
            hi = meta.lt
    return lo, hi


def _number_phrase(noun: str, info: FieldInfo | None) -> str:
    lo, hi = _bounds(info)
    if lo is not None and hi is not None:
        return f"{noun} between {lo} and {hi}"
    if lo is not None:
        return f"{noun} of at least {lo}"
    if hi is not None:
        return f"{noun} of at most {hi}"
    return noun


_INT_TYPES = {"int_parsing", "int_type", "int_from_float", "int_parsing_size"}
_FLOAT_TYPES = {"float_parsing", "float_type"}
_RANGE_TYPES = {"greater_than_equal", "less_than_equal", "greater_than", "less_than"}
_SIMPLE_EXPECTED = {
    "bool_parsing": "true/false",
    "bool_type": "true/false",
    "string_type": "text",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def describe_error(err: Mapping[str, Any], root: yaml.Node | None) -> Problem:
    """One entry of ``ValidationError.errors()`` as a problem at the line the analyst edits."""
    kind = err.get("type", "")
    loc = tuple(err.get("loc", ()))
    ctx = err.get("ctx") or {}
    value = err.get("input")
    line, shown, _ = locate(root, loc, missing=kind == "missing")
    at = _field_at(loc)
    key = shown.rsplit(".", 1)[-1] if shown else ""
    problem = Problem(line=line, path=shown)

    def expect(phrase: str, hint: str | None = None) -> Problem:
        problem.expected, problem.got, problem.hint = phrase, _got(value), hint
        return problem

    annotation = _unwrap(at.info.annotation) if at.info else None
    is_float = annotation is float or (
        typing.get_origin(annotation) in (typing.Union, types.UnionType) and float in typing.get_args(annotation)
    )
    if kind in _INT_TYPES or (kind in _RANGE_TYPES and not is_float):
        default = at.info.default if at.info and isinstance(at.info.default, int) else _bounds(at.info)[0]
        example = f", e.g. `{key}: {default}`" if default is not None and key else ""
        return expect(_number_phrase("an integer", at.info), f"write a whole number{example}")
    if kind in _FLOAT_TYPES or kind in _RANGE_TYPES:
        return expect(_number_phrase("a number", at.info), "write a number (e.g. 0.5)")
    if loc and loc[-1] == "[key]":
        problem.message = f"the key {_got(value)} must be text"
        problem.hint = "quote the key, e.g. '2024': …"
        return problem
    if kind in _SIMPLE_EXPECTED:
        phrase = _SIMPLE_EXPECTED[kind]
        hint = {
            "a list": f"write a list: `{key}: [a, b]` or one `- item` per line",
            "a mapping": "indent the keys that belong under it (key: value, one per line)",
            "true/false": "write true or false",
            "text": "quote it to make it text" if not isinstance(value, (dict, list)) else "write a single value",
        }.get(phrase)
        return expect(phrase, hint)
    if kind == "literal_error":
        allowed = (
            [str(v) for v in typing.get_args(annotation)] if typing.get_origin(annotation) is typing.Literal else []
        )
        close = difflib.get_close_matches(str(value), allowed, n=1, cutoff=0.5) if allowed else []
        phrase = " or ".join(repr(a) for a in allowed) if allowed else str(ctx.get("expected", "an allowed value"))
        return expect(phrase, f"did you mean {close[0]!r}?" if close else None)
    if kind == "string_pattern_mismatch":
        if at.name == "id" and at.model is not None and at.model.__name__ == "Section":
            return expect(
                "a lower-case id (letters, digits, '-' or '_')",
                f"e.g. {_slug(str(value))!r}; the id names the section's note and its stored sources",
            )
        return expect(f"text matching {ctx.get('pattern', 'the required pattern')}")
    if kind in ("string_too_short", "string_too_long"):
        n = ctx.get("min_length" if kind == "string_too_short" else "max_length")
        phrase = f"{'at least' if kind == 'string_too_short' else 'at most'} {n} character{'s' if n != 1 else ''}"
        hint = None
        if at.name == "id" and at.model is not None and at.model.__name__ == "Section":
            hint = f"use a short id, e.g. {_slug(str(value))[:24].strip('-_')!r}; it names the section's note file"
        problem.expected, problem.got, problem.hint = phrase, f"{len(str(value))} characters", hint
        return problem
    if kind in ("too_short", "too_long"):
        if kind == "too_short":
            n = ctx.get("min_length", 1)
            phrase = f"at least {n} item{'s' if n != 1 else ''}"
            hint = (
                "add at least one section (see `sourcedesk init` for a standard outline)" if key == "sections" else None
            )
        else:
            n = ctx.get("max_length")
            phrase, hint = f"at most {n} items", None
        problem.expected, problem.got, problem.hint = phrase, f"{ctx.get('actual_length', 0)}", hint
        return problem
    if kind == "missing":
        parent = shown.rsplit(".", 1)[0] if "." in shown else "the top level"
        problem.message = "required key is missing"
        problem.hint = f"add `{key}: …` under {parent}" if parent != "the top level" else f"add `{key}: …`"
        return problem
    if kind == "extra_forbidden":
        allowed = sorted({info.alias or name for name, info in at.model.model_fields.items()}) if at.model else []
        close = difflib.get_close_matches(str(loc[-1]).replace("_", "-"), allowed, n=1, cutoff=0.6)
        problem.message = "unknown key"
        if close:
            problem.hint = f"did you mean {close[0]!r}?"
        elif allowed:
            problem.hint = "allowed here: " + ", ".join(allowed)
        return problem
    if kind == "union_tag_invalid":
        expected = ctx.get("expected_tags", "")
        tags = [t.strip(" '") for t in str(expected).split(",") if t.strip(" '")]
        close = difflib.get_close_matches(str(ctx.get("tag", "")), tags, n=1, cutoff=0.5)
        disc = str(ctx.get("discriminator", "provider")).strip("'")
        _, shown_disc, _ = locate(root, (*loc, disc), missing=True)
        problem.path = shown_disc
        problem.expected, problem.got = " or ".join(repr(t) for t in tags), repr(str(ctx.get("tag")))
        problem.hint = f"did you mean {close[0]!r}?" if close else None
        return problem
    if kind == "union_tag_not_found":
        disc = str(ctx.get("discriminator", "provider")).strip("'")
        problem.path = f"{shown}.{disc}" if shown else disc
        problem.message = "required key is missing"
        problem.hint = f"add `{disc}: exa` (web search via Exa) or `{disc}: files` (local files)"
        return problem
    message = str(err.get("msg", "invalid value"))
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            message = message[len(prefix) :]
    problem.message = message
    hint = getattr(ctx.get("error"), "hint", None)  # a validator's own error may say what to write
    if isinstance(hint, str) and hint:
        problem.hint = hint
    return problem


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")
    return slug or "overview"


# -- several errors at one place ---------------------------------------------------------


def merge_same_place(problems: list[Problem]) -> list[Problem]:
    """Union alternatives (a mapping / true-false) at one place become one problem; and when
    the mapping alternative has a problem *inside* it, the shape was right: only that one counts."""

    def inside(deeper: str, outer: str) -> bool:
        return deeper.startswith((outer + ".", outer + "["))

    problems = [p for p in problems if not (p.expected and any(inside(q.path, p.path) for q in problems))]
    out: list[Problem] = []
    for p in problems:
        prev = next((q for q in out if q.line == p.line and q.path == p.path), None)
        if prev is None:
            out.append(p)
        elif prev.expected and p.expected and p.expected not in prev.expected:
            prev.expected = f"{prev.expected} or {p.expected}"
            prev.hint = None  # each alternative's hint would mislead; the expectation says it all
    return out
