"""``python -m benchmarks.snapshot_bench [--size N] [--repeat R]``: snapshot export and load.

The atlas is the side-by-side scenario's (``operations.build_engine``: random 384-d
vectors, one main session and a few small ones, auto-link on). Export is
``save_snapshot`` (columnar copy under the lock, then encoding and writing). Load is
``load_snapshot`` in its parts: reading and checking the file, restoring the table,
sessions, edges and the stored HNSW graph, and indexing (``AtlasState.index``: session
lists, BM25 from the stored postings, or from the texts in a file without them; vectors
only when no graph was stored). The same
members compressed (``np.savez_compressed``) are measured once, to show what compression
would cost and save. Issue #15 target: export and load <= 1 s at 100k. ``make bench``
measures it in ``benchmarks.worker`` on each size's engine atlas.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.datasets import random_dataset
from benchmarks.measure import Samples, machine
from benchmarks.operations import START, Plan, build_engine
from memory_core import ElasticMemoryAtlas, ManualClock
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine import snapshot
from memory_core.engine.state import AtlasState

TARGET_MS = 1000.0
"""Issue #15: export and load each within a second at 100k memories."""


def snapshot_costs(
    size: int = 100_000,
    repeat: int = 3,
    load_repeat: int = 1,
    atlas: ElasticMemoryAtlas | None = None,
) -> dict[str, Any]:
    """Export/load timings (wall and this thread's CPU) and file sizes for one atlas:
    ``atlas`` when given (``benchmarks.worker`` passes the one it built; not changed),
    else a fresh build of ``size`` memories."""
    if atlas is None:
        atlas = build_engine(random_dataset(size, 1), Plan.for_size(size), ManualClock(START))
    export, read, restore, index = (Samples(op, "engine", size) for op in _OPS)
    with tempfile.TemporaryDirectory(prefix="snapshot-bench-") as tmp:
        path = Path(tmp) / "atlas.npz"
        for _ in range(repeat):
            export.time(lambda: atlas.save_snapshot(path))
        size_bytes = path.stat().st_size
        for _ in range(load_repeat):
            data = read.time(lambda: snapshot.read(path))
            fresh = ElasticMemoryAtlas(
                data.config, embedder=HashingEmbedder(), clock=ManualClock(0)
            )
            with _timed_index(index):
                restore.time(partial(snapshot.restore, fresh._s, data))
            assert len(fresh) == len(atlas)
        compressed = _compressed(path, Path(tmp) / "compressed.npz")
    parts = {s.op: _ms(s) for s in (export, read, restore, index)}
    load_ms = parts["read + check"]["wall_ms"] + parts["restore (with indexing)"]["wall_ms"]
    return {
        "size": size,
        "memories": len(atlas),
        "edges": len(atlas.edges()),
        "format": snapshot.FORMAT,
        "file_mib": round(size_bytes / 2**20, 1),
        "vector_index": atlas._s.vectors.kind,
        **parts,
        "load_ms": round(load_ms, 1),
        "load_without_indexing_ms": round(load_ms - parts["indexing"]["wall_ms"], 1),
        "compressed": compressed,
        "target_ms": TARGET_MS,
        "machine": machine(),
    }


_OPS = ("export", "read + check", "restore (with indexing)", "indexing")


@contextmanager
def _timed_index(samples: Samples) -> Iterator[None]:
    """Time the indexing step inside a restore (wraps ``AtlasState.index`` meanwhile)."""
    original: Callable[..., None] = AtlasState.index

    def timed(state: AtlasState, slots: np.ndarray, *args: Any) -> None:
        samples.time(lambda: original(state, slots, *args))

    AtlasState.index = timed  # type: ignore[method-assign]
    try:
        yield
    finally:
        AtlasState.index = original  # type: ignore[method-assign]


def _compressed(path: Path, out: Path) -> dict[str, float]:
    """Size of the same members with zip deflate, and the time to write and read them."""
    with np.load(path) as npz:
        arrays = {name: npz[name] for name in npz.files}
    start = time.perf_counter()
    np.savez_compressed(out, **arrays)
    write_ms = (time.perf_counter() - start) * 1000.0
    start = time.perf_counter()
    with np.load(out) as npz:
        for name in npz.files:
            npz[name]
    read_ms = (time.perf_counter() - start) * 1000.0
    return {
        "file_mib": round(out.stat().st_size / 2**20, 1),
        "write_ms": round(write_ms, 1),
        "read_members_ms": round(read_ms, 1),
    }


def _ms(samples: Samples) -> dict[str, float]:
    return {
        "wall_ms": round(float(np.median(samples.ns)) / 1e6, 1),
        "cpu_ms": round(float(np.median(samples.cpu_ns)) / 1e6, 1),
        "runs": len(samples.ns),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="exports to time (median)")
    parser.add_argument("--load-repeat", type=int, default=1, help="loads to time (median)")
    args = parser.parse_args(argv)
    print(json.dumps(snapshot_costs(args.size, args.repeat, args.load_repeat), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
