"""Snapshots: an exact round trip, and a clear error for anything that is not one."""

from __future__ import annotations

import gc
import json
import zipfile
from itertools import pairwise
from pathlib import Path
from typing import Any

import faiss
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
from memory_core.engine.snapshot import hnsw
from memory_core.engine.snapshot.capture import write_members
from memory_core.engine.snapshot.paused import collection_paused
from memory_core.store.memory import MemorySnapshotRepository
from memory_core.store.recording import open_recorded

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


def members(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as npz:
        return {k: npz[k] for k in npz.files}


def header_of(arrays: dict[str, np.ndarray]) -> Any:
    return json.loads(arrays["header"].tobytes())


def rewrite(path: Path, out: Path, change: Any) -> Path:
    """Save ``path``'s members after ``change(members)`` (which edits them in place)."""
    arrays = members(path)
    change(arrays)
    np.savez(out, **arrays)
    return out


def set_header(change: Any) -> Any:
    def apply(arrays: dict[str, np.ndarray]) -> None:
        text = json.dumps(change(header_of(arrays))).encode()
        arrays["header"] = np.frombuffer(text, dtype=np.uint8)

    return apply


def set_row(member: str, row: int, value: Any) -> Any:
    def apply(arrays: dict[str, np.ndarray]) -> None:
        arrays[member] = arrays[member].copy()
        arrays[member][row] = value

    return apply


def set_json(member: str, value: Any) -> Any:
    def apply(arrays: dict[str, np.ndarray]) -> None:
        arrays[member] = np.frombuffer(json.dumps(value).encode(), dtype=np.uint8)

    return apply


def as_v1(path: Path, out: Path) -> Path:
    """The same snapshot in the ``atlas-snapshot/1`` layout, as the previous version wrote
    it: every per-memory list in one JSON ``meta`` member, compressed."""
    arrays = members(path)
    header = header_of(arrays)
    texts = {}
    for name in ("ids", "contents"):
        offsets, blob = arrays[f"{name}_offsets"].tolist(), arrays[f"{name}_blob"].tobytes()
        texts[name] = [blob[a:b].decode() for a, b in pairwise(offsets)]
    sessions = [s["id"] for s in header["sessions"]]
    meta = {
        key: header[key]
        for key in ("config", "embedder", "now", "last_decay", "counters", "rng", "sessions")
    }
    meta.update(
        format="atlas-snapshot/1",
        ids=texts["ids"],
        contents=texts["contents"],
        session_of=[sessions[i] for i in arrays["session"].tolist()],
        metadata=json.loads(arrays["metadata_json"].tobytes()),
        provenance=json.loads(arrays["provenance_json"].tobytes()),
        edges=[
            [s, t, header["relations"][r], w]
            for s, t, r, w in zip(
                arrays["edge_source"].tolist(),
                arrays["edge_target"].tolist(),
                arrays["edge_relation"].tolist(),
                arrays["edge_strength"].tolist(),
                strict=True,
            )
        ],
    )
    columns = (
        *("strength", "weight", "created", "accessed", "expires", "importance", "confidence"),
        *("assoc", "count", "kind", "status", "pinned", "working"),
    )
    np.savez_compressed(
        out,
        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        embeddings=arrays["embeddings"],
        **{f"col_{name}": arrays[name] for name in columns},
    )
    return out


def test_the_previous_format_still_loads_exactly(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, _ = populated(make_atlas)
    v1 = as_v1(atlas.save_snapshot(tmp_path / "a.npz"), tmp_path / "v1.npz")
    assert "meta" in members(v1)
    loaded = load(v1)
    assert fields_of(loaded) == fields_of(atlas)
    assert edge_set(loaded) == edge_set(atlas)
    assert loaded.stats() == atlas.stats()
    for sid in atlas.sessions():
        assert loaded.session_info(sid) == atlas.session_info(sid)


def test_a_recorded_snapshot_of_the_previous_format_opens(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas, _ = populated(make_atlas)
    v1 = as_v1(atlas.save_snapshot(tmp_path / "a.npz"), tmp_path / "v1.npz")
    repo = MemorySnapshotRepository()
    info = repo.save(
        atlas_id="agent",
        label="old",
        data=v1.read_bytes(),
        format_version=1,
        node_count=len(atlas),
        edge_count=len(atlas.edges()),
    )
    opened = open_recorded(repo, info.id, embedder=HashingEmbedder(DIM), clock=ManualClock(START))
    assert fields_of(opened) == fields_of(atlas)
    future = repo.save(
        atlas_id="agent", label="new", data=b"x", format_version=99, node_count=0, edge_count=0
    )
    with pytest.raises(InputError, match="format version 99; this version reads 1, 2"):
        open_recorded(repo, future.id, embedder=HashingEmbedder(DIM))


def test_the_file_is_columnar(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, _ = populated(make_atlas)
    arrays = members(atlas.save_snapshot(tmp_path / "a.npz"))
    n, header = len(atlas), header_of(arrays)
    assert header["format"] == "atlas-snapshot/2"
    assert header["count"] == n
    assert arrays["embeddings"].shape == (n, DIM)
    assert arrays["embeddings"].dtype == np.float32
    assert all(arrays[name].shape == (n,) for name in ("weight", "kind", "session", "pinned"))
    assert len(arrays["edge_source"]) == sum(1 for _ in atlas._s.edges.all_relations())
    # nothing per memory in the header: it does not grow with the atlas
    assert not {"ids", "contents", "metadata", "edges"} & header.keys()
    with zipfile.ZipFile(tmp_path / "a.npz") as archive:
        assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_STORED}


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (set_header(lambda h: {**h, "format": "atlas-snapshot/0"}), "format 'atlas-snapshot/0'"),
        (set_header(lambda h: {k: v for k, v in h.items() if k != "count"}), "lacks count"),
        (set_header(lambda h: [1, 2, 3]), "header must be a JSON object"),
        (set_header(lambda h: {**h, "config": {**h["config"], "decay_rate": -5}}), "config"),
        (set_header(lambda h: {**h, "count": h["count"] + 1}), "of shape"),
        (set_header(lambda h: {**h, "now": "soon"}), "now is 'soon'; allowed: a finite number"),
        (set_header(lambda h: {**h, "rng": [3, [1], None]}), "rng"),
        (set_header(lambda h: {**h, "kinds": ["session", "dream"]}), "kind names 'dream'"),
        (
            set_header(lambda h: {**h, "sessions": [*h["sessions"], h["sessions"][0]]}),
            "sessions[2]",
        ),
        (set_row("importance", 0, 2.0), "importance row 0 is 2.0; allowed: a number in [0, 1]"),
        (set_row("created", 1, np.nan), "created row 1 is nan; allowed: a finite time"),
        (set_row("count", 2, -1), "count row 2 is -1; allowed: an int >= 0"),
        (set_row("kind", 0, 99), "kind row 0 is 99; allowed: 0 to"),
        (set_row("session", 3, 7), "session row 3 is 7; allowed: 0 to 1"),
        (set_row("edge_target", 0, 99), "edge_target row 0 is 99; allowed: 0 to 5"),
        (set_row("edge_relation", 0, -1), "edge_relation row 0 is -1"),
        (set_row("embeddings", 4, np.inf), "embeddings row 4 holds NaN or inf"),
        (set_row("embeddings", 1, -np.inf), "embeddings row 1 holds NaN or inf"),
        (set_row("embeddings", 3, np.nan), "embeddings row 3 holds NaN or inf"),
        (lambda a: a.update(weight=a["weight"].astype(np.float32)), "weight must be float64"),
        (lambda a: a.pop("assoc"), "lacks the member 'assoc'"),
        (set_row("ids_blob", 0, 0xFF), "not an atlas snapshot"),  # not utf-8
        (set_row("ids_offsets", 1, 10_000), "ids_offsets must rise"),
        (set_row("contents_offsets", 1, 0), "contents row 0 is ''; allowed: a non-empty string"),
        (set_json("metadata_json", [1, None, None, None, None, None]), "metadata row 0 is 1"),
        (set_json("provenance_json", [[]] * 5), "provenance holds 5 entries"),
        (set_json("provenance_json", [[""]] * 6), "provenance row 0 is ['']"),
    ],
)
def test_every_field_is_checked_on_load(
    make_atlas: AtlasFactory, tmp_path: Path, change: Any, fragment: str
) -> None:
    atlas, _ = populated(make_atlas)
    bad = rewrite(atlas.save_snapshot(tmp_path / "a.npz"), tmp_path / "bad.npz", change)
    with pytest.raises(InputError) as info:
        load(bad)
    assert info.value.field == "snapshot"
    assert fragment in str(info.value)
    assert "bad.npz" in str(info.value)


def test_duplicate_ids_are_refused(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, _ = populated(make_atlas)
    path = atlas.save_snapshot(tmp_path / "a.npz")
    ids = [n.id for n in sorted(atlas.nodes(), key=lambda n: atlas._s.table.slot_of[n.id])]
    offsets, blob = members(path)["ids_offsets"], members(path)["ids_blob"]
    first = blob[offsets[0] : offsets[1]]
    assert first.tobytes().decode() == ids[0]

    def clone(arrays: dict[str, np.ndarray]) -> None:
        blob = arrays["ids_blob"].copy()
        blob[offsets[1] : offsets[2]] = first  # ids are all 17 characters long
        arrays["ids_blob"] = blob

    bad = rewrite(path, tmp_path / "bad.npz", clone)
    with pytest.raises(InputError, match=f"ids row 1 repeats '{ids[0]}'; allowed: unique ids"):
        load(bad)


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


def hnsw_atlas(make_atlas: AtlasFactory) -> ElasticMemoryAtlas:
    """An atlas whose vector index is HNSW with deleted vectors still in its graph."""
    atlas, _ = make_atlas(hnsw_threshold=10, decay_interval_seconds=0)
    for i in range(40):
        atlas.add(f"note {i} about topic {i % 7} and place {i % 5}", session_id=f"s{i % 3}")
    atlas.add("short lived", session_id="gone")
    atlas.add("also short lived", session_id="gone")
    atlas.end_session("gone", mode="purge")
    assert atlas._s.vectors.kind == "hnsw"
    assert atlas._s.vectors.tombstones == 2
    return atlas


def test_an_hnsw_graph_is_stored_and_searched_exactly_alike(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas = hnsw_atlas(make_atlas)
    path = atlas.save_snapshot(tmp_path / "a.npz")
    assert header_of(members(path))["graph"]["m"] == atlas.config.hnsw_m
    loaded = load(path)
    assert loaded._s.vectors.kind == "hnsw"
    assert loaded._s.vectors.tombstones == 2
    assert fields_of(loaded) == fields_of(atlas)
    for query in ("topic 3", "place 4 note", "nothing like it"):
        for kw in ({"session_id": "s1"}, {"session_id": "s0", "cross_session": True}):
            got = [(h.node.id, h.score) for h in loaded.retrieve(query, reinforce=False, **kw)]
            want = [(h.node.id, h.score) for h in atlas.retrieve(query, reinforce=False, **kw)]
            assert got == want
    # the adopted graph keeps growing like the original
    assert (
        loaded.add("one more note", session_id="s0").id
        == atlas.add("one more note", session_id="s0").id
    )
    loaded.settle()  # the add's vector insert may still wait for the worker
    atlas.settle()
    assert len(loaded._s.vectors) == len(atlas._s.vectors)
    invariants(loaded)


def set_graph(change: Any) -> Any:
    return set_header(lambda h: {**h, "graph": change(h["graph"])})


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (set_graph(lambda g: {**g, "m": 8}), "graph m is 8; allowed: the config's hnsw_m"),
        (set_graph(lambda g: {**g, "entry_point": 10_000}), "entry_point 10000"),
        (set_graph(lambda g: "yes"), "graph is 'yes'"),
        (set_row("graph_neighbors", 0, 10_000), "graph_neighbors must hold labels from 0 to"),
        (set_row("graph_levels", 0, 0), "graph_levels must be"),
        (set_row("graph_rows", 0, -1), "graph_rows must hold every memory row"),
        (lambda a: a.pop("graph_deleted"), "lacks the member 'graph_deleted'"),
        (set_row("graph_span", DIM, 0.0), "graph_span must be"),
        (set_row("graph_span", 0, np.nan), "graph_span must be"),
    ],
)
def test_every_part_of_the_graph_is_checked(
    make_atlas: AtlasFactory, tmp_path: Path, change: Any, fragment: str
) -> None:
    path = hnsw_atlas(make_atlas).save_snapshot(tmp_path / "a.npz")
    bad = rewrite(path, tmp_path / "bad.npz", change)
    with pytest.raises(InputError) as info:
        load(bad)
    assert fragment in str(info.value)


def test_a_graph_saved_before_the_8bit_index_loads_and_searches_alike(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    """A file whose graph was written over float32 rows has no ``graph_span``: the graph
    is kept and the quantiser takes the range of the file's own vectors."""
    atlas = hnsw_atlas(make_atlas)
    path = atlas.save_snapshot(tmp_path / "a.npz")
    assert "graph_span" in members(path)
    old = rewrite(path, tmp_path / "old.npz", lambda a: a.pop("graph_span"))
    loaded = load(old)
    assert loaded._s.vectors.kind == "hnsw"
    assert loaded._s.vectors.tombstones == 2  # the saved graph, not a rebuild
    assert fields_of(loaded) == fields_of(atlas)
    for query in ("topic 3", "place 4 note", "nothing like it"):
        got = [(h.node.id, h.score) for h in loaded.retrieve(query, reinforce=False, top_k=5)]
        want = [(h.node.id, h.score) for h in atlas.retrieve(query, reinforce=False, top_k=5)]
        assert got == want
    resaved = members(loaded.save_snapshot(tmp_path / "again.npz"))
    assert resaved["graph_span"].shape == (2 * DIM,)


def test_a_snapshot_without_a_graph_rebuilds_the_index(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas = hnsw_atlas(make_atlas)
    path = atlas.save_snapshot(tmp_path / "a.npz")
    drop = set_header(lambda h: {k: v for k, v in h.items() if k != "graph"})
    loaded = load(rewrite(path, tmp_path / "no-graph.npz", drop))
    assert loaded._s.vectors.kind == "hnsw"
    assert loaded._s.vectors.tombstones == 0  # rebuilt from the live vectors only
    assert fields_of(loaded) == fields_of(atlas)


def test_loading_pauses_garbage_collection_and_restores_it(tmp_path: Path) -> None:
    """The collector is off while a snapshot loads and as it was afterwards, also after
    a refused file."""
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it as it found it
    assert gc.isenabled()
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(InputError):
        ElasticMemoryAtlas.load_snapshot(junk)
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_members_are_written_as_np_savez_writes_them(tmp_path: Path) -> None:
    # the checkpoint writer streams each array from its own memory in 1 MB pieces
    # (no 16 MB copies under the GIL); the members must stay byte-identical
    rng = np.random.default_rng(3)
    arrays = {
        "half": rng.normal(size=(700, 384)).astype(np.float16),  # > 1 chunk
        "empty": np.zeros((0, 384), dtype=np.float32),
        "flags": rng.random(33) < 0.5,
        "codes": rng.integers(-3, 3, size=(5, 7)).astype(np.int8),
        "strided": np.arange(40, dtype=np.int64)[::3],  # not contiguous
        "json": np.frombuffer(b'{"a": [1, 2]}', dtype=np.uint8),
    }
    ours, theirs = tmp_path / "ours.npz", tmp_path / "theirs.npz"
    with ours.open("wb") as fh:
        write_members(fh, arrays)
    np.savez(theirs, **arrays)
    with zipfile.ZipFile(ours) as a, zipfile.ZipFile(theirs) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            assert a.read(name) == b.read(name), name


def test_a_loaded_graph_holds_the_very_codes_and_rows_of_the_saved_one(
    make_atlas: AtlasFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built in chunks (7 labels each here) straight into the index's tables, with deleted
    vectors between live ones: the same bytes as the saved index's own adds made."""
    monkeypatch.setattr(hnsw, "_CHUNK", 7)
    atlas, _ = make_atlas(hnsw_threshold=10, decay_interval_seconds=0)
    for i in range(30):
        session = "gone" if i % 4 == 1 else f"s{i % 3}"
        atlas.add(f"note {i} about topic {i % 7} and place {i % 5}", session_id=session)
    atlas.end_session("gone", mode="purge")
    saved = atlas._s.vectors
    graph = saved.graph()
    assert graph is not None
    dead = np.flatnonzero(graph[1] < 0)
    assert len(dead) >= 2 and dead[0] < len(graph[1]) - len(dead)  # not only at the end
    loaded = load(atlas.save_snapshot(tmp_path / "a.npz"))._s.vectors
    assert loaded.graph() is not None and loaded.tombstones == len(dead)
    codes = [
        faiss.vector_to_array(faiss.downcast_index(v._index.storage).codes) for v in (saved, loaded)
    ]
    np.testing.assert_array_equal(codes[0], codes[1])
    assert saved._exact.rows().tobytes() == loaded._exact.rows().tobytes()
