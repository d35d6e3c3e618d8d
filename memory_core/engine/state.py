"""The atlas's internal state, shared by the façade and its private helper modules."""

from __future__ import annotations

import random
from collections import Counter, deque
from dataclasses import dataclass, field

import numpy as np

from memory_core.embedding.base import Embedder
from memory_core.engine.clock import Clock
from memory_core.engine.config import AtlasConfig
from memory_core.engine.events import EventBus
from memory_core.engine.families import FamilyIndex
from memory_core.engine.graph import EdgeStore
from memory_core.engine.index import LexicalIndex, VectorIndex
from memory_core.engine.index.lexical import PostingColumns
from memory_core.engine.table import NodeTable


@dataclass(slots=True)
class SessionState:
    """Per-session bookkeeping; dropped whole on purge (its memories live in the
    atlas-wide table and indexes, listed per session by ``NodeTable.members``)."""

    id: str
    code: int
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
    vectors: VectorIndex
    """One vector index for every session's memories (ids are slots)."""
    lexical: LexicalIndex
    """One BM25 index for every session's memories (slots, grouped by session code)."""
    sessions: dict[str, SessionState] = field(default_factory=dict)
    session_names: list[str | None] = field(default_factory=list)
    counters: Counter[str] = field(default_factory=Counter)
    last_decay: float = 0.0
    families: FamilyIndex = field(default_factory=FamilyIndex)
    """Templated lines by family (derived from the texts; ``engine.families``)."""

    def session_of(self, slot: int) -> str:
        return str(self.session_names[int(self.table.session[slot])])

    def new_session(self, session_id: str, now: float) -> SessionState:
        state = SessionState(
            id=session_id, code=len(self.session_names), working=deque(), created_at=now
        )
        self.session_names.append(session_id)
        self.sessions[session_id] = state
        return state

    def session_slots(self, session: SessionState) -> np.ndarray:
        """The session's slots, ascending (a copy)."""
        return np.sort(self.table.members(session.code))

    def index(
        self,
        slots: np.ndarray,
        vectors: np.ndarray | None,
        postings: PostingColumns | None = None,
    ) -> None:
        """Make new memories findable: list them in their sessions, add their vectors and
        texts to the atlas-wide indexes. Their table rows (session and content included)
        must be filled; ``vectors[i]`` belongs to ``slots[i]``. The one entry point for
        inserts and snapshot restores alike; ``vectors.reconstruct`` reads vectors back.
        ``vectors`` None: they are in the vector index already (a snapshot's HNSW graph);
        ``postings``: the texts' BM25 postings, saved by a snapshot (by slot), for an
        empty index to adopt instead of tokenising the texts."""
        table = self.table
        codes = table.session[slots]
        if vectors is not None:
            self.vectors.add(slots, vectors)
        if len(slots) == 1:  # an insert: the one-document paths cost less
            slot, code = int(slots[0]), int(codes[0])
            table.join(slot, code)
            self.lexical.add(slot, str(table.contents[slot]), code)
        else:
            table.join_many(slots, codes)
            texts = [str(table.contents[s]) for s in slots.tolist()]
            if postings is None:
                self.lexical.add_many(slots, texts, codes)
            else:
                self.lexical.restore(slots, texts, codes, postings)

    def new_id(self) -> str:
        while True:
            ident = f"m{self.rng.getrandbits(64):016x}"
            if ident not in self.table.slot_of:
                return ident


def vector_index(config: AtlasConfig, dim: int) -> VectorIndex:
    """The atlas-wide vector index under ``config``'s HNSW settings."""
    return VectorIndex(
        dim,
        hnsw_threshold=config.hnsw_threshold,
        m=config.hnsw_m,
        ef_search=config.hnsw_ef_search,
        ef_construction=config.hnsw_ef_construction,
    )
