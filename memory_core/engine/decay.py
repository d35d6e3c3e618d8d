"""Decay curves and the composite weight.

    weight = clip( decay(strength, hours_since_access)
                   + frequency_gain * log(access_count + 1)
                   + recency_gain / (hours_since_access + 1)
                   + association_gain * association,
                   weight_floor, weight_cap )

``strength`` starts at the importance-derived base weight and is multiplied by
``reinforce_factor`` (capped) on each retrieval. A curve is a plain typed callable,
chosen by name from ``DECAY_CURVES``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memory_core.engine.config import AtlasConfig

DecayCurve = Callable[[np.ndarray, np.ndarray, np.ndarray, AtlasConfig], np.ndarray]
"""(strength, hours since last access, access counts, config) -> decayed strength."""


def linear(
    strength: np.ndarray, hours: np.ndarray, counts: np.ndarray, cfg: AtlasConfig
) -> np.ndarray:
    """The first seed's curve: lose ``decay_rate`` weight units per hour unused."""
    return strength - cfg.decay_rate * hours


def exponential(
    strength: np.ndarray, hours: np.ndarray, counts: np.ndarray, cfg: AtlasConfig
) -> np.ndarray:
    """Constant half-life ``ln 2 / decay_rate`` hours."""
    return strength * np.exp(-cfg.decay_rate * hours)


def ebbinghaus(
    strength: np.ndarray, hours: np.ndarray, counts: np.ndarray, cfg: AtlasConfig
) -> np.ndarray:
    """MemoryBank-style forgetting curve R = exp(-t / S); each recall raises stability S."""
    stability = cfg.stability_hours * (1.0 + counts)
    return strength * np.exp(-hours / stability)


def power(
    strength: np.ndarray, hours: np.ndarray, counts: np.ndarray, cfg: AtlasConfig
) -> np.ndarray:
    """Power law (1 + t)^-rate: fast early loss, long tail (Wixted & Ebbesen)."""
    return strength * np.power(1.0 + hours, -cfg.decay_rate)


DECAY_CURVES: dict[str, DecayCurve] = {
    "linear": linear,
    "exponential": exponential,
    "ebbinghaus": ebbinghaus,
    "power": power,
}


def composite_weight(
    strength: np.ndarray,
    accessed: np.ndarray,
    counts: np.ndarray,
    assoc: np.ndarray,
    now: float,
    cfg: AtlasConfig,
    *,
    hours: np.ndarray | None = None,
) -> np.ndarray:
    """Current weight of the given memories (vectorised; arrays of equal length).
    ``hours``: ``hours_since(accessed, now)`` when the caller has it already (a retrieve's
    recency reads the same hours)."""
    unclipped = weight_before_association(strength, accessed, counts, now, cfg, hours=hours)
    # ndarray.clip is np.clip without its dispatch wrapper (a few µs of ~4 calls a turn)
    weight: np.ndarray = (unclipped + cfg.association_gain * assoc).clip(
        cfg.weight_floor, cfg.weight_cap
    )
    return weight


def weight_before_association(
    strength: np.ndarray,
    accessed: np.ndarray,
    counts: np.ndarray,
    now: float,
    cfg: AtlasConfig,
    *,
    hours: np.ndarray | None = None,
) -> np.ndarray:
    """The composite weight without its association term and unclipped: the part a decay
    pass computes once, before and after its association step (``hours`` as in
    ``composite_weight``)."""
    if hours is None:
        hours = hours_since(accessed, now)
    core = DECAY_CURVES[cfg.decay_strategy](strength, hours, counts, cfg)
    unclipped: np.ndarray = (
        core + cfg.frequency_gain * _log1p_counts(counts) + cfg.recency_gain / (hours + 1.0)
    )
    return unclipped


def hours_since(accessed: np.ndarray, now: float) -> np.ndarray:
    """Hours from each last access to ``now`` (0 for an access stamped later)."""
    hours: np.ndarray = np.maximum(now - accessed, 0.0) / 3600.0
    return hours


def _log1p_counts(counts: np.ndarray) -> np.ndarray:
    """``log1p(counts)``, bit for bit, by table lookup: access counts are small integers,
    so a table up to the largest one costs far fewer logarithms than one per memory."""
    small = len(counts) >= 64 and counts.dtype.kind in "iu" and counts.min() >= 0
    top = int(counts.max()) if small else 0
    if not small or top >= len(counts):
        direct: np.ndarray = np.log1p(counts)
        return direct
    looked_up: np.ndarray = np.log1p(np.arange(top + 1, dtype=np.float64))[counts]
    return looked_up


def base_strength(importance: float, cfg: AtlasConfig) -> float:
    """Initial strength from importance in [0, 1]."""
    return cfg.base_weight_min + importance * (cfg.base_weight_max - cfg.base_weight_min)
