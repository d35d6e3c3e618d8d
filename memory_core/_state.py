"""The atlas's internal state, shared by the façade and its private helper modules."""

from __future__ import annotations

import random
from collections import Counter, deque
from dataclasses import dataclass, field

import numpy as np

from memory_core._table import NodeTable
from memory_core.clock import Clock
from memory_core.config import AtlasConfig
from memory_core.embedding.base import Embedder
from memory_core.events import EventBus
from memory_core.graph import EdgeStore
from memory_core.index import LexicalIndex, VectorIndex


@dataclass(slots=True)
class SessionState:
    """Per-session search structures and bookkeeping; dropped whole on purge."""

    id: str
    code: int
    vectors: VectorIndex
    lexical: LexicalIndex
    working: deque[str]
    last_id: str | None = None
    ended: bool = False
    created_at: float = 0.0


@dataclass(slots=True)
class AtlasState:
    config: AtlasConfig
    embedder: Embedder
    clock: Clock
    table: NodeTable
    edges: EdgeStore
    bus: EventBus
    rng: random.Random
    sessions: dict[str, SessionState] = field(default_factory=dict)
    session_names: list[str | None] = field(default_factory=list)
    counters: Counter[str] = field(default_factory=Counter)
    last_decay: float = 0.0

    def session_of(self, slot: int) -> str:
        return str(self.session_names[int(self.table.session[slot])])

    def new_session(self, session_id: str, now: float) -> SessionState:
        cfg = self.config
        state = SessionState(
            id=session_id,
            code=len(self.session_names),
            vectors=VectorIndex(
                self.embedder.dim,
                hnsw_threshold=cfg.hnsw_threshold,
                m=cfg.hnsw_m,
                ef_search=cfg.hnsw_ef_search,
                ef_construction=cfg.hnsw_ef_construction,
            ),
            lexical=LexicalIndex(),
            working=deque(),
            created_at=now,
        )
        self.session_names.append(session_id)
        self.sessions[session_id] = state
        return state

    def session_slots(self, session: SessionState) -> np.ndarray:
        table = self.table
        high = table.high
        return np.flatnonzero(table.alive[:high] & (table.session[:high] == session.code))

    def new_id(self) -> str:
        while True:
            ident = f"m{self.rng.getrandbits(64):016x}"
            if ident not in self.table.slot_of:
                return ident
