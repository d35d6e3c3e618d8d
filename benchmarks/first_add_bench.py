"""The first ``add`` of a process: does it pay for loading the word-frequency table?

Each case runs in a fresh interpreter (the table is loaded once per process): the atlas
with its shipped importance estimator, whose table starts loading at construction on a
daemon thread, (a) adding as soon as it is built (the add waits for what is left of the
load) and (b) adding once the load is done (an agent's embedding model takes longer to
load than the table); and (c) the reference, measured in the same run: the same
estimator behind a wrapper, so nothing preloads and the first add loads the table on
the caller's thread, as every first add did before. Also which thread loaded the table.
Run: ``python -m benchmarks.first_add_bench``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 20.0
"""The first add once the atlas is ready, wall ms (a warm add is well under 1 ms)."""

_CHILD = """
import json, sys, threading, time
import wordfreq
from memory_core import ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.engine.importance import information_density
from memory_core.engine.preload import wait_word_frequencies

loads = []
real = wordfreq.get_frequency_list
def recording(*args, **kwargs):
    loads.append(threading.current_thread().name)
    return real(*args, **kwargs)
wordfreq.get_frequency_list = recording

case = sys.argv[1]
importance = (lambda text, meta: information_density(text, meta)) if case == "reference" else "density"
started = time.perf_counter()
atlas = ElasticMemoryAtlas(embedder=HashingEmbedder(), clock=ManualClock(0.0), importance=importance)
built = time.perf_counter() - started
if case == "ready":
    wait_word_frequencies()
ready = time.perf_counter() - started
started = time.perf_counter()
atlas.add("I went to the LGBTQ support group in Boston yesterday", session_id="s")
first = time.perf_counter() - started
warm = []
for i in range(50):
    started = time.perf_counter()
    atlas.add(f"Caroline painted a lake at sunrise number {i} for the charity show", session_id="s")
    warm.append(time.perf_counter() - started)
warm.sort()
print(json.dumps({"case": case, "construct_ms": built * 1e3, "ready_ms": ready * 1e3,
                  "first_add_ms": first * 1e3, "warm_add_p50_ms": warm[len(warm) // 2] * 1e3,
                  "loaded_by": loads}))
"""

CASES = ("immediately", "ready", "reference")


def first_add_costs() -> dict[str, Any]:
    """One fresh interpreter per case; wall times."""
    out: dict[str, Any] = {"target_ms": TARGET_MS}
    for case in CASES:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, case],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        out[case] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def lines(result: dict[str, Any]) -> list[str]:
    now, ready, ref = result["immediately"], result["ready"], result["reference"]
    return [
        "Each case in a fresh interpreter, wall ms (`benchmarks/first_add_bench.py`):",
        "",
        "| case | first add | warm add p50 | table loaded by |",
        "|---|---:|---:|---|",
        f"| add once the atlas is ready (table preloaded at construction, "
        f"{ready['ready_ms']:.0f} ms after it) | {ready['first_add_ms']:.2f} | "
        f"{ready['warm_add_p50_ms']:.3f} | {', '.join(ready['loaded_by'])} |",
        f"| add right after construction (waits for the rest of the preload) | "
        f"{now['first_add_ms']:.1f} | {now['warm_add_p50_ms']:.3f} | "
        f"{', '.join(now['loaded_by'])} |",
        f"| reference: no preload (the estimator wrapped), as before | "
        f"{ref['first_add_ms']:.1f} | {ref['warm_add_p50_ms']:.3f} | "
        f"{', '.join(ref['loaded_by'])} |",
    ]


if __name__ == "__main__":
    result = first_add_costs()
    print("\n".join(lines(result)))
