"""What recording costs the agent, and how far behind a follower stays (issue #15 point 5).

**In process, at ``--size`` memories (default 100k):** the side-by-side scenario's atlas
(``benchmarks.operations.build_engine``: random 384-d vectors, auto-link on) takes
``--writes`` writes paced like an agent's (one every ``--pace`` s, a reinforcing read
after every fifth, a decay pass half-way). Recording's cost: ``--pairs`` paired writes in
two processes on the same snapshot, one recording through a real ``LiveRecorder`` on a
SQLite file and one not, the two adds of a pair made in turn ``pace / 2`` apart and the
roles swapped half-way (``benchmarks.paired_overhead``). Then the lag: ``--writes``
recorded writes while a follower in another process (``AtlasFollower``, polling every
``--every`` s like the dashboard's sidebar) loads the newest checkpoint once and applies
the event stream. Reported:

- ``add`` latency p50/p99 unrecorded vs recorded, and the recorded/unrecorded ratio
  with its 95 % block-bootstrap interval (target: <= 1.05, i.e. recording costs <= 5 %
  extra write latency; met only when the whole interval is under it);
- the follower's lag: for every write, from the agent's return to the first poll after
  which the follower's copy held it (target p99 <= 2 s), and its checkpoint load time;
- exactness: the follower's final copy against the agent's atlas (``atlas_differences``);
- checkpoints: a recorder's own checkpoints back to back on another thread during
  ``--writes`` more recorded writes: the longest atlas-lock hold (target <= 50 ms), the
  add's p99 meanwhile (target <= 50 ms) and the part of it spent blocked, neither on a
  core nor waiting for one (Linux schedstat): waits for the GIL or the lock, which a
  loaded machine does not explain (issue #26).

**Over stdio (``--mcp``):** ``memory_write`` through ``atlas mcp`` with and without
``--record`` on 1,000 memories (a real MCP client; hashing embedder).

Timings are wall clock on a shared machine: the report prints the load average.
Run: ``python -m benchmarks.live_record_bench [--size 100000] [--mcp]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.datasets import random_dataset, random_unit_vectors, synthetic_texts
from benchmarks.measure import Samples, fmt_ms, machine
from benchmarks.operations import START, Plan, build_engine
from benchmarks.paired_overhead import paired, verdict
from memory_core import ElasticMemoryAtlas, ManualClock
from memory_core.dashboard.follow import DEFAULT_EVERY
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine import snapshot
from memory_core.store.engine import open_database
from memory_core.store.follow import AtlasFollower
from memory_core.store.live import DEFAULT_SNAPSHOT_EVERY, LiveRecorder
from memory_core.testing import atlas_differences

SIZE = 100_000
WRITES = 600
PACE = 0.02
"""Seconds between two writes (50 a second: a busy agent)."""
CHECKPOINT = DEFAULT_SNAPSHOT_EVERY

LAG_TARGET_S = 2.0
OVERHEAD_TARGET = 1.05
PAIRS = 1200
"""Paired writes for recording's cost (~30 s at the default pace): the p99 of 1,200 adds
per side rests on its 12 slowest, and its interval narrows with more."""
HOLD_TARGET_MS = 50.0
"""The longest a checkpoint may hold the atlas lock at a time."""
ADD_DURING_TARGET_MS = HOLD_TARGET_MS
"""The agent's add p99 while checkpoints run back to back: an add may wait for one
checkpoint lock hold, never for the checkpoint's copying, encoding or writing (issue #26;
before the eighth pass the wait was 18x the add's p99 on a quiet box)."""
RESULTS = Path(__file__).parent / "results" / "live-follow.json"


# ---------------------------------------------------------------- the follower process
def _follow(url: str, atlas_id: str, every: float, out: Any, stop: Any, path: str) -> None:
    """Poll like the dashboard; report (applied seq, wall time) after every poll."""
    db = open_database(url)
    follower = AtlasFollower(db, atlas_id, embedder=HashingEmbedder())
    started = time.perf_counter()
    follower.catch_up()
    out.put(("loaded", time.perf_counter() - started, follower.seq))
    while True:
        target = stop.value
        began = time.perf_counter()
        follower.catch_up()
        out.put(("seq", follower.seq, time.time(), time.perf_counter() - began))
        if target and follower.seq >= target:
            break
        time.sleep(max(0.0, every - (time.perf_counter() - began)))
    assert follower.atlas is not None
    follower.atlas.save_snapshot(path)
    out.put(("done", follower.reloads, follower.stalled))
    db.close()


# ---------------------------------------------------------------- the agent
def _run_queue_ns() -> int | None:
    """This thread's time spent runnable without a core, from Linux's schedstat (complete
    up to its last switch-in, so exact when read by the running thread); None elsewhere."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as fh:
            return int(fh.read().split()[1])
    except OSError:
        return None


def _write_phase(
    atlas: ElasticMemoryAtlas,
    clock: ManualClock,
    writes: int,
    pace: float,
    seed: int,
    position: Callable[[], int] | None = None,
    blocked: list[int] | None = None,
) -> tuple[Samples, list[tuple[int, float]]]:
    """Paced writes with a read after every fifth and a decay pass half-way; returns the
    add latencies and, for each write, (``position()`` after it, wall time it returned).
    With ``blocked``, each add's wall time that was neither its CPU nor a wait for a core
    (waits for the GIL, a lock or I/O: what a loaded machine does not explain) is
    appended to it, in ns."""
    texts = synthetic_texts(writes, seed=seed)
    vectors = random_unit_vectors(writes, seed=seed)
    samples = Samples("add", "recorded" if position else "unrecorded", len(atlas))
    marks: list[tuple[int, float]] = []
    for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        clock.advance(1.0)
        queued = _run_queue_ns() if blocked is not None else None
        samples.time(lambda t=text, v=vector: atlas.add(t, session_id="live", embedding=v))
        if blocked is not None and queued is not None and (after := _run_queue_ns()):
            waited = samples.ns[-1] - samples.cpu_ns[-1] - (after - queued)
            blocked.append(max(0, waited))
        marks.append((position() if position else 0, time.time()))
        if i % 5 == 4:
            atlas.retrieve(text, top_k=5, query_embedding=vector)
        if i == writes // 2:
            atlas.decay()
        time.sleep(pace)
    return samples, marks


def _agent_atlas(size: int, cache: Path | None) -> tuple[ElasticMemoryAtlas, ManualClock, float]:
    """The scenario's atlas, built (seconds returned) or loaded from ``cache``."""
    if cache is not None and cache.exists():
        atlas = ElasticMemoryAtlas.load_snapshot(cache, embedder=HashingEmbedder())
        return atlas, ManualClock(atlas.clock.now()), 0.0
    clock = ManualClock(START)
    started = time.perf_counter()
    atlas = build_engine(random_dataset(size, 1), Plan.for_size(size), clock)
    built = time.perf_counter() - started
    if cache is not None:
        atlas.save_snapshot(cache)
        atlas = ElasticMemoryAtlas.load_snapshot(cache, embedder=HashingEmbedder(), clock=clock)
    return atlas, clock, built


class HoldTimer:
    """The atlas's re-entrant lock, timing each outermost hold (by thread) while installed."""

    def __init__(self, lock: Any) -> None:
        self.inner = lock
        self.holds: list[tuple[int, int, int]] = []  # (thread ident, ns held, CPU ns held)
        self._depth = 0
        self._since = self._cpu_since = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got: bool = self.inner.acquire(blocking, timeout)
        if got:
            if self._depth == 0:  # only the holder touches these fields
                self._since, self._cpu_since = time.perf_counter_ns(), time.thread_time_ns()
            self._depth += 1
        return got

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.holds.append(
                (
                    threading.get_ident(),
                    time.perf_counter_ns() - self._since,
                    time.thread_time_ns() - self._cpu_since,
                )
            )
        self.inner.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def checkpoint_holds(
    atlas: ElasticMemoryAtlas, clock: ManualClock, writes: int, pace: float, url: str
) -> dict[str, Any]:
    """A recorder's checkpoints (``LiveRecorder.snapshot``: the file, then its bytes into
    the database) back to back on another thread while the agent writes, recorded: how
    long each checkpoint holds the atlas lock at a time, and the adds' latency meanwhile."""
    recorder = LiveRecorder(atlas, open_database(url), name="checkpoints", snapshot_every=3600)
    timer = HoldTimer(atlas._lock)
    atlas._lock = timer  # type: ignore[assignment]
    stop, took = threading.Event(), []
    checkpointer: list[int] = []

    def loop() -> None:
        checkpointer.append(threading.get_ident())
        while not stop.is_set():
            started = time.perf_counter()
            recorder.snapshot()
            took.append(time.perf_counter() - started)

    thread = threading.Thread(target=loop, name="bench-checkpoints", daemon=True)
    blocked: list[int] = []
    try:
        thread.start()
        samples, _ = _write_phase(atlas, clock, writes, pace, 29, blocked=blocked)
        stop.set()
        thread.join()
    finally:
        atlas._lock = timer.inner
        recorder.close()
    holds = [ns / 1e6 for who, ns, _ in timer.holds if who == checkpointer[0]]
    cpu = [ns / 1e6 for who, _, ns in timer.holds if who == checkpointer[0]]
    started = time.perf_counter()
    with atlas.lock:  # the whole copy under the lock, as checkpoints took it before
        snapshot.capture(atlas._s)
    whole_ms = (time.perf_counter() - started) * 1000
    return {
        "whole_copy_ms": whole_ms,
        "checkpoints": len(took),
        "checkpoint_s_p50": float(np.median(took)) if took else None,
        "holds": len(holds),
        "hold_max_ms": max(holds),
        "hold_p50_ms": float(np.median(holds)),
        "hold_cpu_max_ms": max(cpu),
        "add_during": samples.summary(),
        "add_blocked_p99_ms": float(np.percentile(blocked, 99)) / 1e6 if blocked else None,
    }


def _wait_for(out: Any, stop: Any, target: int) -> tuple[list[tuple[int, float, float]], Any]:
    """The follower's polls until it holds event ``target``, then its final report."""
    stop.value = target
    polls: list[tuple[int, float, float]] = []
    while True:
        message = out.get(timeout=600)
        if message[0] == "seq":
            polls.append((message[1], message[2], message[3]))
        elif message[0] == "done":
            return polls, message[1:]


def in_process(
    size: int,
    writes: int,
    pace: float,
    every: float,
    checkpoint: float,
    cache: Path | None,
    pairs: int = PAIRS,
) -> dict[str, Any]:
    """Recording's cost: ``pairs`` paired writes in two processes loading the same
    snapshot (``paired_overhead.paired``). Then the lag: recorded writes while a follower
    in another process keeps its copy."""
    atlas, clock, built_s = _agent_atlas(size, cache)
    with tempfile.TemporaryDirectory(prefix="live-follow-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'atlas.db'}"
        if cache is None or not cache.exists():
            cache = Path(tmp) / "agent.npz"
            atlas.save_snapshot(cache)
        overhead = paired(cache, Path(tmp), pairs, pace)
        started = time.perf_counter()
        recorder = LiveRecorder(atlas, open_database(url), name="bench", snapshot_every=checkpoint)
        first_checkpoint_s = time.perf_counter() - started
        ctx = mp.get_context("spawn")
        out, stop = ctx.Queue(), ctx.Value("q", 0)
        copy_path = str(Path(tmp) / "follower.npz")
        proc = ctx.Process(
            target=_follow, args=(url, recorder.atlas_id, every, out, stop, copy_path)
        )
        proc.start()
        kind, load_s, _ = out.get(timeout=600)
        assert kind == "loaded"
        followed, marks = _write_phase(
            atlas, clock, writes, pace, 13, lambda: recorder.sink.sequence
        )
        recorder.sink.flush()
        polls, (reloads, stalled) = _wait_for(out, stop, recorder.sink.sequence)
        proc.join(60)
        checkpoints = recorder.snapshots_taken
        recorder.close()
        copy = ElasticMemoryAtlas.load_snapshot(copy_path, embedder=HashingEmbedder())
        differences = atlas_differences(atlas, copy)
        holds = checkpoint_holds(atlas, clock, writes, pace, url)
    lags = _lags(marks, polls)
    followed.impl = "recorded, follower running"
    return {
        "size": size,
        "writes": writes,
        "pace_s": pace,
        "poll_every_s": every,
        "checkpoint_every_s": checkpoint,
        "pairs": pairs,
        "build_s": round(built_s, 1),
        "first_checkpoint_s": round(first_checkpoint_s, 2),
        "checkpoints": checkpoints,
        "follower_load_s": round(load_s, 2),
        "follower_reloads": reloads,
        "follower_stalled": stalled,
        "poll_p50_ms": float(np.percentile([p[2] for p in polls], 50)) * 1000,
        "poll_max_ms": max(p[2] for p in polls) * 1000,
        "add_unrecorded": overhead["unrecorded"],
        "add_recorded": overhead["recorded"],
        "overhead": overhead,
        "add_followed": followed.summary(),
        "lag_p50_s": float(np.percentile(lags, 50)),
        "lag_p99_s": float(np.percentile(lags, 99)),
        "lag_max_s": max(lags),
        "checkpoint_holds": holds,
        "differences": len(differences),
        "first_differences": differences[:3],
        "load": os.getloadavg(),
        "machine": machine(),
    }


def _lags(marks: list[tuple[int, float]], polls: list[tuple[int, float, float]]) -> list[float]:
    """For each write, seconds until the first poll whose copy held its event."""
    lags = []
    for seq, at in marks:
        seen = next((t for applied, t, _ in polls if applied >= seq), None)
        lags.append(float("inf") if seen is None else max(0.0, seen - at))
    return lags


def report(result: dict[str, Any]) -> str:
    off, on, fol = result["add_unrecorded"], result["add_recorded"], result["add_followed"]
    ratios = result["overhead"]["ratios"]
    p50, p99 = ratios["wall_p50"]["point"], ratios["wall_p99"]["point"]
    load = ", ".join(f"{x:.1f}" for x in result["load"])
    ok = lambda good: "met" if good else "missed"  # noqa: E731
    lines = [
        f"Live follow at {result['size']:,} memories ({result['writes']} paced writes per "
        f"phase, one every {result['pace_s'] * 1000:.0f} ms; follower polls every "
        f"{result['poll_every_s']:g} s; load average {load}):",
        "",
        "| add latency | n | p50 ms | p99 ms | mean ms |",
        "|---|---:|---:|---:|---:|",
        f"| unrecorded (paired, another process) | {off['n']} | {fmt_ms(off['p50_ms'])} | "
        f"{fmt_ms(off['p99_ms'])} | {fmt_ms(off['mean_ms'])} |",
        f"| recorded (paired, roles swapped half-way) | {on['n']} | {fmt_ms(on['p50_ms'])} | "
        f"{fmt_ms(on['p99_ms'])} | {fmt_ms(on['mean_ms'])} |",
        f"| recorded, a follower running in another process | {fol['n']} | "
        f"{fmt_ms(fol['p50_ms'])} | {fmt_ms(fol['p99_ms'])} | {fmt_ms(fol['mean_ms'])} |",
        f"| recorded / unrecorded | | {p50:.3f} | {p99:.3f} | |",
        "",
        f"- recording overhead (target <= {OVERHEAD_TARGET:.2f}x; 95 % interval over "
        f"{result['overhead']['pairs']} pairs, runs of {result['overhead']['block']} "
        f"resampled; met only if all of it is under the target): "
        + "; ".join(
            f"{name} {_interval(ratios[key])} ({verdict(ratios[key], OVERHEAD_TARGET)})"
            for name, key in (
                ("wall p50", "wall_p50"),
                ("wall p99", "wall_p99"),
                ("CPU p50", "cpu_p50"),
                ("CPU p99", "cpu_p99"),
            )
        ),
        f"- follower lag write -> copy (target p99 <= {LAG_TARGET_S:g} s): "
        f"p50 {result['lag_p50_s']:.2f} s, p99 {result['lag_p99_s']:.2f} s, "
        f"max {result['lag_max_s']:.2f} s ({ok(result['lag_p99_s'] <= LAG_TARGET_S)})",
        f"- follower: checkpoint loaded once in {result['follower_load_s']:.2f} s, "
        f"{result['follower_reloads']} load(s) in all, a poll applies its events in "
        f"{result['poll_p50_ms']:.0f} ms p50 ({result['poll_max_ms']:.0f} ms max, the "
        f"decay pass included); the agent's first checkpoint took "
        f"{result['first_checkpoint_s']:.2f} s, {result['checkpoints']} taken",
        f"- exactness: the follower's copy differs from the agent's atlas in "
        f"{result['differences']} places",
    ]
    holds = result.get("checkpoint_holds")
    if holds:
        during = holds["add_during"]
        lines.extend(
            [
                f"- a recorder's checkpoints (file, then database) back to back on another "
                f"thread while the agent writes ({holds['checkpoints']} taken, "
                f"{holds['checkpoint_s_p50']:.2f} s each p50): the "
                f"atlas lock held {holds['hold_max_ms']:.1f} ms at most at a time (target <= "
                f"{HOLD_TARGET_MS:g} ms: {ok(holds['hold_max_ms'] <= HOLD_TARGET_MS)}; "
                f"{holds['holds']} holds, p50 {holds['hold_p50_ms']:.1f} ms; the longest in the "
                f"checkpoint thread's CPU time {holds.get('hold_cpu_max_ms', float('nan')):.1f} ms; "
                f"the whole copy under "
                f"the lock, as before: {holds['whole_copy_ms']:.0f} ms)",
                f"- add p99 while checkpoints run (target <= {ADD_DURING_TARGET_MS:g} ms): p50 "
                f"{fmt_ms(during['p50_ms'])} / p99 {fmt_ms(during['p99_ms'])} ms "
                f"({ok(during['p99_ms'] <= ADD_DURING_TARGET_MS)}), "
                f"{during['p99_ms'] / off['p99_ms']:.2f}x the unrecorded p99; CPU p99 "
                f"{fmt_ms(during['cpu_p99_ms'])} ms; blocked (waiting for the GIL, a lock "
                f"or I/O, not for a core) p99 {_ms_or_dash(holds.get('add_blocked_p99_ms'))}",
            ]
        )
    return "\n".join(lines)


def _interval(ratio: dict[str, float]) -> str:
    return f"{ratio['point']:.3f}x [{ratio['low']:.3f}, {ratio['high']:.3f}]"


def _ms_or_dash(value: float | None) -> str:
    return "-" if value is None else f"{fmt_ms(value)} ms"


# ---------------------------------------------------------------- over stdio
async def _mcp_writes(record: bool, url: str, preload: int, timed: int, pace: float) -> list[float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    args = ["-m", "memory_core.cli", "mcp", "--embedder", "hashing"]
    args += ["--set", "decay_interval_seconds=0", "--set", "merge_threshold=1.0"]
    if record:
        args += ["--record", "--database", url, "--name", "bench"]
    texts = synthetic_texts(preload + timed, seed=7 if record else 8)
    samples: list[float] = []
    async with Client(StdioServerParameters(command=sys.executable, args=args)) as client:
        for text in texts[:preload]:
            await client.call_tool("memory_write", {"content": text, "session_id": "bench"})
        for text in texts[preload:]:
            started = time.perf_counter()
            result = await client.call_tool("memory_write", {"content": text, "session_id": "b"})
            samples.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result
            await asyncio.sleep(pace)
    return samples


def mcp_table(preload: int = 1_000, timed: int = 300, pace: float = 0.05) -> str:
    lines = [
        "| memory_write over stdio | n | mean ms | p50 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'atlas.db'}"
        for record in (False, True):
            ordered = sorted(asyncio.run(_mcp_writes(record, url, preload, timed, pace)))
            p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
            name = "with --record" if record else "without --record"
            lines.append(
                f"| {name} | {len(ordered)} | {statistics.fmean(ordered):.2f} | "
                f"{ordered[len(ordered) // 2]:.2f} | {p99:.2f} | {ordered[-1]:.2f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--writes", type=int, default=WRITES)
    parser.add_argument("--pace", type=float, default=PACE)
    parser.add_argument("--every", type=float, default=DEFAULT_EVERY, help="poll interval (s)")
    parser.add_argument("--checkpoint", type=float, default=CHECKPOINT)
    parser.add_argument("--pairs", type=int, default=PAIRS, help="recorded/unrecorded add pairs")
    parser.add_argument("--mcp", action="store_true", help="also time memory_write over stdio")
    parser.add_argument(
        "--cache", type=Path, default=None, help="snapshot file of the built atlas (reused)"
    )
    parser.add_argument("--json", type=Path, default=RESULTS)
    opts = parser.parse_args(argv)
    result = in_process(
        opts.size, opts.writes, opts.pace, opts.every, opts.checkpoint, opts.cache, opts.pairs
    )
    opts.json.parent.mkdir(parents=True, exist_ok=True)
    opts.json.write_text(json.dumps(result, indent=2, default=str))
    print(report(result))
    if opts.mcp:
        print()
        print(mcp_table())


if __name__ == "__main__":
    main()
