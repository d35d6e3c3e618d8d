from __future__ import annotations

import numpy as np
import pytest

from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError
from memory_core.harness.compare import (
    Arm,
    compare,
    compare_results,
    mcnemar_exact,
    paired_diff,
    wilcoxon_p,
)
from memory_core.harness.metrics import ConversationResult, FactOutcome
from memory_core.harness.replay import ReplaySettings


def facts(ranks, expect="recalled"):
    return [
        FactOutcome(f"{expect[0]}{i}", f"fact {i}", expect, r, r is not None, None, None, ())
        for i, r in enumerate(ranks)
    ]


def result(fs, cid="c") -> ConversationResult:
    return ConversationResult(cid, "atlas", 10, None, 10, tuple(fs), 5, {}, 0.0)


def test_mcnemar_exact_is_a_binomial_test_on_discordant_pairs() -> None:
    a = np.array([0, 0, 0, 0, 0, 0, 1, 1], dtype=float)
    b = np.array([1, 1, 1, 1, 1, 1, 1, 0], dtype=float)
    # 6 vs 1 discordant: P = 2 * P(X <= 1 | n=7, p=.5) = 2 * 8 / 128
    assert mcnemar_exact(a, b) == pytest.approx(16 / 128)
    assert mcnemar_exact(a, a) == 1.0


def test_wilcoxon_ignores_ties_and_is_one_without_differences() -> None:
    assert wilcoxon_p(np.zeros(5)) == 1.0
    assert wilcoxon_p(np.array([0.5, 0.4, 0.3, 0.6, 0.2, 0.7, 0.1, 0.0])) < 0.05


def test_bootstrap_ci_brackets_the_difference_and_is_seeded() -> None:
    a = np.array([0, 1, 0, 1, 0, 0, 1, 0, 0, 0], dtype=float)
    b = np.array([1, 1, 1, 1, 0, 1, 1, 0, 1, 0], dtype=float)
    d1 = paired_diff("r", a, b, True, np.random.default_rng(3), 2000, 0.95)
    d2 = paired_diff("r", a, b, True, np.random.default_rng(3), 2000, 0.95)
    assert d1 == d2
    assert d1.diff == pytest.approx(0.4)
    assert d1.ci_low <= d1.diff <= d1.ci_high and d1.ci_low > -0.01


def test_compare_results_lists_the_swings() -> None:
    ra = result(facts([1, None, 3, None]) + facts([None, 2], "forgotten"))
    rb = result(facts([1, 2, None, None]) + facts([None, None], "forgotten"))
    c = compare_results([ra], [rb], labels=("old", "new"), resamples=500)
    assert [s.fact_id for s in c.a_only] == ["r2"]
    assert [s.fact_id for s in c.b_only] == ["r1", "f1"]
    recall = c.diff("recall_at_k")
    assert (recall.mean_a, recall.mean_b, recall.diff) == (0.5, 0.5, 0.0)
    assert c.diff("forgetting_precision").diff == pytest.approx(0.5)
    assert c.to_dict()["a"] == "old"
    with pytest.raises(InputError, match="metric"):
        c.diff("nope")


def test_results_must_cover_the_same_facts() -> None:
    with pytest.raises(InputError, match="same conversations"):
        compare_results([result(facts([1]), "x")], [result(facts([1]), "y")])
    with pytest.raises(InputError, match="lacks fact"):
        compare_results([result(facts([1, 2]))], [result(facts([1]))])


def test_end_to_end_unlimited_beats_a_tiny_fifo(small, embedder) -> None:
    a = Arm("fifo", AtlasConfig(max_nodes=2), ReplaySettings(policy="fifo"))
    b = Arm("unlimited", AtlasConfig(), ReplaySettings(policy="unlimited"))
    c = compare([small], a, b, embedder=embedder, resamples=200)
    assert c.diff("retention").diff > 0
    assert "kf1" in {s.fact_id for s in c.b_only}
    assert not c.a_only or all(s.expect == "forgotten" for s in c.a_only)


def test_bad_confidence_and_resamples(small, embedder) -> None:
    arm = Arm("x", AtlasConfig(), ReplaySettings(policy="fifo"))
    with pytest.raises(InputError, match="confidence"):
        compare([small], arm, arm, embedder=embedder, confidence=1.0)
    with pytest.raises(InputError, match="resamples"):
        compare([small], arm, arm, embedder=embedder, resamples=10)
