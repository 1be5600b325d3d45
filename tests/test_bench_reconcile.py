"""make bench's reconcile timing: ours alone, or side by side with a file given by path."""

from __future__ import annotations

from sourcedesk.sandbox import bench


def test_without_the_orchestrator_the_bench_says_which_file_it_needs(capsys):
    assert bench.main(["--reconcile-only", "--repeat", "2"]) == 0  # what is printed, not how fast: 2 runs do
    out = capsys.readouterr().out
    assert "best of 2 runs" in out
    assert bench.ORCHESTRATOR_FILE in out and bench.ORCHESTRATOR_REPO in out and "--orchestrator PATH" in out
    assert "200 citations against 100 sources" in out and "50 citations against 20 sources" in out


def test_a_missing_orchestrator_file_is_a_clean_error(tmp_path, capsys):
    assert bench.main(["--reconcile-only", "--orchestrator", str(tmp_path / "nope.py")]) == 2
    assert "not found" in capsys.readouterr().err


def test_the_orchestrator_is_loaded_from_its_path_and_timed_alternating(tmp_path):
    # a stand-in with the same entry point (the real file is never in the repository)
    stand_in = tmp_path / "perplexity_sources.py"
    stand_in.write_text(
        "from dataclasses import dataclass\n\n@dataclass\nclass R:\n    n: int = 0\n\n"
        "CALLS = []\n\ndef reconcile_citations(content, search_results):\n"
        "    CALLS.append(len(search_results))\n    return content, R()\n",
        encoding="utf-8",
    )
    fn = bench.load_orchestrator(stand_in)
    figures = bench.bench_reconcile(6, 3, repeat=2, orchestrator=fn)
    assert set(figures) == {"ours_ms", "ours_median_ms", "orchestrator_ms", "orchestrator_median_ms", "speedup"}
    assert figures["ours_ms"] <= figures["ours_median_ms"]  # the best run and the median
    assert fn.__globals__["CALLS"] == [3, 3, 3]  # a warm-up, then one call per repeat, on the same section
    draft, sources = bench.reconcile_section(6, 3)
    assert "### Citations" in draft and len(sources) == 3


def test_a_fresh_section_is_the_same_section_in_other_words_and_never_repeats(tmp_path):
    from sourcedesk.core.citations import reconcile

    draft, sources = bench.reconcile_section(9, 4)
    other, other_sources = bench.reconcile_section(9, 4, variant=12)
    assert other != draft and {s["url"] for s in other_sources}.isdisjoint(s["url"] for s in sources)

    def outcome(text, srcs):
        return [(c.key, c.status, c.support) for c in reconcile(text, srcs).report.citations]

    assert outcome(draft, sources) == outcome(other, other_sources)  # the same figures, the same verdicts
    stand_in = tmp_path / "perplexity_sources.py"
    stand_in.write_text("SEEN = []\n\ndef reconcile_citations(content, search_results):\n    SEEN.append(content)\n")
    fn = bench.load_orchestrator(stand_in)
    bench.bench_reconcile(6, 3, repeat=3, orchestrator=fn, fresh=True)
    seen = fn.__globals__["SEEN"]
    assert len(seen) == 4 and len(set(seen[1:])) == 3 and seen[0] not in seen[1:]  # a warm-up, then 3 new ones
