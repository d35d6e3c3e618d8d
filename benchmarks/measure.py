"""Timers, percentiles and memory probes, plus a note of the machine the numbers came from."""

from __future__ import annotations

import gc
import os
import platform
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psutil

from memory_core.engine import overlap


def call_cpu_ns() -> int:
    """This thread's CPU time plus the engine's helper thread's (``engine/overlap.py``:
    a retrieve hands one of its two searches to it): the difference over a call is the CPU the
    call cost, wherever it ran, and other threads of the process (a checkpoint writer)
    stay out of it."""
    return time.thread_time_ns() + overlap.helper_cpu_ns()


@dataclass(slots=True)
class Samples:
    """Latencies of one operation, in nanoseconds."""

    op: str
    impl: str
    size: int
    ns: list[int] = field(default_factory=list)
    cpu_ns: list[int] = field(default_factory=list)
    note: str = ""

    def time(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` once, keeping wall time and its CPU time (``call_cpu_ns``: immune to
        other processes competing for the cores)."""
        cpu = call_cpu_ns()
        start = time.perf_counter_ns()
        out = fn()
        self.ns.append(time.perf_counter_ns() - start)
        self.cpu_ns.append(call_cpu_ns() - cpu)
        return out

    def percentile_ms(self, q: float, *, cpu: bool = False) -> float:
        values = np.asarray(self.cpu_ns if cpu else self.ns, dtype=np.float64)
        return float(np.percentile(values, q)) / 1e6

    def summary(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "impl": self.impl,
            "size": self.size,
            "n": len(self.ns),
            "p50_ms": self.percentile_ms(50),
            "p99_ms": self.percentile_ms(99),
            "mean_ms": float(np.mean(self.ns)) / 1e6,
            "cpu_p50_ms": self.percentile_ms(50, cpu=True),
            "cpu_p99_ms": self.percentile_ms(99, cpu=True),
            "note": self.note,
        }


def fmt_ms(value: float) -> str:
    """Milliseconds for the report: three decimals below 10, one below 1,000, then whole."""
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:,.0f}"


def rss_bytes() -> int:
    gc.collect()
    return int(psutil.Process().memory_info().rss)


def traced_bytes(build: Callable[[], Any]) -> tuple[Any, int]:
    """Python-heap bytes (numpy included, FAISS's C++ heap not) retained by ``build()``."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    out = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return out, after - before


def machine() -> dict[str, Any]:
    """CPU, cores, RAM, load and library versions, for the report header."""
    import faiss
    import networkx

    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "numpy": np.__version__,
        "faiss": faiss.__version__,
        "networkx": networkx.__version__,
        "platform": platform.platform(),
    }
