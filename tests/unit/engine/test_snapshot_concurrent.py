"""A snapshot copies briefly under the lock and gathers the vectors after it (an HNSW
index's float16 rows with no lock at all): whatever the agent does between the gathers,
the file holds the atlas of the instant it froze."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.words import word_sentence

from memory_core import ElasticMemoryAtlas, Relation
from memory_core.engine import snapshot
from memory_core.engine.index.vector import PinnedRows
from memory_core.testing import atlas_differences

from .conftest import AtlasFactory


def _texts(rng: np.random.Generator, n: int) -> list[str]:
    """Distinct sentences of real words (templated lines would fold into summaries)."""
    return [word_sentence(rng, i, 6) for i in range(n)]


class _Interleaving:
    """The atlas lock, but each acquisition is preceded by the agent's next write."""

    def __init__(self, atlas: ElasticMemoryAtlas, writes: list[Any]) -> None:
        self.atlas, self.writes, self.entered = atlas, writes, 0

    def __enter__(self) -> None:
        if self.writes:
            self.writes.pop(0)()
        self.entered += 1
        self.atlas.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.atlas.lock.release()


@pytest.mark.parametrize("hnsw", [False, True])
def test_writes_between_the_gathers_stay_out_of_the_snapshot(
    make_atlas: AtlasFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hnsw: bool
) -> None:
    atlas, clock = make_atlas(
        hnsw_threshold=100 if hnsw else 20_000, max_nodes=10_000, episode_after_memories=None
    )
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, atlas.embedder.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    nodes = atlas.add_many(
        _texts(rng, 300),
        embeddings=vectors,
        metadatas=[{"speaker": f"s{i % 3}"} for i in range(300)],
    )
    for node in nodes[:40]:  # tombstones: HNSW keeps deleted vectors in its graph
        atlas.delete(node.id)
    atlas.link(nodes[50].id, nodes[51].id, Relation.CAUSAL)  # a pair with two relations
    clock.advance(60.0)
    reference = atlas.save_snapshot(tmp_path / "reference.npz")

    monkeypatch.setattr(PinnedRows, "CHUNK", 16)  # many gathers, a write before each
    more = rng.normal(size=(200, atlas.embedder.dim)).astype(np.float32)
    later = _texts(rng, 200)
    writes: list[Any] = [lambda i=i: atlas.add(later[i], embedding=more[i]) for i in range(200)]
    writes[3] = lambda: atlas.add(nodes[60].content, embedding=vectors[60])  # a merge
    writes[5] = lambda: atlas.delete(nodes[70].id)
    writes[7] = lambda: atlas.link(nodes[50].id, nodes[51].id, Relation.SUMMARIZES, 0.5)
    with atlas.lock:
        frozen = snapshot.freeze(atlas._s)
        rows_at_freeze = atlas._s.vectors._exact.rows() if hnsw else None
    lock = _Interleaving(atlas, writes)
    if hnsw:  # float16 rows are gathered with no lock: the agent writes all before it
        while writes:
            writes.pop(0)()
        assert rows_at_freeze is not None
        assert not np.shares_memory(rows_at_freeze, atlas._s.vectors._exact.rows())  # moved
    during = snapshot.write(snapshot.complete(frozen, lock), tmp_path / "during.npz")

    # exact: 260 vectors in chunks of 16, each after a write; HNSW: never the lock
    assert lock.entered == 0 if hnsw else lock.entered >= 17
    assert len(atlas) > 270  # the agent did write meanwhile (the storage grew and moved)
    assert atlas.get(nodes[60].id).metadata.get("merged_count") == 1
    first = ElasticMemoryAtlas.load_snapshot(reference, embedder=atlas.embedder)
    second = ElasticMemoryAtlas.load_snapshot(during, embedder=atlas.embedder)
    assert atlas_differences(first, second) == []
    # the BM25 postings too: the writes (a removal among them) changed copies, not the freeze's
    with np.load(reference) as saved, np.load(during) as copied:
        for name in snapshot.lexical.MEMBERS:
            np.testing.assert_array_equal(copied[name], saved[name])
    assert "merged_count" not in second.get(nodes[60].id).metadata
