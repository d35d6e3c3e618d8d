"""The retrieve's reads that session 14 made cheaper (the BM25 top-k cut at the k-th value,
graph expansion's walk in one loop) give the ranking the plain ones give, on real MiniLM
vectors of the sample sessions over a real HNSW index."""

from __future__ import annotations

import numpy as np
import pytest
from support.sample_texts import sample_turns

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock, MiniLMEmbedder
from memory_core.engine import retrieval
from memory_core.engine.index import topk
from memory_core.engine.state import AtlasState

pytestmark = pytest.mark.integration


def _plain_expand(
    state: AtlasState, fused: dict[int, float], n_seeds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Graph expansion as a walk of each seed's ``neighbours`` list (before ``spread``)."""
    slots = np.fromiter(fused, dtype=np.int64, count=len(fused))
    rrf = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
    best: dict[int, float] = {}
    for seed in np.lexsort((slots, -rrf))[:n_seeds].tolist():
        for neighbour, strength in state.edges.neighbours(int(slots[seed])):
            score = float(rrf[seed]) * strength
            if neighbour not in fused and score > best.get(neighbour, 0.0):
                best[neighbour] = score
    return np.array(list(best), dtype=np.int64), np.array(list(best.values()))


def test_retrieves_rank_as_with_the_plain_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = MiniLMEmbedder()
    turns = sample_turns()[:600]
    vectors = embedder.embed(turns)
    config = AtlasConfig(hnsw_threshold=200, memory_watermark=1.0)
    atlas = ElasticMemoryAtlas(config, embedder=embedder, clock=ManualClock(1_700_000_000.0))
    atlas.add_many(turns[:500], session_id="s", embeddings=vectors[:500])
    assert atlas._s.vectors.kind == "hnsw"
    queries = [(turns[i], vectors[i]) for i in range(0, 600, 7)]  # stored and held-out turns

    def ranked() -> list[list[tuple[object, ...]]]:
        out = []
        for text, vector in queries:
            for cross in (False, True):
                hits = atlas.retrieve(
                    text,
                    top_k=40,
                    session_id="s",
                    cross_session=cross,
                    query_embedding=vector,
                    reinforce=False,
                )
                out.append([(h.node.id, h.score, h.breakdown) for h in hits])
        return out

    monkeypatch.setattr(topk, "CUT_FROM", 0)  # every lexical top-k cut at its k-th value
    cut = ranked()
    monkeypatch.setattr(topk, "CUT_FROM", 10**9)
    monkeypatch.setattr(retrieval, "_expand", _plain_expand)
    assert ranked() == cut
    assert sum(len(hits) for hits in cut) > 10 * len(queries)
    assert any("graph" in b.sources for hits in cut for _, _, b in hits)
