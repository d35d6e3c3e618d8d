"""Large, long-lived arrays in memory the kernel is not asked to back with huge pages.

numpy asks the kernel for transparent huge pages (``madvise(MADV_HUGEPAGE)``) on every
allocation of 4 MB or more. Where the kernel's THP ``defrag`` policy is ``madvise`` (the
usual default, and this machine's), a first touch of such memory may compact physical
memory on the spot to find a free 2 MB page: a 100k snapshot load spent anywhere from
20 to 600 ms in the kernel that way (docs/performance.md, "Snapshot load at 100k").
An anonymous private ``mmap`` carries no such request, so the system's default policy
applies: plain pages, faulted in without compaction, and none resident before it is
written (room reserved for growth costs no memory).
"""

from __future__ import annotations

import math
import mmap

import numpy as np
from numpy.typing import DTypeLike

HUGE_PAGE_HINT_FROM = 1 << 22
"""numpy's own threshold: it asks for huge pages on allocations of this many bytes or
more, so a smaller array is numpy's as usual."""


def empty(shape: tuple[int, ...], dtype: DTypeLike) -> np.ndarray:
    """A writeable array of ``shape``, contents undefined (as ``np.empty``); from
    ``HUGE_PAGE_HINT_FROM`` bytes on, in a private anonymous mapping of its own, which is
    unmapped with the last array that views it."""
    dtype = np.dtype(dtype)
    size = math.prod(shape) * dtype.itemsize
    if size < HUGE_PAGE_HINT_FROM:
        return np.empty(shape, dtype)
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    return np.frombuffer(memory, dtype=dtype).reshape(shape)
