"""Decay curves and the composite weight against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memory_core.engine.config import AtlasConfig
from memory_core.engine.decay import DECAY_CURVES, base_strength, composite_weight, hours_since

NOW = 1_000_000.0
HOUR = 3600.0


def weight_of(
    cfg: AtlasConfig, strength: float, hours: float, count: int = 0, assoc: float = 0.0
) -> float:
    return float(
        composite_weight(
            np.array([strength]),
            np.array([NOW - hours * HOUR]),
            np.array([count]),
            np.array([assoc], dtype=np.float32),
            NOW,
            cfg,
        )[0]
    )


def bare(strategy: str, **extra: float) -> AtlasConfig:
    """Only the curve: no gains, wide clip range."""
    return AtlasConfig(
        decay_strategy=strategy,
        frequency_gain=0.0,
        recency_gain=0.0,
        association_gain=0.0,
        weight_floor=0.0,
        weight_cap=10.0,
        **extra,  # type: ignore[arg-type]
    )


def test_registry_names_match_config_choices() -> None:
    assert set(DECAY_CURVES) == {"linear", "exponential", "ebbinghaus", "power"}


@pytest.mark.parametrize(
    ("strategy", "extra", "strength", "hours", "count", "expected"),
    [
        # the seed: 1.0 - 0.05 * 10 h
        ("linear", {"decay_rate": 0.05}, 1.0, 10.0, 0, 0.5),
        ("linear", {"decay_rate": 0.05}, 2.0, 0.0, 0, 2.0),
        # 1.5 * e^(-0.1 * 5)
        ("exponential", {"decay_rate": 0.1}, 1.5, 5.0, 0, 1.5 * math.exp(-0.5)),
        # half-life ln2 / rate
        ("exponential", {"decay_rate": 0.05}, 1.0, math.log(2) / 0.05, 0, 0.5),
        # R = exp(-t / S), S = 24 h * (1 + recalls)
        ("ebbinghaus", {"stability_hours": 24.0}, 1.0, 24.0, 0, math.exp(-1.0)),
        ("ebbinghaus", {"stability_hours": 24.0}, 1.0, 24.0, 2, math.exp(-1.0 / 3.0)),
        # (1 + t)^-rate
        ("power", {"decay_rate": 0.5}, 1.0, 3.0, 0, 0.5),
        ("power", {"decay_rate": 1.0}, 2.0, 9.0, 0, 0.2),
    ],
)
def test_curves_numerically(
    strategy: str,
    extra: dict[str, float],
    strength: float,
    hours: float,
    count: int,
    expected: float,
) -> None:
    cfg = bare(strategy, **extra)
    assert weight_of(cfg, strength, hours, count) == pytest.approx(expected, rel=1e-9)


def test_linear_goes_below_zero_then_clips_to_floor() -> None:
    cfg = AtlasConfig(
        decay_strategy="linear",
        decay_rate=0.05,
        frequency_gain=0.0,
        recency_gain=0.0,
        association_gain=0.0,
        weight_floor=0.1,
    )
    assert weight_of(cfg, 1.0, 100.0) == pytest.approx(0.1)


def test_composite_adds_every_gain() -> None:
    cfg = AtlasConfig(
        decay_strategy="exponential",
        decay_rate=0.1,
        frequency_gain=0.2,
        recency_gain=0.3,
        association_gain=0.5,
        weight_floor=0.0,
        weight_cap=10.0,
    )
    hours, count, assoc = 2.0, 3, 0.8
    expected = (
        1.2 * math.exp(-0.1 * hours)
        + 0.2 * math.log(count + 1)
        + 0.3 / (hours + 1)
        + 0.5 * float(np.float32(assoc))
    )
    assert weight_of(cfg, 1.2, hours, count, assoc) == pytest.approx(expected, rel=1e-6)


def test_weight_is_clipped_to_cap_and_floor() -> None:
    cfg = AtlasConfig(weight_floor=0.2, weight_cap=1.0, base_weight_max=1.0, evict_threshold=0.3)
    assert weight_of(cfg, 5.0, 0.0, 100, 50.0) == 1.0
    assert weight_of(cfg, 0.0, 10_000.0) == 0.2


def test_future_access_times_count_as_now() -> None:
    cfg = bare("linear", decay_rate=1.0)
    assert weight_of(cfg, 1.0, -5.0) == pytest.approx(1.0)


def test_vectorised_over_many_memories() -> None:
    cfg = bare("exponential", decay_rate=0.2)
    hours = np.arange(1000, dtype=np.float64)
    out = composite_weight(
        np.ones(1000), NOW - hours * HOUR, np.zeros(1000), np.zeros(1000), NOW, cfg
    )
    np.testing.assert_allclose(out, np.exp(-0.2 * hours))


def test_given_hours_give_the_same_weights_bit_for_bit() -> None:
    """A retrieve hands its recency's hours to the weight (``hours=``): same numbers."""
    rng = np.random.default_rng(3)
    accessed = NOW - rng.random(300) * 500 * HOUR
    accessed[:5] = NOW + HOUR  # stamped later than now
    strength, counts, assoc = rng.random(300) + 0.5, rng.integers(0, 9, 300), rng.random(300)
    for cfg in [bare(strategy, decay_rate=0.1) for strategy in DECAY_CURVES] + [AtlasConfig()]:
        plain = composite_weight(strength, accessed, counts, assoc, NOW, cfg)
        given = composite_weight(
            strength, accessed, counts, assoc, NOW, cfg, hours=hours_since(accessed, NOW)
        )
        assert plain.tobytes() == given.tobytes()


def test_base_strength_interpolates_importance() -> None:
    cfg = AtlasConfig(base_weight_min=0.6, base_weight_max=1.4)
    assert base_strength(0.0, cfg) == pytest.approx(0.6)
    assert base_strength(1.0, cfg) == pytest.approx(1.4)
    assert base_strength(0.25, cfg) == pytest.approx(0.8)
