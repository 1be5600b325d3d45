"""``make bench``'s speed figures keep measuring what the suite no longer times (tiny inputs here)."""

from __future__ import annotations

from sourcedesk.sandbox import bench_speed


def test_every_speed_figure_is_measured_and_held_to_its_target(capsys):
    figures = bench_speed.run(list(bench_speed.FIGURES), quick=True)
    out = capsys.readouterr().out
    assert len(figures) == 19 and all(f.seconds > 0 for f in figures)
    for figure in figures:
        assert figure.line() in out and ("met)" in figure.line() or "MISSED)" in figure.line())

    def target(start: str) -> float:
        return next(f.target_s for f in figures if f.what.startswith(start))

    # the bounds the tests asserted
    assert target("reconcile, 10 citations") == 2.0 and target("about verdict") == 0.050
    assert target("reconcile, hostile") == 15.0 and target("sourcedesk --help") == 0.15
    assert target("sandbox, the slowest") == 0.9 and target("provider files") == 8.0 and target("50 global") == 5.0


def test_the_throughput_section_has_every_kind_of_citation():
    draft, sources = bench_speed.throughput_section(20, 10)
    assert len(sources) == 20 and "[^E6]" in draft and "[25]" in draft and "invented" in draft
