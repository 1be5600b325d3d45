"""``sourcedesk check-urls PATH [--json] [--allow-private]`` — verify a finished memo: a
citation that survived reconciling can still point at a page that died or never said it.

Every cited URL is fetched for real (placeholders and private addresses are
refused before any request) and every quotation and statistic is looked up,
verbatim, in the stored text of the source it cites. The logic lives in
``sourcedesk.core.verify``; this module parses arguments and prints.

Exit code 0 when nothing is dead, soft-404, placeholder or not found in its
source; 1 when something is; 2 for bad input (missing PATH, not a note).
Output is plain text: URLs, titles and quotations are untrusted, so nothing is
interpreted as markup and control characters are shown escaped; secrets are
redacted from everything printed.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LABELS = {
    "soft_404": "soft 404",
    "unverified_403": "unverified 403",
    "blocked_private": "blocked (private)",
    "not_found": "not found",
}
_MAX_TEXT = 100


def register(sub) -> None:
    p = sub.add_parser(
        "check-urls",
        help="check that cited pages are alive and that quotes and figures appear in their sources",
        description="Check every cited URL (liveness: real GET, redirects, soft-404/paywall sniffing, "
        "placeholders refused without a request) and ground every quotation and statistic in the stored "
        "text of the source it cites. Exit 0 when nothing is dead, soft-404, placeholder or not found, "
        "1 when something is, 2 for bad input.",
    )
    p.add_argument(
        "path",
        type=Path,
        metavar="PATH",
        help="a section note (sections/NN-id.md), a memo folder (all its section notes) or memo.md",
    )
    p.add_argument("--json", action="store_true", help='print {"urls": […], "grounding": […], "counts": {…}} as JSON')
    p.add_argument(
        "--allow-private",
        action="store_true",
        help="also fetch private, loopback and link-local addresses (setting: allow_private_urls)",
    )
    p.set_defaults(func=run)


def _redactor():
    from sourcedesk.store.redact import redact, redact_text

    return redact, redact_text


def clean(text: Any, redact_text) -> str:
    """Untrusted text made safe for a terminal: secrets redacted, control characters escaped."""
    value = redact_text("" if text is None else str(text))
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100 else f"\\u{ord(m.group(0)):04x}", value
    )


def _short(text: str, limit: int = _MAX_TEXT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers[:-1])]
    lines = []
    for row in [headers, *rows]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return lines


def _summary(counts: dict[str, Any]) -> str:
    urls, grounding = counts["urls"], counts["grounding"]
    url_part = ", ".join(f"{n} {_LABELS.get(s, s)}" for s, n in urls.items() if s != "total" and n)
    ground_part = ", ".join(f"{n} {_LABELS.get(s, s)}" for s, n in grounding.items() if s != "total" and n)
    problems = counts["problems"]
    return (
        f"check-urls: {urls['total']} URL(s){': ' + url_part if url_part else ''} · "
        f"grounding: {grounding['total']} item(s){': ' + ground_part if ground_part else ''} · "
        f"{problems} problem(s)"
    )


def print_human(report, out=None) -> None:
    out = out or sys.stdout
    _, redact_text = _redactor()

    def c(text: Any) -> str:
        return clean(text, redact_text)

    if report.urls:
        print(f"URLs ({len(report.urls)} cited)", file=out)
        rows = []
        extra: list[str] = []
        for r in report.urls:
            rows.append(
                [
                    _LABELS.get(r.status, r.status),
                    str(r.http_status or "-"),
                    c(r.note),
                    f"[^{c(r.key)}]" if r.key else "link",
                    c(r.url),
                ]
            )
            notes = []
            if r.final_url and r.final_url != r.url and r.status not in ("ok",):
                notes.append(f"→ {c(r.final_url)}")
            if r.title:
                notes.append(f"“{c(_short(r.title, 80))}”")
            if r.detail:
                notes.append(c(r.detail))
            extra.append(" · ".join(notes))
        lines = _table(["STATUS", "HTTP", "NOTE", "KEY", "URL"], rows)
        print(lines[0], file=out)
        indent = " " * (len(lines[0]) - len(lines[0].lstrip()) + 4)
        for line, more in zip(lines[1:], extra, strict=False):
            print(line, file=out)
            if more:
                print(f"{indent}{more}", file=out)
    else:
        print("No cited URLs.", file=out)
    if report.grounding:
        print(
            f"\nGrounding ({len(report.grounding)} quotation(s) and statistic(s) in cited sentences; "
            "uncited money and percentages against the whole frozen set)",
            file=out,
        )
        rows = [
            [
                _LABELS.get(g.status, g.status),
                c(g.note),
                f"[^{c(g.key)}]" if g.key else "uncited",
                g.kind,
                c(_short(f"“{g.text}”" if g.kind == "quote" else g.text)),
            ]
            for g in report.grounding
        ]
        for line in _table(["STATUS", "NOTE", "KEY", "KIND", "TEXT"], rows):
            print(line, file=out)
    print("", file=out)
    print(_summary(report.counts()), file=out)


def run(args) -> int:
    from sourcedesk.core.verify.check import CheckOptions, check_path
    from sourcedesk.store.backend import open_existing_store

    settings = args.settings  # loaded once by the CLI entry point

    def open_existing(memo_dir: Path):  # reading: never waits for anyone, never creates a store
        return open_existing_store(memo_dir, url=settings.store_url)

    options = CheckOptions.from_settings(settings, allow_private=args.allow_private)
    announce = None if args.json else (lambda message: print(message, file=sys.stderr, flush=True))
    report = asyncio.run(check_path(args.path, options, open_store=open_existing, announce=announce))
    _, redact_text = _redactor()
    if args.json:
        from sourcedesk.core.text.safety import clean_tree

        # Values are cleaned (keys redacted, control sequences removed): a script reading the
        # JSON must not get escape sequences back out of it either.
        text = json.dumps(clean_tree(report.to_json()), indent=2, ensure_ascii=False)
        # json escapes C0 controls itself; C1 controls and bidi overrides only occur inside strings.
        sys.stdout.write(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n")
    else:
        for warning in report.warnings:
            print(f"warning: {clean(warning, redact_text)}", file=sys.stderr)
        print_human(report)
    return report.exit_code
