"""The ``hybrid`` baseline: plain BM25 + dense cosine, fused by reciprocal rank."""

from __future__ import annotations

import numpy as np

from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.engine.config import AtlasConfig
from memory_core.harness.policies import HybridPolicy

DIM = 16
EMB = HashingEmbedder(dim=DIM)


def unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    return v


def add(policy: HybridPolicy, text: str, i: int) -> str:
    return policy.add(text, unit(i), turn_id=f"t{i}", session_id="s1", links_to=(), metadata={})


def test_a_word_match_the_vectors_miss_is_found() -> None:
    policy = HybridPolicy(AtlasConfig(), EMB, ManualClock())
    ids = [add(policy, text, i) for i, text in enumerate(["red kite", "blue whale", "green tea"])]
    hits = policy.retrieve("whale", unit(0), top_k=3, session_id=None, reinforce=False)
    assert hits[0].id == ids[1]  # BM25's first + dense's second beats dense's first alone
    assert {h.id for h in hits} == set(ids)


def test_agreement_of_both_lists_ranks_first() -> None:
    policy = HybridPolicy(AtlasConfig(), EMB, ManualClock())
    ids = [add(policy, text, i) for i, text in enumerate(["red kite", "blue whale", "green tea"])]
    hits = policy.retrieve("green tea", unit(2), top_k=1, session_id=None, reinforce=False)
    assert [h.id for h in hits] == [ids[2]]
    assert hits[0].score == 2.0 / 61.0


def test_at_capacity_the_oldest_goes_and_leaves_the_lexical_index() -> None:
    policy = HybridPolicy(AtlasConfig(max_nodes=2), EMB, ManualClock())
    ids = [add(policy, text, i) for i, text in enumerate(["red kite", "blue whale", "green tea"])]
    assert {h.id for h in policy.held()} == set(ids[1:])
    assert policy.evictions() == {"capacity": 1}
    hits = policy.retrieve("kite", unit(5), top_k=3, session_id=None, reinforce=False)
    assert ids[0] not in {h.id for h in hits}
    assert len(policy.lexical) == 2
