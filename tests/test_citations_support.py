"""The substitution scorer: meaningful tokens, the two floors, ties, and its measured quality."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.citations.support import MIN_RATIO, MIN_SHARED, SupportIndex, is_supported, support, supports_text
from core.citations.tokens import meaningful_tokens
from sandbox import bench_support

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "attribution-sample.jsonl"


def test_meaningful_tokens_rules():
    assert meaningful_tokens("The company's customers raised $41m in 2017, a 1,200% jump to 1.5x!") == {
        "company",
        "customer",
        "raised",
        "41",
        "2017",
        "1200",
        "jump",
        "1.5",
    }
    assert meaningful_tokens("Companies IS a an of 5 x") == {"company"}
    assert meaningful_tokens("") == frozenset()


def test_operating_threshold_needs_both_floors():
    assert (MIN_SHARED, MIN_RATIO) == (2, 0.20)
    assert is_supported(2, 0.20) and not is_supported(1, 1.0) and not is_supported(5, 0.19)
    one_word = supports_text("Kestra raised money", "Kestra Medical Technologies")
    assert one_word.shared == 1 and not one_word.supported
    diluted = supports_text(
        "Synadia raised funding from investors including Forbion, Accel, Index, Sequoia, "
        "Benchmark and Greylock during 2022 across three oversubscribed rounds",
        "Synadia raised money",
    )
    assert diluted.shared == 2 and diluted.ratio < 0.2 and not diluted.supported


def test_index_best_prefers_score_then_earlier_source():
    index = SupportIndex(
        ["a", "b", "c"], ["rocket launch", "rocket launch delayed storms", "rocket launch delayed storms"]
    )
    match = index.best(meaningful_tokens("The rocket launch was delayed by storms"))
    assert match is not None and match.item == "b" and match.rank == 1 and match.shared == 4
    assert match.score == pytest.approx(1.0)
    assert index.best(meaningful_tokens("Nothing in common here")) is None


def test_support_of_empty_claim_is_zero():
    assert support(frozenset(), frozenset({"x"})).ratio == 0.0


def test_bench_script_runs_and_reports_precision(capsys):
    assert bench_support.main(["--json", "--data", str(SAMPLE)]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["n"] == 12
    assert figures["threshold"] == {"min_shared": 2, "min_ratio": 0.2}
    assert 0.0 <= figures["precision"] <= 1.0 and 0.0 <= figures["recall"] <= 1.0
    c = figures["confusion"]
    assert c["tp"] + c["fp"] + c["tn"] + c["fn"] == 12 and c["tp"] + c["fn"] == 6
    assert figures["precision"] == round(c["tp"] / (c["tp"] + c["fp"]), 4)


def test_bench_script_human_output_and_missing_data(capsys, tmp_path):
    assert bench_support.main(["--sweep", "--data", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "precision" in out and "recall" in out and "ratio floor" in out
    assert bench_support.main(["--data", str(tmp_path / "missing.jsonl")]) == 2
