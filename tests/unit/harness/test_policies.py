from __future__ import annotations

import numpy as np
import pytest

from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.engine.config import AtlasConfig, preset
from memory_core.errors import InputError
from memory_core.harness.policies import POLICIES, AtlasPolicy, SeedLinearPolicy, make_policy
from memory_core.harness.policies.seed import SEED_CAP, SEED_FLOOR

DIM = 16
EMB = HashingEmbedder(dim=DIM)


def unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    return v


def fill(policy, n: int, clock: ManualClock, start: int = 0) -> list[str]:
    ids = []
    for i in range(start, start + n):
        clock.advance(60)
        ids.append(
            policy.add(
                f"memory {i}", unit(i), turn_id=f"t{i}", session_id="s1", links_to=(), metadata={}
            )
        )
    return ids


def test_unknown_policy_names_the_choices() -> None:
    with pytest.raises(InputError, match="fifo"):
        make_policy("nope", AtlasConfig(), EMB, ManualClock())


@pytest.mark.parametrize("name", ["fifo", "lru", "random"])
def test_capacity_baselines_never_exceed_max_nodes(name: str) -> None:
    clock = ManualClock()
    policy = make_policy(name, AtlasConfig(max_nodes=4), EMB, clock)
    fill(policy, 10, clock)
    assert len(policy) == 4
    assert policy.evictions() == {"capacity": 6}
    assert len([r for r in policy.trace if r.kind == "evicted"]) == 6


def test_unlimited_keeps_everything_even_with_max_nodes() -> None:
    clock = ManualClock()
    policy = make_policy("unlimited", AtlasConfig(max_nodes=2), EMB, clock)
    fill(policy, 7, clock)
    assert len(policy) == 7 and policy.evictions() == {}


def test_fifo_forgets_the_oldest() -> None:
    clock = ManualClock()
    policy = make_policy("fifo", AtlasConfig(max_nodes=3), EMB, clock)
    fill(policy, 5, clock)
    assert sorted(p for h in policy.held() for p in h.provenance) == ["t2", "t3", "t4"]


def test_lru_keeps_what_was_retrieved_and_probes_do_not_count() -> None:
    clock = ManualClock()
    policy = make_policy("lru", AtlasConfig(max_nodes=3), EMB, clock)
    fill(policy, 3, clock)  # t0 t1 t2
    policy.retrieve("q", unit(0), top_k=1, session_id=None, reinforce=True)  # t0 now fresh
    policy.retrieve("q", unit(1), top_k=1, session_id=None, reinforce=False)  # read-only
    fill(policy, 1, clock, start=3)
    held = sorted(p for h in policy.held() for p in h.provenance)
    assert held == ["t0", "t2", "t3"]  # t1 was least recently used


def test_random_is_seeded() -> None:
    def run(seed: int) -> list[str]:
        clock = ManualClock()
        policy = make_policy("random", AtlasConfig(max_nodes=3, seed=seed), EMB, clock)
        fill(policy, 12, clock)
        return sorted(p for h in policy.held() for p in h.provenance)

    assert run(1) == run(1)
    assert any(run(1) != run(s) for s in range(2, 8))


def test_baseline_retrieval_ranks_by_cosine_and_carries_provenance() -> None:
    clock = ManualClock()
    policy = make_policy("fifo", AtlasConfig(max_nodes=None), EMB, clock)
    fill(policy, 5, clock)
    query = unit(3) + 0.5 * unit(1)
    hits = policy.retrieve(
        "q", query / np.linalg.norm(query), top_k=2, session_id=None, reinforce=False
    )
    assert [h.provenance for h in hits] == [("t3",), ("t1",)]
    assert hits[0].score > hits[1].score and hits[0].content == "memory 3"


def test_carrying_matches_held_for_baselines() -> None:
    clock = ManualClock()
    policy = make_policy("lru", AtlasConfig(max_nodes=4), EMB, clock)
    fill(policy, 6, clock)
    wanted = frozenset({"t0", "t4", "t5"})
    assert {h.id for h in policy.carrying(wanted)} == {
        h.id for h in policy.held() if wanted.intersection(h.provenance)
    }


# -- seed-linear: the first seed as written -------------------------------------------


def seed_policy(**kw) -> tuple[SeedLinearPolicy, ManualClock]:
    clock = ManualClock()
    config = AtlasConfig.from_mapping(kw, preset("seed-linear"))
    return SeedLinearPolicy(config, EMB, clock), clock


def test_seed_linear_boosts_by_1_2_up_to_3() -> None:
    policy, clock = seed_policy(max_nodes=None)
    fill(policy, 1, clock)
    for _ in range(3):
        policy.retrieve("q", unit(0), top_k=1, session_id=None, reinforce=True)
    assert policy.mem.weight[0] == pytest.approx(1.2**3)
    for _ in range(9):
        policy.retrieve("q", unit(0), top_k=1, session_id=None, reinforce=True)
    assert policy.mem.weight[0] == SEED_CAP


def test_seed_linear_probe_is_read_only() -> None:
    policy, clock = seed_policy(max_nodes=None)
    fill(policy, 2, clock)
    before = policy.mem.weight[:2].copy()
    for _ in range(25):
        policy.retrieve("q", unit(0), top_k=1, session_id=None, reinforce=False)
    assert np.array_equal(policy.mem.weight[:2], before) and policy._access_counter == 0


def test_seed_linear_decays_every_tenth_retrieval_cumulatively() -> None:
    policy, clock = seed_policy(max_nodes=None, decay_rate=0.05)
    ids = fill(policy, 2, clock)
    policy.add("linked", unit(5), turn_id="tx", session_id="s1", links_to=ids, metadata={})
    clock.advance(4 * 3600)
    for _ in range(9):  # hits row of unit(0) only
        policy.retrieve("q", unit(0), top_k=1, session_id=None, reinforce=True)
    assert policy.mem.weight[1] == 1.0  # no decay before the 10th retrieval
    policy.retrieve("q", unit(0), top_k=1, session_id=None, reinforce=True)
    # 4 h since its last access: 1.0 - 0.05 * 4 (the 10th pass)
    assert policy.mem.weight[policy.mem.row_of[ids[1]]] == pytest.approx(0.8, abs=1e-3)
    for _ in range(10):
        policy.retrieve("q", unit(0), top_k=1, session_id=None, reinforce=True)
    # still 4 h since access: another 0.2 off (the seed subtracts total hours every pass)
    assert policy.mem.weight[policy.mem.row_of[ids[1]]] == pytest.approx(0.6, abs=1e-3)


def test_seed_linear_only_evicts_weak_memories_so_it_can_outgrow_max_nodes() -> None:
    policy, clock = seed_policy(max_nodes=2)
    fill(policy, 5, clock)
    assert len(policy) == 5  # nothing below 0.15: the seed evicts nothing
    policy.mem.weight[:2] = SEED_FLOOR
    fill(policy, 1, clock, start=10)
    assert len(policy) == 4 and policy.evictions() == {"below_threshold": 2}


def test_seed_linear_cleans_weak_orphans_but_keeps_linked_ones() -> None:
    policy, clock = seed_policy(max_nodes=None)
    ids = fill(policy, 3, clock)
    policy.add("link", unit(9), turn_id="tl", session_id="s1", links_to=[ids[0]], metadata={})
    policy.mem.weight[:3] = 0.3  # ids[0] is linked, ids[1], ids[2] are orphans
    for _ in range(10):
        policy.retrieve("q", unit(9), top_k=1, session_id=None, reinforce=True)
    held = {h.id for h in policy.held()}
    assert ids[0] in held and ids[1] not in held and ids[2] not in held
    assert policy.evictions() == {"orphan": 2}


def test_seed_linear_session_end_purge_and_fade() -> None:
    policy, clock = seed_policy(max_nodes=None, session_end_mode="purge")
    fill(policy, 3, clock)
    policy.end_session("s1")
    assert len(policy) == 0 and policy.evictions() == {"session_purge": 3}
    policy, clock = seed_policy(max_nodes=None, session_end_mode="fade")
    fill(policy, 2, clock)
    policy.end_session("s1")
    assert np.allclose(policy.mem.weight[:2], 0.05)


# -- the engine ------------------------------------------------------------------------


def test_atlas_policy_tracks_provenance_through_merges_and_evictions() -> None:
    clock = ManualClock()
    config = AtlasConfig(
        max_nodes=5, working_memory_size=0, merge_threshold=0.99, reinforce_factor=2.0
    )
    wide = HashingEmbedder(dim=384)
    policy = AtlasPolicy(config, wide, clock)
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
    ]
    for i in range(12):
        clock.advance(60)
        text = "the very same sentence" if i % 4 == 0 else f"{words[i]} stands alone"
        policy.add(
            text, wide.embed([text])[0], turn_id=f"t{i}", session_id="s1", links_to=(), metadata={}
        )
    everything = frozenset(f"t{i}" for i in range(12))
    assert {(h.id, h.provenance) for h in policy.carrying(everything)} == {
        (h.id, h.provenance) for h in policy.held()
    }
    assert len(policy) <= 5 and policy.evictions().get("capacity", 0) > 0
    merged = [h for h in policy.held() if len(h.provenance) > 1]
    assert merged and set(merged[0].provenance) <= {"t0", "t4", "t8"}


def test_atlas_policy_skips_links_to_evicted_memories() -> None:
    clock = ManualClock()
    policy = AtlasPolicy(AtlasConfig(max_nodes=2, working_memory_size=0), EMB, clock)
    ids = fill(policy, 3, clock)
    assert set(ids) - {h.id for h in policy.held()}  # one of the three is gone
    new = policy.add("x", unit(7), turn_id="tn", session_id="s1", links_to=ids, metadata={})
    assert new in {h.id for h in policy.held()}


def test_registry_lists_every_policy() -> None:
    assert set(POLICIES) == {"atlas", "fifo", "lru", "random", "unlimited", "seed-linear", "hybrid"}
