"""The first seed's ``ElasticMemoryAtlas`` as written, replayed as a baseline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memory_core.embedding.base import Embedder
from memory_core.engine.clock import Clock
from memory_core.engine.config import AtlasConfig
from memory_core.engine.model import EvictionReason
from memory_core.harness.policies.base import Hit
from memory_core.harness.policies.baselines import Baseline

SEED_BOOST = 1.2
SEED_CAP = 3.0
SEED_FLOOR = 0.1
SEED_EVICT_BELOW = 0.15
SEED_ORPHAN_BELOW = 0.5
SEED_DECAY_EVERY = 10
SEED_SCORE = (0.5, 0.3, 0.2)  # similarity, weight, recency (the seed's section 4.2)
SEED_FADE_WEIGHT = 0.05


class SeedLinearPolicy(Baseline):
    """The first seed's ``ElasticMemoryAtlas`` as written, on the simulated clock.

    - ``add_memory``: at ``max_nodes``, evict memories with weight < 0.15 (only those,
      so the memory can outgrow ``max_nodes``); new memories weigh 1.0 and link
      ``related_to`` the given ids.
    - ``retrieve``: retrieved memories' weight x1.2 (capped at 3.0) and access time
      refreshed; every 10th retrieval runs ``_apply_decay`` (weight -= decay_rate x hours
      since last access, floor 0.1 — cumulative, as written) and ``_cleanup_orphans``
      (unlinked memories below 0.5).
    - The seed leaves similarity ranking as a comment ("combine similarity and weight");
      it is filled with the seed's own section-4.2 score ``0.5 x cosine + 0.3 x weight +
      0.2 x recency`` with recency ``1 / (hours since access + 1)`` (its section 3.3).
    - ``end_session``: ``purge`` deletes the session (the seed's method 1), ``fade`` sets
      weights to 0.05 (method 2); other modes keep.

    Read-only probes (``reinforce=False``) rank the same way without boosting or counting.
    """

    name = "seed-linear"

    def __init__(self, config: AtlasConfig, embedder: Embedder, clock: Clock) -> None:
        super().__init__(config, embedder, clock)
        self.decay_rate = config.decay_rate
        self.session_end_mode = config.session_end_mode
        self.links: dict[str, set[str]] = {}
        self._access_counter = 0

    def add(
        self,
        text: str,
        vector: np.ndarray,
        *,
        turn_id: str,
        session_id: str,
        links_to: Sequence[str],
        metadata: Mapping[str, Any],
    ) -> str:
        if self.max_nodes is not None and len(self.mem) >= self.max_nodes:
            self._evict_weak()
        self._tick += 1
        node_id = self._append(text, vector, turn_id, session_id)
        self.links[node_id] = set()
        for target in links_to:
            if target in self.links:
                self.links[node_id].add(target)
                self.links[target].add(node_id)
        return node_id

    def retrieve(
        self,
        text: str,
        vector: np.ndarray,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
    ) -> list[Hit]:
        if reinforce:
            self._access_counter += 1
        m, n, now = self.mem, len(self.mem), self.clock.now()
        if n == 0:
            return []
        cosine = m.cosine(vector)
        recency = 1.0 / ((now - m.accessed[:n]) / 3600.0 + 1.0)
        sim_w, weight_w, recency_w = SEED_SCORE
        scores = sim_w * cosine + weight_w * m.weight[:n] + recency_w * recency
        rows = m.top(scores, top_k)
        hits = [self._hit(int(r), float(scores[r])) for r in rows]
        if reinforce:
            m.weight[rows] = np.minimum(m.weight[rows] * SEED_BOOST, SEED_CAP)
            m.accessed[rows] = now
            if self._access_counter % SEED_DECAY_EVERY == 0:
                self._apply_decay()
                self._cleanup_orphans()
        return hits

    def end_session(self, session_id: str) -> None:
        rows = [i for i, s in enumerate(self.mem.sessions) if s == session_id]
        if self.session_end_mode == "purge":
            for row in sorted(rows, reverse=True):
                self._evict(row, EvictionReason.SESSION_PURGE)
        elif self.session_end_mode == "fade":
            self.mem.weight[rows] = SEED_FADE_WEIGHT

    def _apply_decay(self) -> None:
        m, n = self.mem, len(self.mem)
        hours = (self.clock.now() - m.accessed[:n]) / 3600.0
        m.weight[:n] = np.maximum(m.weight[:n] - self.decay_rate * hours, SEED_FLOOR)

    def _evict_weak(self) -> None:
        n = len(self.mem)
        for row in sorted(np.flatnonzero(self.mem.weight[:n] < SEED_EVICT_BELOW), reverse=True):
            self._evict(int(row), EvictionReason.BELOW_THRESHOLD)

    def _cleanup_orphans(self) -> None:
        m = self.mem
        orphans = [
            i for i in range(len(m)) if not self.links[m.ids[i]] and m.weight[i] < SEED_ORPHAN_BELOW
        ]
        for row in sorted(orphans, reverse=True):
            self._evict(row, EvictionReason.ORPHAN)

    def _evict(self, row: int, reason: EvictionReason) -> None:
        node_id = self.mem.ids[row]
        super()._evict(row, reason)
        for other in self.links.pop(node_id, set()):
            self.links[other].discard(node_id)
