"""The clustered real-text scenario: copies of real texts, held-out queries, index recall."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks import clustered_bench
from benchmarks.clustered_bench import (
    clustered_costs,
    clustered_dataset,
    perturbed,
    real_texts,
    smallest_ef,
)
from memory_core import AtlasConfig
from memory_core.embedding.cache import CachedEmbedder
from memory_core.embedding.hashing import HashingEmbedder


def _unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_perturbed_copies_are_unit_and_as_close_as_the_noise_says() -> None:
    base = _unit_rows(400, 384, 1)
    copies = perturbed(base, np.random.default_rng(2), noise=0.4)
    assert copies.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(copies, axis=1), 1.0, atol=1e-5)
    cosine = np.sum(copies * base, axis=1)
    # noise of norm ~0.4 orthogonal-ish to the row: cosine ~ 1 / sqrt(1 + 0.16) = 0.928
    assert 0.90 < cosine.mean() < 0.95 and cosine.min() > 0.85


def test_dataset_holds_queries_out_and_copies_every_other_text_equally() -> None:
    texts = [f"text {i}" for i in range(50)]
    vectors = _unit_rows(50, 16, 3)
    data, near, source = clustered_dataset(texts, vectors, 230, 10)
    assert len(data.texts) == len(data.vectors) == len(source) == 230
    assert len(data.query_texts) == len(data.query_vectors) == len(near) == 10
    assert not set(data.query_texts) & set(data.texts)
    counts = np.bincount(source, minlength=50)
    held = [texts.index(t) for t in data.query_texts]
    assert (counts[held] == 0).all()
    stored = np.delete(counts, held)
    assert stored.max() - stored.min() <= 1  # 230 copies of 40 texts: 5 or 6 each
    assert [data.texts[i] for i in range(5)] == [texts[s] for s in source[:5]]
    np.testing.assert_array_equal(data.query_vectors, vectors[held])
    assert np.sum(data.vectors * vectors[source], axis=1).min() > 0.5
    assert not np.isin(near, data.vectors).all(axis=1).any()  # fresh copies, never stored


def test_dataset_needs_texts_left_to_store() -> None:
    with pytest.raises(ValueError, match="n_queries must be below the 3 texts, got 3"):
        clustered_dataset(["a", "b", "c"], _unit_rows(3, 8, 0), 10, 3)


def test_real_texts_skip_a_missing_dev_split(tmp_path: Path) -> None:
    texts, sources = real_texts(tmp_path / "absent")
    assert sources["LoCoMo dev"] == 0 and sources["sample sessions"] >= 1
    assert len(texts) == len(set(texts)) > 100


def test_smallest_ef_wants_every_query_set_at_target() -> None:
    rows = [
        {"ef_search": 16, "recall_text": 0.97, "recall_perturbed": 0.90},
        {"ef_search": 32, "recall_text": 0.95, "recall_perturbed": 0.99},
        {"ef_search": 64, "recall_text": 1.0, "recall_perturbed": 1.0},
    ]
    assert smallest_ef(rows) == 32
    assert smallest_ef(rows[:1]) is None


def test_a_small_run_measures_exact_recall_and_every_operation(tmp_path: Path) -> None:
    out = clustered_costs(
        300, CachedEmbedder(HashingEmbedder()), data=tmp_path, smoke=True, n_queries=12
    )
    assert out["memories"] <= 300 and out["sources"]["LoCoMo dev"] == 0
    assert out["index"] == "flat" and [r["ef_search"] for r in out["by_ef"]] == [
        AtlasConfig().hnsw_ef_search
    ]
    (row,) = out["by_ef"]
    # an exact index finds exactly what flat search finds
    assert row["recall_text"] == row["recall_perturbed"] == 1.0
    assert row["search_text"]["n"] == row["search_perturbed"]["n"] == 12
    assert out["smallest_ef_meeting_target"] == AtlasConfig().hnsw_ef_search
    assert {r["op"] for r in out["ops"]} >= {"retrieve top-10", "add + auto-link"}
    assert 0.85 < out["copy_cosine"] < 0.98
    assert out["noise"] == clustered_bench.NOISE
