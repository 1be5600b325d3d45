"""``sourcedesk reconcile DRAFT.md --sources SOURCES.json [--json]``.

Reconciles a draft against a sources file offline: the reconciled text goes to
stdout (or the report JSON with ``--json``: every citation with its support
verdict, evidence and weak flag, the uncited claims, ``links_removed``); in human
mode the report summary — with the number of unretrieved links removed — and
the warnings (one per removed URL, one per weak citation) go to stderr so stdout
stays a clean document. ``--subject NAME`` names the memo's subject (and its
aliases): not a distinctive name a source must repeat.

SOURCES.json is a list of objects with at least ``url`` and ``title``
(Perplexity ``search_results`` items as they are; optional ``marker``, ``date``,
``last_updated``, ``snippet``, ``summary``, ``text``, ``highlights``, and ``about``
— ``{"verdict", "reason"}`` as ``retrieve --json`` gives it: passed through to each
citation of that source, and a ``namesake`` source is never substituted). Items with
a ``marker`` are the retrieved set (``[^E3]``); items without are the web results
a bare ``[N]`` indexes, in file order. A whole Perplexity response object is
accepted too: a chat completion's ``search_results``, or an Agent API response's
``search_results`` output items, flattened in order.

Both files are outside text: terminal control sequences, bidi overrides and API
keys are taken out of the draft and of every string in the sources before
anything else reads them (a notice on stderr says so), so the reconciled text
never carries them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sourcedesk.core.citations import DEFAULT_PROTECTED, reconcile
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.files.regular import NotRegularFile, read_regular
from sourcedesk.core.memo.loader import MAX_MEMO_BYTES
from sourcedesk.core.text.safety import clean_text, clean_tree


def register(sub) -> None:
    p = sub.add_parser(
        "reconcile",
        help="check a draft's citations against a sources file",
        description="Check every citation of a draft (Markdown) against a sources file: verified, substituted, "
        "dropped or out of range, with the claims left uncited; the draft is printed reconciled.",
    )
    p.add_argument("draft", type=Path, metavar="DRAFT.md", help="markdown draft to reconcile")
    p.add_argument(
        "--sources", type=Path, required=True, metavar="SOURCES.json", help="ground-truth sources (JSON list)"
    )
    p.add_argument("--json", action="store_true", help='print {"text": …, "report": …} as JSON')
    p.add_argument(
        "--protect",
        action="append",
        metavar="KEY",
        help=f"footnote key to pass through untouched (repeatable; default: {', '.join(DEFAULT_PROTECTED)})",
    )
    p.add_argument(
        "--subject",
        action="append",
        metavar="NAME",
        help="the subject's name or an alias (repeatable): sources need not repeat it to support a claim",
    )
    p.add_argument(
        "--one-marker-per-source",
        action="store_true",
        help="the one-marker-per-source-per-paragraph style (a sentence's only citation always stays)",
    )
    p.set_defaults(func=run)


def read_text(path: Path, what: str) -> str:
    """The file as text, read only from a regular file and only up to the memo loader's cap:
    ``/dev/zero`` grew to gigabytes and a FIFO hung the command."""
    try:
        raw = read_regular(path, MAX_MEMO_BYTES)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file", hint=f"give the path of the {what}") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory", hint=f"give the path of the {what} file") from None
    except NotRegularFile:
        raise UserError(
            f"{path}: not a regular file (a pipe, socket or device)", hint=f"give the path of the {what} itself"
        ) from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > MAX_MEMO_BYTES:
        raise UserError(
            f"{path}: larger than {MAX_MEMO_BYTES // 1_000_000} MB, the most a {what} may be",
            hint="a section's draft and its sources fit well under it; split the file",
        )
    try:
        return raw.decode("utf-8")  # \r\n kept visible to the caller
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start})", hint="save the file as UTF-8") from None


def load_sources(path: Path) -> list:
    raw = read_text(path, "sources JSON")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            hint="SOURCES.json must be a JSON list of objects with 'url' and 'title'",
        ) from None
    if isinstance(data, dict) and isinstance(data.get("search_results"), list):
        data = data["search_results"]
    elif isinstance(data, dict) and isinstance(data.get("output"), list):
        # an Agent API response object: its search_results items' results, flattened in order
        data = [
            result
            for item in data["output"]
            if isinstance(item, dict) and item.get("type") == "search_results" and isinstance(item.get("results"), list)
            for result in item["results"]
        ]
    if not isinstance(data, list):
        raise UserError(
            f"{path}: expected a JSON list of sources, got {type(data).__name__}",
            hint='e.g. [{"url": "https://…", "title": "…", "marker": "E1"}]',
        )
    return data


def _cleaned(path: Path, raw: object, clean: object) -> object:
    if clean != raw:
        print(
            clean_text(f"reconcile: {path}: removed terminal control sequences, bidi overrides or an API key"),
            file=sys.stderr,
        )
    return clean


def run(args) -> int:
    raw_draft = read_text(args.draft, "markdown draft")
    draft = str(_cleaned(args.draft, raw_draft.replace("\r\n", "\n"), clean_text(raw_draft, multiline=True)))
    raw_sources = load_sources(args.sources)
    sources = _cleaned(args.sources, raw_sources, clean_tree(raw_sources))
    assert isinstance(sources, list)
    protected = tuple(args.protect) if args.protect else DEFAULT_PROTECTED
    try:
        result = reconcile(
            draft,
            sources,
            protected=protected,
            subject=tuple(args.subject or ()),
            one_marker_per_source=args.one_marker_per_source,
        )
    except UserError as err:
        raise UserError(f"{args.sources}: {err.message}", hint=err.hint) from None
    if args.json:
        json.dump({"text": result.text, "report": result.report.to_json()}, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(result.text)
    print(
        f"reconcile: {result.report.summary()}; {result.report.links_removed} unretrieved link(s) removed",
        file=sys.stderr,
    )
    for warning in result.report.warnings:
        print(f"  warning: {warning.message}", file=sys.stderr)
    return 0
