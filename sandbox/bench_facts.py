"""Fact extraction's cost (``python -m sourcedesk.sandbox.bench_facts``): milliseconds per 10,000 characters.

The bundled corpus's page texts are joined and cut into sources of exactly 10,000 characters;
each is extracted cold (the figure and measure caches emptied first), ``--repeat`` times, and
the best CPU time of each is kept (CPU time: other processes on the machine do not count). The
target is at most 20 ms per source; extraction is paid once per frozen set, never per run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from sourcedesk.core.citations import figures as figures_module
from sourcedesk.core.citations import measures
from sourcedesk.core.sources.extraction import extract
from sourcedesk.sandbox.corpus import load_corpus

CHARS = 10_000
TARGET_MS = 20.0


def sources() -> list[str]:
    text = "\n".join(doc.text for doc in load_corpus() if doc.text)
    return [text[i : i + CHARS] for i in range(0, len(text) - CHARS + 1, CHARS)]


def cold_ms(text: str, repeat: int) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        figures_module.figures.cache_clear()
        measures.measure.cache_clear()
        started = time.process_time()
        count = len(extract([("text", text)]))
        best = min(best, time.process_time() - started)
    return best * 1000, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sourcedesk.sandbox.bench_facts", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per source; the best is kept")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    timed = [cold_ms(text, max(1, args.repeat)) for text in sources()]
    ms = [t for t, _ in timed]
    figures = {
        "sources": len(ms),
        "chars_each": CHARS,
        "median_ms": round(statistics.median(ms), 2) if ms else 0.0,
        "max_ms": round(max(ms), 2) if ms else 0.0,
        "facts_median": statistics.median([n for _, n in timed]) if timed else 0,
        "target_ms": TARGET_MS,
    }
    print(json.dumps(figures, indent=2) if args.json else "\n".join(f"{k:14} {v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
