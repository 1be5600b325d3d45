"""Query templates: ``{{subject}}``-style placeholders in include-sources queries.

An unknown placeholder is an error (caught when memo.yaml is loaded), never
literal ``{{...}}`` text sent to a search API.

Variables (see ``template_variables``):

- ``subject`` / ``subject_name`` / ``basename`` — the subject's name
- ``aliases`` — the subject's aliases joined with ", "; ``domains`` likewise
- ``url`` — the subject URL; ``url_domain`` — its host without ``www.``
- ``description`` — the subject's one-line description
- ``section`` — the section *title*; ``section_id`` — its id
- ``title`` — the memo title; ``firm`` / ``firm_name`` / ``firm_context``
- ``today`` — ISO date; ``year`` — the current year
- every key under ``vars:`` in memo.yaml (a key may not shadow a built-in name)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from datetime import date
from typing import TYPE_CHECKING

from sourcedesk.core.domain import clock
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.net.urls import host_of, strip_www

if TYPE_CHECKING:  # pragma: no cover
    from sourcedesk.core.memo.spec import Memo, Section

PLACEHOLDER_RE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

BUILTIN_VARIABLES = (
    "subject",
    "subject_name",
    "basename",
    "aliases",
    "domains",
    "url",
    "url_domain",
    "description",
    "section",
    "section_id",
    "title",
    "firm",
    "firm_name",
    "firm_context",
    "today",
    "year",
)


class TemplateError(UserError):
    """A template refers to a variable that does not exist, or has broken braces."""


def template_variables(memo: Memo, section: Section | None = None, *, today: date | None = None) -> dict[str, str]:
    """Every variable a query in ``section`` may use, with its value ("" when unset)."""
    today = today or clock.today()
    subject = memo.subject
    host = host_of(subject.url) if subject.url else None
    values = {
        "subject": subject.name,
        "subject_name": subject.name,
        "basename": subject.name,
        "aliases": ", ".join(subject.aliases),
        "domains": ", ".join(subject.domains),
        "url": subject.url or "",
        "url_domain": strip_www(host) if host else "",
        "description": subject.description,
        "section": section.title if section is not None else "",
        "section_id": section.id if section is not None else "",
        "title": memo.title,
        "firm": memo.firm.name,
        "firm_name": memo.firm.name,
        "firm_context": memo.firm.context,
        "today": today.isoformat(),
        "year": str(today.year),
    }
    for key, value in memo.vars.items():
        values.setdefault(key, "" if value is None else str(value))
    return values


def placeholders(template: str) -> list[str]:
    """Placeholder names in order of appearance (as written, whitespace trimmed)."""
    return [m.group(1) for m in PLACEHOLDER_RE.finditer(template or "")]


def syntax_errors(template: str) -> list[str]:
    """Braces that do not form a ``{{name}}`` placeholder."""
    problems: list[str] = []
    for name in placeholders(template):
        if not NAME_RE.match(name):
            problems.append(f"{{{{{name}}}}} is not a valid placeholder (use letters, digits, '_' or '-')")
    rest = PLACEHOLDER_RE.sub("", template or "")
    if "{{" in rest or "}}" in rest or "{{{" in (template or "") or "}}}" in (template or ""):
        problems.append("unbalanced '{{' or '}}' (placeholders are written {{name}})")
    return problems


def unknown_variables(template: str, known: Iterable[str]) -> list[str]:
    """Names used in ``template`` that are not in ``known`` (each once, in order)."""
    known_set = set(known)
    out: list[str] = []
    for name in placeholders(template):
        if NAME_RE.match(name) and name not in known_set and name not in out:
            out.append(name)
    return out


def suggest(name: str, known: Iterable[str]) -> str | None:
    match = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
    return match[0] if match else None


def render(template: str, variables: Mapping[str, str]) -> str:
    """Fill every placeholder; raises ``TemplateError`` rather than leave one unfilled.

    Runs of spaces left by empty variables are collapsed.
    """
    problems = syntax_errors(template)
    if problems:
        raise TemplateError(f"template {template!r}: {problems[0]}")
    missing = unknown_variables(template, variables)
    if missing:
        hint = suggest(missing[0], variables)
        raise TemplateError(
            f"template {template!r} uses unknown variable {{{{{missing[0]}}}}}",
            hint=f"did you mean {{{{{hint}}}}}?" if hint else f"known: {', '.join(sorted(variables))}",
        )
    text = PLACEHOLDER_RE.sub(lambda m: str(variables[m.group(1)]), template)
    return re.sub(r"[ \t]{2,}", " ", text).strip()
