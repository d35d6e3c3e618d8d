"""An add's HNSW insert left to the insert worker (engine/pending.py): over its HNSW
threshold an atlas behaves as if every add had inserted at once, whoever makes the insert
and when: the same graph, ids, results, relations and follower copies."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pytest

from memory_core import ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.engine import pending
from memory_core.engine.apply import apply_events, recording
from memory_core.engine.events import AtlasEvent, MemoryEvicted
from memory_core.testing import atlas_differences
from tests.unit.engine.conftest import DIM, START, AtlasFactory, invariants

ROOT = Path(__file__).resolve().parents[3]
THRESHOLD = 40


def _turns(limit: int) -> list[str]:
    """Real conversation text: the sample sessions' turns, each once, in file order."""
    texts: list[str] = []
    for path in sorted((ROOT / "sample_sessions").glob("*.json")):
        for session in json.loads(path.read_text())["sessions"]:
            texts.extend(turn["text"] for turn in session["turns"])
    return list(dict.fromkeys(texts))[:limit]


class _AsleepWorker:
    """An insert worker that is never woken."""

    def wake(self, waiting: pending.Pending) -> None:
        """Leave the insert to the next call that takes the lock."""


@pytest.fixture
def no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker never wakes: a pending insert waits for the next call."""
    monkeypatch.setattr(pending, "_WORKER", _AsleepWorker())


def _pair(make_atlas: AtlasFactory, **cfg: Any) -> tuple[ElasticMemoryAtlas, ElasticMemoryAtlas]:
    """Two atlases over their HNSW threshold holding the same 60 turns."""
    pair = []
    for _ in range(2):
        atlas, _ = make_atlas(hnsw_threshold=THRESHOLD, **cfg)
        atlas.add_many(_turns(60), session_id="s")
        assert atlas._s.vectors.kind == "hnsw"
        pair.append(atlas)
    return pair[0], pair[1]


def _at_once(atlas: ElasticMemoryAtlas, text: str, session_id: str = "s") -> str:
    """A synchronous add (``add_many`` never defers)."""
    return atlas.add_many([text], session_id=session_id)[0].id


def _top(atlas: ElasticMemoryAtlas, text: str, k: int = 8) -> list[tuple[str, float]]:
    hits = atlas.retrieve(text, top_k=k, session_id="s", reinforce=False)
    return [(hit.node.id, hit.score) for hit in hits]


def _graph(atlas: ElasticMemoryAtlas) -> tuple[np.ndarray, ...]:
    """The HNSW graph's arrays and labels, as every call sees them."""
    atlas.settle()
    graph = atlas._s.vectors.graph()
    assert graph is not None
    hnsw = graph[0].hnsw
    arrays = (faiss.vector_to_array(getattr(hnsw, name)) for name in ("levels", "neighbors"))
    return (*arrays, graph[1])


def _same(deferred: ElasticMemoryAtlas, at_once: ElasticMemoryAtlas) -> None:
    for got, want in zip(_graph(deferred), _graph(at_once), strict=True):
        np.testing.assert_array_equal(got, want)
    assert list(deferred._s.edges.all_relations()) == list(at_once._s.edges.all_relations())
    assert not atlas_differences(at_once, deferred)
    invariants(deferred)


@pytest.mark.usefixtures("no_worker")
def test_deferred_inserts_build_the_graph_of_an_insert_per_add(make_atlas: AtlasFactory) -> None:
    """Real text, capacity evictions as the adds come: every add (merges included), every
    retrieve after it, the graph, the relations and a follower's copy match an atlas that
    inserts at once."""
    deferred, at_once = _pair(make_atlas, max_nodes=150)
    follower, _ = make_atlas(hnsw_threshold=THRESHOLD, max_nodes=150)
    follower.add_many(_turns(60), session_id="s")
    events: list[AtlasEvent] = []
    deferred.subscribe(recording(deferred, events.append))
    turns = _turns(200)[60:]
    for i, text in enumerate(turns):
        assert deferred.add(text, session_id="s").id == _at_once(at_once, text)
        if i % 7 == 0:
            assert _top(deferred, turns[i // 2]) == _top(at_once, turns[i // 2])
    assert len(deferred) == len(at_once) == 150
    _same(deferred, at_once)
    apply_events(follower, events)
    assert not atlas_differences(deferred, follower)


@pytest.mark.usefixtures("no_worker")
def test_every_call_makes_the_pending_insert_first(make_atlas: AtlasFactory) -> None:
    deferred, _ = _pair(make_atlas)
    calls = (
        lambda a: a.retrieve("backup generator", top_k=3, session_id="s"),
        lambda a: a.get(a.nodes()[0].id, with_embedding=True),
        lambda a: a.stats(),
        lambda a: a.decay(),
        lambda a: a.similar(a.nodes()[0].id),
    )
    for call, text in zip(calls, _turns(70)[60:], strict=False):
        node = deferred.add(text, session_id="s")
        assert deferred._pending.insert is not None
        assert node.id not in set(deferred._s.vectors.ids().tolist())  # private, no lock
        call(deferred)
        assert deferred._pending.insert is None
        assert node.id in deferred and deferred.embedding_of(node.id).shape == (DIM,)


@pytest.mark.usefixtures("no_worker")
def test_a_pending_memory_deleted_or_purged_is_never_found(make_atlas: AtlasFactory) -> None:
    deferred, at_once = _pair(make_atlas)
    texts = ("Tank level alarms go to the on-call phone.", "The night shift logs the tank level.")
    for atlas in (deferred, at_once):
        if atlas is deferred:
            first = atlas.add(texts[0], session_id="s").id
            atlas.delete(first)
            other = atlas.add(texts[1], session_id="t").id
        else:
            first = _at_once(atlas, texts[0])
            atlas.delete(first)
            other = _at_once(atlas, texts[1], "t")
        atlas.end_session("t", mode="purge")
        assert first not in atlas and other not in atlas
        assert first not in [node for node, _ in _top(atlas, "tank level alarms", 20)]
    _same(deferred, at_once)


@pytest.mark.usefixtures("no_worker")
def test_a_snapshot_holds_the_pending_vector(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    deferred, at_once = _pair(make_atlas)
    text = "Delivery of valve gaskets arrives at dock 3 on Friday."
    deferred.add(text, session_id="s")
    _at_once(at_once, text)
    deferred.save_snapshot(tmp_path / "deferred.npz")
    loaded = ElasticMemoryAtlas.load_snapshot(
        tmp_path / "deferred.npz", embedder=HashingEmbedder(DIM), clock=ManualClock(START)
    )
    _same(loaded, at_once)


@pytest.mark.usefixtures("no_worker")
def test_the_add_inserts_before_its_own_fold_and_eviction(make_atlas: AtlasFactory) -> None:
    """A family fold inside the add inserts a summary's vector and removes lines; a capacity
    eviction removes vectors: the add's own vector goes in first, as a synchronous add's."""
    deferred, at_once = _pair(make_atlas, family_fold_at=3, max_nodes=62)
    for i in range(6):
        text = f"Sensor {i} reads {20 + i} degrees at 0{i}:00."
        deferred.add(text, session_id="s")
        _at_once(at_once, text)
    assert at_once.stats()["by_kind"]["summary"] >= 1
    assert at_once.stats()["evicted"].get("capacity", 0) >= 1
    _same(deferred, at_once)


def test_an_exact_atlas_never_defers(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas()
    for text in _turns(30):
        atlas.add(text, session_id="s")
        assert atlas._pending.insert is None
    assert atlas._s.vectors.kind == "flat"


@pytest.mark.usefixtures("no_worker")
def test_the_pending_vector_is_the_one_given(make_atlas: AtlasFactory) -> None:
    """A caller's float32 array is used as given; changing it after the add returns does
    not change what is inserted."""
    deferred, _ = _pair(make_atlas)
    vector = np.zeros(DIM, dtype=np.float32)
    vector[3] = 1.0
    node = deferred.add("A unit vector along the fourth axis.", session_id="s", embedding=vector)
    vector[:] = np.float32(1.0 / np.sqrt(DIM))
    got = deferred.embedding_of(node.id)
    assert got[3] == 1.0 and np.count_nonzero(got) == 1


def test_the_worker_makes_the_insert_without_another_call(make_atlas: AtlasFactory) -> None:
    deferred, at_once = _pair(make_atlas)
    text = "Did the pump station's backup generator pass its Tuesday test?"
    deferred.add(text, session_id="s")
    _at_once(at_once, text)
    waited = time.monotonic()
    while deferred._pending.insert is not None:
        assert time.monotonic() - waited < 10, "the worker never made the insert"
        time.sleep(0.001)
    _same(deferred, at_once)


def test_two_threads_adding_and_reading_find_what_they_wrote(make_atlas: AtlasFactory) -> None:
    """Two agents write and read one atlas while the worker inserts: each finds what it has
    just written, and the graph ends that of one synchronous atlas fed the same adds in
    the order the lock let them in."""
    deferred, at_once = _pair(make_atlas)
    order: list[str] = []
    errors: list[BaseException] = []

    def agent(texts: list[str]) -> None:
        try:
            for text in texts:
                with deferred.lock:
                    node = deferred.add(text, session_id="s")
                    order.append(text)
                assert node.id in [hit for hit, _ in _top(deferred, text, 3)]
        except BaseException as exc:  # handed to the main thread
            errors.append(exc)

    turns = _turns(140)[60:]
    threads = [threading.Thread(target=agent, args=(turns[i::2],)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for text in order:
        _at_once(at_once, text)
    _same(deferred, at_once)


@pytest.mark.usefixtures("no_worker")
def test_a_refused_insert_takes_the_memory_out_and_breaks_no_later_call(
    make_atlas: AtlasFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    deferred, _ = _pair(make_atlas)
    events: list[AtlasEvent] = []
    deferred.subscribe(events.append)
    node = deferred.add("Did the backup generator pass its test?", session_id="s")

    def refuse(*_: Any) -> None:
        raise RuntimeError("index failed")

    monkeypatch.setattr(type(deferred._s.vectors), "add", refuse)
    assert deferred.stats()["nodes"] == 60  # the call that made it went on, without it
    assert node.id not in deferred and deferred._s.counters["insert_failures"] == 1
    assert [e.node_id for e in events if isinstance(e, MemoryEvicted)] == [node.id]
    invariants(deferred)


class _SlowVectors:
    """A vector index whose insert takes ``seconds`` (a loaded box's long HNSW insert)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.inserting = threading.Event()

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.inserting.set()
        time.sleep(self.seconds)


def _pending_over(vectors: _SlowVectors) -> pending.Pending:
    """A pending-insert holder over a fake state whose vector index is ``vectors``."""
    state: Any = type("State", (), {"vectors": vectors})()
    return pending.Pending(state)


def _wait_for(vectors: pending.Pending) -> None:
    """Give ``vectors`` an insert to make (whoever takes its lock next makes it)."""
    vectors.insert = pending.PendingInsert(0, "n", np.zeros(DIM, dtype=np.float32))


def test_a_fork_waits_for_an_insert_longer_than_a_second() -> None:
    """Before a fork the worker's insert under way is waited for, however long it takes
    (a one-second limit let a fork on a loaded box go ahead mid-insert: the child hung)."""
    worker, vectors = pending._Worker(), _SlowVectors(1.3)
    waiting = _pending_over(vectors)
    _wait_for(waiting)
    worker.wake(waiting)
    assert vectors.inserting.wait(10), "the worker never began the insert"
    started = time.monotonic()
    worker.pause()
    try:
        free = waiting.lock.acquire(blocking=False)  # held by no thread: the insert is over
        assert free, f"the fork went ahead mid-insert, {time.monotonic() - started:.2f} s in"
        waiting.lock.release()
    finally:
        worker.resume()
        worker.stop()


def test_a_fork_by_the_holder_of_the_awaited_lock_does_not_wait() -> None:
    """The worker waiting for the atlas lock the forking thread holds is not waited for
    (it would wait forever); it holds no atlas lock, so the child inherits none of its."""
    worker, vectors = pending._Worker(), _SlowVectors(0.0)
    waiting = _pending_over(vectors)
    with waiting.lock:
        _wait_for(waiting)  # set under the lock: taking it would make the insert
        worker.wake(waiting)
        waited = time.monotonic()
        while worker._awaited is not waiting.lock:
            assert time.monotonic() - waited < 10, "the worker never waited for the lock"
            time.sleep(0.001)
        started = time.monotonic()
        worker.pause()
        assert time.monotonic() - started < 1.0
        worker.resume()
    assert vectors.inserting.wait(10), "the worker never made the insert"
    worker.stop()
