"""The support check on AttributionBench (``python -m sourcedesk.sandbox.bench_support --data PATH``).

Each row is (question, claim, references, label). The claim is the row's claim —
prefixed with its question when it has fewer than 6 words ("Edward IV" alone says
nothing) — with writer citation marks like ``[5]`` taken out; the references are
one source, its own ground truth. A row counts as "supports" when the verdict is
``supported`` (``partial`` counts as not supporting); "attributable" is the
positive class. The 500-row sample is balanced, so 50% precision is chance.

Rows are split into two fixed halves by a hash of their id: ``calibration``
(where ``python -m sourcedesk.sandbox.calibrate_support`` chose the shipped thresholds) and
``held-out`` (never looked at while choosing). Figures are printed for the
held-out half, the calibration half and all rows. The data is read only from
``--data``: it states no licence, so it never enters the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sourcedesk.core.citations.support import PARTIAL_MIN, SUPPORTED, SUPPORTED_MIN, Verdict, supports_text

SHORT_CLAIM_WORDS = 6
_CITATION_MARKS = re.compile(r"\s*\[\d+(?:[,\s–-]+\d+)*\]")


@dataclass(frozen=True)
class BenchResult:
    n: int
    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else 0.0

    @property
    def positive_rate(self) -> float:
        return (self.tp + self.fn) / self.n if self.n else 0.0

    def figures(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "accuracy": round(self.accuracy, 4),
            "positive_rate": round(self.positive_rate, 4),
            "confusion": {"tp": self.tp, "fp": self.fp, "tn": self.tn, "fn": self.fn},
        }


def load_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row.get("claim"), str) or not isinstance(row.get("references"), list):
                raise ValueError(f"{path}:{lineno}: expected 'claim' text and 'references' list")
            rows.append(row)
    return rows


def half(row: dict[str, Any]) -> str:
    """The fixed half a row belongs to: ``calibration`` or ``held-out`` (by a hash of its id)."""
    key = str(row.get("id") or row.get("claim"))
    return "calibration" if int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % 2 == 0 else "held-out"


def claim_of(row: dict[str, Any]) -> str:
    claim = _CITATION_MARKS.sub("", row["claim"]).strip()
    if len(claim.split()) < SHORT_CLAIM_WORDS and row.get("question"):
        return f"{str(row['question']).strip()} {claim}"
    return claim


def passage_of(row: dict[str, Any]) -> str:
    return "\n".join(_CITATION_MARKS.sub("", str(r)) for r in row["references"])


def judge_rows(rows: Iterable[dict[str, Any]], **thresholds: float) -> list[tuple[Verdict, bool]]:
    """(the verdict on each row's claim against its references, is it attributable)."""
    return [
        (supports_text(claim_of(row), passage_of(row), **thresholds), row.get("attribution_label") == "attributable")
        for row in rows
    ]


def evaluate(judged: Iterable[tuple[Verdict, bool]]) -> BenchResult:
    tp = fp = tn = fn = n = 0
    for verdict, truth in judged:
        n += 1
        predicted = verdict.support == SUPPORTED
        if predicted and truth:
            tp += 1
        elif predicted:
            fp += 1
        elif truth:
            fn += 1
        else:
            tn += 1
    return BenchResult(n, tp, fp, tn, fn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sourcedesk.sandbox.bench_support", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument(
        "--data",
        type=Path,
        required=True,
        help="AttributionBench JSONL file (not in the repo: it states no licence), e.g. attributionbench-test-sampled500.jsonl",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--sweep", action="store_true", help="also show precision/recall at other thresholds")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"bench_support: {args.data} not found (pass --data PATH)", file=sys.stderr)
        return 2
    rows = load_rows(args.data)
    judged = judge_rows(rows)
    parts = {
        "held-out": evaluate(j for j, r in zip(judged, rows, strict=True) if half(r) == "held-out"),
        "calibration": evaluate(j for j, r in zip(judged, rows, strict=True) if half(r) == "calibration"),
        "all": evaluate(judged),
    }
    figures = {
        "threshold": {"supported_min": SUPPORTED_MIN, "partial_min": PARTIAL_MIN},
        **{name: result.figures() for name, result in parts.items()},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"AttributionBench: {len(rows)} rows; 'supports' = verdict supported (partial does not count)")
        print(f"operating point: supported_min {SUPPORTED_MIN}, partial_min {PARTIAL_MIN}")
        for name, r in parts.items():
            print(
                f"  {name:12} n={r.n:<4} precision {r.precision:.3f}  recall {r.recall:.3f}  "
                f"accuracy {r.accuracy:.3f}  (chance precision {r.positive_rate:.3f})"
            )
    if args.sweep:
        print_curve(rows)
    return 0


CURVE = tuple(round(0.05 * i, 2) for i in range(5, 21))  # 0.25 … 1.00


def print_curve(rows: list[dict[str, Any]]) -> None:
    """The whole precision–recall curve over ``supported_min`` (every other check as shipped), for
    all rows and each half; ``*`` marks the shipped point."""
    print("supported_min   all: P      R   held-out: P      R   calibration: P      R")
    for floor in CURVE:
        judged = judge_rows(rows, supported_min=floor, partial_min=min(PARTIAL_MIN, floor))
        parts = [
            evaluate(j for j, r in zip(judged, rows, strict=True) if name is None or half(r) == name)
            for name in (None, "held-out", "calibration")
        ]
        mark = "*" if abs(floor - SUPPORTED_MIN) < 1e-9 else " "
        cells = "".join(f"   {r.precision:>9.3f} {r.recall:>6.3f}" for r in parts)
        print(f"  {floor:>10.2f}{mark}{cells}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
