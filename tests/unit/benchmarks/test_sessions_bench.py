"""The many-sessions benchmark builds each spread and times both retrieve modes."""

from __future__ import annotations

from pathlib import Path

from benchmarks import shapes_report
from benchmarks.sessions_bench import sessions_costs


def test_a_small_atlas_over_several_session_counts(tmp_path: Path) -> None:
    out = sessions_costs(120, (1, 4, 40), n_queries=6)
    assert [r["sessions"] for r in out["rows"]] == [1, 4, 40]
    for row in out["rows"]:
        assert row["size"] == 120 and row["index"] == "flat"
        for mode in ("cross-session", "single-session"):
            assert row[mode]["runs"] == 6
            assert 0 < row[mode]["p50_ms"] <= row[mode]["p99_ms"]
    assert set(out["ratios"]) == {
        f"{mode} {stat} x{n}"
        for n in (4, 40)
        for mode in ("cross-session", "single-session")
        for stat in ("p50_ms", "p99_ms")
    }
    lines = shapes_report.sessions_lines(out)
    assert sum(line.startswith("| 4 |") or line.startswith("| 40 |") for line in lines) == 2
    assert "target <= 1.5x" in lines[-1]
