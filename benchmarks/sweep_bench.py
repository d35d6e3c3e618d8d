"""Harness cost: the 50-trial Optuna sweep over every sample conversation, 2 workers.

Timed as a user runs it (``atlas sweep sample_sessions --trials 50 --workers 2
--storage sqlite:///... --embedder minilm``), in a child process so interpreter start,
Optuna's import, embedding (from the persistent cache after the first run) and the
worker processes are all counted. CPU time is the children's user + system time.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.replay_bench import SAMPLES

TRIALS = 50
WORKERS = 2
TARGET_SECONDS = 180.0


def sweep_costs(
    *, trials: int = TRIALS, workers: int = WORKERS, embedder: str = "minilm", paths: Path = SAMPLES
) -> dict[str, Any]:
    """Wall and CPU seconds of one ``atlas sweep`` run on a fresh SQLite study."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "memory_core.cli",
            "sweep",
            str(paths),
            "--trials",
            str(trials),
            "--workers",
            str(workers),
            "--storage",
            f"sqlite:///{Path(tmp) / 'sweep.sqlite'}",
            "--embedder",
            embedder,
            "--json",
        ]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = max((row["recall_at_k"] for row in result["pareto"]), default=None)
    return {
        "command": " ".join(["atlas", *cmd[3:]])
        .replace(tmp, "<tmp>")
        .replace(f"{SAMPLES.parent}/", ""),
        "trials": result["trials"],
        "workers": workers,
        "embedder": embedder,
        "conversations": len(sorted(paths.glob("*.json"))) if paths.is_dir() else 1,
        "seconds": wall,
        "cpu_seconds": cpu,
        "best_recall": best,
        "target_seconds": TARGET_SECONDS,
    }
