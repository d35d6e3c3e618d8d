"""The benchmark suite still runs end to end, and what it reports is sane."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from benchmarks import run
from benchmarks.operations import OPS
from benchmarks.seed_reference import SeedAtlas

pytestmark = pytest.mark.slow


def test_tiny_run_reports_every_operation_with_sane_numbers(tmp_path: Path) -> None:
    report = tmp_path / "BENCHMARKS.md"
    assert (
        run.main(["--sizes", "200", "--smoke", "--out-dir", str(tmp_path), "--report", str(report)])
        == 0
    )

    results = json.loads((tmp_path / "results.json").read_text())
    (size,) = results["sizes"]
    assert size["size"] == 200
    for impl in ("engine", "reference"):
        rows = {r["op"]: r for r in size["ops"] if r["impl"] == impl}
        assert set(rows) == set(OPS)
        for row in rows.values():
            assert row["n"] >= 1
            assert 0 < row["p50_ms"] <= row["p99_ms"] < 60_000
            assert 0 <= row["cpu_p50_ms"] <= row["cpu_p99_ms"]
        assert 100 < size["memory"][impl]["traced_per_memory"] < 1_000_000
        assert math.isfinite(size["memory"][impl]["rss_per_memory"])
    assert results["embedding"]["batched_texts_per_s"] > 0
    assert results["replay"]["turns"] > 0 and results["replay"]["seconds_p50"] > 0
    assert size["snapshot"]["memories"] == 200 and size["snapshot"]["load_ms"] > 0
    assert results["judge"]["pairs"] > 0
    clustered = results["clustered"]
    assert clustered["size"] == 200 and clustered["by_ef"][0]["recall_text"] == 1.0
    assert {r["op"] for r in clustered["ops"]} == set(OPS)

    text = report.read_text()
    for op in OPS:
        assert f"| {op} |" in text
    assert "AMD" in text or "Intel" in text or "CPU:" in text
    assert "## Targets" in text and "## Memory per memory" in text
    for title in ("## Many sessions", "## Clustered real text", "## Snapshots", "## Contradiction"):
        assert title in text
    assert any(p.suffix in (".png", ".html") for p in tmp_path.iterdir())


def test_seed_reference_links_decays_and_evicts_like_the_article() -> None:
    now = [0.0]
    ref = SeedAtlas(clock=lambda: now[0], max_nodes=None)
    x = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    a = ref.add_memory_with_auto_link("a", "s", x)
    b = ref.add_memory_with_auto_link("b", "s", np.array([0.9, 0.1, 0.0], dtype=np.float32))
    c = ref.add_memory_with_auto_link("c", "t", x.copy())
    assert ref.graph.has_edge(a.id, b.id)
    assert not ref.graph.has_edge(a.id, c.id)  # other session: never compared
    hits = ref.retrieve(x, top_k=1, session_id="s")
    assert [h.id for h in hits] == [a.id] and a.weight == pytest.approx(1.2)
    now[0] = 20 * 3600.0  # 20 h unused: 1.0 - 0.05 * 20 = 0 -> floor 0.1; a: 1.2 - 1.0
    ref.apply_decay()
    assert b.weight == pytest.approx(0.1) and a.weight == pytest.approx(0.2)
    assert ref.evict_weak_memories() == 2
    assert list(ref.graph) == [a.id]
