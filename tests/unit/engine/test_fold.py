"""HNSW inserts folded in after the add (engine/fold.py): an atlas over its HNSW threshold
behaves as if every add had inserted at once, whatever the folding thread has done."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import faiss
import numpy as np

from memory_core import ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.engine import fold
from tests.unit.engine.conftest import DIM, START, AtlasFactory

ROOT = Path(__file__).resolve().parents[3]
THRESHOLD = 40


def _turns(limit: int) -> list[str]:
    """Real conversation text: the sample sessions' turns, each once, in file order."""
    texts: list[str] = []
    for path in sorted((ROOT / "sample_sessions").glob("*.json")):
        for session in json.loads(path.read_text())["sessions"]:
            texts.extend(turn["text"] for turn in session["turns"])
    return list(dict.fromkeys(texts))[:limit]


def _filled(make_atlas: AtlasFactory, n: int = 60) -> ElasticMemoryAtlas:
    atlas, _ = make_atlas(hnsw_threshold=THRESHOLD)
    for text in _turns(n):
        atlas.add(text, session_id="s")
    atlas._s.vectors.fold()
    assert atlas._s.vectors.kind == "hnsw"
    return atlas


def _top(
    atlas: ElasticMemoryAtlas, text: str, k: int = 5, session_id: str = "s"
) -> list[tuple[str, float]]:
    hits = atlas.retrieve(text, top_k=k, session_id=session_id, reinforce=False)
    return [(hit.node.id, hit.score) for hit in hits]


def test_a_memory_is_retrieved_before_its_insert(make_atlas: AtlasFactory) -> None:
    atlas = _filled(make_atlas)
    with fold.paused():
        node = atlas.add(
            "The pump station's backup generator is tested every Tuesday.", session_id="s"
        )
        assert atlas._s.vectors.pending == 1
        assert _top(atlas, "backup generator tested Tuesday")[0][0] == node.id
        assert atlas.get(node.id, with_embedding=True).embedding is not None
    atlas._s.vectors.fold()
    assert atlas._s.vectors.pending == 0
    assert _top(atlas, "backup generator tested Tuesday")[0][0] == node.id


def test_a_snapshot_holds_pending_memories(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    """Saved while a memory waits for its insert: the file's graph is the one an insert per
    add builds (a twin that folded after every add saves the same graph), and the loaded
    atlas finds it and the others."""
    atlas, twin = _filled(make_atlas), _filled(make_atlas)
    extra = [f"Delivery {i} of valve gaskets arrives at dock {i % 3}." for i in range(6)]
    with fold.paused():
        for text in extra:
            atlas.add(text, session_id="s")
            twin.add(text, session_id="s")
            twin._s.vectors.fold()
        assert atlas._s.vectors.pending == 1
        atlas.save_snapshot(tmp_path / "pending.npz")
        twin.save_snapshot(tmp_path / "twin.npz")
    loaded, again = (
        ElasticMemoryAtlas.load_snapshot(
            tmp_path / name, embedder=HashingEmbedder(DIM), clock=ManualClock(START)
        )
        for name in ("pending.npz", "twin.npz")
    )
    assert loaded._s.vectors.pending == 0 and len(loaded) == len(atlas)
    for text in extra:
        assert _top(loaded, text) == _top(again, text) == _top(twin, text)
    graphs = [x._s.vectors.graph() for x in (loaded, again)]
    assert graphs[0] is not None and graphs[1] is not None
    for name in ("levels", "neighbors"):
        np.testing.assert_array_equal(
            *(faiss.vector_to_array(getattr(g[0].hnsw, name)) for g in graphs)
        )


def test_deleted_and_purged_pending_memories_are_never_found(make_atlas: AtlasFactory) -> None:
    atlas = _filled(make_atlas)
    query = "tank level at 2 am night shift"
    with fold.paused():
        kept = atlas.add("Tank level alarms go to the on-call phone.", session_id="s")
        gone = atlas.add("The night shift logs the tank level at 2 am.", session_id="s")
        assert atlas._s.vectors.pending == 1  # gone's
        assert _top(atlas, query, 10)[0][0] == gone.id
        atlas.delete(gone.id)
        assert atlas._s.vectors.pending == 1
        found = [node for node, _ in _top(atlas, query, 10)]
        assert gone.id not in found and kept.id in found
        other = atlas.add("The tank level sensor in the other plant at 2 am.", session_id="t")
        assert _top(atlas, query, 10, session_id="t")[0][0] == other.id
        atlas.end_session("t", mode="purge")
        assert atlas._s.vectors.pending == 1  # other's
        found = [node for node, _ in _top(atlas, query, 10)]
        assert gone.id not in found and other.id not in found and kept.id in found
        _, slots = atlas._s.vectors.search(atlas.embedder.embed(["tank level"])[0], 80)
        assert len(slots) == len(atlas)  # every live memory, none of the deleted ones
    atlas._s.vectors.fold()
    assert atlas._s.vectors.tombstones >= 2  # inserted for the graph's labels, still deleted
    found = [node for node, _ in _top(atlas, "tank level at 2 am night shift", 10)]
    assert gone.id not in found and other.id not in found and kept.id in found


def test_adds_and_retrieves_from_two_threads_see_every_memory(make_atlas: AtlasFactory) -> None:
    """Two agents write and read one atlas while the folding thread inserts: each finds
    what it has just written, and afterwards every memory is in the graph."""
    atlas = _filled(make_atlas)
    errors: list[BaseException] = []

    turns = _turns(140)[60:]

    def agent(texts: list[str]) -> None:
        try:
            for text in texts:
                node = atlas.add(text, session_id="s")
                assert _top(atlas, text, 3)[0][0] == node.id
        except BaseException as exc:  # handed to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(turns[i::2],)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    atlas._s.vectors.fold()
    vectors = atlas._s.vectors
    assert vectors.pending == 0 and len(vectors) == len(atlas) == 140
    graph = vectors.graph()
    assert graph is not None and int(graph[0].ntotal) == vectors.tombstones + len(atlas)


def test_results_are_those_of_an_insert_per_add_on_real_text(make_atlas: AtlasFactory) -> None:
    """Real conversation text, an atlas over its HNSW threshold: every add (merges and
    links included) and every retrieve right after it gives the same ids, scores and
    edges whether the graph insert waits or is done at once."""
    deferred, _ = make_atlas(hnsw_threshold=THRESHOLD)
    at_once, _ = make_atlas(hnsw_threshold=THRESHOLD)
    turns = _turns(260)
    with fold.paused():  # each add's vector pending until the next add
        for i, text in enumerate(turns):
            got = deferred.add(text, session_id="s")
            want = at_once.add(text, session_id="s")
            at_once._s.vectors.fold()
            assert got.id == want.id and got.weight == want.weight
            if i % 5 == 0 and i > THRESHOLD:
                query = turns[(i * 7) % (i + 1)]
                assert _top(deferred, query, 8) == _top(at_once, query, 8)
        assert deferred._s.vectors.pending > 0
    assert deferred.edges() == at_once.edges()
