"""Reconcile must stay linear-ish: 200 citations against 100 sources well under 2 s."""

from __future__ import annotations

import random
import time

from sourcedesk.core.citations import reconcile

TOPICS = [
    "messaging",
    "funding",
    "customers",
    "latency",
    "security",
    "pricing",
    "hiring",
    "revenue",
    "cloud",
    "edge",
    "streaming",
    "database",
    "observability",
    "compliance",
    "partners",
    "growth",
    "churn",
    "support",
]


def build(n_sources: int = 100, n_citations: int = 200, seed: int = 7):
    rng = random.Random(seed)
    sources = []
    for i in range(n_sources):
        words = rng.sample(TOPICS, 4)
        item = {
            "url": f"https://site{i}.org/page/{i}",
            "title": f"{words[0].title()} report {i}",
            "date": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "snippet": f"Source {i} discusses {' and '.join(words)} in depth.",
        }
        if i < 40:
            item["marker"] = f"E{i + 1}"
        sources.append(item)
    paragraphs, definitions = [], []
    for k in range(n_citations):
        words = rng.sample(TOPICS, 3)
        kind = k % 5
        sentence = (
            f"The company reported {words[0]} and {words[1]} gains in {words[2]} during 2024"
            if kind not in (3, 4)
            else f"Former executives quietly praise its culture, insider number {k} claims"
            if kind == 4
            else sources[k % n_sources]["snippet"].rstrip(".")  # one source says exactly this
        )
        if kind == 0:
            marker = f"[^E{k // 5 + 6}]"  # E6…E45: the last five are out of range
        elif kind == 1:
            marker = f"[{k // 5 + 25}]"  # [25]…[64] of 60 web results
        else:
            marker = f"[^k{k}]"
            url = (
                f"https://site{rng.randint(0, 99)}.org/page/{rng.randint(0, 99)}"
                if kind == 2
                else f"https://invented{k}.com/story"
            )
            definitions.append(f"[^k{k}]: [Title {k}]({url})")
        paragraphs.append(f"{sentence}{marker}.")
    body = "\n\n".join(" ".join(paragraphs[i : i + 4]) for i in range(0, len(paragraphs), 4))
    return body + "\n\n" + "\n".join(definitions) + "\n", sources


def test_two_hundred_citations_against_a_hundred_sources():
    draft, sources = build()
    reconcile(draft, sources)  # warm the parser cache
    runs = 3
    start = time.perf_counter()
    for _ in range(runs):
        result = reconcile(draft, sources)
    per_run = (time.perf_counter() - start) / runs
    report = result.report.to_json()
    assert len(report["citations"]) == 200
    assert report["verified"] and report["substituted"] and report["out_of_range"] and report["dropped"]
    print(f"\nreconcile: {per_run * 1000:.1f} ms per run (200 citations, 100 sources)")
    assert per_run < 2.0
