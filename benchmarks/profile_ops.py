"""``python -m benchmarks.profile_ops 100000 [--ops add retrieve decay] [--profile]
[--breakdown] [--cache PATH] [--loop SECONDS]``.

One size of the benchmark's own scenario (same data, same build), without the seed
reference or the memory probes: the engine's CPU time per add, retrieve and decay +
eviction pass (this thread's time, so other processes on a shared box inflate it less
than wall time; with the CPU of the engine's helper thread, ``engine/overlap.py``; the
wall time and the whole process's CPU are printed beside it), and with ``--profile`` the functions that cost the most (cProfile).
``--breakdown`` splits a call's CPU time by stage and measures the floor (FAISS and
BM25 alone on the same indexes, ``benchmarks.breakdown``). ``--cache`` keeps the built
atlas as a snapshot (loaded instead of building next time); ``--loop`` repeats each op
for that many seconds, for a sampling profiler (``py-spy record -- python -m ...``).
For a quick before/after of an engine change; ``make bench`` is the full report.

``--against DIR`` times add and retrieve call by call in turn with another tree (a clean
export of a commit, e.g. ``git archive HEAD | tar -x -C /tmp/base``): a second process
runs that tree's engine on the same data (and the same ``--cache`` file) and makes each
call right after or before this one, so on a shared machine both see the same load.

``--clustered`` uses the clustered real-text data of ``make bench``'s clustered line
(``benchmarks.clustered_bench``: MiniLM vectors of the sample and dev texts, copied with
noise) instead of random vectors; ``--as-bench`` runs the scenario's writes (adds each
deleted again, adds at capacity, session purges) before timing, so the retrieves meet the
atlas in the state ``make bench`` times its retrieve line in. A ``--cache`` written with
either keeps the data and the clock beside the snapshot (``<cache>.data.npz``); the other
tree of ``--against`` reads both from there, so it needs no such option of its own.
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import io
import itertools
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import breakdown
from benchmarks.datasets import Dataset, random_dataset
from benchmarks.measure import call_cpu_ns, rss_bytes
from benchmarks.operations import (
    EVICT_JUMP_HOURS,
    EVICT_STEP_HOURS,
    MAIN,
    START,
    Plan,
    build_engine,
    until_retrieve,
)
from benchmarks.worker import N_QUERIES
from memory_core import ElasticMemoryAtlas, ManualClock
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine.pending import worker_cpu_ns

OPS = ("add", "retrieve", "decay")


class _Clocks:
    """Per call: its CPU (what ``cpu_ms`` returns: the calling thread's and the engine's
    helper thread's, to which a retrieve hands its vector search), and beside it the wall
    time and the whole process's CPU (every thread's)."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.process: list[float] = []

    def cpu_ms(self, fn: Callable[[], Any]) -> tuple[float, Any]:
        wall, process, call = time.perf_counter_ns(), time.process_time_ns(), call_cpu_ns()
        out = fn()
        call_ms = (call_cpu_ns() - call) / 1e6
        self.process.append((time.process_time_ns() - process) / 1e6)
        self.wall.append((time.perf_counter_ns() - wall) / 1e6)
        return call_ms, out

    def lines(self, name: str) -> str:
        return "\n".join((_line(name, self.wall, "wall"), _line(name, self.process, "process CPU")))


def _line(name: str, values: list[float], what: str = "CPU") -> str:
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return (
        f"{name:12s} n={len(values):4d}  {what} p50 {p50:7.3f}  p90 {p90:7.3f}  p99 {p99:7.3f} ms"
    )


def _profiled(fn: Callable[[int], Any], n: int, top: int = 20) -> str:
    profile = cProfile.Profile()
    profile.enable()
    for i in range(n):
        fn(i)
    profile.disable()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def saved_data(cache: Path) -> Path:
    """Where ``cache``'s data and clock are kept (``--clustered``, ``--as-bench``)."""
    return cache.with_name(cache.name + ".data.npz")


def _read_saved(path: Path) -> tuple[Dataset, float]:
    """The data and the clock's time kept beside a cached snapshot (``_save_data``). Its
    source is also run by the other tree of ``--against`` (``_OTHER_TREE``)."""
    with np.load(path, allow_pickle=False) as saved:
        data = Dataset(
            "saved",
            saved["texts"].tolist(),
            saved["vectors"],
            saved["query_texts"].tolist(),
            saved["query_vectors"],
        )
        return data, float(saved["now"])


def _save_data(path: Path, data: Dataset, now: float) -> None:
    np.savez(
        path,
        texts=np.array(data.texts),
        vectors=data.vectors,
        query_texts=np.array(data.query_texts),
        query_vectors=data.query_vectors,
        now=np.float64(now),
    )


def _clustered(size: int, extra: int) -> Dataset:
    """``make bench``'s clustered real-text data (``benchmarks.clustered_bench``)."""
    from benchmarks.clustered_bench import N_QUERIES as HELD_OUT
    from benchmarks.clustered_bench import clustered_dataset, real_texts
    from memory_core.embedding import make_embedder
    from memory_core.embedding.base import embed_checked

    texts, _ = real_texts()
    data, _, _ = clustered_dataset(
        texts, embed_checked(make_embedder("minilm"), texts), size + extra, HELD_OUT
    )
    return data


class _Runner:
    def __init__(
        self,
        size: int,
        cache: Path | None = None,
        *,
        clustered: bool = False,
        as_bench: bool = False,
    ) -> None:
        plan = Plan.for_size(size)
        self.clock = ManualClock(START)
        before, started = rss_bytes(), time.process_time()
        kept = None if cache is None else saved_data(cache)
        if cache is not None and cache.exists():
            if kept is not None and kept.exists():
                self.data, now = _read_saved(kept)
                self.clock.set(now)
            else:
                self.data = random_dataset(size + plan.extra, N_QUERIES)
            self.atlas = ElasticMemoryAtlas.load_snapshot(
                cache, embedder=HashingEmbedder(), clock=self.clock
            )
            verb = f"loaded from {cache}"
        else:
            self.data = (
                _clustered(size, plan.extra)
                if clustered
                else random_dataset(size + plan.extra, N_QUERIES)
            )
            self.atlas = build_engine(self.data, plan, self.clock)
            verb = "built"
            if as_bench:
                until_retrieve(self.atlas, self.clock, self.data, plan)
                verb = "built and written to as make bench does before its retrieves,"
            if cache is not None:
                self.atlas.save_snapshot(cache)
                if clustered or as_bench:
                    assert kept is not None
                    _save_data(kept, self.data, self.clock.now())
        self.build = (
            f"{verb} {size:,} memories: {time.process_time() - started:.1f} s CPU,"
            f" {(rss_bytes() - before) / size:,.0f} B resident per memory"
        )
        self._pool = itertools.cycle(range(size, len(self.data.texts)))
        self.clocks = _Clocks()
        self.later: list[float] = []
        """CPU ms of each add's deferred vector insert (0 where the add made it itself)."""

    def index_kind(self) -> str:
        return self.atlas._s.vectors.kind  # private, read-only use

    def index_note(self, before: str) -> str:
        """Which vector index the calls searched: an atlas at ``hnsw_threshold`` (20,000 by
        default) turns HNSW at its first add, so ``--ops add retrieve`` at 20k times
        the retrieves over HNSW (as ``make bench`` does) and ``--ops retrieve`` over the
        exact index."""
        vectors = self.atlas._s.vectors
        turned = f", {before} until one of these calls rebuilt it" if before != vectors.kind else ""
        return (
            f"{vectors.kind} index{turned}; {len(self.atlas):,} memories,"
            f" {vectors.tombstones:,} tombstones"
        )

    def add(self, _: int = 0) -> float:
        """One add with auto-link, deleted again untimed (as in the benchmark). A vector
        insert the add left to the insert worker (``engine.pending``) is made before the
        delete, and its CPU, on whichever thread made it, goes to ``later`` (not the add's
        time)."""
        i, before = next(self._pool), len(self.atlas)
        data = self.data
        ms, node = self.clocks.cpu_ms(
            lambda: self.atlas.add(data.texts[i], session_id=MAIN, embedding=data.vectors[i])
        )
        worker, own = worker_cpu_ns(), time.thread_time_ns()
        self.atlas.settle()
        self.later.append((time.thread_time_ns() - own + worker_cpu_ns() - worker) / 1e6)
        if len(self.atlas) > before:
            self.atlas.delete(node.id)
        self.clock.advance(1.0)
        return ms

    def retrieve(self, q: int) -> float:
        j, data = q % len(self.data.query_texts), self.data
        ms, _ = self.clocks.cpu_ms(
            lambda: self.atlas.retrieve(
                data.query_texts[j],
                top_k=10,
                session_id=MAIN,
                query_embedding=data.query_vectors[j],
            )
        )
        return ms

    def decay(self, _: int = 0) -> float:
        self.clock.advance(EVICT_STEP_HOURS * 3600.0)
        ms, _ = self.clocks.cpu_ms(self.atlas.decay)
        return ms


_OTHER_TREE = f"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import numpy as np
from benchmarks.datasets import Dataset
from benchmarks.profile_ops import _Runner
{inspect.getsource(_read_saved)}
runner = _Runner(int(sys.argv[2]), Path(sys.argv[3]) if sys.argv[3] else None)
if sys.argv[4]:
    runner.data, now = _read_saved(Path(sys.argv[4]))
    runner.clock.set(now)
import memory_core
print("ready", memory_core.__file__, flush=True)
for line in sys.stdin:
    op, i = line.split()
    ms = getattr(runner, op)(int(i))
    print(ms, runner.clocks.wall[-1], flush=True)
"""
"""The other tree's side of ``--against``: its own ``_Runner`` (that tree's engine and
benchmark data, or the data and clock kept beside the cache), one call per line read, its
CPU and wall ms written back."""


class _OtherTree:
    """A process running ``_OTHER_TREE`` in ``root``."""

    def __init__(self, root: Path, size: int, cache: Path | None) -> None:
        kept = None if cache is None else saved_data(cache)
        data = str(kept) if kept is not None and kept.exists() else ""
        self._process = subprocess.Popen(
            [sys.executable, "-c", _OTHER_TREE, str(root), str(size), str(cache or ""), data],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.engine = self._reply().split()[-1]
        """Where the other process imported ``memory_core`` from."""

    def call(self, op: str, i: int) -> tuple[float, float]:
        """(CPU ms, wall ms) of the other tree's ``op`` number ``i``."""
        assert self._process.stdin is not None
        self._process.stdin.write(f"{op} {i}\n")
        self._process.stdin.flush()
        cpu, wall = self._reply().split()
        return float(cpu), float(wall)

    def close(self) -> None:
        """End the process (its input ends) and let go of its pipes."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.close()
        self._process.wait(timeout=60)
        self._process.stdout.close()

    def _reply(self) -> str:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the other tree's process ended (exit {self._process.wait()})")
        return line


def _alternated(runner: _Runner, other: _OtherTree, op: str, n: int, root: Path) -> str:
    """``op`` ``n`` times here and in ``other`` in turn (which goes first alternates)."""
    fn: Callable[[int], float] = getattr(runner, op)
    runner.clocks = _Clocks()
    load = os.getloadavg()[0]
    here: list[float] = []
    there: tuple[list[float], list[float]] = ([], [])
    for i in range(n):
        if i % 2 == 0:
            here.append(fn(i))
        cpu, wall = other.call(op, i)
        there[0].append(cpu)
        there[1].append(wall)
        if i % 2:
            here.append(fn(i))
    ratio = np.median(here) / np.median(there[0])
    tail = np.percentile(here, 99) / np.percentile(there[0], 99)
    later = [_line("add's insert here", runner.later[-n:], "CPU after")] if op == "add" else []
    return "\n".join(
        (
            f"{op}: this tree vs {root}, call by call (load {load:.2f} -> {os.getloadavg()[0]:.2f})",
            _line(f"{op} here", here),
            _line(f"{op} here", runner.clocks.wall, "wall"),
            *later,
            _line(f"{op} there", there[0]),
            _line(f"{op} there", there[1], "wall"),
            f"{op}: CPU p50 here / there {ratio:.3f}, p99 {tail:.3f}",
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_ops", description=__doc__)
    parser.add_argument("size", type=int)
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS))
    parser.add_argument("--profile", action="store_true", help="also print cProfile's top 20")
    parser.add_argument("--repeats", type=int, default=400, help="timed calls per op (decay: /10)")
    parser.add_argument("--breakdown", action="store_true", help="CPU per stage, and the floor")
    parser.add_argument("--cache", type=Path, default=None, help="snapshot of the built atlas")
    parser.add_argument("--loop", type=float, default=0.0, help="seconds of each op to sample")
    parser.add_argument(
        "--against", type=Path, default=None, help="another tree: add/retrieve call by call in turn"
    )
    parser.add_argument(
        "--clustered", action="store_true", help="make bench's clustered real-text data"
    )
    parser.add_argument(
        "--as-bench", action="store_true", help="the scenario's writes first, as make bench"
    )
    args = parser.parse_args(argv)
    if args.against is not None and "decay" in args.ops:
        parser.error("--against times add and retrieve only")
    if args.against is not None and (args.clustered or args.as_bench) and args.cache is None:
        parser.error(
            "--against with --clustered or --as-bench needs --cache (the other tree reads it)"
        )
    runner = _Runner(args.size, args.cache, clustered=args.clustered, as_bench=args.as_bench)
    print(runner.build, flush=True)
    if args.against is not None:
        other = _OtherTree(args.against.resolve(), args.size, args.cache)
        print(f"other tree's engine: {other.engine}", flush=True)
        try:
            for op in args.ops:
                print(_alternated(runner, other, op, args.repeats, args.against), flush=True)
        finally:
            other.close()
        return 0
    stages = {"add": breakdown.ADD_STAGES, "retrieve": breakdown.RETRIEVE_STAGES}
    for op in args.ops:
        n = max(args.repeats // 10, 5) if op == "decay" else args.repeats
        if op == "decay":
            runner.clock.advance(EVICT_JUMP_HOURS * 3600.0)
            runner.atlas.decay()
        fn: Callable[[int], float] = getattr(runner, op)
        runner.clocks = _Clocks()
        kind = runner.index_kind()
        print(_line(op, [fn(i) for i in range(n)]), flush=True)
        print(runner.clocks.lines(op), flush=True)
        print(f"{op}: {runner.index_note(kind)}", flush=True)
        if op == "add":
            print(_line("add's insert", runner.later, "CPU after the call"), flush=True)
        if args.profile:
            print(_profiled(fn, max(n // 2, 5)), flush=True)
        if args.breakdown and op in stages:
            print(breakdown.split(fn, n, stages[op]), flush=True)
        if args.loop:
            end, i = time.perf_counter() + args.loop, 0
            while time.perf_counter() < end:
                fn(i)
                i += 1
            print(f"{op}: {i} calls looped for sampling", flush=True)
    if args.breakdown:
        data = runner.data
        print(breakdown.floor(runner.atlas, data.query_vectors, data.query_texts, 400), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
