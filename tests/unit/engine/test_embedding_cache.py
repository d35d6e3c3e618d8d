"""Embedding checks and the persistent cache: only unseen texts reach the model."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from memory_core.embedding import CachedEmbedder, EmbeddingCache, HashingEmbedder, check_vectors
from memory_core.embedding.base import embed_checked
from memory_core.embedding.cache import text_key
from memory_core.errors import EmbeddingError, InputError

from .conftest import CountingEmbedder


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    emb = HashingEmbedder(32)
    a = emb.embed(["window seat", "window seat", "vegetarian meal", ""])
    assert a.shape == (4, 32)
    assert a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(a[0], a[1])
    assert emb.name == "hashing-32"
    assert float(a[0] @ emb.embed(["window seats please"])[0]) > float(a[0] @ a[2])


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ([1.0, 2.0], "expected shape"),
        ([[1.0, math.nan, 0.0]], "NaN"),
        ([0.0, 0.0, 0.0], "zero vector"),
        ([1e300, 1.0, 0.0], "beyond float32 range"),
        ("abc", "not a numeric vector"),
    ],
)
def test_check_vectors_names_the_field(value: object, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        check_vectors(value, 3, field="query_embedding")
    assert info.value.field == "query_embedding"
    assert fragment in str(info.value)


def test_check_vectors_normalises_rows() -> None:
    out = check_vectors([[3.0, 4.0, 0.0]], 3)
    np.testing.assert_allclose(out, [[0.6, 0.8, 0.0]])
    assert out.flags.c_contiguous


@pytest.mark.parametrize("scale", [1e30, 2e37, 1e-30, 1e-40])
def test_check_vectors_normalises_extreme_magnitudes(scale: float) -> None:
    """Squares of such float32 values overflow or underflow; the direction still counts."""
    out = check_vectors([[3.0 * scale, 4.0 * scale, 0.0]], 3)
    np.testing.assert_allclose(out, [[0.6, 0.8, 0.0]], rtol=1e-4 if scale < 1e-38 else 1e-6)


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e10, 1e16, 1e30, 1e-30])
def test_check_vectors_float32_arrays_normalise_as_the_norm_does(scale: float) -> None:
    """A float32 array (an embedder's, or one caller vector in a list) comes back exactly
    as ``rows / np.linalg.norm(rows)`` gives it, or by the float64 route where squares
    leave float32's range; never the caller's own array."""
    rows = (np.random.default_rng(7).standard_normal((5, 384)) * scale).astype(np.float32)
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
    if np.isfinite(norms).all() and (norms > 0).all():
        expected = (rows / norms).astype(np.float32)
    else:
        wide = rows.astype(np.float64)
        expected = (wide / np.linalg.norm(wide, axis=1, keepdims=True)).astype(np.float32)
    out = check_vectors(rows, 384)
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float32 and out.flags.c_contiguous and out is not rows
    one = check_vectors([rows[2]], 384)
    np.testing.assert_array_equal(one, expected[2:3])
    assert not np.shares_memory(one, rows)


@pytest.mark.parametrize(
    ("bad", "fragment"), [(math.nan, "NaN"), (math.inf, "infinity"), (0.0, "zero vector")]
)
def test_check_vectors_refuses_bad_float32_arrays(bad: float, fragment: str) -> None:
    rows = np.ones((2, 4), dtype=np.float32)
    rows[1] = 0.0 if bad == 0.0 else rows[1]
    rows[1, 2] = bad
    for given in (rows, [rows[1]]):
        with pytest.raises(InputError, match=fragment):
            check_vectors(given, 4)


def test_embed_checked_translates_failures() -> None:
    with pytest.raises(EmbeddingError, match="model crashed"):
        embed_checked(CountingEmbedder(fail=True), ["x"])

    class Wrong(CountingEmbedder):
        def embed(self, texts: object) -> np.ndarray:
            return np.ones((1, 5), dtype=np.float32)

    with pytest.raises(EmbeddingError, match="bad vectors"):
        embed_checked(Wrong(), ["x"])


def test_cache_embeds_each_text_once_and_dedupes() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner)
    first = cached.embed(["a b", "c d", "a b"])
    assert inner.calls == [["a b", "c d"]]
    second = cached.embed(["c d", "e f"])
    assert inner.calls[-1] == ["e f"]
    np.testing.assert_array_equal(first[1], second[0])
    np.testing.assert_array_equal(first[0], first[2])
    cached.embed(["a b"])
    assert len(inner.calls) == 2
    assert cached.name == inner.name
    assert cached.dim == inner.dim


def test_persistent_cache_survives_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "emb.sqlite"
    first = CachedEmbedder(CountingEmbedder(), EmbeddingCache(path))
    vec = first.embed(["remember me"])
    fresh_inner = CountingEmbedder()
    second = CachedEmbedder(fresh_inner, EmbeddingCache(path))
    np.testing.assert_array_equal(second.embed(["remember me"]), vec)
    assert fresh_inner.calls == []
    assert second.cache.contains(fresh_inner.name, "remember me")


def test_forget_removes_from_memory_and_disk(tmp_path: Path) -> None:
    path = tmp_path / "emb.sqlite"
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, EmbeddingCache(path))
    cached.embed(["secret", "public"])
    cached.forget(["secret"])
    reopened = EmbeddingCache(path)
    assert not reopened.contains(inner.name, "secret")
    assert reopened.contains(inner.name, "public")
    cached.embed(["secret"])
    assert inner.calls[-1] == ["secret"]


def test_cache_is_keyed_by_model() -> None:
    cache = EmbeddingCache()
    cache.put_many("model-a", {text_key("x"): np.ones(3, np.float32)})
    assert cache.get_many("model-b", [text_key("x")]) == {}
    assert len(cache) == 1


def test_failed_inner_embed_caches_nothing() -> None:
    inner = CountingEmbedder(fail=True)
    cached = CachedEmbedder(inner)
    with pytest.raises(EmbeddingError):
        cached.embed(["x"])
    assert len(cached.cache) == 0
