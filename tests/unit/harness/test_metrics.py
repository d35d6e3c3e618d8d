from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memory_core.harness.metrics import (
    ConversationResult,
    EvidenceIndex,
    FactOutcome,
    first_rank,
    summarize,
    weight_percentiles,
)
from memory_core.harness.policies import Held, Hit
from memory_core.harness.session_format import KeyFact


def outcome(
    fid: str,
    rank: int | None,
    *,
    expect: str = "recalled",
    retained: bool = True,
    weight: float | None = 1.0,
) -> FactOutcome:
    return FactOutcome(fid, fid, expect, rank, retained, weight, 0.5 if weight else None, ())


def result(facts, *, turns: int = 10, nodes: int = 5, cid: str = "c") -> ConversationResult:
    return ConversationResult(cid, "atlas", turns, 5, 10, tuple(facts), nodes, {"capacity": 2}, 0.1)


def test_first_rank_is_one_based_and_matches_any_evidence_turn() -> None:
    hits = [Hit("a", ("t1",), 0.9), Hit("b", ("t7", "t3"), 0.5), Hit("c", ("t3",), 0.4)]
    assert first_rank(hits, ["t3"]) == 2
    assert first_rank(hits, ["t9", "t1"]) == 1
    assert first_rank(hits, ["t9"]) is None


def test_conversation_metrics_use_the_right_facts() -> None:
    r = result(
        [
            outcome("a", 1),
            outcome("b", 4),
            outcome("c", None, retained=False, weight=None),
            outcome("d", None, retained=True),
            outcome("f1", None, expect="forgotten"),
            outcome("f2", 2, expect="forgotten"),
        ]
    )
    assert r.recall_at_k == pytest.approx(2 / 4)
    assert r.retention == pytest.approx(3 / 4)
    assert r.mrr == pytest.approx((1 + 0.25) / 4)
    assert r.forgetting_precision == pytest.approx(1 / 2)
    assert r.mean_weight == pytest.approx(1.0)


def test_metrics_are_none_without_facts_of_that_kind() -> None:
    r = result([outcome("a", 1)])
    assert r.forgetting_precision is None
    assert result([]).recall_at_k is None


def test_summary_pools_facts_and_averages_memory() -> None:
    r1 = result([outcome("a", 1), outcome("b", None)], turns=10, nodes=5, cid="x")
    r2 = result(
        [outcome("a", 2), outcome("f", None, expect="forgotten")], turns=40, nodes=10, cid="y"
    )
    s = summarize([r1, r2])
    assert s.recall_at_k == pytest.approx(2 / 3)
    assert s.mrr == pytest.approx((1 + 0 + 0.5) / 3)
    assert s.forgetting_precision == 1.0
    assert s.final_nodes == 7.5 and s.memory_fraction == pytest.approx((0.5 + 0.25) / 2)
    assert s.evictions == {"capacity": 4} and s.facts == 4 and s.conversations == 2


def test_to_dict_has_recalled_flag_and_optional_trajectories() -> None:
    r = result([outcome("a", 1)])
    assert r.to_dict()["facts"][0]["recalled"] is True
    assert "trajectory" not in r.to_dict()["facts"][0]
    assert "trajectory" in r.to_dict(trajectories=True)["facts"][0]


def test_from_dict_reads_back_what_to_dict_wrote() -> None:
    facts = [outcome("a", 1), outcome("b", None, expect="forgotten", retained=False, weight=None)]
    r = dataclasses.replace(
        result(facts), trajectory_times=(0.0, 30.0),
        facts=tuple(dataclasses.replace(f, trajectory=(1.0, None)) for f in facts),
    )  # fmt: skip
    assert ConversationResult.from_dict(r.to_dict(trajectories=True)) == r
    assert ConversationResult.from_dict(r.to_dict()).facts[0].trajectory == ()


def test_evidence_index_takes_the_best_carrier_per_fact() -> None:
    facts = [KeyFact("k1", "f", ("t1", "t2"), "p"), KeyFact("k2", "g", ("t3",), "q")]
    index = EvidenceIndex(facts)
    held = [Held("a", ("t1",), 0.4), Held("b", ("t2", "t9"), 0.9), Held("c", ("t5",), 2.0)]
    best = index.best_weights(held)
    assert best[0] == 0.9 and np.isnan(best[1])
    assert index.turns == frozenset({"t1", "t2", "t3"})


def test_best_weights_equal_a_scan_of_every_provenance_turn() -> None:
    """The facts a provenance carries are kept per provenance (a replay samples after every
    turn); each sample must still read what a scan of every carrier's turns reads, with
    weights that move, a fact reached twice by one carrier, NaN weights and new carriers."""
    rng = np.random.default_rng(7)
    turns = [f"t{i}" for i in range(40)]
    facts = [
        KeyFact(f"k{i}", "f", tuple(rng.choice(turns, size=int(rng.integers(1, 4)))), "p")
        for i in range(25)
    ]
    index = EvidenceIndex(facts)

    def scanned(held: list[Held]) -> np.ndarray:
        best = [np.nan] * len(facts)
        for memory in held:
            for turn_id in memory.provenance:
                for i, fact in enumerate(facts):
                    if turn_id in fact.evidence and not memory.weight <= best[i]:
                        best[i] = memory.weight
        return np.array(best)

    provenances = [tuple(rng.choice(turns, size=int(rng.integers(1, 8)))) for _ in range(30)]
    provenances.append(("t1", "t1", "t2"))
    for sample in range(60):
        chosen = rng.choice(len(provenances), size=int(rng.integers(0, 20)), replace=False)
        held = [
            Held(f"m{i}", provenances[i], float(rng.random()) if sample % 7 else np.nan)
            for i in chosen.tolist()
        ]
        np.testing.assert_array_equal(index.best_weights(held), scanned(held))


def test_weight_percentiles_count_ties_half() -> None:
    held = [Held(str(i), (), w) for i, w in enumerate([0.1, 0.5, 0.5, 1.0])]
    pct = weight_percentiles(np.array([0.5, 1.0, np.nan]), held)
    assert pct[0] == pytest.approx((1 + 0.5 * 2) / 4)
    assert pct[1] == pytest.approx((3 + 0.5) / 4)
    assert np.isnan(pct[2])
    assert np.isnan(weight_percentiles(np.array([1.0]), [])).all()
