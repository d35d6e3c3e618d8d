"""Embedding cost: batched throughput, single-text latency, and what the cache saves.

The atlas embeds every write and query unless a vector is passed, so on a cold text the
model dominates everything the engine does; the persistent cache turns a repeated text
into a hash and a lookup.
"""

from __future__ import annotations

import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.datasets import synthetic_texts
from benchmarks.measure import Samples
from memory_core.embedding.base import Embedder
from memory_core.embedding.cache import CachedEmbedder, EmbeddingCache

BATCH = 256
SINGLES = 30


def embedding_costs(
    model: Embedder, *, batch: int = BATCH, singles: int = SINGLES
) -> dict[str, Any]:
    """Throughput and latencies of ``model`` alone and behind memory and SQLite caches."""
    texts = synthetic_texts(batch + 3 * singles, seed=101)
    model.embed(texts[:4])  # load weights outside the timings
    started = time.perf_counter()
    model.embed(texts[:batch])
    batched_s = time.perf_counter() - started

    cold = Samples(op="single text, no cache", impl=model.name, size=1)
    for text in texts[batch : batch + singles]:
        cold.time(partial(model.embed, [text]))

    fresh = texts[batch + singles : batch + 2 * singles]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.sqlite"
        cached = CachedEmbedder(model, EmbeddingCache(path))
        miss = Samples(op="single text, cache miss", impl=model.name, size=1)
        hit = Samples(op="single text, cache hit (memory)", impl=model.name, size=1)
        for text in fresh:
            miss.time(partial(cached.embed, [text]))
            hit.time(partial(cached.embed, [text]))
        reopened = CachedEmbedder(model, EmbeddingCache(path))
        disk = Samples(op="single text, cache hit (SQLite)", impl=model.name, size=1)
        for text in fresh:
            disk.time(partial(reopened.embed, [text]))
        started = time.perf_counter()
        reopened.embed(fresh * (batch // len(fresh)))
        cached_batch_s = time.perf_counter() - started
    return {
        "model": model.name,
        "batch": batch,
        "batched_texts_per_s": batch / batched_s,
        "cached_batch_texts_per_s": len(fresh) * (batch // len(fresh)) / cached_batch_s,
        "latency": [s.summary() for s in (cold, miss, hit, disk)],
    }
