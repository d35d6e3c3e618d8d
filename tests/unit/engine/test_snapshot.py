"""Snapshots: an exact round trip, and a clear error for anything that is not one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_core import (
    CachedEmbedder,
    ElasticMemoryAtlas,
    HashingEmbedder,
    InputError,
    ManualClock,
    MemoryStatus,
    Relation,
)

from .conftest import DIM, START, AtlasFactory, CountingEmbedder, invariants


def populated(make_atlas: AtlasFactory) -> tuple[ElasticMemoryAtlas, ManualClock]:
    atlas, clock = make_atlas(
        association_gain=0.2, working_memory_size=3, decay_interval_seconds=0, link_threshold=0.3
    )
    texts = [
        "User prefers window seats on long flights",
        "User is allergic to peanuts and tree nuts",
        "Flight to Berlin leaves at 9am on Monday",
        "User prefers aisle seats on short flights",
        "Hotel booking confirmed near the station",
        "User asked to avoid layovers in Frankfurt",
    ]
    for i, text in enumerate(texts):
        atlas.add(
            text,
            session_id=f"s{i % 2}",
            metadata={"i": i, "tags": ["travel", str(i)]},
            provenance=[f"turn-{i}"],
            confidence=1.0 - 0.1 * i,
            ttl_hours=100.0 if i == 4 else None,
            pinned=i == 5,
            kind="knowledge" if i == 3 else "session",
        )
        clock.advance(900)
    nodes = atlas.nodes()
    atlas.link(nodes[0].id, nodes[1].id, Relation.CAUSAL, 0.4)
    atlas.set_status(nodes[2].id, MemoryStatus.DEPRECATED, reason="cancelled")
    atlas.retrieve("window seats", session_id="s0", top_k=2)
    atlas.add("temporary chat", session_id="gone")
    atlas.end_session("gone", mode="purge")
    clock.advance(3600)
    atlas.decay()
    atlas.end_session("s1", mode="fade")
    return atlas, clock


def fields_of(atlas: ElasticMemoryAtlas) -> list[dict[str, Any]]:
    out = []
    for node in atlas.nodes():
        row = {name: getattr(node, name) for name in node.__slots__ if name != "embedding"}
        row["embedding"] = atlas.embedding_of(node.id).tolist()
        out.append(row)
    return out


def edge_set(atlas: ElasticMemoryAtlas) -> set[tuple[str, str, Relation, float]]:
    return {(e.source_id, e.target_id, e.relation, e.strength) for e in atlas.edges()}


def load(path: Path, start: float = START) -> ElasticMemoryAtlas:
    return ElasticMemoryAtlas.load_snapshot(
        path, embedder=HashingEmbedder(DIM), clock=ManualClock(start)
    )


def test_exact_round_trip(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, clock = populated(make_atlas)
    path = atlas.save_snapshot(tmp_path / "deep" / "atlas.npz")
    assert path.exists()
    loaded = load(path)
    assert loaded.clock.now() == clock.now()  # a manual clock is moved to the saved time
    assert loaded.config == atlas.config
    assert fields_of(loaded) == fields_of(atlas)
    assert edge_set(loaded) == edge_set(atlas)
    assert loaded.sessions() == atlas.sessions()
    for sid in atlas.sessions():
        assert loaded.session_info(sid) == atlas.session_info(sid)
    assert loaded.stats() == atlas.stats()
    table, loaded_table = atlas._s.table, loaded._s.table
    for name in ("assoc", "degree", "working", "expires"):
        original = getattr(table, name)[table.alive_slots()]
        restored = getattr(loaded_table, name)[loaded_table.alive_slots()]
        np.testing.assert_array_equal(restored, original)
    invariants(loaded)


def test_behaviour_after_load_is_identical(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, clock = populated(make_atlas)
    loaded = load(atlas.save_snapshot(tmp_path / "a.npz"))

    def ranking(a: ElasticMemoryAtlas, **kw: Any) -> list[tuple[str, float, tuple[str, ...]]]:
        return [
            (h.node.id, h.score, h.breakdown.sources)
            for h in a.retrieve("seats on flights", top_k=5, **kw)
        ]

    for kw in ({"session_id": "s0"}, {"session_id": "s1", "cross_session": True}, {}):
        assert ranking(loaded, reinforce=False, **kw) == ranking(atlas, reinforce=False, **kw)
    assert ranking(loaded) == ranking(atlas)  # reinforcing changes both the same way
    # the id generator continues where it was
    assert (
        loaded.add("brand new memory", session_id="s0").id
        == atlas.add("brand new memory", session_id="s0").id
    )
    clock.advance(50 * 3600)
    loaded.clock.set(clock.now())  # type: ignore[attr-defined]
    assert loaded.decay() == atlas.decay()
    assert fields_of(loaded) == fields_of(atlas)


def test_empty_atlas_round_trip(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, _ = make_atlas()
    loaded = load(atlas.save_snapshot(tmp_path / "empty.npz"))
    assert len(loaded) == 0
    assert loaded.sessions() == []


def test_clock_ahead_of_the_snapshot_is_not_moved_back(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas, clock = make_atlas()
    atlas.add("a memory", session_id="s")
    path = atlas.save_snapshot(tmp_path / "a.npz")
    later = clock.now() + 10_000
    assert load(path, start=later).clock.now() == later


def rewrite_meta(path: Path, out: Path, change: Any) -> Path:
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    meta = change(meta)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(out, **arrays)
    return out


def test_wrong_embedder_dimension_is_refused(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, _ = make_atlas()
    atlas.add("a memory", session_id="s")
    path = atlas.save_snapshot(tmp_path / "a.npz")
    with pytest.raises(InputError) as info:
        ElasticMemoryAtlas.load_snapshot(path, embedder=HashingEmbedder(DIM * 2))
    assert info.value.field == "embedder"


def test_another_model_of_the_same_dimension_is_refused(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas, _ = make_atlas()
    atlas.add("a memory", session_id="s")
    path = atlas.save_snapshot(tmp_path / "a.npz")
    with pytest.raises(InputError, match="hashing-64") as info:
        ElasticMemoryAtlas.load_snapshot(path, embedder=CountingEmbedder(DIM))
    assert info.value.field == "embedder"
    # a cache in front of the same model is the same model
    loaded = ElasticMemoryAtlas.load_snapshot(
        path, embedder=CachedEmbedder(HashingEmbedder(DIM)), clock=ManualClock(START)
    )
    assert len(loaded) == 1


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda m: {**m, "format": "atlas-snapshot/0"}, "format"),
        (lambda m: {k: v for k, v in m.items() if k != "ids"}, "lacks ids"),
        (lambda m: [1, 2, 3], "lacks"),
        (lambda m: {**m, "config": {**m["config"], "decay_rate": -5}}, "invalid config"),
        (lambda m: {**m, "ids": [*m["ids"], "extra"]}, "inconsistent"),
    ],
)
def test_inconsistent_metadata_is_refused(
    make_atlas: AtlasFactory, tmp_path: Path, change: Any, fragment: str
) -> None:
    atlas, _ = make_atlas()
    atlas.add("a memory", session_id="s")
    path = atlas.save_snapshot(tmp_path / "a.npz")
    bad = rewrite_meta(path, tmp_path / "bad.npz", change)
    with pytest.raises(InputError, match=fragment) as info:
        load(bad)
    assert info.value.field == "snapshot"


def test_garbage_truncated_and_missing_files_are_refused(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas, _ = make_atlas()
    atlas.add("a memory", session_id="s")
    data = atlas.save_snapshot(tmp_path / "a.npz").read_bytes()
    cases = {
        "garbage.npz": b"not a snapshot at all",
        "truncated.npz": data[: len(data) // 2],
        "empty.npz": b"",
    }
    np.save(tmp_path / "array.npy", np.arange(3))
    cases["array.npz"] = (tmp_path / "array.npy").read_bytes()
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(InputError):
            load(tmp_path / name)
    with pytest.raises(InputError):
        load(tmp_path / "missing.npz")


def test_every_byte_flip_is_refused_or_harmless(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, _ = populated(make_atlas)
    original = atlas.save_snapshot(tmp_path / "a.npz").read_bytes()
    expected = fields_of(atlas)
    refused = 0
    for pos in range(0, len(original), max(1, len(original) // 150)):
        corrupt = bytearray(original)
        corrupt[pos] ^= 0xFF
        path = tmp_path / "flip.npz"
        path.write_bytes(bytes(corrupt))
        try:
            loaded = load(path)
        except InputError:
            refused += 1
            continue
        # zip headers hold redundant copies of some fields: a flip there may be harmless
        assert fields_of(loaded) == expected, f"flip at byte {pos} changed the data silently"
    assert refused > 100
