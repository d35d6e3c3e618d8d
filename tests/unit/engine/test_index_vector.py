"""VectorIndex: exact cosine search, deletions, the switch to HNSW and its tombstones."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from memory_core.engine.index import VectorIndex
from memory_core.engine.index import vector as vector_module
from memory_core.errors import IndexError_

DIM = 16


def unit_rows(n: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def as_stored(index: VectorIndex, rows: np.ndarray) -> np.ndarray:
    """``rows`` as ``index`` keeps them: float32 while exact, float16-rounded in HNSW."""
    return rows if index.kind == "flat" else rows.astype(np.float16).astype(np.float32)


def test_exact_search_matches_brute_force() -> None:
    vectors = unit_rows(50)
    ids = np.arange(100, 150)
    index = VectorIndex(DIM)
    index.add(ids, vectors)
    assert len(index) == 50
    assert index.kind == "flat"
    query = vectors[7]
    sims, got = index.search(query, 5)
    brute = vectors @ query
    order = np.argsort(-brute)[:5]
    assert got.tolist() == ids[order].tolist()
    np.testing.assert_allclose(sims, brute[order], rtol=1e-5)
    assert got[0] == 107
    assert sims[0] == pytest.approx(1.0, abs=1e-5)


def test_remove_and_ids_and_reconstruct() -> None:
    vectors = unit_rows(10)
    index = VectorIndex(DIM)
    index.add(np.arange(10), vectors)
    index.remove(np.array([3, 4]))
    index.remove(np.array([], dtype=np.int64))
    assert len(index) == 8
    assert sorted(index.ids().tolist()) == [0, 1, 2, 5, 6, 7, 8, 9]
    _, got = index.search(vectors[3], 10)
    assert 3 not in got.tolist()
    assert 4 not in got.tolist()
    np.testing.assert_allclose(index.reconstruct(np.array([5])), vectors[[5]])
    with pytest.raises(IndexError_):
        index.reconstruct(np.array([3]))


def test_empty_index_and_k_larger_than_size() -> None:
    index = VectorIndex(DIM)
    sims, ids = index.search(unit_rows(1)[0], 5)
    assert len(sims) == len(ids) == 0
    index.add(np.array([1, 2]), unit_rows(2))
    sims, ids = index.search(unit_rows(1, seed=9)[0], 5)
    assert sorted(ids.tolist()) == [1, 2]
    assert index.search(unit_rows(1)[0], 0)[1].size == 0


def test_switches_to_hnsw_above_threshold_and_keeps_results() -> None:
    vectors = unit_rows(80)
    index = VectorIndex(DIM, hnsw_threshold=50, m=8, ef_search=64, ef_construction=40)
    index.add(np.arange(40), vectors[:40])
    assert index.kind == "flat"
    index.add(np.arange(40, 80), vectors[40:])
    assert index.kind == "hnsw"
    assert len(index) == 80
    for probe in (0, 45, 79):
        sims, ids = index.search(vectors[probe], 1)
        assert ids[0] == probe
        assert sims[0] == pytest.approx(1.0, abs=1e-4)


def test_a_search_can_set_its_own_breadth(monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = unit_rows(80)
    index = VectorIndex(DIM, hnsw_threshold=50, m=8, ef_search=64)
    index.add(np.arange(80), vectors)
    breadths: list[int] = []
    params = VectorIndex._params

    def recorded(self: VectorIndex, ef: int, scope: np.ndarray | None = None) -> object:
        breadths.append(ef)
        return params(self, ef, scope)

    monkeypatch.setattr(VectorIndex, "_params", recorded)
    assert index.search(vectors[5], 1, ef_search=16)[1].tolist() == [5]
    assert index.search(vectors[5], 1)[1].tolist() == [5]
    assert breadths == [16, 64] and index.ef_search == 64


def test_hnsw_deletions_are_filtered_then_purged_by_rebuild() -> None:
    vectors = unit_rows(80)
    index = VectorIndex(DIM, hnsw_threshold=50, m=8, rebuild_fraction=0.25)
    index.add(np.arange(80), vectors)
    index.remove(np.array([5]))
    assert len(index) == 79
    _, ids = index.search(vectors[5], 10)
    assert 5 not in ids.tolist()
    assert len(ids) == 10
    assert 5 not in index.ids().tolist()
    _, many = index.search_many(vectors[[5, 6]], 3)
    assert 5 not in many[0].tolist()
    # more than a quarter deleted: rebuilt without tombstones, still HNSW (40 > 50 // 2)
    index.remove(np.arange(10, 35))
    assert len(index) == 54
    assert index.kind == "hnsw"
    assert index.tombstones == 0
    assert sorted(index.ids().tolist()) == sorted(set(range(80)) - {5} - set(range(10, 35)))
    _, ids = index.search(vectors[50], 1)
    assert ids[0] == 50


def test_shrinking_hnsw_falls_back_to_exact() -> None:
    vectors = unit_rows(60)
    index = VectorIndex(DIM, hnsw_threshold=50, m=8)
    index.add(np.arange(60), vectors)
    index.remove(np.arange(0, 40))
    assert index.kind == "flat"
    assert len(index) == 20
    _, ids = index.search(vectors[55], 1)
    assert ids[0] == 55


def test_search_many_marks_missing_with_minus_one() -> None:
    index = VectorIndex(DIM)
    index.add(np.array([7, 8]), unit_rows(2))
    _, ids = index.search_many(unit_rows(3, seed=4), 4)
    assert ids.shape == (3, 2)
    assert set(ids.ravel().tolist()) <= {7, 8}


@pytest.mark.parametrize("threshold", [20_000, 5])
def test_an_id_removed_then_added_again_is_the_new_vector(threshold: int) -> None:
    """The atlas reuses slots: HNSW keeps a tombstoned vector that must not shadow the new one."""
    vectors = unit_rows(12)
    index = VectorIndex(DIM, hnsw_threshold=threshold, m=8)
    index.add(np.arange(10), vectors[:10])
    index.remove(np.array([3]))
    index.add(np.array([3]), vectors[[11]])
    assert len(index) == 10
    assert sorted(index.ids().tolist()) == list(range(10))
    sims, ids = index.search(vectors[11], 1)
    assert ids[0] == 3
    assert sims[0] == pytest.approx(1.0, abs=1e-4)
    _, ids = index.search(vectors[3], 10)
    assert ids.tolist().count(3) == 1
    np.testing.assert_array_equal(index.reconstruct(np.array([3])), as_stored(index, vectors[[11]]))


def test_adding_a_live_id_twice_is_refused() -> None:
    index = VectorIndex(DIM)
    index.add(np.array([1]), unit_rows(1))
    with pytest.raises(IndexError_, match="already holds"):
        index.add(np.array([1]), unit_rows(1, seed=2))
    with pytest.raises(IndexError_):
        index.add(np.array([2, 2]), unit_rows(2))
    assert len(index) == 1


def test_flat_deletions_are_tombstoned_then_compacted() -> None:
    vectors = unit_rows(20)
    index = VectorIndex(DIM, rebuild_fraction=0.25)
    index.add(np.arange(20), vectors)
    index.remove(np.array([3, 4, 5]))
    assert index.kind == "flat" and index.tombstones == 3 and len(index) == 17
    sims, ids = index.search(vectors[4], 20)
    assert len(ids) == 17 and not {3, 4, 5} & set(ids.tolist())
    brute = np.delete(vectors, [3, 4, 5], axis=0) @ vectors[4]
    np.testing.assert_allclose(sims, np.sort(brute)[::-1], rtol=1e-5)
    index.remove(np.arange(6, 9))  # 6 of 20 > a quarter: compacted
    assert index.tombstones == 0 and len(index) == 14
    assert index.ids().tolist() == [0, 1, 2, *range(9, 20)]
    np.testing.assert_allclose(index.reconstruct(np.array([19, 0])), vectors[[19, 0]])


def test_search_depth_does_not_grow_with_tombstones() -> None:
    """k live results come back, never more, however many deleted vectors sit in HNSW."""
    vectors = unit_rows(200)
    index = VectorIndex(DIM, hnsw_threshold=50, m=8, rebuild_fraction=0.4)
    index.add(np.arange(200), vectors)
    index.remove(np.arange(0, 200, 3))
    assert index.kind == "hnsw" and index.tombstones == 67
    for probe in (1, 100, 199):
        _, ids = index.search(vectors[probe], 5)
        assert len(ids) == 5 and ids[0] == probe
        assert all(i % 3 for i in ids.tolist())
    _, many = index.search_many(vectors[[1, 2]], 4)
    assert many.shape == (2, 4) and all(i % 3 for i in many.ravel().tolist() if i >= 0)


def test_negative_ids_and_bad_ef_search_are_refused() -> None:
    index = VectorIndex(DIM)
    with pytest.raises(IndexError_, match=">= 0"):
        index.add(np.array([-1]), unit_rows(1))
    assert len(index) == 0
    index.ef_search = 300
    assert index.ef_search == 300
    for bad in (0, -5, 2.5, True):
        with pytest.raises(IndexError_, match="ef_search"):
            index.ef_search = bad  # type: ignore[assignment]
    assert index.ef_search == 300


@pytest.mark.parametrize("exact_scope", [4096, 2])  # gathered rows, or a scope bitmap
@pytest.mark.parametrize("hnsw_threshold", [20_000, 10])
def test_search_among_a_scope_matches_brute_force_over_the_scope(
    exact_scope: int, hnsw_threshold: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memory_core.engine.index.vector.EXACT_SCOPE", exact_scope)
    vectors = unit_rows(60)
    index = VectorIndex(DIM, hnsw_threshold=hnsw_threshold, ef_search=200)
    index.add(np.arange(60), vectors)
    index.remove(np.array([3, 4]))  # tombstones stay out of a scoped search too
    among = np.array([5, 9, 11, 20, 33, 41, 57])
    query = unit_rows(1, seed=4)[0]
    sims, got = index.search(query, 4, among=among)
    brute = as_stored(index, vectors[among]) @ query
    order = np.argsort(-brute)[:4]
    assert got.tolist() == among[order].tolist()
    np.testing.assert_allclose(sims, brute[order], rtol=1e-5)
    _, many = index.search_many(vectors[[5, 9]], 3, among=among)
    assert many[:, 0].tolist() == [5, 9]
    assert set(many.ravel().tolist()) <= set(among.tolist())
    assert index.search(query, 4, among=np.empty(0, np.int64))[1].size == 0
    with pytest.raises(IndexError_):
        index.search(query, 4, among=np.array([3]))  # removed: not in the index


def test_float16_preselection_gives_the_float32_scan_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above COARSE_FROM an exact index scans a float16 copy, then scores its best
    candidates again in float32: the same similarities, ids and tie order as a float32
    scan, with tombstones, scopes, duplicates, and adds after the copy was made."""
    monkeypatch.setattr(vector_module, "COARSE_FROM", 300)
    monkeypatch.setattr(vector_module, "EXACT_SCOPE", 50)  # scopes go through a bitmap
    centres = unit_rows(12, seed=3)
    rng = np.random.default_rng(4)
    rows = centres[rng.integers(0, 12, 600)] + 0.3 * unit_rows(600, seed=5)
    rows[500:530] = rows[100:130]  # exact duplicates: equal similarities
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    index = VectorIndex(DIM, hnsw_threshold=10_000)
    index.add(np.arange(400), rows[:400])
    index.remove(np.arange(0, 400, 9))

    def both(query: np.ndarray, k: int, among: np.ndarray | None = None) -> None:
        got = index.search(query, k, among=among)
        with monkeypatch.context() as plain:
            plain.setattr(vector_module, "COARSE_FROM", 10**9)
            want = index.search(query, k, among=among)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])

    for i in range(0, 600, 7):
        both(rows[i], 10)
        both(rows[i], 40)
        index_ids = index.ids()
        both(rows[i], 20, among=index_ids[index_ids % 2 == 0])
        if i == 301:
            index.add(np.arange(400, 600), rows[400:])  # the float16 copy keeps in step
    assert index._coarse is not None and index._coarse.ntotal == index._index.ntotal


def test_hnsw_searches_8bit_codes_and_scores_the_candidates_in_float16_rows() -> None:
    """The graph holds 8-bit codes; the similarities returned are those of the float16
    rows (FAISS's float32 kernel over them), best first, within ~1e-3 of the float32
    vectors' own, and the rows read back are the float16 roundings of those added."""
    vectors = unit_rows(300, seed=7)
    index = VectorIndex(DIM, hnsw_threshold=100, m=8, ef_search=64)
    index.add(np.arange(300), vectors)
    assert index.kind == "hnsw"
    assert faiss.downcast_index(index._index.storage).code_size == DIM  # a byte a component
    stored = as_stored(index, vectors)
    np.testing.assert_array_equal(index.reconstruct(np.arange(300)), stored)
    for probe in range(0, 300, 13):
        query = unit_rows(1, seed=1000 + probe)[0]
        sims, ids = index.search(query, 10)
        exact = faiss.knn(
            query[None], stored[np.sort(ids)], len(ids), metric=faiss.METRIC_INNER_PRODUCT
        )
        np.testing.assert_array_equal(sims, exact[0][0])
        brute = np.sort(stored @ query)[::-1][:10]
        np.testing.assert_allclose(sims, brute, rtol=1e-5)  # a graph this small finds all
        np.testing.assert_allclose(sims, np.sort(vectors @ query)[::-1][:10], atol=1e-3)


@pytest.mark.parametrize("threshold", [1000, 50])
def test_search_parameters_kept_between_searches_follow_every_add_and_delete(
    threshold: int,
) -> None:
    vectors = unit_rows(81)
    index = VectorIndex(DIM, hnsw_threshold=threshold, m=8)
    index.add(np.arange(80), vectors[:80])
    index.remove(np.array([3]))  # a tombstone: unscoped searches carry a live-label filter
    assert index.search(vectors[7], 1)[1].tolist() == [7]  # parameters made and kept
    index.remove(np.array([7]))
    assert 7 not in index.search(vectors[7], 10)[1].tolist()
    index.add(np.array([200]), vectors[80:])
    assert index.search(vectors[80], 1)[1].tolist() == [200]
    assert index.search(vectors[80], 1, ef_search=16)[1].tolist() == [200]
    index.remove(np.array([200]))
    assert 200 not in index.search(vectors[80], 10)[1].tolist()
    assert 200 not in index.search(vectors[80], 10, ef_search=16)[1].tolist()
    if index.kind == "flat":  # exact: every live id comes back, no deleted one
        assert sorted(index.search(vectors[0], 100)[1].tolist()) == sorted(index.ids().tolist())


@pytest.mark.parametrize("threshold", [1000, 50])
def test_kept_parameters_filter_as_fresh_ones_through_adds_deletes_and_rebuilds(
    threshold: int,
) -> None:
    """The live-label bitmap kept parameters point at is updated in place: after any mix
    of single adds, deletes, batches and rebuilds it equals the live labels packed anew,
    and every search finds what one with freshly made parameters finds."""
    rng = np.random.default_rng(11)
    vectors = unit_rows(400)
    index = VectorIndex(DIM, hnsw_threshold=threshold, m=8)
    index.add(np.arange(40), vectors[:40])
    held, next_id = set(range(40)), 40
    for step in range(300):
        if rng.random() < 0.55 or len(held) < 10:
            index.add(np.array([next_id]), vectors[next_id % 400][None, :])
            held.add(next_id)
            next_id += 1
        else:
            gone = int(rng.choice(sorted(held)))
            index.remove(np.array([gone]))
            held.discard(gone)
        n = int(index._index.ntotal)
        expected = np.packbits(index._live[:n], bitorder="little")
        np.testing.assert_array_equal(index._live_bits[: len(expected)], expected)
        assert not index._live_bits[len(expected) :].any()
        query = vectors[int(rng.integers(400))]
        kept = index.search(query, 10)
        index._unscoped = {}
        fresh = index.search(query, 10)
        np.testing.assert_array_equal(kept[0], fresh[0])
        np.testing.assert_array_equal(kept[1], fresh[1])
        assert set(kept[1].tolist()) <= held, step
