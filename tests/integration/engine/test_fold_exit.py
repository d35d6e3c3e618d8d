"""A process that exits while the folding thread is inside FAISS ends cleanly.

The folding thread (engine/fold.py) is a daemon: at exit it may be in the middle of an
HNSW insert, and a thread still inside FAISS while the interpreter finalises and the
process exits makes it abort (SIGABRT, "terminate called without an active exception").
The engine waits for the insert under way at exit; without that wait this child aborts
every time on this build (checked by removing it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import time
import faiss, numpy as np
from memory_core.engine import fold
from memory_core.engine.index import VectorIndex

rng = np.random.default_rng(0)
rows = rng.standard_normal((21, 16)).astype(np.float32)
rows /= np.linalg.norm(rows, axis=1, keepdims=True)
index = VectorIndex(16, hnsw_threshold=10, m=8)
index.add(np.arange(20), rows[:20])  # HNSW from here on
started = []
data = rng.random((20_000, 64), dtype=np.float32)
insert = VectorIndex._insert


def long_insert(self, vectors, n):  # an insert that stays inside FAISS for a while
    started.append(True)
    faiss.IndexHNSWFlat(64, 16).add(data)
    insert(self, vectors, n)


VectorIndex._insert = long_insert
index.add(np.array([20]), rows[20:])  # pending
fold.fold_later(index)
while not started:
    time.sleep(0.001)
"""


def test_exit_during_an_insert_on_the_folding_thread_is_clean() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "terminate called" not in done.stderr
