"""An embedder wrapper that records what reaches the model, for tests of batching and reuse."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from memory_core.embedding.base import Embedder


class CallRecordingEmbedder:
    """Wraps ``inner`` and records each call's texts: proves a text is embedded once, in one batch."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    def texts(self) -> list[str]:
        """Every text that reached the model, in order, over all calls."""
        return [t for call in self.calls for t in call]


class SlotNameEmbedder:
    """A fake embedder for slot names: chosen similarities for three names; any other name
    gets a seeded random direction away from them (cosine with another name near 0)."""

    name = "slot-names"
    dim = 64
    VECTORS: ClassVar[dict[str, list[float]]] = {
        "hotel budget": [1.0, 0.0],
        "hotel limit": [0.95, float(np.sqrt(1 - 0.95**2))],  # 0.95: the same slot
        "room budget": [0.7, float(np.sqrt(1 - 0.7**2))],  # 0.7: unsure
    }

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self.dim), np.float32)
        for row, text in zip(rows, texts, strict=True):
            known = self.VECTORS.get(text)
            if known is not None:
                row[:2] = known
            else:
                row[2:] = np.random.default_rng(sum(map(ord, text))).normal(size=self.dim - 2)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)
