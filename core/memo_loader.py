"""Load ``memo.yaml`` into a ``core.memo.Memo`` — or fail with one clear ``MemoError``.

Every problem is reported as ``memo.yaml:LINE: path.to[3].field: what is wrong``
with a hint (did-you-mean for misspelt keys and values). The YAML node tree is
kept so that a pydantic error location can be mapped back to the line the
analyst has to edit. Query templates are checked here too: an unknown
``{{variable}}`` is a load error, never literal text sent to a search API.
Nothing that a hand-edited file can contain produces a traceback.
"""

from __future__ import annotations

import difflib
import inspect
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import annotated_types
import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from core import templates
from core.errors import MemoError
from core.memo import ExaEntry, Memo, SummarySpec

MEMO_FILENAME = "memo.yaml"
MAX_REPORTED = 5
INIT_HINT = "run `sourcedesk init DIR --subject NAME --url URL` to create one"


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


@dataclass
class LoadedMemo:
    memo: Memo
    path: Path  # the memo.yaml file
    dir: Path  # the memo folder (notes, store)
    section_lines: dict[str, int] = field(default_factory=dict)  # section id -> line in memo.yaml


class MemoValidationError(MemoError):
    """A memo.yaml with one or more problems; ``problems`` lists them all (sorted by line)."""

    def __init__(self, message: str, hint: str | None, problems: list[Problem]):
        super().__init__(message, hint)
        self.problems = problems


_NO_TIMESTAMPS = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _Loader(yaml.SafeLoader):
    """Safe loader that keeps dates as text (``2024-01-31`` is a string field in the schema).
    Pure Python: used to word syntax errors (libyaml's messages leave out the culprit)."""

    yaml_implicit_resolvers = _NO_TIMESTAMPS


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml: ~7x faster
    yaml_implicit_resolvers = _NO_TIMESTAMPS


def memo_file(memo_dir_or_file: Path) -> Path:
    """``DIR/memo.yaml`` for a folder (or a path without a YAML suffix), else the path itself."""
    p = Path(memo_dir_or_file)
    if p.is_dir() or (not p.exists() and p.suffix.lower() not in (".yaml", ".yml")):
        return p / MEMO_FILENAME
    return p


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def load_memo(memo_dir_or_file: Path) -> LoadedMemo:
    path = memo_file(memo_dir_or_file)
    shown = _display(path)
    text = _read(path, shown)
    root, data = _parse(text, shown)
    if data is None:
        raise MemoError(f"{shown} is empty", hint=INIT_HINT)
    if not isinstance(data, dict):
        raise MemoError(
            f"{shown}:{_line(root)}: expected a mapping of keys (title:, subject:, sections:) at the top level, "
            f"got {type(data).__name__ if not isinstance(data, list) else 'a list'}",
            hint="see the file written by `sourcedesk init` for the expected shape",
        )
    problems = _duplicate_keys(root) + _duplicate_section_ids(root)
    memo: Memo | None = None
    try:
        memo = Memo.model_validate(data)
    except ValidationError as exc:
        duplicate_ids = any(p.path.endswith(".id") for p in problems)
        for err in exc.errors():
            if duplicate_ids and not err["loc"] and "used twice" in str(err.get("msg", "")):
                continue
            problems.append(_describe(err, root))
        problems = _merge_same_place(problems)
    if memo is not None:
        problems += _vars_problems(memo, root) + _template_problems(memo, root)
    if problems:
        raise _error(shown, problems)
    return LoadedMemo(memo=memo, path=path, dir=path.parent, section_lines=_section_lines(memo, root))


# -- reading and parsing ------------------------------------------------------------------


def _read(path: Path, shown: str) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        folder = path.parent
        if path.name != MEMO_FILENAME:
            what = f"{shown} does not exist"
        elif not folder.exists():
            what = f"{_display(folder)} does not exist (no {MEMO_FILENAME} there)"
        else:
            what = f"no {MEMO_FILENAME} in {_display(folder)}"
        raise MemoError(what, hint=INIT_HINT) from None
    except IsADirectoryError:
        raise MemoError(f"{shown} is a directory, not a memo file", hint=INIT_HINT) from None
    except OSError as exc:
        raise MemoError(f"cannot read {shown}: {exc.strerror or exc}", hint="check the file's permissions") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise MemoError(f"{shown}:{line}: not valid UTF-8 text", hint="save the file as UTF-8") from None


def _parse(text: str, shown: str) -> tuple[yaml.Node | None, Any]:
    try:
        return _parse_with(_FastLoader, text, shown)
    except MemoError:
        if not hasattr(yaml, "CSafeLoader"):
            raise
    return _parse_with(_Loader, text, shown)  # raises again, with the better wording


def _parse_with(loader_cls: type, text: str, shown: str) -> tuple[yaml.Node | None, Any]:
    loader = loader_cls(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
        return node, data
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = " ".join(p for p in (exc.context, exc.problem) if p) or "unreadable YAML"
        if exc.context_mark and exc.problem_mark and exc.context_mark.line != exc.problem_mark.line:
            problem += f" (the {_opened(exc.context)} started on line {exc.context_mark.line + 1})"
        raise MemoError(f"{shown}:{line}: YAML syntax error: {problem}", hint=_yaml_hint(problem, line)) from None
    except yaml.YAMLError as exc:
        raise MemoError(f"{shown}: YAML syntax error: {exc}", hint=_yaml_hint(str(exc), None)) from None
    except RecursionError:
        raise MemoError(f"{shown}: the YAML is nested too deeply to read", hint="simplify the file") from None
    except Exception as exc:  # e.g. a malformed number the YAML constructor chokes on
        raise MemoError(f"{shown}: could not read the YAML ({exc})", hint="check the values near the error") from None
    finally:
        loader.dispose()


def _opened(context: str | None) -> str:
    for what in ("flow mapping", "flow sequence", "block mapping", "block collection", "quoted scalar"):
        if context and what in context:
            return {"block collection": "list", "quoted scalar": "quoted text"}.get(what, what)
    return "construct"


def _yaml_hint(problem: str, line: int | None) -> str:
    where = f" on line {line}" if line else ""
    if "'\\t'" in problem or "\\t" in problem:
        return f"YAML indentation must use spaces, not tabs{where}"
    if "mapping values are not allowed" in problem:
        return f"a value containing ': ' must be quoted{where}, e.g. query: \"NATS: the messaging system\""
    if "expected a single document" in problem or "but found another document" in problem:
        return "memo.yaml holds one YAML document: remove the extra '---'"
    if "found undefined alias" in problem or "found unhashable key" in problem:
        return f"a value starting with '*', '&', '!' or '?' must be quoted{where}"
    return f"check the indentation (spaces) and the quoting{where}"


def _line(node: yaml.Node | None) -> int:
    return node.start_mark.line + 1 if node is not None else 1


def _error(shown: str, problems: list[Problem]) -> MemoValidationError:
    problems = sorted(problems, key=lambda p: p.line)
    lines = [p.render(shown) for p in problems[:MAX_REPORTED]]
    if len(problems) == 1:
        return MemoValidationError(lines[0], problems[0].hint, problems)
    body = "\n".join(
        f"  {line}" + (f"\n      hint: {p.hint}" if p.hint else "") for line, p in zip(lines, problems)
    )
    more = len(problems) - MAX_REPORTED
    tail = f"\n  … and {more} more" if more > 0 else ""
    return MemoValidationError(
        f"{shown} has {len(problems)} problems:\n{body}{tail}",
        "fix them top to bottom; later ones are sometimes caused by earlier ones",
        problems,
    )


def _merge_same_place(problems: list[Problem]) -> list[Problem]:
    """Union alternatives (a mapping / true-false) at one place become one problem; and when
    the mapping alternative has a problem *inside* it, the shape was right: only that one counts."""

    def inside(deeper: str, outer: str) -> bool:
        return deeper.startswith(outer + ".") or deeper.startswith(outer + "[")

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


# -- checks on the node tree (before the schema) ------------------------------------------


def _mapping_get(node: yaml.Node | None, *keys: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value in keys:
            return key_node, value_node
    return None


def _duplicate_keys(root: yaml.Node | None) -> list[Problem]:
    problems: list[Problem] = []
    seen_nodes: set[int] = set()

    def walk(node: yaml.Node, path: str) -> None:
        if id(node) in seen_nodes:
            return
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first_line: dict[str, int] = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = key_node.value
                    if key in first_line and key != "<<":
                        message = f"duplicate key (also on line {first_line[key]}); only one value can count"
                        where = f"{path}.{key}" if path else key
                        problems.append(Problem(_line(key_node), where, message, "delete one of the two lines"))
                    first_line.setdefault(key, _line(key_node))
                    walk(value_node, f"{path}.{key}" if path else key)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, f"{path}[{i}]")

    if root is not None:
        walk(root, "")
    return problems


def _duplicate_section_ids(root: yaml.Node | None) -> list[Problem]:
    found = _mapping_get(root, "sections")
    if not found or not isinstance(found[1], yaml.SequenceNode):
        return []
    key = found[0].value
    first: dict[str, tuple[int, int]] = {}
    problems: list[Problem] = []
    for i, item in enumerate(found[1].value):
        got = _mapping_get(item, "id")
        if not got or not isinstance(got[1], yaml.ScalarNode):
            continue
        sid = got[1].value
        if sid in first:
            j, line = first[sid]
            message = f"section id {sid!r} is already used by {key}[{j}] (line {line})"
            hint = "section ids must be unique: they name the section's note and stored sources"
            problems.append(Problem(_line(got[1]), f"{key}[{i}].id", message, hint))
        else:
            first[sid] = (i, _line(got[1]))
    return problems


# -- checks that need the validated memo --------------------------------------------------


def _vars_problems(memo: Memo, root: yaml.Node | None) -> list[Problem]:
    problems = []
    for name in memo.vars:
        if name in templates.BUILTIN_VARIABLES:
            line, shown, _ = _locate(root, ("vars", name))
            message = f"{{{{{name}}}}} is a built-in template variable and cannot be redefined"
            problems.append(Problem(line, shown, message, f"rename it (e.g. my_{name})"))
    return problems


def _template_problems(memo: Memo, root: yaml.Node | None) -> list[Problem]:
    problems: list[Problem] = []
    for i, section in enumerate(memo.sections):
        known = templates.template_variables(memo, section)
        for j, entry in enumerate(section.include_sources):
            if not isinstance(entry, ExaEntry):
                continue
            checks: list[tuple[tuple[Any, ...], str]] = [(("query",), entry.query)]
            checks += [(("domains", k), d) for k, d in enumerate(entry.domains)]
            checks += [(("exclude-domains", k), d) for k, d in enumerate(entry.exclude_domains)]
            summary = entry.contents.summary
            if isinstance(summary, SummarySpec) and summary.query:
                checks.append((("contents", "summary", "query"), summary.query))
            for tail, template in checks:
                _, shown, node = _locate(root, ("sections", i, "include-sources", j, *tail))
                for message in templates.syntax_errors(template):
                    problems.append(Problem(_line(node), shown, message, _known_hint(known)))
                for name in templates.unknown_variables(template, known):
                    close = templates.suggest(name, known)
                    hint = (f"did you mean {{{{{close}}}}}? " if close else "") + _known_hint(known)
                    message = f"unknown template variable {{{{{name}}}}}"
                    problems.append(Problem(_line(node), shown, message, hint + "; or define it under vars:"))
    return problems


def _known_hint(known: dict[str, str]) -> str:
    return "available: " + ", ".join("{{" + k + "}}" for k in sorted(known))


def _section_lines(memo: Memo, root: yaml.Node | None) -> dict[str, int]:
    return {s.id: _line(_locate(root, ("sections", i))[2]) for i, s in enumerate(memo.sections)}

# -- pydantic errors -> problems ----------------------------------------------------------


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
            members = [m for m in typing.get_args(tp) if m is not type(None)]
            chosen = next(
                (m for m in members if (_is_model(m) and str(el) in _tag_values(m)) or getattr(m, "__name__", None) == el),
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


def _locate(root: yaml.Node | None, loc: tuple[Any, ...], *, missing: bool = False) -> tuple[int, str, yaml.Node | None]:
    """Line, path as written, and node of a location. Keys match in either spelling
    (``num_results``/``num-results``); elements absent from the YAML (union tags such as
    ``exa`` or ``bool``) are skipped; with ``missing`` the last element is named anyway."""
    node, shown, key_node = root, "", None
    for n, el in enumerate(loc):
        if isinstance(el, int) and isinstance(node, yaml.SequenceNode) and 0 <= el < len(node.value):
            node, shown, key_node = node.value[el], f"{shown}[{el}]", None
            continue
        spellings = (str(el), str(el).replace("_", "-"), str(el).replace("-", "_"))
        got = _mapping_get(node, *spellings) if el != "[key]" else None
        if got:
            key_node, node = got
            shown = f"{shown}.{key_node.value}" if shown else key_node.value
        elif missing and n == len(loc) - 1 and isinstance(el, str):
            shown = f"{shown}.{el}" if shown else el
    return _line(key_node if key_node is not None else node), shown, node


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
    lo = hi = None
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


def _describe(err: dict[str, Any], root: yaml.Node | None) -> Problem:
    kind = err.get("type", "")
    loc = tuple(err.get("loc", ()))
    ctx = err.get("ctx") or {}
    value = err.get("input")
    line, shown, _ = _locate(root, loc, missing=kind == "missing")
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
        allowed = [str(v) for v in typing.get_args(annotation)] if typing.get_origin(annotation) is typing.Literal else []
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
    if kind in ("too_short", "too_long"):
        if kind == "too_short":
            n = ctx.get("min_length", 1)
            phrase = f"at least {n} item{'s' if n != 1 else ''}"
            hint = "add at least one section (see `sourcedesk init` for a standard outline)" if key == "sections" else None
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
        _, shown_disc, _ = _locate(root, loc + (disc,), missing=True)
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
    return problem


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")
    return slug or "overview"
