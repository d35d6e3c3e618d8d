"""Dry run: with these parameters, what would be evicted over the next hours?

The forecast leaves the atlas untouched. It reads the memories once, then evaluates the
engine's own ``composite_weight`` forward for every memory at every step in one
broadcast (steps x memories) and applies the decay pass's own eviction rules
(``forgetting.eviction_masks``: expired, below ``evict_threshold``, orphaned below
``orphan_threshold``; pinned and working-memory items kept), assuming nothing is
accessed or added meanwhile. The association term is held at its current value (one step over the current
edges, as the decay pass computes it). Different parameters (e.g. a decay-rate slider)
are a different ``config``; the atlas keeps its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.config import AtlasConfig
from memory_core.engine.decay import composite_weight
from memory_core.engine.forgetting import eviction_masks
from memory_core.engine.model import EvictionReason
from memory_core.errors import InputError


@dataclass(frozen=True, slots=True)
class ForecastEviction:
    node_id: str
    content: str
    hours: float  # from now until the pass that would evict it
    reason: str
    weight_now: float


@dataclass(frozen=True, slots=True)
class Forecast:
    """Step times (hours from now), memories left and mean weight per step, evictions."""

    hours: np.ndarray
    remaining: np.ndarray
    mean_weight: np.ndarray
    evictions: tuple[ForecastEviction, ...]

    def by_reason(self) -> dict[str, int]:
        return dict(Counter(e.reason for e in self.evictions))


def forecast(
    atlas: ElasticMemoryAtlas,
    *,
    hours: float,
    steps: int = 48,
    config: AtlasConfig | None = None,
) -> Forecast:
    """Evaluate ``steps`` decay passes evenly spread over the next ``hours``."""
    if not (isinstance(hours, (int, float)) and 0 < hours <= 24 * 365 * 10):
        raise InputError("hours", f"must be in (0, 87600], got {hours!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 10_000:
        raise InputError("steps", f"must be an integer in [1, 10000], got {steps!r}")
    cfg = config or atlas.config
    with atlas.lock:
        nodes = atlas.nodes()
        edges = atlas.edges()
        working_ids = {i for s in atlas.sessions() for i in atlas.session_info(s)["working"]}
        now = atlas.clock.now()
    offsets = np.linspace(hours / steps, hours, steps)
    n = len(nodes)
    if n == 0:
        empty = np.zeros(steps)
        return Forecast(offsets, empty.astype(int), empty, ())

    row = {node.id: i for i, node in enumerate(nodes)}
    strength = np.array([m.strength for m in nodes])
    accessed = np.array([m.last_accessed_at for m in nodes])
    counts = np.array([m.access_count for m in nodes], dtype=np.float64)
    created = np.array([m.created_at for m in nodes])
    expires = np.array([np.inf if m.expires_at is None else m.expires_at for m in nodes])
    pinned = np.array([m.pinned for m in nodes])
    working = np.array([m.id in working_ids for m in nodes])
    strongest: dict[tuple[int, int], float] = {}  # a pair's strongest relation, as the engine
    for e in edges:
        a, b = sorted((row[e.source_id], row[e.target_id]))
        strongest[(a, b)] = max(strongest.get((a, b), 0.0), e.strength)
    src = np.array([a for a, _ in strongest], dtype=np.int64)
    dst = np.array([b for _, b in strongest], dtype=np.int64)
    link = np.array(list(strongest.values()), dtype=np.float64)
    degree = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    assoc = _association(
        composite_weight(strength, accessed, counts, np.zeros(n), now, cfg), src, dst, link, degree
    )

    # hours since access at now + offset == hours since (accessed - offset) at now
    shifted = accessed[None, :] - 3600.0 * offsets[:, None]
    weight = composite_weight(
        np.broadcast_to(strength, shifted.shape),
        shifted,
        np.broadcast_to(counts, shifted.shape),
        np.broadcast_to(assoc, shifted.shape),
        now,
        cfg,
    )
    expired, weak, orphan = eviction_masks(
        cfg,
        weight=weight,
        now=now + 3600.0 * offsets[:, None],
        expires=expires,
        created=created,
        degree=degree,
        pinned=pinned,
        working=working,
    )
    gone = expired | weak | orphan
    first = np.where(gone.any(axis=0), gone.argmax(axis=0), steps)
    alive = np.arange(steps)[:, None] < first[None, :]
    remaining = alive.sum(axis=1)
    mean_weight = np.where(
        remaining > 0, (weight * alive).sum(axis=1) / np.maximum(remaining, 1), 0.0
    )
    evictions = []
    for i in np.flatnonzero(first < steps)[np.argsort(first[first < steps], kind="stable")]:
        step = first[i]
        reason = (
            EvictionReason.EXPIRED
            if expired[step, i]
            else EvictionReason.BELOW_THRESHOLD
            if weak[step, i]
            else EvictionReason.ORPHAN
        )
        evictions.append(
            ForecastEviction(
                nodes[i].id, nodes[i].content, float(offsets[step]), reason.value, nodes[i].weight
            )
        )
    return Forecast(offsets, remaining, mean_weight, tuple(evictions))


def _association(
    weight: np.ndarray, src: np.ndarray, dst: np.ndarray, link: np.ndarray, degree: np.ndarray
) -> np.ndarray:
    """One PageRank-like step: sum over neighbours j of strength_ij * weight_j / degree_j."""
    spread = weight / np.maximum(degree, 1)
    n = len(weight)
    return np.bincount(src, weights=link * spread[dst], minlength=n) + np.bincount(
        dst, weights=link * spread[src], minlength=n
    )
