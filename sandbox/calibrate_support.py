"""Choose the support thresholds from data (``python -m sourcedesk.sandbox.calibrate_support --data PATH``).

Reads AttributionBench's calibration half only (``sourcedesk.sandbox.bench_support.half``; the
other half stays held out) and prints the three constants that
``sourcedesk.core.citations.support`` ships, with the figures behind each:

* ``SUPPORTED_MIN`` — the relevance a claim with all its figures and names found
  needs to count as supported: of the thresholds whose precision reaches
  ``TARGET_PRECISION``, the one with the best F0.5 (a wrong "supported" is what
  launders a citation, so precision weighs twice as much as recall);
* ``PARTIAL_MIN`` — below it a source is "about something else": the score that
  90% of attributable claims reach (so ``unsupported`` rarely hides a real source);
* ``SUBSTITUTION_MARGIN`` — how far the one supported source must lead the next
  contender: each attributable row's claim is judged against its own references
  plus four others (those answering the same question first: the hardest
  look-alikes), and the smallest margin at which every substitution picks
  the claim's own references is chosen. (Whether a claim is supported at all is the
  threshold's job; the margin only guards against picking the wrong one of two
  similar sources.)

The thresholds never come from the project's own adversarial drafts: those are the
held-out check (``python -m sourcedesk.sandbox.bench_adversarial``).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from sourcedesk.core.citations.support import Evidence, SupportScorer, clear_winner
from sourcedesk.sandbox.bench_support import claim_of, half, load_rows, passage_of

GRID = [round(0.05 * i, 2) for i in range(4, 21)]
MARGINS = [round(0.025 * i, 3) for i in range(13)]
TARGET_PRECISION = 0.75
SUBSTITUTION_PRECISION = 1.0
DISTRACTORS = 4


def _f_half(precision: float, recall: float) -> float:
    return 1.25 * precision * recall / (0.25 * precision + recall) if precision + recall else 0.0


def supported_threshold(rows: list[dict[str, Any]]) -> tuple[float, list[tuple[float, float, float]]]:
    judged = []
    for row in rows:
        scorer = SupportScorer([Evidence.build([("text", passage_of(row))])], supported_min=0.0, partial_min=0.0)
        v = scorer.judge(scorer.claim(claim_of(row)), 0)
        judged.append((v, row.get("attribution_label") == "attributable"))
    positives = sum(1 for _, y in judged if y)
    table = []
    for t in GRID:
        predicted = [(v.complete and not v.contradicted and v.score >= t, y) for v, y in judged]
        tp = sum(1 for p, y in predicted if p and y)
        fp = sum(1 for p, y in predicted if p and not y)
        precision = tp / (tp + fp) if tp + fp else 0.0
        table.append((t, precision, tp / positives if positives else 0.0))
    reaching = [r for r in table if r[1] >= TARGET_PRECISION]
    if not reaching:
        return max(table, key=lambda r: (r[1], r[0]))[0], table
    # Precision first: of the thresholds that reach the target, the one with the best F0.5 (which
    # weighs precision twice as much as recall), not merely the lowest that scrapes past it.
    best = max(reaching, key=lambda r: (round(_f_half(r[1], r[2]), 3), r[0]))
    return best[0], table


def partial_threshold(rows: list[dict[str, Any]]) -> float:
    scores = []
    for row in rows:
        if row.get("attribution_label") != "attributable":
            continue
        scorer = SupportScorer([Evidence.build([("text", passage_of(row))])], supported_min=0.0, partial_min=0.0)
        scores.append(scorer.judge(scorer.claim(claim_of(row)), 0).score)
    scores.sort()
    tenth = scores[len(scores) // 10] if scores else 0.3
    return round(int(tenth * 20) / 20, 2)  # rounded down to a multiple of 0.05


def margin(
    rows: list[dict[str, Any]], supported_min: float, partial_min: float, seed: int = 8
) -> tuple[float, list[tuple[float, float, int]]]:
    rng = random.Random(seed)
    by_question: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_question[str(row.get("question"))].append(i)
    cases = []
    for i, row in enumerate(rows):
        if row.get("attribution_label") != "attributable":
            continue
        same = [j for j in by_question[str(row.get("question"))] if j != i]
        others = [j for j in range(len(rows)) if j != i and j not in same]
        picks = same[:DISTRACTORS] + rng.sample(others, max(0, DISTRACTORS - len(same)))
        order = [i, *picks]
        rng.shuffle(order)
        scorer = SupportScorer(
            [Evidence.build([("text", passage_of(rows[j]))]) for j in order],
            supported_min=supported_min,
            partial_min=partial_min,
        )
        ranked = scorer.rank(scorer.claim(claim_of(row)), range(len(order)))
        own = order.index(i)
        cases.append((ranked, own))
    table = []
    for m in MARGINS:
        right = wrong = 0
        for ranked, own in cases:
            won = clear_winner(ranked, m)
            if won is None:
                continue
            if won[1] == own:
                right += 1
            else:
                wrong += 1
        precision = right / (right + wrong) if right + wrong else 1.0
        table.append((m, precision, right))
    chosen = next((m for m, p, _ in table if p >= SUBSTITUTION_PRECISION), MARGINS[-1])
    return chosen, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sourcedesk.sandbox.calibrate_support", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--data", type=Path, required=True, help="AttributionBench JSONL (read, never copied)")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"calibrate_support: {args.data} not found (pass --data PATH)", file=sys.stderr)
        return 2
    rows = [r for r in load_rows(args.data) if half(r) == "calibration"]
    print(f"calibration half: {len(rows)} rows")
    supported_min, table = supported_threshold(rows)
    print(f"supported_min  precision  recall  F0.5   (chosen: best F0.5 at precision >= {TARGET_PRECISION})")
    for t, p, r in table:
        print(f"  {t:>11.2f}  {p:>9.3f}  {r:>6.3f}  {_f_half(p, r):.3f}{'  <- chosen' if t == supported_min else ''}")
    partial_min = min(partial_threshold(rows), supported_min)
    print(f"partial_min (90% of attributable claims score at least this): {partial_min}")
    chosen, margins = margin(rows, supported_min, partial_min)
    print(f"margin  own source chosen  right substitutions   ({DISTRACTORS} look-alike sources per attributable claim)")
    for m, p, right in margins:
        print(f"  {m:>5.3f}  {p:>22.3f}  {right:>19}{'  <- chosen' if m == chosen else ''}")
    print("\nconstants for core/citations/support.py:")
    print(f"SUPPORTED_MIN = {supported_min}\nPARTIAL_MIN = {partial_min}\nSUBSTITUTION_MARGIN = {chosen}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
