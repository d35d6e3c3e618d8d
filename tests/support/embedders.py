"""An embedder wrapper that records what reaches the model, for tests of batching and reuse."""

from __future__ import annotations

from collections.abc import Sequence

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
