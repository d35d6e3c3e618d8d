"""HalfRows: float16 rows in the order added, readable from an older array after growth."""

from __future__ import annotations

import numpy as np

from memory_core.engine.index.half_rows import HalfRows


def test_rows_are_the_float16_roundings_in_order_and_survive_growth() -> None:
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((n, 8)).astype(np.float32) for n in (1, 3, 1, 7, 20)]
    store = HalfRows(8)
    assert store.rows().shape == (0, 8)
    earlier: list[tuple[np.ndarray, int]] = []
    for batch in batches:
        earlier.append((store.rows(), store.ntotal))
        store.add(batch)
    want = np.concatenate(batches).astype(np.float16)
    np.testing.assert_array_equal(store.rows(), want)
    assert store.ntotal == len(want) == 32
    for rows, n in earlier:  # a view taken before an add still reads its rows
        np.testing.assert_array_equal(rows, want[:n])


def test_rows_added_within_the_capacity_stay_in_one_array() -> None:
    rng = np.random.default_rng(3)
    store = HalfRows(8, capacity=10)
    store.add(rng.standard_normal((1, 8)).astype(np.float32))
    first = store.rows()
    store.add(rng.standard_normal((9, 8)).astype(np.float32))
    assert np.shares_memory(first, store.rows())  # filled in place: no growth copy
    store.add(rng.standard_normal((1, 8)).astype(np.float32))
    assert not np.shares_memory(first, store.rows()) and store.ntotal == 11
