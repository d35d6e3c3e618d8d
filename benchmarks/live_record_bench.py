"""What recording costs the agent: ``memory_write`` latency through ``atlas mcp`` over
stdio, with and without ``--record``, on an atlas holding 1,000 memories.

A real MCP client (the SDK) drives a real server process. The hashing embedder keeps
the model out of the timings (with MiniLM every write pays ~20 ms of embedding on top,
identical with and without recording). Writes are paced like an agent's (one every
50 ms), so the recorder's snapshots (every 2 s while anything changes) land between and
during them; a snapshot holds the atlas lock while it serialises, which is what a write
can end up waiting for.

Run: ``python -m benchmarks.live_record_bench`` (about two minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from benchmarks.datasets import synthetic_texts

PRELOAD = 1_000
TIMED = 300
PACE = 0.05


async def _writes(record: bool, url: str, preload: int, timed: int, pace: float) -> list[float]:
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
        stats = await client.call_tool("memory_stats", {})
        assert not stats.is_error and stats.structured_content is not None
        assert stats.structured_content["nodes"] >= preload, stats.structured_content
    return samples


def summary(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "mean_ms": round(statistics.fmean(ordered), 2),
        "p50_ms": round(ordered[len(ordered) // 2], 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
        "max_ms": round(ordered[-1], 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preload", type=int, default=PRELOAD)
    parser.add_argument("--timed", type=int, default=TIMED)
    parser.add_argument("--pace", type=float, default=PACE)
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'atlas.db'}"
        print("| memory_write over stdio | n | mean ms | p50 ms | p99 ms | max ms |")
        print("|---|---:|---:|---:|---:|---:|")
        for record in (False, True):
            row = summary(asyncio.run(_writes(record, url, opts.preload, opts.timed, opts.pace)))
            name = "with --record" if record else "without --record"
            print(
                f"| {name} | {row['n']} | {row['mean_ms']} | {row['p50_ms']} | "
                f"{row['p99_ms']} | {row['max_ms']} |"
            )


if __name__ == "__main__":
    main()
