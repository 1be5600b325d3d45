"""``make bench-memory`` keeps measuring what it says: real runs against a huge writer answer."""

from __future__ import annotations

import pytest

from sourcedesk.sandbox.bench_memory import SHAPES, bodies, main, measure


def test_every_shape_is_a_well_formed_answer_of_the_size_asked_for():
    served = bodies(200_000)
    assert set(SHAPES) <= set(served)
    for shape in SHAPES:
        assert 200_000 <= len(served[shape].data) < 260_000, shape
    assert served["agent-sse"].data.rstrip().endswith(b'"status": "completed", "model": "perplexity/sonar"}}')


def test_an_answer_over_the_cap_fails_its_run_keeps_the_note_and_is_measured():
    rows = measure(["agent-json-streamed", "agent-sse"], 300_000, {"SOURCEDESK_WRITER_MAX_RESPONSE_BYTES": "100000"})
    assert [r.shape for r in rows] == ["agent-json-streamed", "agent-sse"]
    for row in rows:
        assert row.exit_code == 1 and row.status == "failed" and row.note_kept, row
        assert "writer_max_response_bytes" in row.message, row
        assert 10 < row.peak_rss_mb < 300 and row.wall_s > 0, row


def test_unknown_shapes_are_refused(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--shapes", "agent-xml"])
    assert exited.value.code == 2
    assert "unknown shape(s) agent-xml" in capsys.readouterr().err
