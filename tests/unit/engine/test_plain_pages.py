"""plain_pages: large arrays in mappings that ask the kernel for no huge pages."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory_core.engine import plain_pages


def mapping_flags(array: np.ndarray) -> list[str]:
    """The ``VmFlags`` of the mapping that holds ``array``'s middle byte (/proc/self/smaps;
    numpy's own hint starts at the first page boundary inside its buffer, so the
    buffer's first page is a mapping of its own, never hinted)."""
    address = array.__array_interface__["data"][0] + array.nbytes // 2
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            low, high = (int(x, 16) for x in head.split("-"))
            inside = low <= address < high
        elif inside and head == "VmFlags:":
            return line.split()[1:]
    raise AssertionError("no mapping holds the array")


def test_a_large_array_is_writeable_and_asks_for_no_huge_pages() -> None:
    rows = plain_pages.empty((4096, 384), np.float16)  # 3 MB: numpy's own below 4 MB
    big = plain_pages.empty((8192, 384), np.float16)  # 6 MB
    assert (rows.shape, rows.dtype, big.shape, big.dtype) == (
        (4096, 384),
        np.float16,
        (8192, 384),
        np.float16,
    )
    big[:] = 1.5
    assert big.flags.writeable and big.flags.c_contiguous and bool((big == 1.5).all())
    assert "hg" not in mapping_flags(big)  # no MADV_HUGEPAGE on its mapping
    assert rows.base is None  # a small one is numpy's as usual


def test_the_mapping_lives_as_long_as_a_view_of_it() -> None:
    view = plain_pages.empty((2, 1 << 21), np.float32)[1]
    view[:] = 7.0
    assert float(view[-1]) == 7.0 and plain_pages.empty((0, 8), np.int64).shape == (0, 8)
