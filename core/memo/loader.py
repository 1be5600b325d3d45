"""Load ``memo.yaml`` into a ``sourcedesk.core.memo.spec.Memo`` — or fail with one clear ``MemoError``.

Every problem is reported as ``memo.yaml:LINE: path.to[3].field: what is wrong``
with a hint (did-you-mean for misspelt keys and values). The YAML node tree is
kept so that a pydantic error location can be mapped back to the line the
analyst has to edit (the wording of schema errors lives in ``sourcedesk.core.memo.messages``).
Query templates are checked here too: an unknown ``{{variable}}`` is a load
error, never literal text sent to a search API. Nothing that a hand-edited file
can contain produces a traceback.
"""

from __future__ import annotations

import difflib
import errno
import os
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from sourcedesk.core.domain.errors import MemoError
from sourcedesk.core.files.regular import NotRegularFile, read_regular
from sourcedesk.core.memo import templates
from sourcedesk.core.memo.expansion import expansion_problem
from sourcedesk.core.memo.messages import Problem, describe_error, locate, mapping_get, merge_same_place, node_line
from sourcedesk.core.memo.spec import ExaEntry, FilesEntry, Memo, PluginEntry, SummarySpec

__all__ = ["MEMO_FILENAME", "LoadedMemo", "MemoValidationError", "Problem", "load_memo", "memo_file"]

MEMO_FILENAME = "memo.yaml"
MAX_REPORTED = 5
MAX_MEMO_BYTES = 2_000_000  # an outline with queries is a few KB; a larger file is a mistake or an attack
INIT_HINT = "run `sourcedesk init DIR --subject NAME --url URL` to create one"


@dataclass
class LoadedMemo:
    memo: Memo
    path: Path  # the memo.yaml file
    dir: Path  # the memo folder (notes, store)
    section_lines: dict[str, int] = field(default_factory=dict)  # section id -> line in memo.yaml
    # One-line notices for the analyst: old names mapped to new ones, values an API now ignores.
    notices: list[str] = field(default_factory=list)


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


# libyaml's loader is about 7x faster; a PyYAML built without it falls back to the pure one
# (the two share one interface, which is what the type checker is told).
if TYPE_CHECKING:
    _Base = yaml.SafeLoader
else:
    _Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastLoader(_Base):
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
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11's resolve)
        return str(path)


def load_memo(memo_dir_or_file: Path, *, writer_api: str | None = None) -> LoadedMemo:
    """``writer_api`` is the setting's value: old model names are mapped (with a notice)
    only when the memo will run on the Agent API."""
    path = memo_file(memo_dir_or_file)
    shown = _display(path)
    text = _read(path, shown)
    root, data = _parse(text, shown)
    if data is None:
        raise MemoError(f"{shown} is empty", hint=INIT_HINT)
    if not isinstance(data, dict):
        raise MemoError(
            f"{shown}:{node_line(root)}: expected a mapping of keys (title:, subject:, sections:) at the top level, "
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
            problems.append(describe_error(err, root))
        problems = merge_same_place(problems)
    if memo is not None:
        problems += _provider_problems(memo, root) + _vars_problems(memo, root) + _template_problems(memo, root)
        problems += _late_failure_problems(memo, root, problems)
        problems += _strict_preset_problems(memo, root)
    if problems:
        raise _error(shown, problems)
    assert memo is not None
    return LoadedMemo(
        memo=memo,
        path=path,
        dir=path.parent,
        section_lines=_section_lines(memo, root),
        notices=_notices(memo, root, shown, writer_api),
    )


# -- reading and parsing ------------------------------------------------------------------


def _read(path: Path, shown: str) -> str:
    raw = _read_bytes(path, shown)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise MemoError(f"{shown}:{line}: not valid UTF-8 text", hint="save the file as UTF-8") from None


def _read_bytes(path: Path, shown: str) -> bytes:
    """The file's bytes, read only from a regular file and only up to ``MAX_MEMO_BYTES``: a FIFO
    would block the open forever and a link to /dev/zero would be read until memory runs out."""
    try:
        raw = read_regular(path, MAX_MEMO_BYTES)
    except FileNotFoundError:
        folder = path.parent
        if path.name != MEMO_FILENAME:
            what = f"{shown} does not exist"
        elif not folder.exists():
            what = f"{_display(folder)} does not exist (no {MEMO_FILENAME} there)"
        elif path.is_symlink():
            what = f"{os.path.join(_display(folder), path.name)} is a symbolic link to {os.readlink(path)}, which does not exist"
        else:
            what = f"no {MEMO_FILENAME} in {_display(folder)}"
        raise MemoError(what, hint=INIT_HINT) from None
    except IsADirectoryError:
        raise MemoError(f"{shown} is a directory, not a memo file", hint=INIT_HINT) from None
    except NotRegularFile:
        raise MemoError(
            f"{shown} is not a regular file (a pipe, socket or device)",
            hint=f"make {MEMO_FILENAME} an ordinary text file ({INIT_HINT})",
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise MemoError(
                f"{shown} is a symbolic link that leads back to itself",
                hint=f"replace the link with the {MEMO_FILENAME} file itself",
            ) from None
        raise MemoError(f"cannot read {shown}: {exc.strerror or exc}", hint="check the file's permissions") from None
    if len(raw) > MAX_MEMO_BYTES:
        try:
            size = path.stat().st_size
        except OSError:
            size = len(raw)
        raise _too_large(shown, max(size, len(raw)))
    return raw


def _too_large(shown: str, size: int) -> MemoError:
    return MemoError(
        f"{shown} is {size / 1_000_000:.1f} MB; a memo file may be at most {MAX_MEMO_BYTES // 1_000_000} MB",
        hint="memo.yaml holds the outline and queries: keep long material in notes that a `provider: files` entry reads",
    )


def _parse(text: str, shown: str) -> tuple[yaml.Node | None, Any]:
    try:
        return _parse_with(_FastLoader, text, shown)
    except MemoError:
        if not hasattr(yaml, "CSafeLoader"):
            raise
    return _parse_with(_Loader, text, shown)  # raises again, with the better wording


def _parse_with(loader_cls: type, text: str, shown: str) -> tuple[yaml.Node | None, Any]:
    try:
        loader = loader_cls(text)  # the pure loader checks the characters here
    except yaml.reader.ReaderError as exc:
        raise _unreadable_character(exc, text, shown) from None
    try:
        node = loader.get_single_node()
        too_big = expansion_problem(node)  # before anything expands an alias
        if too_big is not None:
            raise _error(shown, [too_big])
        data = loader.construct_document(node) if node is not None else None
        return node, data
    except MemoError:
        raise
    except yaml.reader.ReaderError as exc:
        raise _unreadable_character(exc, text, shown) from None
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
    except Exception as exc:  # noqa: BLE001 - any constructor failure (e.g. a malformed number) is a memo error
        long_number = _LONG_NUMBER.search(text) if "digits" in str(exc) else None
        if long_number is not None:  # Python refuses to read an int of more than 4300 digits
            line = text[: long_number.start()].count("\n") + 1
            raise MemoError(
                f"{shown}:{line}: a number thousands of digits long", hint="quote it if it is meant as text"
            ) from None
        raise MemoError(f"{shown}: could not read the YAML ({exc})", hint="check the values near the error") from None
    finally:
        loader.dispose()


_LONG_NUMBER = re.compile(r"[\d_]{4300,}")


def _unreadable_character(exc: yaml.reader.ReaderError, text: str, shown: str) -> MemoError:
    """A character YAML refuses (a NUL byte, a control character): its line and code point."""
    line = text[: exc.position].count("\n") + 1 if isinstance(exc.position, int) else 1
    code = exc.character if isinstance(exc.character, int) else 0
    hint = (
        "remove it (NUL bytes usually mean the file was damaged or is not a text file)"
        if code == 0
        else 'remove it, or write it as an escape inside double quotes (e.g. "\\t")'
    )
    return MemoError(
        f"{shown}:{line}: contains the control character U+{code:04X}, which YAML does not allow", hint=hint
    )


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


def _error(shown: str, problems: list[Problem]) -> MemoValidationError:
    problems = sorted(problems, key=lambda p: p.line)
    lines = [p.render(shown) for p in problems[:MAX_REPORTED]]
    if len(problems) == 1:
        return MemoValidationError(lines[0], problems[0].hint, problems)
    body = "\n".join(
        f"  {line}" + (f"\n      hint: {p.hint}" if p.hint else "") for line, p in zip(lines, problems, strict=False)
    )
    more = len(problems) - MAX_REPORTED
    tail = f"\n  … and {more} more" if more > 0 else ""
    return MemoValidationError(
        f"{shown} has {len(problems)} problems:\n{body}{tail}",
        "fix them top to bottom; later ones are sometimes caused by earlier ones",
        problems,
    )


# -- checks on the node tree (before the schema) ------------------------------------------


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
                        problems.append(Problem(node_line(key_node), where, message, "delete one of the two lines"))
                    first_line.setdefault(key, node_line(key_node))
                    walk(value_node, f"{path}.{key}" if path else key)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, f"{path}[{i}]")

    if root is not None:
        walk(root, "")
    return problems


def _duplicate_section_ids(root: yaml.Node | None) -> list[Problem]:
    found = mapping_get(root, "sections")
    if not found or not isinstance(found[1], yaml.SequenceNode):
        return []
    key = found[0].value
    first: dict[str, tuple[int, int]] = {}
    problems: list[Problem] = []
    for i, item in enumerate(found[1].value):
        got = mapping_get(item, "id")
        if not got or not isinstance(got[1], yaml.ScalarNode):
            continue
        sid = got[1].value
        if sid in first:
            j, line = first[sid]
            message = f"section id {sid!r} is already used by {key}[{j}] (line {line})"
            hint = "section ids must be unique: they name the section's note and stored sources"
            problems.append(Problem(node_line(got[1]), f"{key}[{i}].id", message, hint))
        else:
            first[sid] = (i, node_line(got[1]))
    return problems


# -- checks that need the validated memo --------------------------------------------------


def _vars_problems(memo: Memo, root: yaml.Node | None) -> list[Problem]:
    problems = []
    for name in memo.vars:
        if name in templates.BUILTIN_VARIABLES:
            line, shown, _ = locate(root, ("vars", name))
            message = f"{{{{{name}}}}} is a built-in template variable and cannot be redefined"
            problems.append(Problem(line, shown, message, f"rename it (e.g. my_{name})"))
    return problems


def _provider_problems(memo: Memo, root: yaml.Node | None) -> list[Problem]:
    """Entries for providers the schema does not know: the provider must be registered,
    and its own entry model (if it has one) must accept the entry."""
    from sourcedesk.core.sources.providers import PLUGIN_ERRORS, PROVIDERS

    problems: list[Problem] = []
    for i, section in enumerate(memo.sections):
        for j, entry in enumerate(section.include_sources):
            if not isinstance(entry, PluginEntry):
                continue
            _, shown, node = locate(root, ("sections", i, "include-sources", j, "provider"))
            provider = PROVIDERS.get(entry.provider)
            if provider is None:
                known = sorted(PROVIDERS)
                close = difflib.get_close_matches(entry.provider, known, n=1)
                quoted = [f"'{k}'" for k in known]
                expected = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
                hint = (f"did you mean '{close[0]}'? " if close else "") + "providers: " + ", ".join(known)
                broken = PLUGIN_ERRORS.get(entry.provider)
                if broken is not None:  # installed, but it would not load: say why instead of guessing
                    hint = f"the installed provider plugin '{entry.provider}' failed to load ({broken}); fix or reinstall it"
                problems.append(Problem(node_line(node), shown, hint=hint, expected=expected, got=repr(entry.provider)))
            elif provider.entry_model is not None:
                try:
                    section.include_sources[j] = provider.entry_model.model_validate(
                        {**(entry.model_extra or {}), "provider": entry.provider, "full_text": entry.full_text}
                    )
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = ".".join(str(p) for p in first["loc"])
                    problems.append(
                        Problem(
                            node_line(node),
                            shown,
                            f"{where}: {first['msg']}",
                            f"see the {entry.provider} provider's documentation",
                        )
                    )
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
                _, shown, node = locate(root, ("sections", i, "include-sources", j, *tail))
                for message in templates.syntax_errors(template):
                    problems.append(Problem(node_line(node), shown, message, _known_hint(known)))
                for name in templates.unknown_variables(template, known):
                    close = templates.suggest(name, known)
                    hint = (f"did you mean {{{{{close}}}}}? " if close else "") + _known_hint(known)
                    message = f"unknown template variable {{{{{name}}}}}"
                    problems.append(Problem(node_line(node), shown, message, hint + "; or define it under vars:"))
    return problems


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$")


def _iso_date_problem(value: str) -> str | None:
    if not _ISO_DATE.match(value.strip()):
        return "is not a date"
    try:
        date.fromisoformat(value.strip()[:10])
    except ValueError:
        return "is not a real calendar date"
    return None


def _late_failure_problems(memo: Memo, root: yaml.Node | None, earlier: list[Problem]) -> list[Problem]:
    """Values that pass the schema but would fail only after money is spent — an empty
    search, a query whose variables are all empty, a date Exa refuses — caught now."""
    problems: list[Problem] = []
    reported = {p.path for p in earlier}
    models = [(("writer", "model"), memo.writer.model)] + [
        (("sections", i, "writer", "model"), s.writer.model) for i, s in enumerate(memo.sections) if s.writer
    ]
    for where, model in models:
        if model is not None and not model.strip():
            line, shown, _ = locate(root, where)
            hint = "name a model (e.g. perplexity/sonar), or leave the key out to use the writer_model setting or the API's default"
            problems.append(Problem(line, shown, "the model is empty", hint))
    for i, section in enumerate(memo.sections):
        known = templates.template_variables(memo, section)
        for j, entry in enumerate(section.include_sources):
            base = ("sections", i, "include-sources", j)
            if isinstance(entry, ExaEntry):
                line, shown, _ = locate(root, (*base, "query"))
                if not entry.query.strip():
                    problems.append(
                        Problem(
                            line, shown, "the query is empty", 'write what to search for, e.g. "{{subject}} funding"'
                        )
                    )
                elif shown not in reported:
                    try:
                        rendered = templates.render(entry.query, known)
                    except templates.TemplateError:
                        rendered = "?"  # reported by the template checks
                    if not rendered.strip():
                        used = ", ".join("{{" + n + "}}" for n in templates.placeholders(entry.query))
                        problems.append(
                            Problem(
                                line,
                                shown,
                                f"the query is empty once its variables are filled in ({used} empty)",
                                "give those fields a value in memo.yaml, or add words to the query",
                            )
                        )
                for key in ("start-published-date", "end-published-date"):
                    value = getattr(entry, key.replace("-", "_"))
                    if value is None:
                        continue
                    wrong = _iso_date_problem(value)
                    if wrong:
                        line, shown, _ = locate(root, (*base, key))
                        problems.append(
                            Problem(line, shown, f"{value!r} {wrong}", "write an ISO date, e.g. 2024-01-31")
                        )
                problems += _exa_problems(entry, root, base)
                summary = entry.contents.summary
                if isinstance(summary, SummarySpec) and summary.query is not None and not summary.query.strip():
                    line, shown, _ = locate(root, (*base, "contents", "summary", "query"))
                    problems.append(
                        Problem(line, shown, "the summary query is empty", "write a question, or leave the key out")
                    )
            elif isinstance(entry, FilesEntry):
                empty = [k for k, g in enumerate(entry.glob) if not g.strip()]
                if not entry.glob or empty:
                    tail = (*base, "glob", *(empty[:1]))
                    line, shown, _ = locate(root, tail)
                    problems.append(
                        Problem(line, shown, "the glob is empty", 'name the files to read, e.g. glob: "notes/*.md"')
                    )
    return problems


def _exa_problems(entry: ExaEntry, root: yaml.Node | None, base: tuple[Any, ...]) -> list[Problem]:
    """What Exa would refuse in an entry (its own checks live with the provider)."""
    from sourcedesk.core.sources.providers.exa.entry import entry_problems

    return entry_problems(entry, root, base)


_STRICT_PRESET_HINT = (
    "remove the preset, or set web-search: true; a strict section runs on a model (perplexity/sonar by default)"
)


def _strict_preset_problems(memo: Memo, root: yaml.Node | None) -> list[Problem]:
    """A preset always brings its own web search, so it cannot write a strict section."""
    from sourcedesk.core.writing.prompt import effective_web_search

    problems: list[Problem] = []
    if memo.writer.preset and not memo.writer.web_search:
        line, shown, _ = locate(root, ("writer", "preset"))
        message = (
            f"preset {memo.writer.preset} conflicts with web-search: false — a preset cannot drop its bundled "
            "web search, and strict mode sends a model and no tools"
        )
        problems.append(Problem(line, shown, message, _STRICT_PRESET_HINT))
    for i, section in enumerate(memo.sections):
        if section.writer and section.writer.preset and not effective_web_search(memo, section):
            line, shown, _ = locate(root, ("sections", i, "writer", "preset"))
            message = (
                f"section {section.id!r} is strict (web-search: false) but names preset {section.writer.preset} — "
                "a preset cannot drop its bundled web search, and strict mode sends a model and no tools"
            )
            problems.append(Problem(line, shown, message, _STRICT_PRESET_HINT))
    return problems


def _notices(memo: Memo, root: yaml.Node | None, shown: str, writer_api: str | None) -> list[str]:
    from sourcedesk.core.sources.providers.exa.entry import entry_notices
    from sourcedesk.core.writing.choice import api_notices, legacy_notices

    notices: list[str] = []
    api = memo.writer.api or writer_api or "perplexity"
    if api == "perplexity":
        for place, legacy in legacy_notices(memo):
            line, _, _ = locate(root, place)
            notices.append(f"{shown}:{line}: {legacy}")
    notices += [f"{shown}: {n}" for n in api_notices(memo, api)]
    for i, section in enumerate(memo.sections):
        for j, entry in enumerate(section.include_sources):
            if isinstance(entry, ExaEntry):
                notices += entry_notices(entry, root, ("sections", i, "include-sources", j), shown)
    return notices


def _known_hint(known: dict[str, str]) -> str:
    return "available: " + ", ".join("{{" + k + "}}" for k in sorted(known))


def _section_lines(memo: Memo, root: yaml.Node | None) -> dict[str, int]:
    return {s.id: node_line(locate(root, ("sections", i))[2]) for i, s in enumerate(memo.sections)}
