"""One size, one fresh process: footprint, side-by-side timings, index recall, snapshots.

Run in its own interpreter (``python -m benchmarks.worker SIZE OUT.json``) so that the
resident-set growth it reports belongs to that size's stores alone.
"""

from __future__ import annotations

import argparse
import gc
import json
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.datasets import Dataset, random_dataset
from benchmarks.measure import rss_bytes, traced_bytes
from benchmarks.operations import Plan, build, run, timed_build
from benchmarks.recall import recall_at_k
from benchmarks.snapshot_bench import snapshot_costs
from memory_core import AtlasConfig

N_QUERIES = 200
IMPLS = ("engine", "reference")
TRACE_MAX = 20_000
"""Above this size the engine is not built a second time under tracemalloc (minutes)."""


def measure_size(
    size: int, *, smoke: bool, data: Dataset | None = None, trace: bool = True
) -> dict[str, Any]:
    plan = Plan.for_size(size, smoke=smoke)
    data = data or random_dataset(size + plan.extra, N_QUERIES)
    out: dict[str, Any] = {"size": size, "dataset": data.name, "build": {}, "memory": {}}
    stores = {}
    for impl in IMPLS:
        before = rss_bytes()
        store, clock, build_s = timed_build(data, plan, impl)
        grown = rss_bytes() - before
        stores[impl] = (store, clock)
        out["build"][impl] = {"seconds": build_s, "per_s": size / build_s}
        out["memory"][impl] = {"rss_per_memory": grown / size}
    engine = stores["engine"][0]
    if size > AtlasConfig().hnsw_threshold:
        # the atlas-wide index, as the engine built it (private, read-only use)
        out["recall"] = recall_at_k(engine._s.vectors, N_QUERIES)
    out["snapshot"] = snapshot_costs(size, repeat=1 if smoke else 3, atlas=engine)
    del engine
    samples = []
    for impl in IMPLS:
        store, clock = stores.pop(impl)
        samples += [s.summary() for s in run(store, clock, data, plan, impl)]
        del store
        gc.collect()
    out["ops"] = samples
    if trace:
        for impl in IMPLS if size <= TRACE_MAX else ("reference",):
            _, traced = traced_bytes(partial(build, data, plan, impl))
            out["memory"][impl]["traced_per_memory"] = traced / size
            gc.collect()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.worker")
    parser.add_argument("size", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    result = measure_size(args.size, smoke=args.smoke)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
