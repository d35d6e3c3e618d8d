"""HalfRows: float16 rows in the order added, readable from an older array after growth."""

from __future__ import annotations

import numpy as np

from memory_core.engine.index.half_rows import HalfRows, to_float32


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


def test_float32_rows_are_bit_for_bit_numpys_conversion() -> None:
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(256, 256)
    got, want = to_float32(every), every.astype(np.float32)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))  # NaN bits too
    store = HalfRows(256)
    store.add(np.random.default_rng(3).standard_normal((40, 256)).astype(np.float32))
    labels = np.array([39, 0, 7, 7, 12])
    np.testing.assert_array_equal(store.gather(labels), store.rows()[labels].astype(np.float32))
