"""Report sections added for issue #9: the recall-vs-efSearch table and the sweep target;
and the quick profiling entry point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import profile_ops, report
from benchmarks.clustered_bench import real_texts
from benchmarks.operations import Plan
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine.index import vector as vector_module

pytestmark = pytest.mark.usefixtures("no_plots")


def _minimal_results(machine: dict[str, Any], **extra: Any) -> dict[str, Any]:
    search = {"p50_ms": 1.0, "p99_ms": 2.0, "cpu_p50_ms": 0.9, "cpu_p99_ms": 1.8}
    rows = [
        {"ef_search": 96, "recall_near": 0.38, "recall_random": 0.21, "search_near": search},
        {"ef_search": 2048, "recall_near": 0.96, "recall_random": 0.95, "search_near": search},
    ]
    size = {
        "size": 100_000,
        "dataset": "random",
        "ops": [],
        "build": {"engine": {"per_s": 300.0}, "reference": {"per_s": 10.0}},
        "memory": {"engine": {"rss_per_memory": 4000.0}, "reference": {"rss_per_memory": 1300.0}},
        "recall": {
            "size": 99_600,
            "index": "hnsw",
            "params": "M=32, efSearch=96, efConstruction=64",
            "recall_near": 0.38,
            "recall_random": 0.21,
            "search_near": search,
            "by_ef": rows,
        },
    }
    return {"machine": machine, "smoke": True, "sizes": [size], **extra}


def test_report_shows_recall_cost_and_sweep_verdict(
    tmp_path: Path, machine: dict[str, Any]
) -> None:
    sweep = {
        "command": "atlas sweep sample_sessions --trials 50 --workers 2",
        "trials": 50,
        "workers": 2,
        "embedder": "minilm",
        "conversations": 8,
        "seconds": 240.0,
        "cpu_seconds": 400.0,
        "best_recall": 0.69,
        "target_seconds": 180.0,
    }
    path = report.write(_minimal_results(machine, sweep=sweep), tmp_path / "B.md", tmp_path)
    text = path.read_text()
    assert "| 2048 | 0.960 | 0.950 | 0.900 / 1.800 |" in text
    assert "| Optuna sweep, 50 trials, 2 workers | all samples | <= 180 s | 240 s |" in text
    assert "missed (1.3x off)" in text and "## Optuna sweep" in text


def test_report_without_sweep_or_wider_efs_still_renders(
    tmp_path: Path, machine: dict[str, Any]
) -> None:
    results = _minimal_results(machine)
    del results["sizes"][0]["recall"]["by_ef"]
    text = report.write(results, tmp_path / "B.md", tmp_path).read_text()
    assert "Optuna sweep" not in text and "What recall costs" not in text
    json.dumps(results)  # what run.py stores stays JSON


def test_profile_ops_prints_cpu_percentiles(capsys: pytest.CaptureFixture[str]) -> None:
    assert profile_ops.main(["300", "--repeats", "10", "--ops", "add", "retrieve"]) == 0
    out = capsys.readouterr().out
    assert "built 300 memories" in out
    assert out.count("  CPU p50") == 2  # the calling thread's
    assert out.count("wall p50") == 2
    assert out.count("process CPU p50") == 2


def test_profile_ops_says_which_index_each_op_searched(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert profile_ops.main(["300", "--repeats", "10", "--ops", "add", "retrieve"]) == 0
    out = capsys.readouterr().out
    assert "add: flat index; 300 memories, 10 tombstones" in out  # each add deleted again
    assert "retrieve: flat index; 300 memories, 10 tombstones" in out
    runner = profile_ops._Runner(300)
    runner.atlas._s.vectors._rebuild(hnsw=True)  # as an add past hnsw_threshold does
    assert runner.index_note("flat").startswith("hnsw index, flat until one of these calls")


def test_breakdown_floor_times_the_float16_pre_scan_of_a_large_exact_index(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(vector_module, "COARSE_FROM", 100)  # 300 memories count as large
    assert profile_ops.main(["300", "--repeats", "5", "--ops", "retrieve", "--breakdown"]) == 0
    out = capsys.readouterr().out
    assert "re-scoring the index's candidates" in out and "hit snapshots" in out
    assert "FAISS flat search alone" in out and "FAISS float16 pre-scan alone" in out


def test_profile_ops_against_another_tree_times_both_in_turn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = Path(__file__).resolve().parents[3]  # this tree stands in for the other one
    argv = ["300", "--repeats", "6", "--ops", "retrieve", "add", "--against", str(root)]
    assert profile_ops.main(argv) == 0
    out = capsys.readouterr().out
    for op in ("retrieve", "add"):
        assert f"{op}: this tree vs {root}, call by call (load " in out
        assert out.count(f"{op} here ") == 2 and out.count(f"{op} there ") == 2
        assert "n=   6" in out and f"{op}: CPU p50 here / there " in out
    with pytest.raises(SystemExit):
        profile_ops.main(["300", "--ops", "decay", "--against", str(root)])


def test_profile_ops_as_bench_keeps_the_data_and_clock_for_the_other_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "atlas.npz"
    root = Path(__file__).resolve().parents[3]  # this tree stands in for the other one
    argv = ["300", "--repeats", "4", "--ops", "retrieve", "--as-bench", "--cache", str(cache)]
    assert profile_ops.main([*argv, "--against", str(root)]) == 0
    out = capsys.readouterr().out
    assert "as make bench does before its retrieves" in out
    assert f"other tree's engine: {root / 'memory_core' / '__init__.py'}" in out
    assert "retrieve: CPU p50 here / there " in out and ", p99 " in out
    built = profile_ops._Runner(300, cache)  # loads the snapshot, the data and the clock
    written = profile_ops._Runner(300, as_bench=True)  # the same run, without a cache
    assert built.clock.now() == written.clock.now() > profile_ops.START
    assert built.data.texts == written.data.texts
    np.testing.assert_array_equal(built.data.query_vectors, written.data.query_vectors)
    assert len(built.atlas) == len(written.atlas) < 300  # the temporary sessions purged
    with pytest.raises(SystemExit):  # the other tree reads the data beside the cache
        profile_ops.main(["300", "--clustered", "--against", str(root)])


def test_profile_ops_clustered_uses_the_clustered_benchs_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memory_core import embedding

    monkeypatch.setattr(embedding, "make_embedder", lambda _name: HashingEmbedder())
    runner = profile_ops._Runner(300, clustered=True)
    texts, _ = real_texts()
    assert set(runner.data.query_texts) <= set(texts)
    assert runner.data.texts[0] in texts  # the first round's copies carry no tag
    assert len(runner.data.texts) == 300 + Plan.for_size(300).extra
