"""Float16 copies of the HNSW graph's vectors, in label order.

The graph searches 8-bit codes; its best candidates are scored again from these rows,
which are also what ``reconstruct`` and snapshots read for a large index. Float16 keeps
a unit vector's components to ~3 significant digits (similarities to ~1e-4) in half the
bytes of float32: 768 B per 384-d memory instead of 1,536.
"""

from __future__ import annotations

import numpy as np

from memory_core.engine import plain_pages


class HalfRows:
    """A growable float16 row store. A row never changes once added and growth copies
    into a new array, so an array read earlier still holds every row it held. The rows
    live in plain pages (``plain_pages``): they are the largest array an HNSW index
    keeps, and a load or a growth writes every page of them at once."""

    __slots__ = ("_rows", "ntotal")

    def __init__(self, dim: int, capacity: int = 0) -> None:
        """An empty store with room for ``capacity`` rows before its first growth (a
        snapshot load, which knows its row count, fills it without copying)."""
        self._rows = plain_pages.empty((capacity, dim), np.float16)
        self.ntotal = 0

    def add(self, vectors: np.ndarray) -> None:
        end = self.ntotal + len(vectors)
        if end > len(self._rows):
            grown = plain_pages.empty(
                (max(end, 2 * len(self._rows)), self._rows.shape[1]), np.float16
            )
            grown[: self.ntotal] = self._rows[: self.ntotal]
            self._rows = grown
        self._rows[self.ntotal : end] = vectors
        self.ntotal = end

    def rows(self) -> np.ndarray:
        """Every row added so far (a view, valid until the next add)."""
        return self._rows[: self.ntotal]
