"""A fast, deterministic stand-in embedder for unit tests (no model, no torch).

Words and character trigrams are hashed into signed buckets, so texts sharing words
are similar; it has no notion of synonyms. Never use it to judge retrieval quality.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Deterministic bag-of-features embedder; ``HashingEmbedder(dim=64)``."""

    __slots__ = ("_dim",)

    def __init__(self, dim: int = 384) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _TOKEN.findall(text.lower())
            features = words + [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
            for feat in features or [text]:
                digest = hashlib.blake2b(feat.encode(), digest_size=8).digest()
                h = int.from_bytes(digest, "little")
                out[row, h % self._dim] += 1.0 if (h >> 32) & 1 else -1.0
            if not out[row].any():
                out[row, 0] = 1.0
        unit: np.ndarray = out / np.linalg.norm(out, axis=1, keepdims=True)
        return unit
