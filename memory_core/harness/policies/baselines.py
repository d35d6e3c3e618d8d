"""The baselines the engine must beat: cosine retrieval over every held memory, differing
only in what they forget at capacity (nothing, the oldest, the least recently used, a
random one) — and ``hybrid``, FIFO forgetting with BM25 + cosine retrieval."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memory_core.embedding.base import Embedder
from memory_core.engine.clock import Clock
from memory_core.engine.config import AtlasConfig
from memory_core.engine.index.lexical import LexicalIndex
from memory_core.engine.model import EvictionReason
from memory_core.harness.policies.base import Held, Hit, Lifecycle


class _VectorMemory:
    """Contiguous vectors plus per-memory bookkeeping; removal swaps the last row in."""

    def __init__(self, dim: int) -> None:
        self.vectors = np.zeros((64, dim), dtype=np.float32)
        self.ids: list[str] = []
        self.provenance: list[tuple[str, ...]] = []
        self.contents: list[str] = []
        self.sessions: list[str] = []
        self.seq = np.zeros(64, dtype=np.int64)  # insertion order
        self.used = np.zeros(64, dtype=np.int64)  # last add/retrieval tick
        self.weight = np.ones(64, dtype=np.float64)
        self.accessed = np.zeros(64, dtype=np.float64)  # clock time of last access
        self.row_of: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def append(
        self,
        node_id: str,
        vector: np.ndarray,
        provenance: tuple[str, ...],
        content: str,
        *,
        session_id: str,
        seq: int,
        now: float,
    ) -> int:
        row = len(self.ids)
        if row == len(self.seq):
            self._grow()
        self.vectors[row] = vector
        self.seq[row] = self.used[row] = seq
        self.weight[row] = 1.0
        self.accessed[row] = now
        self.ids.append(node_id)
        self.provenance.append(provenance)
        self.contents.append(content)
        self.sessions.append(session_id)
        self.row_of[node_id] = row
        return row

    def remove(self, row: int) -> str:
        last = len(self.ids) - 1
        gone = self.ids[row]
        if row != last:
            self.vectors[row] = self.vectors[last]
            for column in (self.seq, self.used, self.weight, self.accessed):
                column[row] = column[last]
            self.ids[row] = self.ids[last]
            self.provenance[row] = self.provenance[last]
            self.contents[row] = self.contents[last]
            self.sessions[row] = self.sessions[last]
            self.row_of[self.ids[row]] = row
        self.ids.pop()
        self.provenance.pop()
        self.contents.pop()
        self.sessions.pop()
        del self.row_of[gone]
        return gone

    def cosine(self, vector: np.ndarray) -> np.ndarray:
        scores: np.ndarray = self.vectors[: len(self.ids)] @ vector
        return scores

    def top(self, scores: np.ndarray, k: int) -> np.ndarray:
        """Rows of the ``k`` best scores; ties go to the older memory (deterministic)."""
        n = len(scores)
        return np.lexsort((self.seq[:n], -scores))[:k]

    def _grow(self) -> None:
        size = 2 * len(self.seq)
        self.vectors = np.resize(self.vectors, (size, self.vectors.shape[1]))
        self.seq, self.used = np.resize(self.seq, size), np.resize(self.used, size)
        self.weight, self.accessed = np.resize(self.weight, size), np.resize(self.accessed, size)


class Baseline:
    """Cosine retrieval over every held memory; subclasses choose the eviction victim."""

    name = "baseline"

    def __init__(self, config: AtlasConfig, embedder: Embedder, clock: Clock) -> None:
        self.mem = _VectorMemory(embedder.dim)
        self.clock = clock
        self.max_nodes = config.max_nodes
        self.rng = random.Random(config.seed)
        self.trace: list[Lifecycle] = []
        self._tick = 0
        self._evicted: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self.mem)

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
        self._tick += 1
        while self.max_nodes is not None and len(self.mem) >= self.max_nodes:
            self._evict(self._victim(), EvictionReason.CAPACITY)
        return self._append(text, vector, turn_id, session_id)

    def retrieve(
        self,
        text: str,
        vector: np.ndarray,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
    ) -> list[Hit]:
        if not len(self.mem):
            return []
        scores = self.mem.cosine(vector)
        rows = self.mem.top(scores, top_k)
        if reinforce:
            self._tick += 1
            self.mem.used[rows] = self._tick
        return [self._hit(int(r), float(scores[r])) for r in rows]

    def end_session(self, session_id: str) -> None:
        """Baselines keep everything at a session's end."""

    def finish(self) -> None:
        """Nothing is pending."""

    def held(self) -> list[Held]:
        m = self.mem
        return [Held(m.ids[i], m.provenance[i], float(m.weight[i])) for i in range(len(m))]

    def carrying(self, turn_ids: frozenset[str]) -> list[Held]:
        m = self.mem
        return [
            Held(m.ids[i], m.provenance[i], float(m.weight[i]))
            for i in range(len(m))
            if not turn_ids.isdisjoint(m.provenance[i])
        ]

    def evictions(self) -> dict[str, int]:
        return dict(self._evicted)

    def _append(self, text: str, vector: np.ndarray, turn_id: str, session_id: str) -> str:
        """Hold one turn as a new memory, named by the policy and the current tick."""
        node_id = f"{self.name}-{self._tick}"
        self.mem.append(
            node_id,
            vector,
            (turn_id,),
            text,
            session_id=session_id,
            seq=self._tick,
            now=self.clock.now(),
        )
        return node_id

    def _hit(self, row: int, score: float) -> Hit:
        return Hit(self.mem.ids[row], self.mem.provenance[row], score, self.mem.contents[row])

    def _victim(self) -> int:
        raise NotImplementedError

    def _evict(self, row: int, reason: EvictionReason) -> None:
        m = self.mem
        record = Lifecycle(
            self.clock.now(),
            "evicted",
            m.ids[row],
            reason=reason.value,
            weight=float(m.weight[row]),
            content=m.contents[row],
        )
        m.remove(row)
        self.trace.append(record)
        self._evicted[reason.value] += 1


class UnlimitedPolicy(Baseline):
    """Never forgets: the ceiling for retention, and a check on retrieval alone."""

    name = "unlimited"

    def __init__(self, config: AtlasConfig, embedder: Embedder, clock: Clock) -> None:
        super().__init__(config, embedder, clock)
        self.max_nodes = None


class FifoPolicy(Baseline):
    """Forgets the oldest memory."""

    name = "fifo"

    def _victim(self) -> int:
        return int(np.argmin(self.mem.seq[: len(self.mem)]))


class HybridPolicy(FifoPolicy):
    """The strong simple retriever every engine number is held against.

    Plain BM25 and plain dense cosine over the same texts and vectors, each cut to its
    ``HYBRID_DEPTH`` best, fused by reciprocal rank (constant ``HYBRID_RRF_K``): what a
    careful engineer writes in ten lines. No weights, no decay, no reinforcement; at
    ``max_nodes`` it forgets the oldest memory (``hybrid`` with a limit is hybrid-fifo).
    """

    name = "hybrid"

    def __init__(self, config: AtlasConfig, embedder: Embedder, clock: Clock) -> None:
        super().__init__(config, embedder, clock)
        self.lexical = LexicalIndex()

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
        node_id = super().add(
            text,
            vector,
            turn_id=turn_id,
            session_id=session_id,
            links_to=links_to,
            metadata=metadata,
        )
        self.lexical.add(self._tick, text)
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
        m, n = self.mem, len(self.mem)
        if n == 0:
            return []
        depth = min(HYBRID_DEPTH, n)
        dense_rows = m.top(m.cosine(vector), depth)
        _, lexical_seqs = self.lexical.search(text, depth)
        fused: dict[int, float] = {}
        for rank, row in enumerate(dense_rows.tolist()):
            fused[row] = 1.0 / (HYBRID_RRF_K + rank + 1)
        for rank, seq in enumerate(lexical_seqs.tolist()):
            row = m.row_of[f"{self.name}-{seq}"]
            fused[row] = fused.get(row, 0.0) + 1.0 / (HYBRID_RRF_K + rank + 1)
        best = sorted(fused, key=lambda r: (-fused[r], int(m.seq[r])))[:top_k]
        return [self._hit(row, fused[row]) for row in best]

    def _evict(self, row: int, reason: EvictionReason) -> None:
        self.lexical.remove(int(self.mem.seq[row]))
        super()._evict(row, reason)


HYBRID_DEPTH = 50
HYBRID_RRF_K = 60.0


class LruPolicy(Baseline):
    """Forgets the memory least recently added or retrieved."""

    name = "lru"

    def _victim(self) -> int:
        n = len(self.mem)
        return int(np.lexsort((self.mem.seq[:n], self.mem.used[:n]))[0])


class RandomPolicy(Baseline):
    """Forgets a random memory (seeded, so runs repeat)."""

    name = "random"

    def _victim(self) -> int:
        return self.rng.randrange(len(self.mem))


# The first seed's constants, kept literal: the baseline is the seed "as written".
