"""Vector inserts left to the insert worker (engine/pending.py) with the real MiniLM model
and a real HNSW index, the worker running as it does in an agent's process (no fakes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import faiss
import numpy as np
import pytest
from support.sample_texts import sample_turns

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock, MiniLMEmbedder
from memory_core.engine.apply import apply_events, recording
from memory_core.engine.events import AtlasEvent
from memory_core.testing import atlas_differences

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
THRESHOLD = 150


def _atlas(embedder: MiniLMEmbedder) -> ElasticMemoryAtlas:
    config = AtlasConfig(hnsw_threshold=THRESHOLD, max_nodes=400, memory_watermark=1.0)
    return ElasticMemoryAtlas(config, embedder=embedder, clock=ManualClock(1_700_000_000.0))


def _top(atlas: ElasticMemoryAtlas, text: str, vector: object) -> list[tuple[str, float]]:
    hits = atlas.retrieve(text, top_k=8, session_id="s", query_embedding=vector, reinforce=False)
    return [(hit.node.id, hit.score) for hit in hits]


def test_real_text_matches_an_insert_per_add_with_the_worker_running() -> None:
    """Sample-session turns past the HNSW threshold, the capacity evicting as they come:
    every add (merges included) and retrieve, the graph, the relations and a follower's
    copy match an atlas that inserts at once."""
    embedder = MiniLMEmbedder()
    turns = sample_turns()[:520]
    vectors = embedder.embed(turns)
    deferred, at_once, follower = (_atlas(embedder) for _ in range(3))
    start = THRESHOLD + 10
    for atlas in (deferred, at_once, follower):
        atlas.add_many(turns[:start], session_id="s", embeddings=vectors[:start])
    events: list[AtlasEvent] = []
    deferred.subscribe(recording(deferred, events.append))
    for i in range(start, len(turns)):
        got = deferred.add(turns[i], session_id="s", embedding=vectors[i])
        want = at_once.add_many([turns[i]], session_id="s", embeddings=vectors[i : i + 1])[0]
        assert got.id == want.id
        if i % 9 == 0:
            j = (i * 7) % i
            assert _top(deferred, turns[j], vectors[j]) == _top(at_once, turns[j], vectors[j])
    deferred.settle()
    graphs = [atlas._s.vectors.graph() for atlas in (deferred, at_once)]
    assert graphs[0] is not None and graphs[1] is not None
    for name in ("levels", "neighbors"):
        np.testing.assert_array_equal(
            *(faiss.vector_to_array(getattr(graph[0].hnsw, name)) for graph in graphs)
        )
    assert list(deferred._s.edges.all_relations()) == list(at_once._s.edges.all_relations())
    assert not atlas_differences(at_once, deferred)
    apply_events(follower, events)
    assert not atlas_differences(deferred, follower)


INSERTING = """
import os, signal, time
import faiss, numpy as np
from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder
from memory_core.engine.index import VectorIndex

rng = np.random.default_rng(0)
rows = rng.standard_normal((31, 32)).astype(np.float32)
rows /= np.linalg.norm(rows, axis=1, keepdims=True)
atlas = ElasticMemoryAtlas(AtlasConfig(hnsw_threshold=20), embedder=HashingEmbedder(32))
texts = [f"note {chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(30)]
atlas.add_many(texts, session_id="s", embeddings=rows[:30])
started = []
data = rng.random((INSERT_ROWS, 64), dtype=np.float32)
add = VectorIndex.add


def long_add(self, ids, vectors):  # an insert that stays inside FAISS for a while
    started.append(True)
    faiss.IndexHNSWFlat(64, 16).add(data)
    add(self, ids, vectors)


VectorIndex.add = long_add
atlas.add("the valve on the north tank leaks", session_id="s", embedding=rows[30])
while not started:
    time.sleep(0.001)
"""
"""A child process's script up to the moment its atlas's insert worker is inside FAISS
(``INSERT_ROWS`` rows of work: how long it stays there)."""

CHILD = INSERTING.replace("INSERT_ROWS", "20_000")


def test_exit_while_the_worker_is_inside_faiss_is_clean() -> None:
    """The interpreter exits while the worker inserts: it waits for that insert (a daemon
    thread inside FAISS during finalisation aborts the process)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "terminate called" not in done.stderr


FORKING = (
    INSERTING.replace("INSERT_ROWS", "3_000")
    + """pid = os.fork()
if pid == 0:  # the child: its copy of the atlas must answer
    VectorIndex.add = add
    atlas.retrieve("valve", top_k=3, session_id="s")
    os._exit(0)
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        raise SystemExit(os.waitstatus_to_exitcode(status))
    time.sleep(0.01)
os.kill(pid, signal.SIGKILL)
raise SystemExit("the forked child hung on the atlas lock")
"""
)


def test_a_fork_while_the_worker_inserts_leaves_the_child_a_usable_atlas() -> None:
    """A process forks while the worker is inside an insert: the fork waits for it, so the
    child does not inherit an atlas lock held by a thread it does not have."""
    done = subprocess.run(
        [sys.executable, "-c", FORKING], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
