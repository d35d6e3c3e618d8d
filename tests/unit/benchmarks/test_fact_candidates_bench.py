"""The candidate benchmark: its AUC, and a clean skip without the dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.fact_candidates_bench import auc, main


def test_auc_counts_pairs_ordered_right_and_ties_as_half() -> None:
    assert auc([3, 4], [1, 2]) == 1.0
    assert auc([1], [2]) == 0.0
    assert auc([1, 1], [1, 1]) == 0.5
    assert auc([2, 0], [1]) == 0.5


def test_without_the_dev_split_it_skips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(tmp_path / "absent")]) == 0
    assert "skipped, no LoCoMo dev split" in capsys.readouterr().out
