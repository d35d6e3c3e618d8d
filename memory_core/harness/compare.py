"""Paired A/B comparison of two parameter sets (or policies) over the same key facts.

Both arms replay the same conversations, so every key fact yields a pair of outcomes.
For each metric the difference B - A gets a percentile bootstrap confidence interval
(facts resampled with replacement, vectorised, seeded) and a paired test:

- binary outcomes (recalled, retained, correctly forgotten): the exact McNemar test, a
  two-sided binomial test on the discordant pairs (facts exactly one arm got right);
- reciprocal rank: the Wilcoxon signed-rank test on the non-zero differences.

The facts one arm kept and the other lost are listed by name, because a mean hides them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from memory_core.embedding.base import Embedder
from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError
from memory_core.harness.metrics import ConversationResult, FactOutcome
from memory_core.harness.replay import ProgressCallback, ReplaySettings, replay_all
from memory_core.harness.session_format import Conversation


@dataclass(frozen=True, slots=True)
class Arm:
    """One side of the comparison: a label, engine parameters and replay settings."""

    label: str
    config: AtlasConfig
    settings: ReplaySettings


@dataclass(frozen=True, slots=True)
class PairedDiff:
    """B - A on one metric, over ``n`` paired facts."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str


@dataclass(frozen=True, slots=True)
class FactSwing:
    """A fact exactly one arm got right."""

    conversation_id: str
    fact_id: str
    fact: str
    expect: str
    rank_a: int | None
    rank_b: int | None


@dataclass(frozen=True, slots=True)
class Comparison:
    a: str
    b: str
    diffs: tuple[PairedDiff, ...]
    a_only: tuple[FactSwing, ...]  # A right, B wrong
    b_only: tuple[FactSwing, ...]
    results_a: tuple[ConversationResult, ...]
    results_b: tuple[ConversationResult, ...]
    confidence: float

    def diff(self, metric: str) -> PairedDiff:
        for d in self.diffs:
            if d.metric == metric:
                return d
        raise InputError("metric", f"must be one of {', '.join(d.metric for d in self.diffs)}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "confidence": self.confidence,
            "diffs": [asdict(d) for d in self.diffs],
            "a_only": [asdict(f) for f in self.a_only],
            "b_only": [asdict(f) for f in self.b_only],
            "conversations_a": [r.to_dict() for r in self.results_a],
            "conversations_b": [r.to_dict() for r in self.results_b],
        }


def compare(
    conversations: Sequence[Conversation],
    a: Arm,
    b: Arm,
    *,
    embedder: Embedder | None = None,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: ProgressCallback | None = None,
) -> Comparison:
    """Replay both arms and compare them fact by fact."""
    if not 0 < confidence < 1:
        raise InputError("confidence", f"must be in (0, 1), got {confidence!r}")
    if resamples < 100:
        raise InputError("resamples", f"must be >= 100, got {resamples!r}")
    results_a = replay_all(
        conversations, a.config, settings=a.settings, embedder=embedder, progress=progress
    )
    results_b = replay_all(
        conversations, b.config, settings=b.settings, embedder=embedder, progress=progress
    )
    return compare_results(
        results_a,
        results_b,
        labels=(a.label, b.label),
        resamples=resamples,
        confidence=confidence,
        seed=seed,
    )


def compare_results(
    results_a: Sequence[ConversationResult],
    results_b: Sequence[ConversationResult],
    *,
    labels: tuple[str, str] = ("A", "B"),
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Comparison:
    """Pair already-computed results (same conversations, same key facts)."""
    pairs = _pairs(results_a, results_b)
    recalled = [p for p in pairs if p[2].expect == "recalled"]
    forgotten = [p for p in pairs if p[2].expect == "forgotten"]
    rng = np.random.default_rng(seed)

    def arrays(rows: list[tuple[str, FactOutcome, FactOutcome]], get: Any) -> tuple[Any, Any]:
        return (
            np.array([float(get(fa)) for _, fa, _ in rows]),
            np.array([float(get(fb)) for _, _, fb in rows]),
        )

    diffs = []
    for metric, rows, get, binary in (
        ("recall_at_k", recalled, lambda f: f.recalled, True),
        ("retention", recalled, lambda f: f.retained, True),
        ("mrr", recalled, lambda f: f.reciprocal_rank, False),
        ("forgetting_precision", forgotten, lambda f: not f.recalled, True),
    ):
        if rows:
            va, vb = arrays(rows, get)
            diffs.append(paired_diff(metric, va, vb, binary, rng, resamples, confidence))

    def swings(
        rows: list[tuple[str, FactOutcome, FactOutcome]], a_wins: bool
    ) -> tuple[FactSwing, ...]:
        out = []
        for conv, fa, fb in rows:
            good_a = fa.recalled if fa.expect == "recalled" else not fa.recalled
            good_b = fb.recalled if fb.expect == "recalled" else not fb.recalled
            if good_a != good_b and good_a == a_wins:
                out.append(FactSwing(conv, fa.fact_id, fa.fact, fa.expect, fa.rank, fb.rank))
        return tuple(out)

    return Comparison(
        a=labels[0],
        b=labels[1],
        diffs=tuple(diffs),
        a_only=swings(pairs, True),
        b_only=swings(pairs, False),
        results_a=tuple(results_a),
        results_b=tuple(results_b),
        confidence=confidence,
    )


def paired_diff(
    metric: str,
    a: np.ndarray,
    b: np.ndarray,
    binary: bool,
    rng: np.random.Generator,
    resamples: int,
    confidence: float,
) -> PairedDiff:
    """Mean difference, bootstrap CI and paired test of two aligned outcome arrays."""
    d = b - a
    n = len(d)
    means = d[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    if binary:
        p_value, test = mcnemar_exact(a, b), "exact McNemar"
    else:
        p_value, test = wilcoxon_p(d), "Wilcoxon signed-rank"
    return PairedDiff(
        metric=metric,
        n=n,
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        diff=float(d.mean()),
        ci_low=float(low),
        ci_high=float(high),
        p_value=p_value,
        test=test,
    )


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided exact McNemar p-value for paired 0/1 outcomes (1.0 with no discordance)."""
    a_only = int(np.sum((a > 0.5) & (b < 0.5)))
    b_only = int(np.sum((b > 0.5) & (a < 0.5)))
    if a_only + b_only == 0:
        return 1.0
    return float(stats.binomtest(a_only, a_only + b_only, 0.5).pvalue)


def wilcoxon_p(d: np.ndarray) -> float:
    """Wilcoxon signed-rank p-value of paired differences (1.0 when all are zero)."""
    nonzero = d[d != 0]
    if len(nonzero) == 0:
        return 1.0
    return float(stats.wilcoxon(nonzero).pvalue)


def _pairs(
    results_a: Sequence[ConversationResult], results_b: Sequence[ConversationResult]
) -> list[tuple[str, FactOutcome, FactOutcome]]:
    by_conv = {r.conversation_id: r for r in results_b}
    if set(by_conv) != {r.conversation_id for r in results_a}:
        raise InputError("results_b", "must cover the same conversations as results_a")
    pairs = []
    for ra in results_a:
        facts_b = {f.fact_id: f for f in by_conv[ra.conversation_id].facts}
        for fa in ra.facts:
            fb = facts_b.get(fa.fact_id)
            if fb is None:
                raise InputError("results_b", f"lacks fact {fa.fact_id!r} of {ra.conversation_id}")
            pairs.append((ra.conversation_id, fa, fb))
    return pairs
