"""The snapshot benchmark runs end to end and reports every part of export and load."""

from __future__ import annotations

from benchmarks.snapshot_bench import snapshot_costs


def test_a_small_atlas_reports_export_load_and_sizes() -> None:
    out = snapshot_costs(300, repeat=2, load_repeat=1)
    assert out["memories"] == 300
    assert out["format"] == "atlas-snapshot/2"
    assert out["export"]["runs"] == 2
    parts = ("read + check", "restore (with indexing)", "indexing")
    assert all(out[part]["runs"] == 1 and out[part]["wall_ms"] > 0 for part in parts)
    assert out["indexing"]["wall_ms"] <= out["restore (with indexing)"]["wall_ms"]
    assert 0 < out["load_without_indexing_ms"] < out["load_ms"]
    assert out["file_mib"] > 0 and out["compressed"]["file_mib"] > 0
