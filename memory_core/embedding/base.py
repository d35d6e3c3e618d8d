"""The embedder protocol and the one place vectors are checked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from memory_core.errors import EmbeddingError, InputError

_SQUARE_SAFE = np.float32(1e15)
"""Components below this in magnitude square to at most 1e30, with room for 384-odd of
them to sum inside float32's range (3.4e38)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def name(self) -> str:
        """Stable identifier of the model (part of cache keys)."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), dim)``."""
        ...


def check_vectors(vectors: object, dim: int, *, field: str = "embedding") -> np.ndarray:
    """Validate and normalise vectors at the API boundary; returns C-contiguous float32 rows.

    Raises ``InputError`` naming ``field`` for wrong shape, NaN/inf or zero vectors.
    """
    one = vectors[0] if type(vectors) is list and len(vectors) == 1 else None
    if type(vectors) is np.ndarray and vectors.dtype == np.float32:
        arr = vectors  # what every embedder hands over: no cast, so nothing can overflow
    elif type(one) is np.ndarray and one.dtype == np.float32 and one.ndim == 1:
        arr = one[None, :]  # a caller's one vector, as np.asarray([one]) reads it
    else:
        try:
            with np.errstate(over="ignore"):  # beyond float32 range becomes inf: refused below
                arr = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise InputError(field, f"not a numeric vector ({exc})") from exc
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise InputError(field, f"expected shape (n, {dim}), got {arr.shape}")
    if arr.size and np.maximum.reduce(np.abs(arr), axis=None) < _SQUARE_SAFE:
        # the usual case, the arithmetic of np.linalg.norm(arr, axis=1, keepdims=True)
        # without its wrapper: no square can leave float32's range, so every component
        # is finite and the norms are exact to float32; a zero row still needs the check
        # (ufunc reductions: ndarray.max and .all go through Python wrappers)
        norms = np.sqrt(np.add.reduce(arr * arr, axis=1, keepdims=True))
        if np.minimum.reduce(norms, axis=None) > 0:
            return np.ascontiguousarray(arr / norms, dtype=np.float32)
    if not np.isfinite(arr).all():
        raise InputError(field, "contains NaN, infinity or a value beyond float32 range")
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if np.isfinite(norms).all() and (norms > 0).all():
        return np.ascontiguousarray(arr / norms, dtype=np.float32)
    # squares of very large or very small float32 values leave its range: measure in float64
    wide = arr.astype(np.float64)
    wide_norms = np.linalg.norm(wide, axis=1, keepdims=True)
    if (wide_norms == 0).any():
        raise InputError(field, "contains a zero vector")
    return np.ascontiguousarray(wide / wide_norms, dtype=np.float32)


def embed_checked(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Call an embedder and turn any failure into ``EmbeddingError``."""
    try:
        raw = embedder.embed(list(texts))
    except EmbeddingError:
        raise
    except Exception as exc:
        raise EmbeddingError(f"embedder {embedder.name!r} failed: {exc}") from exc
    try:
        return check_vectors(raw, embedder.dim)
    except InputError as exc:
        raise EmbeddingError(f"embedder {embedder.name!r} returned bad vectors: {exc}") from exc
