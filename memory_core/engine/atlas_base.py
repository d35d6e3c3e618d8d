"""The state every part of ``ElasticMemoryAtlas`` shares, and the helpers they all use.

The atlas is one class built from mixins, one per job (``atlas_writes``, ``atlas_reads``,
``atlas_lifecycle``); this base holds what each of them needs: the state, the lock, the
decay pass every write and read may trigger, and slot, event and weight helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_core.embedding.base import Embedder, check_vectors, embed_checked
from memory_core.engine import forgetting
from memory_core.engine.clock import Clock
from memory_core.engine.config import AtlasConfig
from memory_core.engine.decay import composite_weight
from memory_core.engine.events import AtlasEvent, MemoryReinforced
from memory_core.engine.model import MemoryNode
from memory_core.engine.pending import SettlingLock
from memory_core.engine.state import AtlasState, SessionState
from memory_core.errors import NotFoundError


class AtlasBase:
    """Shared state and helpers of the atlas's mixins (never used on its own)."""

    _s: AtlasState
    _lock: SettlingLock

    # ------------------------------------------------------------------ properties
    @property
    def config(self) -> AtlasConfig:
        return self._s.config

    @property
    def clock(self) -> Clock:
        return self._s.clock

    @property
    def embedder(self) -> Embedder:
        return self._s.embedder

    @property
    def lock(self) -> SettlingLock:
        """The atlas's lock (re-entrant), for callers that need several calls to be
        atomic; taking it makes a vector insert an add left pending (``engine.pending``)."""
        return self._lock

    def decay(self) -> dict[str, int]:
        """Recompute all weights and evict expired, weak and orphaned memories; returns counts."""
        with self._lock:
            return forgetting.decay_pass(self._s, self.clock.now())

    def maybe_decay(self) -> None:
        """Run ``decay`` when ``decay_interval_seconds`` of clock time passed since the last."""
        interval = self.config.decay_interval_seconds
        if interval > 0 and self.clock.now() - self._s.last_decay >= interval:
            self.decay()

    # ------------------------------------------------------------------ internals
    def _vectors(
        self,
        texts: list[str],
        given: Sequence[Any] | np.ndarray | None,
        field: str = "embedding",
    ) -> np.ndarray:
        if given is None:
            return embed_checked(self.embedder, texts)
        return check_vectors(given, self.embedder.dim, field=field)

    def _reinforce(self, slots: np.ndarray, now: float) -> None:
        table, cfg = self._s.table, self.config
        table.strength[slots] = np.minimum(
            table.strength[slots] * cfg.reinforce_factor, cfg.weight_cap
        )
        table.count[slots] += 1
        table.accessed[slots] = now
        self._refresh_weight(slots)
        if self._s.bus.wants(MemoryReinforced):
            for slot in slots.tolist():
                self._emit(
                    MemoryReinforced,
                    session_id=self._s.session_of(slot),
                    node_id=str(table.ids[slot]),
                    weight=float(table.weight[slot]),
                    strength=float(table.strength[slot]),
                    access_count=int(table.count[slot]),
                )

    def _refresh_weight(self, slots: np.ndarray) -> None:
        t = self._s.table
        t.weight[slots] = composite_weight(
            t.strength[slots],
            t.accessed[slots],
            t.count[slots],
            t.assoc[slots],
            self.clock.now(),
            self.config,
        )

    def _emit(self, event_type: type[AtlasEvent], **fields: Any) -> None:
        if self._s.bus.wants(event_type):
            self._s.bus.publish(event_type(at=self.clock.now(), **fields))

    def _slot(self, node_id: str) -> int:
        slot = self._s.table.slot_of.get(node_id) if isinstance(node_id, str) else None
        if slot is None:
            raise NotFoundError("memory", node_id)
        return slot

    def _session(self, session_id: str) -> SessionState:
        session = self._s.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            raise NotFoundError("session", session_id)
        return session

    def _snapshot(self, slot: int, *, with_embedding: bool = False) -> MemoryNode:
        vector = self._s.vectors.reconstruct(np.array([slot]))[0] if with_embedding else None
        return self._s.table.snapshot(slot, self._s.session_of(slot), vector)
