"""Reconcile against a frozen set, with and without its stored evidence index
(``python -m sourcedesk.sandbox.bench_frozen``).

What a run pays: ``sourcedesk run`` reconciles in a process of its own, so nothing of the set's
text has been read before. The bench freezes a set of the bundled corpus's pages (title, summary,
page text; ``with_facts`` extracts the facts and indexes the evidence, as retrieval does), stores
it as JSON the way the store does, and writes a draft citing every source twice (its own
marker) and once by an invented URL. Then, alternating, each in a fresh process, it reconciles
the draft

* ``index``: against the set as stored (the support check reads each source's stored index);
* ``text``: against the same set with the index taken out (each source's text is read again,
  as every run did before the index).

The figure is CPU time of the reconcile call alone (``time.process_time``, so the other
processes on the machine count less), median and best of ``--repeat`` runs, and the citations'
verdicts must be the same both ways. Freezing's own cost (``with_facts``) is printed too: it is
paid once per set.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sourcedesk.core.domain.models import Source, SourceSet
from sourcedesk.core.sources.extraction import with_facts
from sourcedesk.sandbox.corpus import load_corpus

_CHILD = """
import json, sys, time
from sourcedesk.core.citations import reconcile
from sourcedesk.core.domain.models import SourceSet
data = json.loads(open(sys.argv[1], encoding="utf-8").read())
draft = open(sys.argv[2], encoding="utf-8").read()
sources = SourceSet.model_validate(data).sources
if sys.argv[3] == "text":
    sources = [s.model_copy(update={"evidence_index": {}}) for s in sources]
started = time.process_time()
result = reconcile(draft, sources, subject=["Cresta"])
spent = time.process_time() - started
print(json.dumps({"ms": spent * 1000, "verdicts": [[c.status, c.support] for c in result.report.citations]}))
"""


def frozen_set(count: int) -> tuple[SourceSet, float]:
    """The ``count`` pages with the longest text, frozen (facts and index), and with_facts' CPU ms."""
    pages = sorted((p for p in load_corpus() if p.text), key=lambda p: -len(p.text))[:count]
    sources = [
        Source(
            provider="exa",
            url=p.url,
            title=p.title,
            published_date=p.published,
            summary=p.summary,
            text=p.text,
            full_text=True,
            marker=f"E{i + 1}",
        )
        for i, p in enumerate(pages)
    ]
    started = time.process_time()
    frozen = with_facts(SourceSet(section="bench", fingerprint="bench", sources=sources))
    return frozen, (time.process_time() - started) * 1000


def draft_for(source_set: SourceSet) -> str:
    """Two claims per source cited by its marker (sentences of its summary), one by an invented URL."""
    paragraphs, definitions = [], []
    for i, s in enumerate(source_set.sources):
        sentences = [x.rstrip(".") for x in re.split(r"(?<=\.)\s+", s.summary) if len(x) > 30][:2]
        cited = [f"{x}.[^{s.marker}]" for x in sentences]
        if sentences:
            cited.append(f"{sentences[0]}.[^x{i}]")
            definitions.append(f"[^x{i}]: [A page](https://invented{i}.example.net/a)")
        paragraphs.append(" ".join(cited))
    return "\n\n".join(paragraphs) + "\n\n" + "\n".join(definitions) + "\n"


def _child(set_path: Path, draft_path: Path, mode: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(set_path), str(draft_path), mode],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run(count: int, repeat: int) -> dict[str, Any]:
    source_set, freeze_ms = frozen_set(count)
    with tempfile.TemporaryDirectory() as tmp:
        set_path, draft_path = Path(tmp) / "set.json", Path(tmp) / "draft.md"
        set_path.write_text(json.dumps(source_set.model_dump(mode="json")), encoding="utf-8")
        draft_path.write_text(draft_for(source_set), encoding="utf-8")
        times: dict[str, list[float]] = {"index": [], "text": []}
        verdicts: dict[str, Any] = {}
        for _ in range(repeat):
            for mode in ("text", "index"):
                found = _child(set_path, draft_path, mode)
                times[mode].append(found["ms"])
                verdicts[mode] = found["verdicts"]
    chars = sum(len(s.text) + len(s.summary) + len(s.title) for s in source_set.sources)
    return {
        "sources": len(source_set.sources),
        "chars": chars,
        "citations": len(verdicts["index"]),
        "freeze_ms": round(freeze_ms, 1),
        "index_median_ms": round(statistics.median(times["index"]), 1),
        "index_best_ms": round(min(times["index"]), 1),
        "text_median_ms": round(statistics.median(times["text"]), 1),
        "text_best_ms": round(min(times["text"]), 1),
        "same_verdicts": verdicts["index"] == verdicts["text"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sourcedesk.sandbox.bench_frozen", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sources", type=int, default=20, help="pages in the frozen set (the longest first)")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per mode")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = run(max(1, args.sources), max(1, args.repeat))
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"reconcile against a frozen set ({figures['sources']} sources, {figures['chars']:,} chars, "
            f"{figures['citations']} citations), CPU in a fresh process, median (best) of {args.repeat}:\n"
            f"  stored index: {figures['index_median_ms']} ms ({figures['index_best_ms']})\n"
            f"  text read again: {figures['text_median_ms']} ms ({figures['text_best_ms']})\n"
            f"  same verdicts: {figures['same_verdicts']}; freezing (facts and index, once per set): "
            f"{figures['freeze_ms']} ms"
        )
    return 0 if figures["same_verdicts"] else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
