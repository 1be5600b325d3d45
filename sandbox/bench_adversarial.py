"""The reconciler on its held-out adversarial drafts (``python -m sourcedesk.sandbox.bench_adversarial``).

Reads ``tests/adversarial/worlds.yaml`` (what retrieval returned) and
``tests/adversarial/drafts.yaml`` (drafts as a writer would return them, each with
what a careful analyst expects) and reports:

* foreign URLs in live text — any web URL in the reconciled text that retrieval
  never returned (raw HTML attributes and front matter included, entities decoded);
* orphan markers — a marker without a definition, or a definition no marker cites;
* citations moved off their claim — a sentence that had a citation which survived
  reconcile but has none after it, or a sentence that gained one;
* substitution precision (substitutions to an expected source / all substitutions)
  and recall (expected substitutions made), hard negatives substituted;
* weak flags (``weak``/``verified`` expectations) and uncited claims listed.

Targets: 0, 0, 0, precision ≥ 0.90 at recall ≥ 0.60, hard negatives ≤ 1 in 13 (all checked by the test suite).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sourcedesk.core.citations import reconcile
from sourcedesk.core.citations.parse import parse
from sourcedesk.core.citations.sentences import ClaimIndex
from sourcedesk.core.net.urls import normalise_url

ROOT = Path(__file__).resolve().parent.parent / "tests" / "adversarial"
_URL = re.compile(
    r"(?i)(?:https?:[/\\]+|(?<![\w:/\\])[/\\]{2}(?=[\w-]+\.[\w-]))[^\s\"'<>()\]]+|(?<![\w./])www\.[^\s\"'<>()\]]+"
)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


@dataclass
class CaseResult:
    id: str
    kind: str
    foreign_urls: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    substitutions: list[tuple[str, str, bool]] = field(default_factory=list)  # key, resolved marker, correct
    expected_subs: list[tuple[str, bool]] = field(default_factory=list)  # key, made correctly
    hard_negative_subs: int = 0
    expectation_failures: list[str] = field(default_factory=list)
    missing_uncited: list[str] = field(default_factory=list)


def load(root: Path = ROOT) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    worlds = yaml.safe_load((root / "worlds.yaml").read_text(encoding="utf-8"))
    drafts = yaml.safe_load((root / "drafts.yaml").read_text(encoding="utf-8"))
    return worlds, drafts


def _names(world: dict[str, Any]) -> dict[str, str]:
    """Normalised URL → the name an expectation uses (E1…, web1…)."""
    out, web = {}, 0
    for s in world["sources"]:
        if s.get("marker"):
            out[normalise_url(s["url"])] = s["marker"]
        else:
            web += 1
            out[normalise_url(s["url"])] = f"web{web}"
    return out


def _sentence_marks(text: str) -> dict[str, int]:
    """Each sentence (markers removed) → how many markers sit on it."""
    doc = parse(text)
    claims = ClaimIndex(doc)
    counts: dict[str, int] = {}
    for i, m in enumerate(doc.markers):
        if m.definition is not None:
            continue
        sentence = _plain(claims.sentence(i))
        counts[sentence] = counts.get(sentence, 0) + 1
    return counts


_ENTITY = re.compile(r"&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z]+);")
_MARKUP = re.compile(r"\]\([^)]*\)|</?[A-Za-z][^>]*>|<https?:[^>]*>")


def _plain(sentence: str) -> str:
    """A sentence as a reader reads it: link destinations and HTML tags do not count as moving a citation."""
    return " ".join(_MARKUP.sub(lambda m: "]" if m.group().startswith("]") else " ", sentence).split())


def _live_urls(text: str) -> list[str]:
    unescaped = _ENTITY.sub(lambda m: html.unescape(m.group()), _FENCE.sub("", text))
    return [m.group().rstrip(".,;:!?") for m in _URL.finditer(unescaped)]


def run_case(case: dict[str, Any], world: dict[str, Any]) -> CaseResult:
    out = CaseResult(case["id"], case["kind"])
    result = reconcile(case["draft"], world["sources"], subject=world.get("subject", ()))
    names = _names(world)
    known = set(names)
    out.foreign_urls = [u for u in _live_urls(result.text) if normalise_url(u) not in known]
    doc = parse(result.text)
    cited = {m.label for m in doc.markers if m.definition is None}
    defined = {d.label for d in doc.definitions}
    out.orphans = [f"[^{k}] undefined" for k in sorted(cited - defined)]
    out.orphans += [f"[^{k}] never cited" for k in sorted(defined - cited)]
    survived = {c.key for c in result.report.citations if c.status in ("verified", "substituted", "protected")}
    before = parse(case["draft"])
    claims = ClaimIndex(before)
    must_keep: set[str] = set()
    for i, m in enumerate(before.markers):
        if m.definition is None and m.label in survived:
            must_keep.add(_plain(claims.sentence(i)))
    after = _sentence_marks(result.body)
    had = set(_sentence_marks(case["draft"]))
    out.moved = [f"lost: {s}" for s in sorted(must_keep) if not after.get(s)]
    out.moved += [f"gained: {s}" for s in sorted(after) if s not in had]
    records = {c.key: c for c in result.report.citations}
    for key, expectation in (case.get("expect") or {}).items():
        key = str(key)
        record = records.get(key)
        want = str(expectation).split()
        if record is None:
            out.expectation_failures.append(f"{key}: no citation in the report")
            continue
        got = names.get(normalise_url(record.resolved_url), "?") if record.resolved_url else None
        if record.status == "substituted":
            correct = want[0] == "sub" and got in want[1:]
            out.substitutions.append((key, got or "?", correct))
            if case["kind"] == "hard_negative":
                out.hard_negative_subs += 1
        if want[0] == "sub":
            made = record.status == "substituted" and got in want[1:]
            out.expected_subs.append((key, made))
            if not made:
                out.expectation_failures.append(
                    f"{key}: expected {expectation}, got {record.status} {got or ''}".strip()
                )
        elif want[0] == "drop" and record.status != "dropped":
            out.expectation_failures.append(f"{key}: expected drop, got {record.status} {got or ''}".strip())
        elif want[0] in ("verified", "weak") and (record.status != "verified" or record.weak != (want[0] == "weak")):
            state = f"{record.status}{' weak' if record.weak else ''} ({record.support})"
            out.expectation_failures.append(f"{key}: expected {want[0]}, got {state}")
    listed = {" ".join(u.claim.split()) for u in result.report.uncited}
    out.missing_uncited = [u for u in case.get("uncited") or [] if " ".join(u.split()) not in listed]
    return out


def summarise(results: list[CaseResult]) -> dict[str, Any]:
    subs = [s for r in results for s in r.substitutions]
    expected = [e for r in results for e in r.expected_subs]
    hard = [r for r in results if r.kind == "hard_negative"]
    correct = sum(1 for s in subs if s[2])
    return {
        "drafts": len(results),
        "foreign_urls": sum(len(r.foreign_urls) for r in results),
        "orphan_markers": sum(len(r.orphans) for r in results),
        "moved_citations": sum(len(r.moved) for r in results),
        "substitutions": len(subs),
        "substitution_precision": round(correct / len(subs), 4) if subs else 1.0,
        "substitution_recall": round(sum(1 for e in expected if e[1]) / len(expected), 4) if expected else 1.0,
        "hard_negatives": len(hard),
        "hard_negatives_substituted": sum(1 for r in hard if r.hard_negative_subs),
        "expectations_failed": sum(len(r.expectation_failures) for r in results),
        "uncited_missing": sum(len(r.missing_uncited) for r in results),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sourcedesk.sandbox.bench_adversarial", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="folder with worlds.yaml and drafts.yaml")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every failed expectation")
    args = parser.parse_args(argv)
    worlds, drafts = load(args.root)
    results = [run_case(case, worlds[case["world"]]) for case in drafts]
    figures = summarise(results)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:28} {value}")
    if args.verbose:
        for r in results:
            problems = (
                [f"foreign URL {u}" for u in r.foreign_urls]
                + r.orphans
                + [f"moved: {m}" for m in r.moved]
                + r.expectation_failures
                + [f"not listed as uncited: {u}" for u in r.missing_uncited]
            )
            for p in problems:
                print(f"  {r.id}: {p}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
