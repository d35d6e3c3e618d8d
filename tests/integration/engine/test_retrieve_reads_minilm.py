"""The retrieve's reads that session 14 made cheaper (float16 rows read through a lookup
table, the top-k cut at the k-th value) give the ranking the plain reads give, on real
MiniLM vectors of the sample sessions over a real HNSW index."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock, MiniLMEmbedder
from memory_core.engine.index import topk
from memory_core.engine.index import vector as vector_module

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


def _turns() -> list[str]:
    texts: list[str] = []
    for path in sorted((ROOT / "sample_sessions").glob("*.json")):
        for session in json.loads(path.read_text())["sessions"]:
            texts.extend(turn["text"] for turn in session["turns"])
    return list(dict.fromkeys(texts))


def _plain_gather(stored: np.ndarray, labels: np.ndarray) -> np.ndarray:
    rows: np.ndarray = stored[labels].astype(np.float32)
    return rows


def test_retrieves_rank_as_with_the_plain_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = MiniLMEmbedder()
    turns = _turns()[:600]
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
                    top_k=10,
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
    monkeypatch.setattr(vector_module, "_gathered", _plain_gather)
    assert ranked() == cut
    assert sum(len(hits) for hits in cut) > 10 * len(queries)
