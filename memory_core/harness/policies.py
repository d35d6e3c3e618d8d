"""Memory policies the replay drives: the engine itself and the baselines it must beat.

Every policy sits behind one small ``MemoryPolicy`` protocol so that the replay loop,
the metrics and the explanations never care which one runs. The baselines retrieve by
plain cosine similarity over the precomputed vectors and differ only in what they forget:

- ``unlimited``: forgets nothing (the upper bound on retention);
- ``fifo``: at capacity, forgets the oldest memory;
- ``lru``: at capacity, forgets the memory least recently added or retrieved;
- ``random``: at capacity, forgets a uniformly random memory (seeded by ``config.seed``);
- ``seed-linear``: the first seed's ``ElasticMemoryAtlas`` as written (see ``SeedLinearPolicy``).

``atlas`` wraps ``ElasticMemoryAtlas`` with the run's configuration.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from memory_core.embedding.base import Embedder
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import Clock
from memory_core.engine.config import AtlasConfig
from memory_core.engine.events import (
    AtlasEvent,
    MemoriesMerged,
    MemoryAdded,
    MemoryEvicted,
    SummaryCreated,
)
from memory_core.engine.index.lexical import LexicalIndex
from memory_core.engine.model import EvictionReason
from memory_core.errors import InputError


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved memory as the harness sees it."""

    id: str
    provenance: tuple[str, ...]
    score: float
    content: str = ""


@dataclass(frozen=True, slots=True)
class Held:
    """A memory still held; ``weight`` is the policy's own keep-worthiness (1.0 if it has none)."""

    id: str
    provenance: tuple[str, ...]
    weight: float


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """A memory leaving or being folded into another; what explanations are built from.

    ``kind`` is ``evicted`` (with ``reason``), ``merged`` (``node_id`` folded into
    ``into``) or ``summarized`` (``node_id`` covered by summary ``into``).
    """

    at: float
    kind: str
    node_id: str
    reason: str = ""
    into: str = ""
    weight: float = float("nan")
    content: str = ""


class MemoryPolicy(Protocol):
    """What the replay needs from a memory; see ``replay`` for the loop that drives it."""

    name: str
    trace: list[Lifecycle]

    def __len__(self) -> int: ...

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
        """Store one turn; returns the id of the memory that now carries it."""
        ...

    def retrieve(
        self,
        text: str,
        vector: np.ndarray,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
    ) -> list[Hit]:
        """Best ``top_k`` memories; ``reinforce=False`` must leave the state unchanged."""
        ...

    def end_session(self, session_id: str) -> None: ...

    def finish(self) -> None:
        """Housekeeping once the last turn was replayed, before the probes."""
        ...

    def held(self) -> list[Held]: ...

    def carrying(self, turn_ids: frozenset[str]) -> list[Held]:
        """Held memories whose provenance names any of ``turn_ids`` (cheap, for sampling)."""
        ...

    def evictions(self) -> dict[str, int]:
        """Counts by ``EvictionReason`` value."""
        ...


PolicyFactory = Callable[[AtlasConfig, Embedder, Clock], MemoryPolicy]


# -- the engine -------------------------------------------------------------------


class AtlasPolicy:
    """``ElasticMemoryAtlas`` under the run's configuration."""

    name = "atlas"

    def __init__(self, config: AtlasConfig, embedder: Embedder, clock: Clock) -> None:
        self.atlas = ElasticMemoryAtlas(config, embedder=_Unforgetting(embedder), clock=clock)
        self.trace: list[Lifecycle] = []
        self._evicted: Counter[str] = Counter()
        # provenance of every held memory, kept in step through events, so that sampling
        # the memories that carry key facts does not snapshot the whole atlas every turn
        self._provenance: dict[str, tuple[str, ...]] = {}
        self.atlas.subscribe(self._on_event)

    def __len__(self) -> int:
        return len(self.atlas)

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
        links = [i for i in links_to if i in self.atlas]
        node = self.atlas.add(
            text,
            session_id=session_id,
            metadata=metadata,
            provenance=(turn_id,),
            links_to=links,
            embedding=vector,
        )
        if node.id in self.atlas:  # also right when the turn merged into an older memory
            self._provenance[node.id] = node.provenance
        return node.id

    def retrieve(
        self,
        text: str,
        vector: np.ndarray,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
    ) -> list[Hit]:
        if len(self.atlas) == 0:
            return []
        if session_id is not None and session_id not in self.atlas.sessions():
            session_id = None  # the session's first turn: nothing of its own yet
        hits = self.atlas.retrieve(
            text,
            top_k,
            session_id=session_id,
            cross_session=session_id is not None,
            reinforce=reinforce,
            query_embedding=vector,
        )
        return [Hit(h.node.id, h.node.provenance, h.score, h.node.content) for h in hits]

    def end_session(self, session_id: str) -> None:
        if session_id in self.atlas.sessions():
            self.atlas.end_session(session_id)

    def finish(self) -> None:
        # One decay pass now, so that the read-only probes that follow see settled weights
        # and cannot trigger a pass (and evictions) between two probes.
        self.atlas.decay()

    def held(self) -> list[Held]:
        return [Held(n.id, n.provenance, n.weight) for n in self.atlas.nodes()]

    def carrying(self, turn_ids: frozenset[str]) -> list[Held]:
        found = [
            (node_id, provenance)
            for node_id, provenance in self._provenance.items()
            if not turn_ids.isdisjoint(provenance)
        ]
        weights = self.atlas.weights(node_id for node_id, _ in found)
        return [
            Held(node_id, provenance, weight)
            for (node_id, provenance), weight in zip(found, weights, strict=True)
        ]

    def evictions(self) -> dict[str, int]:
        return dict(self._evicted)

    def _on_event(self, event: AtlasEvent) -> None:
        if isinstance(event, MemoryAdded):
            self._provenance[event.node_id] = event.provenance
        elif isinstance(event, MemoryEvicted):
            self._provenance.pop(event.node_id, None)
            self._evicted[event.reason.value] += 1
            if event.reason is not EvictionReason.MERGED:
                self.trace.append(
                    Lifecycle(
                        event.at,
                        "evicted",
                        event.node_id,
                        reason=event.reason.value,
                        weight=event.weight,
                        content=event.content,
                    )
                )
        elif isinstance(event, MemoriesMerged) and event.merged_id is not None:
            kept = self._provenance.get(event.kept_id, ())
            merged = self._provenance.get(event.merged_id, ())
            self._provenance[event.kept_id] = tuple(dict.fromkeys((*kept, *merged)))
            self.trace.append(
                Lifecycle(
                    event.at,
                    "merged",
                    event.merged_id,
                    into=event.kept_id,
                    content=event.merged_content,
                )
            )
        elif isinstance(event, SummaryCreated):
            self.trace.extend(
                Lifecycle(event.at, "summarized", source, into=event.node_id)
                for source in event.source_ids
            )


class _Unforgetting:
    """The harness's embedder minus ``forget``: a purged simulated session must not wipe
    the harness's shared embedding cache (the atlas erases through ``forget`` if present)."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._inner.embed(texts)


# -- baselines ----------------------------------------------------------------------


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


class _Baseline:
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


class UnlimitedPolicy(_Baseline):
    """Never forgets: the ceiling for retention, and a check on retrieval alone."""

    name = "unlimited"

    def __init__(self, config: AtlasConfig, embedder: Embedder, clock: Clock) -> None:
        super().__init__(config, embedder, clock)
        self.max_nodes = None


class FifoPolicy(_Baseline):
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


class LruPolicy(_Baseline):
    """Forgets the memory least recently added or retrieved."""

    name = "lru"

    def _victim(self) -> int:
        n = len(self.mem)
        return int(np.lexsort((self.mem.seq[:n], self.mem.used[:n]))[0])


class RandomPolicy(_Baseline):
    """Forgets a random memory (seeded, so runs repeat)."""

    name = "random"

    def _victim(self) -> int:
        return self.rng.randrange(len(self.mem))


# The first seed's constants, kept literal: the baseline is the seed "as written".
SEED_BOOST = 1.2
SEED_CAP = 3.0
SEED_FLOOR = 0.1
SEED_EVICT_BELOW = 0.15
SEED_ORPHAN_BELOW = 0.5
SEED_DECAY_EVERY = 10
SEED_SCORE = (0.5, 0.3, 0.2)  # similarity, weight, recency (the seed's section 4.2)
SEED_FADE_WEIGHT = 0.05


class SeedLinearPolicy(_Baseline):
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


POLICIES: dict[str, PolicyFactory] = {
    "atlas": AtlasPolicy,
    "fifo": FifoPolicy,
    "lru": LruPolicy,
    "random": RandomPolicy,
    "unlimited": UnlimitedPolicy,
    "seed-linear": SeedLinearPolicy,
    "hybrid": HybridPolicy,
}
BASELINES: tuple[str, ...] = ("fifo", "lru", "random", "unlimited", "seed-linear", "hybrid")


def make_policy(name: str, config: AtlasConfig, embedder: Embedder, clock: Clock) -> MemoryPolicy:
    """Build a policy by name; the error lists the names that exist."""
    factory = POLICIES.get(name)
    if factory is None:
        raise InputError("policy", f"must be one of {', '.join(POLICIES)}, got {name!r}")
    return factory(config, embedder, clock)
