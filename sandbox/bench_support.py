"""Measure the substitution scorer on AttributionBench (``python -m sandbox.bench_support``).

Each row is (claim, references, label); a row counts as "supports" when the
reconciler's scorer — meaningful-token overlap of the claim against the joined
reference passages, at the operating threshold (≥2 shared tokens and a
shared/claim ratio ≥0.20) — would substitute. "attributable" is the positive
class. The sample is balanced, so 50% accuracy and 50% precision are chance.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from core.citations.support import MIN_RATIO, MIN_SHARED, Support, supports_text


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


def load_rows(path: Path) -> list[dict]:
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


def score_rows(rows: list[dict]) -> list[tuple[Support, bool]]:
    """(the scorer's view of claim vs references, is it attributable) for each row."""
    scored = []
    for row in rows:
        passage = "\n".join(str(r) for r in row["references"])
        scored.append((supports_text(row["claim"], passage), row.get("attribution_label") == "attributable"))
    return scored


def evaluate(scored: list[tuple[Support, bool]], min_ratio: float | None = None) -> BenchResult:
    """Confusion counts at the operating threshold (or at another ratio floor, for the sweep)."""
    tp = fp = tn = fn = 0
    for support, truth in scored:
        if min_ratio is None:
            predicted = support.supported
        else:
            predicted = support.shared >= MIN_SHARED and support.ratio >= min_ratio
        if predicted and truth:
            tp += 1
        elif predicted:
            fp += 1
        elif truth:
            fn += 1
        else:
            tn += 1
    return BenchResult(len(scored), tp, fp, tn, fn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.bench_support", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        required=True,
        help="AttributionBench JSONL file (not in the repo: it states no licence), e.g. attributionbench-test-sampled500.jsonl",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--sweep", action="store_true", help="also show precision/recall at other ratio floors")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"bench_support: {args.data} not found (pass --data PATH)", file=sys.stderr)
        return 2
    rows = score_rows(load_rows(args.data))
    result = evaluate(rows)
    figures = {
        "n": result.n,
        "threshold": {"min_shared": MIN_SHARED, "min_ratio": MIN_RATIO},
        "precision": round(result.precision, 4),
        "recall": round(result.recall, 4),
        "accuracy": round(result.accuracy, 4),
        "positive_rate": round(result.positive_rate, 4),
        "confusion": {"tp": result.tp, "fp": result.fp, "tn": result.tn, "fn": result.fn},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"AttributionBench sample: n={result.n} (positives {result.tp + result.fn})")
        print(f"operating threshold: shared >= {MIN_SHARED} and ratio >= {MIN_RATIO}")
        print(f"precision {result.precision:.3f}  recall {result.recall:.3f}  accuracy {result.accuracy:.3f}")
        print(
            f"tp={result.tp} fp={result.fp} tn={result.tn} fn={result.fn}  (chance precision = positive rate {result.positive_rate:.3f})"
        )
    if args.sweep:
        print(f"ratio floor  precision  recall  accuracy   (min shared tokens fixed at {MIN_SHARED})")
        for floor in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
            r = evaluate(rows, floor)
            print(f"  {floor:>9.1f}  {r.precision:>9.3f}  {r.recall:>6.3f}  {r.accuracy:>8.3f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
