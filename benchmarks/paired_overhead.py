"""Recording's cost on an agent's add, measured in pairs (issue #26).

Two processes load the same atlas snapshot and take the same paced writes (one every
``pace`` s, a reinforcing read after every fifth, a decay pass half-way, untimed); one
records through a real ``LiveRecorder`` (every event enriched and written by the sink's
thread to SQLite), the other does not. The parent hands write ``i`` to both in turn,
``pace / 2`` apart, the first of each pair alternating, so the two adds of a pair see
the same machine load within a few milliseconds. Half-way, the two swap roles (the
recorder moves, its checkpoint untimed), so a difference between the processes
themselves (where their arrays landed, which core) falls on both sides. Separate
processes, because a recorder's writing thread in the same process would take the GIL
from the unrecorded atlas's adds too and hide part of the cost.

The overhead is the ratio of the recorded adds' p99 to the unrecorded adds' (p50 too),
with a 95 % interval from a moving-block bootstrap over runs of ``block`` consecutive
pairs (neighbouring writes share the load, so pairs are resampled in runs, not one by
one). A target is *met* only when the whole interval is at or under it, *missed* when
the whole interval is over it, and *undecided* otherwise (then more writes narrow it).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.datasets import random_unit_vectors, synthetic_texts
from benchmarks.measure import Samples, call_cpu_ns
from benchmarks.operations import START

RESAMPLES = 2000
BLOCK = 20
"""Consecutive pairs resampled together (~0.8 s of writes at the default pace)."""
SEED = 41


@dataclass(frozen=True, slots=True)
class Ratio:
    """recorded / unrecorded at one percentile, with its 95 % bootstrap interval."""

    q: float
    point: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"q": self.q, "point": self.point, "low": self.low, "high": self.high}


def ratio_interval(
    recorded: np.ndarray,
    unrecorded: np.ndarray,
    q: float,
    *,
    block: int = BLOCK,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Ratio:
    """``percentile(recorded, q) / percentile(unrecorded, q)`` over paired samples (pair
    ``i`` is ``recorded[i]``, ``unrecorded[i]``), with a moving-block bootstrap interval."""
    recorded, unrecorded = np.asarray(recorded, float), np.asarray(unrecorded, float)
    n = len(recorded)
    if n != len(unrecorded) or n < 2 * block:
        raise ValueError(f"need {2 * block}+ pairs of equal count, got {n} / {len(unrecorded)}")
    point = float(np.percentile(recorded, q) / np.percentile(unrecorded, q))
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, n - block + 1, size=(resamples, -(-n // block)))
    picks = (starts[:, :, None] + np.arange(block)).reshape(resamples, -1)[:, :n]
    ratios = np.percentile(recorded[picks], q, axis=1) / np.percentile(unrecorded[picks], q, axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return Ratio(q, point, float(low), float(high))


def verdict(ratio: dict[str, float], target: float) -> str:
    """met (the whole interval at or under ``target``), missed (all over) or undecided."""
    if ratio["high"] <= target:
        return "met"
    if ratio["low"] > target:
        return "missed"
    return "undecided"


# ---------------------------------------------------------------- one side (a process)
def _side(conn: Connection, cache: str, url: str, writes: int, name: str) -> None:
    """Load the snapshot and take commands: ("record", on), ("add", i), ("stop",)."""
    from memory_core import ElasticMemoryAtlas, ManualClock
    from memory_core.embedding.hashing import HashingEmbedder
    from memory_core.store.engine import open_database
    from memory_core.store.live import LiveRecorder

    clock = ManualClock(START)
    atlas = ElasticMemoryAtlas.load_snapshot(cache, embedder=HashingEmbedder(), clock=clock)
    texts, vectors = synthetic_texts(writes, seed=SEED), random_unit_vectors(writes, seed=SEED)
    recorder: Any = None
    conn.send("ready")
    while (command := conn.recv())[0] != "stop":
        if command[0] == "record":
            if command[1]:
                recorder = LiveRecorder(atlas, open_database(url), name=name)
            elif recorder is not None:
                recorder.close()
                recorder = None
            conn.send("ok")
            continue
        i = command[1]
        clock.advance(1.0)
        cpu, start = call_cpu_ns(), time.perf_counter_ns()
        atlas.add(texts[i], session_id="live", embedding=vectors[i])
        wall, cpu = time.perf_counter_ns() - start, call_cpu_ns() - cpu
        if i % 5 == 4:
            atlas.retrieve(texts[i], top_k=5, query_embedding=vectors[i])
        if i == writes // 2:
            atlas.decay()
        conn.send((wall, cpu))
    if recorder is not None:
        recorder.close()
    conn.send("stopped")


def paired(cache: Path, url_dir: Path, writes: int, pace: float) -> dict[str, Any]:
    """``writes`` paired adds (recorded in one process, not in the other; roles swapped
    half-way): their samples, and the p50 and p99 ratios with their intervals."""
    ctx = mp.get_context("spawn")
    sides = []
    for k in range(2):
        mine, theirs = ctx.Pipe()
        url = f"sqlite:///{url_dir / f'paired-{k}.db'}"
        proc = ctx.Process(target=_side, args=(theirs, str(cache), url, writes, f"paired {k}"))
        proc.start()
        sides.append((mine, proc))
    for conn, _ in sides:
        assert conn.recv() == "ready"
    recorded = Samples("add", "recorded (paired)", 0)
    unrecorded = Samples("add", "unrecorded (paired)", 0)
    load = [os.getloadavg()[0]]
    try:
        for i in range(writes):
            rec = 0 if i < writes // 2 else 1  # which process records
            if i in (0, writes // 2):
                for k, (conn, _) in enumerate(sides):
                    conn.send(("record", k == rec))
                    assert conn.recv() == "ok"
            order = (0, 1) if i % 2 == 0 else (1, 0)
            for k in order:
                conn = sides[k][0]
                conn.send(("add", i))
                wall, cpu = conn.recv()
                into = recorded if k == rec else unrecorded
                into.ns.append(wall)
                into.cpu_ns.append(cpu)
                time.sleep(pace / 2)
        load.append(os.getloadavg()[0])
    finally:
        for conn, proc in sides:
            conn.send(("stop",))
            conn.recv()
            proc.join(60)
    ratios = {
        f"{clock}_{name}": ratio_interval(
            np.array(recorded.cpu_ns if clock == "cpu" else recorded.ns),
            np.array(unrecorded.cpu_ns if clock == "cpu" else unrecorded.ns),
            q,
        ).as_dict()
        for clock in ("wall", "cpu")
        for name, q in (("p50", 50.0), ("p99", 99.0))
    }
    return {
        "pairs": writes,
        "block": BLOCK,
        "load": load,
        "recorded": recorded.summary(),
        "unrecorded": unrecorded.summary(),
        "ratios": ratios,
    }
