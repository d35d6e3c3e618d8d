"""Writes: base strength, auto-links, before/links_to edges, merging, vectors, validation."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_core import (
    ElasticMemoryAtlas,
    EmbeddingError,
    InputError,
    MemoryKind,
    MemoryStatus,
    NotFoundError,
    Relation,
)
from memory_core.engine.index import VectorIndex
from memory_core.testing import EventRecorder

from .conftest import DIM, AtlasFactory, CountingEmbedder, invariants, unit


def basis(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def with_cosine(c: float, axis: int) -> np.ndarray:
    """Unit vector with cosine ``c`` to basis(0); two such vectors have cosine c1*c2."""
    return c * basis(0) + math.sqrt(1.0 - c * c) * basis(axis)


def relations_of(atlas: ElasticMemoryAtlas, node_id: str, rel: Relation) -> dict[str, float]:
    out = {}
    for e in atlas.edges(node_id):
        if e.relation is rel:
            out[e.target_id if e.source_id == node_id else e.source_id] = e.strength
    return out


def state_fingerprint(atlas: ElasticMemoryAtlas) -> tuple[Any, ...]:
    return (
        len(atlas),
        atlas.sessions(),
        len(atlas.edges()),
        atlas.stats()["added"],
        [(n.id, n.strength, n.access_count) for n in atlas.nodes()],
    )


# ---------------------------------------------------------------- importance and strength
def test_importance_sets_base_strength(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(base_weight_min=0.6, base_weight_max=1.4, recency_gain=0.2)
    low = atlas.add("alpha", session_id="s", importance=0.0)
    high = atlas.add("omega", session_id="s", importance=1.0)
    mid = atlas.add("gamma", session_id="s", importance=0.5)
    assert (low.strength, high.strength, mid.strength) == pytest.approx((0.6, 1.4, 1.0))
    assert high.importance == 1.0
    # a fresh memory: strength + recency_gain / (0 h + 1), no frequency, association 0
    assert high.weight == pytest.approx(1.4 + 0.2)
    assert high.access_count == 0
    assert high.created_at == high.last_accessed_at == atlas.clock.now()


def test_default_importance_comes_from_the_estimator(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(importance="constant")
    assert atlas.add("anything at all", session_id="s").importance == 0.5

    def always_high(text: str, meta: object) -> float:
        return 0.9

    atlas, _ = make_atlas(importance=always_high, base_weight_min=0.6, base_weight_max=1.4)
    node = atlas.add("anything", session_id="s")
    assert node.importance == pytest.approx(0.9)
    assert node.strength == pytest.approx(0.6 + 0.9 * 0.8)
    with pytest.raises(InputError, match="density"):
        make_atlas(importance="nonexistent")


# ---------------------------------------------------------------- edges on write
def test_auto_links_at_most_max_above_threshold_same_session(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_auto_links=2, link_threshold=0.5, link_previous=False)
    a = atlas.add("a", session_id="s", embedding=with_cosine(0.9, 1))
    b = atlas.add("b", session_id="s", embedding=with_cosine(0.8, 2))
    c = atlas.add("c", session_id="s", embedding=with_cosine(0.7, 3))
    d = atlas.add("d", session_id="s", embedding=with_cosine(0.3, 4))
    other = atlas.add("e", session_id="elsewhere", embedding=with_cosine(0.95, 5))
    new = atlas.add("n", session_id="s", embedding=basis(0))
    links = relations_of(atlas, new.id, Relation.SIMILAR_TO)
    assert links == {a.id: pytest.approx(0.9, abs=1e-5), b.id: pytest.approx(0.8, abs=1e-5)}
    assert c.id not in links
    assert d.id not in links
    assert other.id not in links
    direction = [e for e in atlas.edges(new.id) if e.target_id == a.id]
    assert direction[0].source_id == new.id


def test_the_link_search_has_its_own_breadth(
    make_atlas: AtlasFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    atlas, _ = make_atlas(hnsw_link_ef_search=24)
    breadths: list[int | None] = []
    search = VectorIndex.search

    def recorded(self: VectorIndex, query: np.ndarray, k: int, **kwargs: Any) -> Any:
        breadths.append(kwargs.get("ef_search"))
        return search(self, query, k, **kwargs)

    monkeypatch.setattr(VectorIndex, "search", recorded)
    atlas.add("a", session_id="s", embedding=basis(0))
    atlas.add("b", session_id="s", embedding=with_cosine(0.9, 1))
    assert breadths == [24, 24]
    atlas.retrieve("a", session_id="s", query_embedding=basis(0))
    assert 24 not in breadths[2:]  # retrieval searches at the index's own breadth


def test_auto_link_threshold_and_zero_links(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_auto_links=3, link_threshold=0.75, link_previous=False)
    a = atlas.add("a", session_id="s", embedding=with_cosine(0.9, 1))
    b = atlas.add("b", session_id="s", embedding=with_cosine(0.8, 2))
    atlas.add("c", session_id="s", embedding=with_cosine(0.7, 3))
    new = atlas.add("n", session_id="s", embedding=basis(0))
    assert set(relations_of(atlas, new.id, Relation.SIMILAR_TO)) == {a.id, b.id}

    atlas, _ = make_atlas(max_auto_links=0, link_previous=False)
    atlas.add("a", session_id="s", embedding=with_cosine(0.9, 1))
    new = atlas.add("n", session_id="s", embedding=basis(0))
    assert atlas.edges(new.id) == []


def test_before_edge_from_previous_memory_of_the_session(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(link_threshold=1.0)
    first = atlas.add("red apples", session_id="s1")
    elsewhere = atlas.add("blue whales", session_id="s2")
    second = atlas.add("green grass", session_id="s1")
    third = atlas.add("yellow sun", session_id="s1")
    befores = [(e.source_id, e.target_id) for e in atlas.edges() if e.relation is Relation.BEFORE]
    assert sorted(befores) == sorted([(first.id, second.id), (second.id, third.id)])
    assert atlas.edges(elsewhere.id) == []

    atlas, _ = make_atlas(link_threshold=1.0, link_previous=False)
    atlas.add("red apples", session_id="s1")
    atlas.add("green grass", session_id="s1")
    assert atlas.edges() == []


def test_links_to_creates_related_edges(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(link_threshold=1.0, link_previous=False)
    a = atlas.add("red apples", session_id="s1")
    b = atlas.add("blue whales", session_id="s2")
    c = atlas.add("green grass", session_id="s1", links_to=[a.id, b.id])
    edges = {(e.source_id, e.target_id, e.relation) for e in atlas.edges(c.id)}
    assert edges == {(c.id, a.id, Relation.RELATED_TO), (c.id, b.id, Relation.RELATED_TO)}


def test_unknown_links_to_inserts_nothing(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas()
    a = atlas.add("red apples", session_id="s1")
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    before = state_fingerprint(atlas)
    with pytest.raises(NotFoundError, match="m-missing"):
        atlas.add("green grass", session_id="new-session", links_to=[a.id, "m-missing"])
    assert state_fingerprint(atlas) == before
    assert "new-session" not in atlas.sessions()
    assert recorder.events == []
    invariants(atlas)


def test_explicit_link_and_its_validation(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(link_threshold=1.0, link_previous=False)
    a = atlas.add("red apples", session_id="s")
    b = atlas.add("green grass", session_id="s")
    edge = atlas.link(a.id, b.id, "causal", 0.4)
    assert (edge.source_id, edge.target_id, edge.relation, edge.strength) == (
        a.id,
        b.id,
        Relation.CAUSAL,
        0.4,
    )
    assert atlas.edges(b.id) == [edge]
    with pytest.raises(InputError, match="relation"):
        atlas.link(a.id, b.id, "likes")
    with pytest.raises(InputError, match="strength"):
        atlas.link(a.id, b.id, Relation.CAUSAL, 1.5)
    with pytest.raises(InputError, match="target_id"):
        atlas.link(a.id, a.id)
    with pytest.raises(NotFoundError):
        atlas.link(a.id, "nope")


# ---------------------------------------------------------------- merging
def test_near_duplicate_merges_keeping_provenance_and_reinforcing(
    make_atlas: AtlasFactory,
) -> None:
    atlas, clock = make_atlas(reinforce_factor=1.5, merge_threshold=0.9)
    first = atlas.add(
        "User prefers window seats", session_id="s", provenance=["turn-1"], importance=0.5
    )
    clock.advance(60)
    again = atlas.add("User prefers window seats", session_id="s", provenance=["turn-7", "turn-1"])
    assert again.id == first.id
    assert len(atlas) == 1
    assert again.provenance == ("turn-1", "turn-7")
    assert again.strength == pytest.approx(first.strength * 1.5)
    assert again.access_count == 1
    assert again.last_accessed_at == clock.now()
    assert again.metadata["merged_count"] == 1
    assert atlas.stats()["merged"] == 1
    # another session keeps its own copy
    other = atlas.add("User prefers window seats", session_id="t", provenance=["x"])
    assert other.id != first.id
    assert len(atlas) == 2
    invariants(atlas)


def test_no_merge_into_inactive_memory(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas()
    first = atlas.add("User prefers window seats", session_id="s")
    atlas.set_status(first.id, MemoryStatus.DEPRECATED)
    second = atlas.add("User prefers window seats", session_id="s")
    assert second.id != first.id
    assert len(atlas) == 2


# ---------------------------------------------------------------- vectors and embedder
def test_explicit_embedding_is_used_not_the_embedder(make_atlas: AtlasFactory) -> None:
    embedder = CountingEmbedder()
    atlas, _ = make_atlas(embedder=embedder)
    raw = np.arange(1, DIM + 1, dtype=np.float64)
    node = atlas.add("some text", session_id="s", embedding=raw)
    assert embedder.calls == []
    np.testing.assert_allclose(atlas.embedding_of(node.id), unit(raw), rtol=1e-6)
    got = atlas.get(node.id, with_embedding=True).embedding
    assert got is not None
    np.testing.assert_allclose(got, unit(raw), rtol=1e-6)
    assert atlas.get(node.id).embedding is None


@pytest.mark.parametrize(
    ("vector", "fragment"),
    [
        (np.ones(DIM + 1), "expected shape"),
        (np.r_[np.ones(DIM - 1), np.nan], "NaN"),
        (np.zeros(DIM), "zero vector"),
        (["x"] * DIM, "not a numeric vector"),
    ],
)
def test_bad_embedding_is_refused_and_changes_nothing(
    make_atlas: AtlasFactory, vector: Any, fragment: str
) -> None:
    atlas, _ = make_atlas()
    atlas.add("existing", session_id="s")
    before = state_fingerprint(atlas)
    with pytest.raises(InputError) as info:
        atlas.add("new text", session_id="fresh", embedding=vector)
    assert info.value.field == "embedding"
    assert fragment in str(info.value)
    assert state_fingerprint(atlas) == before
    invariants(atlas)


def test_add_many_embeds_once_in_order(make_atlas: AtlasFactory) -> None:
    embedder = CountingEmbedder()
    atlas, _ = make_atlas(embedder=embedder, link_threshold=1.0)
    texts = ["red apples", "green grass", "blue whales", "yellow sun"]
    nodes = atlas.add_many(
        texts,
        session_id="s",
        metadatas=[{"i": i} for i in range(4)],
        provenances=[[f"t{i}"] for i in range(4)],
    )
    assert embedder.calls == [texts]
    assert [n.content for n in nodes] == texts
    assert [n.metadata["i"] for n in nodes] == [0, 1, 2, 3]
    assert [n.provenance for n in nodes] == [("t0",), ("t1",), ("t2",), ("t3",)]
    befores = {(e.source_id, e.target_id) for e in atlas.edges() if e.relation is Relation.BEFORE}
    assert befores == {(nodes[i].id, nodes[i + 1].id) for i in range(3)}
    assert atlas.add_many([], session_id="s") == []


def test_add_many_validates_everything_first(make_atlas: AtlasFactory) -> None:
    embedder = CountingEmbedder()
    atlas, _ = make_atlas(embedder=embedder)
    with pytest.raises(InputError) as info:
        atlas.add_many(["fine", "also fine", "   "], session_id="s")
    assert info.value.field == "texts[2]"
    with pytest.raises(InputError) as info:
        atlas.add_many(["a", "b"], session_id="s", metadatas=[{}])
    assert info.value.field == "metadatas"
    with pytest.raises(InputError) as info:
        atlas.add_many("one string", session_id="s")
    assert info.value.field == "texts"
    with pytest.raises(InputError) as info:
        atlas.add_many(["a", "b"], session_id="s", embeddings=np.ones((2, DIM + 2)))
    assert info.value.field == "embeddings"
    assert embedder.calls == []
    assert len(atlas) == 0
    vectors = np.eye(DIM)[:2]
    nodes = atlas.add_many(["a", "b"], session_id="s", embeddings=vectors)
    np.testing.assert_allclose(atlas.embedding_of(nodes[1].id), vectors[1])
    assert embedder.calls == []


@pytest.mark.parametrize("batch", [False, True])
def test_failing_embedder_inserts_nothing(make_atlas: AtlasFactory, batch: bool) -> None:
    atlas, _ = make_atlas(embedder=CountingEmbedder(fail=True))
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    with pytest.raises(EmbeddingError, match="model crashed"):
        if batch:
            atlas.add_many(["a", "b"], session_id="s")
        else:
            atlas.add("a", session_id="s")
    assert len(atlas) == 0
    assert atlas.sessions() == []
    assert recorder.events == []
    with pytest.raises(EmbeddingError):
        atlas.retrieve("a", session_id="s")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "  \n\t "}, "content"),
        ({"content": "x" * 41}, "content"),
        ({"content": 42}, "content"),
        ({"confidence": 1.5}, "confidence"),
        ({"confidence": math.nan}, "confidence"),
        ({"importance": -0.1}, "importance"),
        ({"importance": "high"}, "importance"),
        ({"ttl_hours": -1.0}, "ttl_hours"),
        ({"ttl_hours": math.inf}, "ttl_hours"),
        ({"kind": "dream"}, "kind"),
        ({"session_id": ""}, "session_id"),
        ({"session_id": "x" * 201}, "session_id"),
        ({"metadata": {1: "a"}}, "metadata"),
        ({"metadata": {"a": object()}}, "metadata"),
        ({"metadata": {"a": math.nan}}, "metadata"),
        ({"metadata": {"a": "ok", "b": -math.inf}}, "metadata"),
        ({"metadata": {"a": {"b": math.nan}}}, "metadata"),
        ({"metadata": {"a": [1, {2}]}}, "metadata"),
        ({"provenance": "turn-1"}, "provenance"),
        ({"links_to": [""]}, "links_to"),
    ],
)
def test_bad_input_names_the_field_and_changes_nothing(
    make_atlas: AtlasFactory, kwargs: dict[str, Any], field: str
) -> None:
    atlas, _ = make_atlas(max_content_chars=40)
    atlas.add("existing memory", session_id="s")
    before = state_fingerprint(atlas)
    args = {"content": "a valid memory", "session_id": "s", **kwargs}
    content = args.pop("content")
    with pytest.raises(InputError) as info:
        atlas.add(content, **args)
    assert info.value.field == field
    assert field in str(info.value)
    assert state_fingerprint(atlas) == before


def test_kinds_ttl_and_pinning(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(default_ttl_hours=5.0)
    node = atlas.add("fact", session_id="s", kind="knowledge", ttl_hours=2, pinned=True)
    assert node.kind is MemoryKind.KNOWLEDGE
    assert node.expires_at == clock.now() + 7200.0
    assert node.pinned
    assert atlas.add("other", session_id="s").expires_at == clock.now() + 5 * 3600.0
    atlas, _ = make_atlas()
    assert atlas.add("forever", session_id="s").expires_at is None


def test_zero_ttl_add_during_a_due_decay_returns_the_stored_memory(
    make_atlas: AtlasFactory,
) -> None:
    atlas, clock = make_atlas(decay_interval_seconds=10)
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    atlas.add("older memory", session_id="s")
    clock.advance(20)
    node = atlas.add("expires at once", session_id="s", ttl_hours=0.0)
    added = recorder.of_type("added")[-1]
    assert node.id == added.node_id  # type: ignore[attr-defined]
    assert node.content == "expires at once"
    assert node.id not in atlas  # the due decay pass expired it
    invariants(atlas)


def test_write_filter_gates_offer(make_atlas: AtlasFactory) -> None:
    def worth_it(text: str, meta: object) -> bool:
        return len(text.split()) > 2

    atlas, _ = make_atlas(write_filter=worth_it)
    assert atlas.offer("ok thanks", session_id="s") is None
    kept = atlas.offer("User likes green tea", session_id="s")
    assert kept is not None
    assert len(atlas) == 1


# ---------------------------------------------------------------- status and removal
def test_status_changes_pins_and_removal(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(weight_floor=0.1, base_weight_max=1.4)
    node = atlas.add("User lives in Paris", session_id="s", importance=1.0)
    deprecated = atlas.set_status(node.id, "deprecated", reason="moved")
    assert deprecated.status is MemoryStatus.DEPRECATED
    assert deprecated.strength == pytest.approx(1.4 * 0.3)
    with pytest.raises(InputError, match="status"):
        atlas.set_status(node.id, "gone")
    assert atlas.forget(node.id).status is MemoryStatus.TOMBSTONED
    assert atlas.pin(node.id).pinned
    assert not atlas.pin(node.id, False).pinned
    assert atlas.set_confidence(node.id, 0.25).confidence == 0.25
    with pytest.raises(InputError):
        atlas.set_confidence(node.id, 2.0)
    atlas.delete(node.id)
    assert node.id not in atlas
    with pytest.raises(NotFoundError):
        atlas.get(node.id)
    with pytest.raises(NotFoundError):
        atlas.delete(node.id)
    invariants(atlas)


# ---------------------------------------------------------------- thread safety
def test_concurrent_writers_and_readers_keep_invariants(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas, clock = make_atlas(max_nodes=60, working_memory_size=3, decay_interval_seconds=30)
    errors: list[BaseException] = []
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

    def writer(worker: int) -> None:
        try:
            for i in range(40):
                text = f"{words[i % 8]} {words[(i * 3 + worker) % 8]} note {worker}-{i}"
                atlas.add(text, session_id=f"s{worker % 2}")
                clock.advance(5)
        except BaseException as exc:
            errors.append(exc)

    def reader(worker: int) -> None:
        try:
            for i in range(40):
                for hit in atlas.retrieve(words[i % 8], top_k=5, session_id=f"s{worker % 2}"):
                    assert hit.node.session_id == f"s{worker % 2}"
                atlas.stats()
                atlas.nodes()
        except BaseException as exc:
            errors.append(exc)

    def janitor() -> None:
        try:
            for i in range(15):
                atlas.decay()
                atlas.merge_duplicates()
                atlas.save_snapshot(tmp_path / f"snap{i % 2}.npz")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    threads += [threading.Thread(target=reader, args=(w,)) for w in range(3)]
    threads.append(threading.Thread(target=janitor))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(atlas) <= 60
    stats = atlas.stats()
    assert stats["added"] <= 120 <= stats["added"] + stats["merged"]  # merge_duplicates adds merges
    loaded = ElasticMemoryAtlas.load_snapshot(
        tmp_path / "snap0.npz", embedder=atlas.embedder, clock=type(clock)(clock.now())
    )
    invariants(loaded)
    invariants(atlas)


def test_numpy_scalars_are_numbers(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas()
    node = atlas.add(
        "scored by numpy",
        session_id="s",
        confidence=np.float32(0.5),  # type: ignore[arg-type]
        importance=np.float64(0.25),
        ttl_hours=np.int64(2),  # type: ignore[arg-type]
    )
    assert node.confidence == 0.5
    assert node.expires_at == clock.now() + 7200.0
    top_k: Any = np.int64(2)
    assert len(atlas.retrieve("numpy", top_k=top_k, session_id="s")) == 1
    nan: Any = np.float32("nan")
    with pytest.raises(InputError, match="confidence"):
        atlas.add("nan from numpy", session_id="s", confidence=nan)


@pytest.mark.parametrize("bad", [5.0, math.nan, -0.5])
def test_a_misbehaving_importance_estimator_is_refused(
    make_atlas: AtlasFactory, bad: float
) -> None:
    atlas, _ = make_atlas(importance=lambda text, meta: bad)
    with pytest.raises(InputError) as info:
        atlas.add("anything", session_id="s")
    assert info.value.field == "importance"
    assert len(atlas) == 0
    assert atlas.add("explicit wins", session_id="s", importance=0.5).importance == 0.5
