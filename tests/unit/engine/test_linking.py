"""An add's links left to the link worker (engine/linking.py): over its HNSW threshold an
atlas behaves as if every add had linked at once, whoever makes the links and when."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_core import ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.engine import linking
from memory_core.engine.apply import apply_events, recording
from memory_core.engine.events import AtlasEvent, MemoryAdded, MemoryLinked
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
    """A link worker that is never woken."""

    def wake(self, pending: linking.PendingQueue) -> None:
        """Leave the links to the next call that takes the lock."""


@pytest.fixture
def no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker never wakes: pending links wait for the next call that takes the lock."""
    monkeypatch.setattr(linking, "_WORKER", _AsleepWorker())


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


def _relations(atlas: ElasticMemoryAtlas) -> list[tuple[int, int, Any, float]]:
    """Every relation in the edge store's own order (positions matter to its sums)."""
    atlas.settle()
    return list(atlas._s.edges.all_relations())


@pytest.mark.usefixtures("no_worker")
def test_deferred_links_are_those_of_a_synchronous_add(make_atlas: AtlasFactory) -> None:
    """Real text: every add (merges included), every retrieve after it and the relations,
    in the edge store's order, match an atlas that links at once; a follower applying the
    deferred atlas's events ends equal to it."""
    deferred, at_once = _pair(make_atlas, max_nodes=150)
    follower, _ = make_atlas(hnsw_threshold=THRESHOLD, max_nodes=150)
    follower.add_many(_turns(60), session_id="s")
    events: list[AtlasEvent] = []
    deferred.subscribe(recording(deferred, events.append))
    turns = _turns(200)[60:]
    for i, text in enumerate(turns):
        got = deferred.add(text, session_id="s")
        assert got.id == _at_once(at_once, text)
        if i % 7 == 0:
            assert _top(deferred, turns[i // 2]) == _top(at_once, turns[i // 2])
    deferred.settle()
    assert deferred.stats()["links_deferred"] > 40  # most adds deferred theirs
    assert deferred.stats()["late_duplicates"] == 0
    assert len(deferred) == len(at_once) == 150  # capacity evictions happened meanwhile
    assert _relations(deferred) == _relations(at_once)
    assert not atlas_differences(at_once, deferred)
    apply_events(follower, events)
    assert not atlas_differences(deferred, follower)
    assert _relations(follower) == _relations(deferred)
    invariants(deferred)


@pytest.mark.usefixtures("no_worker")
def test_every_call_settles_the_pending_links_first(make_atlas: AtlasFactory) -> None:
    deferred, at_once = _pair(make_atlas)
    text = "Did the pump station's backup generator pass its Tuesday test?"
    node = deferred.add(text, session_id="s")
    _at_once(at_once, text)
    assert deferred._links.pending is not None
    assert deferred.edges(node.id) == at_once.edges(node.id) != []
    assert deferred._links.pending is None
    calls = (
        lambda a: a.retrieve(text, top_k=3, session_id="s"),
        lambda a: a.get(a.nodes()[0].id),
        lambda a: a.stats(),
        lambda a: a.decay(),
    )
    for call, other in zip(calls, _turns(70)[60:], strict=False):
        deferred.add(other, session_id="s")
        assert deferred._links.pending is not None
        call(deferred)
        assert deferred._links.pending is None


@pytest.mark.usefixtures("no_worker")
def test_a_pending_memory_deleted_or_purged_leaves_no_relation(make_atlas: AtlasFactory) -> None:
    deferred, at_once = _pair(make_atlas)
    for atlas, add in ((deferred, ElasticMemoryAtlas.add), (at_once, None)):
        first = (
            add(atlas, "Tank level alarms go to the on-call phone.", session_id="s").id
            if add
            else _at_once(atlas, "Tank level alarms go to the on-call phone.")
        )
        atlas.delete(first)
        other = (
            add(atlas, "The night shift logs the tank level.", session_id="t").id
            if add
            else _at_once(atlas, "The night shift logs the tank level.", "t")
        )
        atlas.end_session("t", mode="purge")
        assert first not in atlas and other not in atlas
        invariants(atlas)
    assert _relations(deferred) == _relations(at_once)


@pytest.mark.usefixtures("no_worker")
def test_a_snapshot_holds_the_pending_links(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    deferred, at_once = _pair(make_atlas)
    text = "Delivery of valve gaskets arrives at dock 3 on Friday."
    deferred.add(text, session_id="s")
    _at_once(at_once, text)
    deferred.save_snapshot(tmp_path / "deferred.npz")
    loaded = ElasticMemoryAtlas.load_snapshot(
        tmp_path / "deferred.npz", embedder=HashingEmbedder(DIM), clock=ManualClock(START)
    )
    assert not atlas_differences(at_once, loaded)


@pytest.mark.usefixtures("no_worker")
def test_the_add_settles_before_its_own_fold(make_atlas: AtlasFactory) -> None:
    """A family fold inside the add inserts a summary and removes lines: the links are
    made before either, as a synchronous add makes them."""
    deferred, at_once = _pair(make_atlas, family_fold_at=3)
    for i in range(5):
        text = f"Sensor {i} reads {20 + i} degrees at 0{i}:00."
        deferred.add(text, session_id="s")
        _at_once(at_once, text)
    deferred.settle()
    assert at_once.stats()["by_kind"]["summary"] >= 1
    assert _relations(deferred) == _relations(at_once)


def test_a_near_duplicate_merges_on_the_callers_path(make_atlas: AtlasFactory) -> None:
    deferred, _ = _pair(make_atlas)
    old = deferred.nodes("s")[10]
    merged = deferred.add(old.content, session_id="s")
    assert merged.id == old.id
    assert deferred._links.pending is None
    assert deferred.stats()["links_deferred"] == 0


def test_an_exact_atlas_never_defers(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas()
    for text in _turns(30):
        atlas.add(text, session_id="s")
        assert atlas._links.pending is None
    assert atlas._s.vectors.kind == "flat" and atlas.stats()["links_deferred"] == 0


def test_the_worker_makes_the_links_without_another_call(make_atlas: AtlasFactory) -> None:
    deferred, at_once = _pair(make_atlas)
    text = "Did the pump station's backup generator pass its Tuesday test?"
    node = deferred.add(text, session_id="s")
    _at_once(at_once, text)
    waited = time.monotonic()
    while deferred._links.pending is not None:
        assert time.monotonic() - waited < 10, "the worker never settled the links"
        time.sleep(0.001)
    assert deferred.edges(node.id) == at_once.edges(node.id)


def test_two_threads_adding_and_reading_see_every_link(make_atlas: AtlasFactory) -> None:
    """Two agents write and read one atlas while the worker makes links: each finds what
    it has just written, and the relations end those of one synchronous atlas fed the
    same adds in the order the lock let them in."""
    deferred, at_once = _pair(make_atlas)
    order: list[str] = []
    errors: list[BaseException] = []

    def agent(texts: list[str]) -> None:
        try:
            for text in texts:
                with deferred.lock:
                    deferred.add(text, session_id="s")
                    order.append(text)
                assert _top(deferred, text, 3)
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
    deferred.settle()
    assert _relations(deferred) == _relations(at_once)


def test_a_failed_search_is_counted_and_breaks_no_later_call(
    make_atlas: AtlasFactory, monkeypatch: pytest.MonkeyPatch, no_worker: None
) -> None:
    deferred, _ = _pair(make_atlas)

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("index failed")

    deferred.add("Did the backup generator pass its test?", session_id="s")
    monkeypatch.setattr(linking, "nearest", broken)
    assert deferred.stats()["nodes"] == 61  # the call that settled went on
    assert deferred._s.counters["link_failures"] == 1


@pytest.mark.usefixtures("no_worker")
def test_deferred_links_travel_as_linked_events(make_atlas: AtlasFactory) -> None:
    deferred, _ = _pair(make_atlas)
    events: list[AtlasEvent] = []
    deferred.subscribe(events.append)
    node = deferred.add("Did the pump station's backup generator pass?", session_id="s")
    added = [e for e in events if isinstance(e, MemoryAdded)]
    assert [e.node_id for e in added] == [node.id] and added[0].links == ()
    deferred.settle()
    linked = [e for e in events if isinstance(e, MemoryLinked)]
    assert linked and {e.relation for e in linked} >= {"before"}
    made = {(e.node_id, e.target_id, e.relation) for e in linked}
    assert made == {(e.source_id, e.target_id, e.relation.value) for e in deferred.edges(node.id)}
    assert np.all([e.at == START for e in linked])


@pytest.mark.usefixtures("no_worker")
def test_the_add_settles_before_its_own_eviction(make_atlas: AtlasFactory) -> None:
    """The add's capacity check evicts the session's previous memory (the weakest): its
    ``before`` relation is made first and removed with it, as a synchronous add does."""
    deferred, at_once = _pair(make_atlas, max_nodes=61, working_memory_size=0)
    for atlas in (deferred, at_once):
        atlas.add("Tank level alarms go to the on-call phone.", session_id="s", importance=0.0)
        atlas.settle()
    weak = deferred.nodes("s")[-1].id
    text = "Did the pump station's backup generator pass its Tuesday test?"
    deferred.add(text, session_id="s")
    _at_once(at_once, text)
    assert weak not in deferred and weak not in at_once
    assert _relations(deferred) == _relations(at_once)
    invariants(deferred)
