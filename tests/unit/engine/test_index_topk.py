"""The k largest scores: the same answer as sorting every positive score."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.engine.index.topk import CUT_FROM, SAMPLE, SMALL, largest


def by_sorting(scores: np.ndarray, k: int) -> list[int]:
    """Every positive score ranked as float32, ties by lower position: the reference."""
    positive = np.flatnonzero(scores > 0)
    ranked = np.lexsort((positive, -scores[positive].astype(np.float32)))
    return positive[ranked][:k].tolist()


@settings(max_examples=80, deadline=None)
@given(
    size=st.sampled_from([0, 1, 7, 100, SMALL, SMALL + 1, SAMPLE - 1, 3 * SAMPLE + 5]),
    k=st.integers(0, 60),
    distinct=st.sampled_from([1, 3, 50, 10_000]),
    matched=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_matches_a_full_sort(size: int, k: int, distinct: int, matched: float, seed: int) -> None:
    """Few distinct values make ties at the cut; mostly zero arrays are dense tallies; up
    to ``SMALL`` scores every positive one is sorted, beyond it a sampled floor cuts first."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(1, distinct + 1, size) * 0.37
    scores[rng.random(size) >= matched] = 0.0
    assert largest(scores, k).tolist() == by_sorting(scores, k)


def test_totals_that_round_to_one_float32_tie_by_position() -> None:
    """Two float64 totals a hair apart are one float32 score: the lower position wins,
    even when only the larger one was sampled for the floor."""
    scores = np.zeros(5 * SAMPLE)  # every 5th position sampled
    scores[5] = np.nextafter(2.0, 3.0)  # sampled; float32(...) == 2.0
    scores[1] = 2.0 - 1e-12  # not sampled; float32(...) == 2.0
    scores[7] = 1.0
    assert largest(scores, 1).tolist() == [1]
    assert largest(scores, 3).tolist() == [1, 5, 7]


def test_many_over_the_floor_are_cut_at_the_kth_value_keeping_its_ties() -> None:
    """More than ``CUT_FROM`` scores over the floor: the k-th largest value cuts them
    first, and every score tied with it stays, so the lower positions still win."""
    rng = np.random.default_rng(3)
    scores = np.zeros(20 * SAMPLE)
    hit = rng.choice(len(scores), 8 * CUT_FROM, replace=False)
    scores[hit] = rng.integers(1, 6, len(hit)) * 0.37  # five values: long ties at any cut
    for k in (1, 39, 40, 41, 8 * CUT_FROM - 1, 8 * CUT_FROM, 8 * CUT_FROM + 1):
        assert largest(scores, k).tolist() == by_sorting(scores, k)
