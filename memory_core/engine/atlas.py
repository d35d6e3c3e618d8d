"""``ElasticMemoryAtlas``: the in-process memory graph of an agent.

Writes embed, score importance, auto-link and index; reads rank hybrid evidence and
reinforce what they return; decay passes recompute every weight in one vectorised step
and evict what fell below the thresholds. Every public method takes one re-entrant
lock, so dashboard sessions and agent threads can share one atlas.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from memory_core.embedding.base import Embedder, check_vectors, embed_checked
from memory_core.engine import forgetting, snapshot
from memory_core.engine import validate as check
from memory_core.engine.clock import Clock, SystemClock
from memory_core.engine.config import SESSION_END_MODES, AtlasConfig
from memory_core.engine.decay import base_strength, composite_weight
from memory_core.engine.events import (
    AtlasEvent,
    ConfigChanged,
    EventBus,
    MemoriesMerged,
    MemoryAdded,
    MemoryLinked,
    MemoryReinforced,
    MemoryUpdated,
    SessionEnded,
    StatusChanged,
    SummaryCreated,
)
from memory_core.engine.families import (
    NOVELTY_FREE,
    build_index,
    family_key,
    novelty,
    plan_fold,
)
from memory_core.engine.graph import EdgeStore
from memory_core.engine.importance import (
    IMPORTANCE_ESTIMATORS,
    ImportanceEstimator,
    information_density,
)
from memory_core.engine.index import LexicalIndex
from memory_core.engine.model import (
    STATUS_CODES,
    EvictionReason,
    MemoryEdge,
    MemoryKind,
    MemoryNode,
    MemoryStatus,
    Relation,
    RetrievalHit,
    ScoreBreakdown,
)
from memory_core.engine.preload import preload_word_frequencies, wait_word_frequencies
from memory_core.engine.retrieval import Query, nearest, rank
from memory_core.engine.state import AtlasState, SessionState, vector_index
from memory_core.engine.summarize import ExtractiveSummarizer, Summarizer, SummaryItem
from memory_core.engine.table import ACTIVE_CODE, NodeTable, kind_code, status_code
from memory_core.errors import AtlasError, ConfigError, InputError, NotFoundError

WriteFilter = Callable[[str, Mapping[str, Any]], bool]
"""Decides whether a candidate memory is worth keeping (used by ``offer``)."""

DEPRECATION_FACTOR = 0.3


FIXED_AT_START = ("hnsw_threshold", "hnsw_m", "hnsw_ef_search", "hnsw_ef_construction", "seed")
"""Config fields ``reconfigure`` refuses to change: the indexes and RNG were built with them."""


@dataclass(slots=True, frozen=True)
class _Write:
    content: str
    session_id: str
    kind: MemoryKind
    metadata: dict[str, Any]
    importance: float
    confidence: float
    expires: float
    pinned: bool
    provenance: tuple[str, ...]
    links_to: tuple[str, ...]
    explicit_importance: bool = False
    """The caller set the importance: no estimator or family novelty changes it."""


class ElasticMemoryAtlas:
    """Elastic working/session memory for one agent process."""

    def __init__(
        self,
        config: AtlasConfig | None = None,
        *,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        importance: ImportanceEstimator | str = "density",
        summarizer: Summarizer | None = None,
        write_filter: WriteFilter | None = None,
    ) -> None:
        cfg = config if config is not None else AtlasConfig()
        if not isinstance(cfg, AtlasConfig):
            raise InputError("config", f"must be an AtlasConfig, got {type(cfg).__name__}")
        if isinstance(importance, str):
            if importance not in IMPORTANCE_ESTIMATORS:
                raise InputError("importance", f"must be one of {', '.join(IMPORTANCE_ESTIMATORS)}")
            importance = IMPORTANCE_ESTIMATORS[importance]
        self._word_frequencies = importance is information_density
        if self._word_frequencies:  # off the first add's path (memory_core.engine.preload),
            preload_word_frequencies()  # and alongside the embedding model's load
        if embedder is None:
            from memory_core.embedding.minilm import default_embedder

            embedder = default_embedder()
        table = NodeTable()
        clock = clock if clock is not None else SystemClock()
        self._s = AtlasState(
            config=cfg,
            embedder=embedder,
            clock=clock,
            table=table,
            edges=EdgeStore(table),
            bus=EventBus(),
            rng=random.Random(cfg.seed),
            vectors=vector_index(cfg, embedder.dim),
            lexical=LexicalIndex(),
            last_decay=clock.now(),
        )
        self._importance = importance
        self._summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self._write_filter = write_filter
        self._lock = threading.RLock()

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
    def lock(self) -> threading.RLock:
        """The atlas's lock, for callers that need several calls to be atomic."""
        return self._lock

    def reconfigure(self, config: AtlasConfig) -> None:
        """Use ``config`` from now on (decay, forgetting, linking, retrieval parameters).

        The next decay pass recomputes every weight under it. Index fields and the seed
        shaped structures built at start and must stay as they are.

        Raises:
            ConfigError: ``config`` changes a field fixed at start (``hnsw_*``, ``seed``).
        """
        if not isinstance(config, AtlasConfig):
            raise InputError("config", f"must be an AtlasConfig, got {type(config).__name__}")
        with self._lock:
            for name in FIXED_AT_START:
                if getattr(config, name) != getattr(self._s.config, name):
                    raise ConfigError(
                        name, getattr(config, name), "cannot change on a running atlas"
                    )
            self._s.config = config
            if self._s.bus.active:
                self._emit(ConfigChanged, config=config.to_dict())

    def __len__(self) -> int:
        return len(self._s.table)

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str) and node_id in self._s.table.slot_of

    def subscribe(self, callback: Callable[[AtlasEvent], None]) -> Callable[[], None]:
        """Receive every event; returns a function that unsubscribes."""
        return self._s.bus.subscribe(callback)

    @property
    def events(self) -> EventBus:
        return self._s.bus

    # ------------------------------------------------------------------ writes
    def add(
        self,
        content: str,
        *,
        session_id: str = "default",
        kind: MemoryKind | str = MemoryKind.SESSION,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        confidence: float = 1.0,
        ttl_hours: float | None = None,
        pinned: bool = False,
        provenance: Iterable[str] | None = None,
        links_to: Iterable[str] | None = None,
        embedding: Sequence[float] | np.ndarray | None = None,
    ) -> MemoryNode:
        """Store one memory (or merge it into a near-duplicate) and return its snapshot."""
        write = self._prepare(
            content,
            session_id,
            kind,
            metadata,
            importance,
            confidence,
            ttl_hours,
            pinned,
            provenance,
            links_to,
        )
        vector = self._vectors([write.content], None if embedding is None else [embedding])
        with self._lock:
            self._check_links(write.links_to)
            return self._insert(write, vector[0])

    def add_many(
        self,
        texts: Sequence[str],
        *,
        session_id: str = "default",
        kind: MemoryKind | str = MemoryKind.SESSION,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        provenances: Sequence[Iterable[str] | None] | None = None,
        embeddings: Sequence[Sequence[float]] | np.ndarray | None = None,
        confidence: float = 1.0,
    ) -> list[MemoryNode]:
        """Batched ``add``: one embedding call for all texts; all validated before any is stored."""
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise InputError("texts", f"must be a sequence of strings, got {type(texts).__name__}")
        n = len(texts)
        for name, seq in (
            ("metadatas", metadatas),
            ("provenances", provenances),
            ("embeddings", embeddings),
        ):
            if seq is not None and (
                isinstance(seq, (str, bytes)) or not isinstance(seq, (Sequence, np.ndarray))
            ):
                raise InputError(name, f"must be a sequence, got {type(seq).__name__}")
            if seq is not None and len(seq) != n:
                raise InputError(name, f"has {len(seq)} entries for {n} texts")
        writes = [
            self._prepare(
                t,
                session_id,
                kind,
                metadatas[i] if metadatas else None,
                None,
                confidence,
                None,
                False,
                provenances[i] if provenances else None,
                None,
                field=f"texts[{i}]",
            )
            for i, t in enumerate(texts)
        ]
        vectors = self._vectors([w.content for w in writes], embeddings, "embeddings")
        with self._lock:
            return [self._insert(w, v) for w, v in zip(writes, vectors, strict=True)]

    def offer(self, content: str, **kwargs: Any) -> MemoryNode | None:
        """``add`` through the write filter: returns None when the filter declines."""
        if self._write_filter is not None:
            meta = kwargs.get("metadata") or {}
            if not self._write_filter(content, meta):
                return None
        return self.add(content, **kwargs)

    def link(
        self,
        source_id: str,
        target_id: str,
        relation: Relation | str = Relation.RELATED_TO,
        strength: float = 1.0,
    ) -> MemoryEdge:
        """Add a typed relation between two existing memories."""
        rel = check.relation(relation)
        strength = check.unit_interval(strength, "strength")
        with self._lock:
            a, b = self._slot(source_id), self._slot(target_id)
            if a == b:
                raise InputError("target_id", "a memory cannot be linked to itself")
            self._s.edges.link(a, b, rel, strength)
            self._emit(
                MemoryLinked,
                session_id=self._s.session_of(a),
                node_id=source_id,
                target_id=target_id,
                relation=rel.value,
                strength=strength,
            )
            return MemoryEdge(source_id, target_id, rel, strength)

    def set_status(
        self, node_id: str, status: MemoryStatus | str, *, reason: str = ""
    ) -> MemoryNode:
        """Deprecate, supersede or tombstone a memory; non-active memories are never retrieved."""
        new = check.status(status)
        with self._lock:
            slot = self._slot(node_id)
            table = self._s.table
            old = STATUS_CODES[table.status[slot]]
            table.status[slot] = status_code(new)
            if new is not MemoryStatus.ACTIVE and old is MemoryStatus.ACTIVE:
                table.strength[slot] = max(
                    self.config.weight_floor, table.strength[slot] * DEPRECATION_FACTOR
                )
                self._refresh_weight(np.array([slot]))
            self._emit(
                StatusChanged,
                session_id=self._s.session_of(slot),
                node_id=node_id,
                old=old,
                new=new,
                reason=reason,
            )
            return self._snapshot(slot)

    def forget(self, node_id: str, *, reason: str = "user asked to forget") -> MemoryNode:
        """Tombstone: kept for audit, never retrieved again."""
        return self.set_status(node_id, MemoryStatus.TOMBSTONED, reason=reason)

    def delete(self, node_id: str) -> None:
        """Remove a memory now (logged as evicted with reason ``forgotten``)."""
        with self._lock:
            slot = self._slot(node_id)
            forgetting.remove(self._s, np.array([slot]), EvictionReason.FORGOTTEN, self.clock.now())

    def set_confidence(self, node_id: str, confidence: float) -> MemoryNode:
        value = check.unit_interval(confidence, "confidence")
        with self._lock:
            slot = self._slot(node_id)
            self._s.table.confidence[slot] = value
            self._emit(MemoryUpdated, session_id=self._s.session_of(slot), node_id=node_id)
            return self._snapshot(slot)

    def pin(self, node_id: str, pinned: bool = True) -> MemoryNode:
        """Pinned memories are never evicted for weight, capacity or orphanhood."""
        with self._lock:
            slot = self._slot(node_id)
            self._s.table.pinned[slot] = bool(pinned)
            self._emit(MemoryUpdated, session_id=self._s.session_of(slot), node_id=node_id)
            return self._snapshot(slot)

    # ------------------------------------------------------------------ reads
    def retrieve(
        self,
        query: str,
        top_k: int = 5,
        *,
        session_id: str | None = None,
        cross_session: bool = False,
        kinds: Iterable[MemoryKind | str] | None = None,
        since: float | None = None,
        until: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        reinforce: bool = True,
        query_embedding: Sequence[float] | np.ndarray | None = None,
    ) -> list[RetrievalHit]:
        """Rank memories for ``query``; hits are reinforced unless ``reinforce=False``."""
        text = check.content(query, self.config.max_content_chars, "query")
        top_k = check.positive_int(top_k, "top_k")
        if session_id is not None:
            session_id = check.session_id(session_id)
        kind_codes = (
            None if kinds is None else tuple(kind_code(check.kind(k, "kinds")) for k in kinds)
        )
        since_v = None if since is None else check.finite(since, "since")
        until_v = None if until is None else check.finite(until, "until")
        meta = check.metadata(metadata, "metadata") if metadata else None
        given = None if query_embedding is None else [query_embedding]
        vector = self._vectors([text], given, "query_embedding")[0]
        q = Query(
            text, vector, top_k, session_id, bool(cross_session), kind_codes, since_v, until_v, meta
        )
        with self._lock:
            now = self.clock.now()
            ranked = rank(self._s, q, now)
            self._s.counters["retrievals"] += 1
            if reinforce and len(ranked.slots):
                self._reinforce(ranked.slots, now)
            cap = self.config.weight_cap
            columns = zip(
                self._s.table.snapshots(ranked.slots, self._s.session_names),
                ranked.final.tolist(),
                ranked.dense.tolist(),
                ranked.lexical.tolist(),
                ranked.graph.tolist(),
                ranked.relevance.tolist(),
                ranked.weight.tolist(),
                ranked.recency.tolist(),
                ranked.confidence.tolist(),
                ranked.session_factor.tolist(),
                ranked.gate.tolist(),
                ranked.sources,
                ranked.cross.tolist(),
                strict=True,
            )  # Python floats once per column, not a numpy scalar per field
            hits = [
                RetrievalHit(
                    node=node,
                    score=final,
                    breakdown=ScoreBreakdown(
                        dense=dense,
                        lexical=lexical,
                        graph=graph,
                        relevance=relevance,
                        weight=weight,
                        weight_norm=weight / cap,
                        recency=recency,
                        confidence=confidence,
                        session_factor=factor,
                        final=final,
                        sources=sources,
                        gate=gate,
                    ),
                    cross_session=cross,
                )
                for (
                    node,
                    final,
                    dense,
                    lexical,
                    graph,
                    relevance,
                    weight,
                    recency,
                    confidence,
                    factor,
                    gate,
                    sources,
                    cross,
                ) in columns
            ]
            self.maybe_decay()
            return hits

    def get(self, node_id: str, *, with_embedding: bool = False) -> MemoryNode:
        with self._lock:
            return self._snapshot(self._slot(node_id), with_embedding=with_embedding)

    def weights(self, node_ids: Iterable[str]) -> list[float]:
        """Current weights of the given memories, in order, without copying the memories
        (for samplers that read many weights per turn)."""
        with self._lock:
            slots = [self._slot(i) for i in node_ids]
            weights: list[float] = self._s.table.weight[slots].tolist()
            return weights

    def nodes(self, session_id: str | None = None) -> list[MemoryNode]:
        """Snapshots of all memories (of one session), oldest first."""
        with self._lock:
            table = self._s.table
            if session_id is None:
                slots = table.alive_slots()
            else:
                session = self._s.sessions.get(session_id)
                slots = np.empty(0, np.int64) if session is None else self._s.session_slots(session)
            slots = slots[np.lexsort((slots, table.created[slots]))]
            return table.snapshots(slots, self._s.session_names)

    def edges(self, node_id: str | None = None) -> list[MemoryEdge]:
        with self._lock:
            ids = self._s.table.ids
            if node_id is None:
                rels = list(self._s.edges.all_relations())
            else:
                rels = list(self._s.edges.relations(self._slot(node_id)))
            return [MemoryEdge(str(ids[a]), str(ids[b]), rel, float(st)) for a, b, rel, st in rels]

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._s.sessions)

    def session_info(self, session_id: str) -> dict[str, Any]:
        with self._lock:
            session = self._session(session_id)
            return {
                "id": session.id,
                "nodes": len(self._s.table.members(session.code)),
                "ended": session.ended,
                "index": self._s.vectors.kind,
                "working": list(session.working),
                "created_at": session.created_at,
            }

    def similar(
        self, node_id: str, k: int = 10, *, cross_session: bool = False
    ) -> list[tuple[MemoryNode, float]]:
        """The ``k`` active memories nearest to a stored one, with their cosine.

        Read-only (nothing is reinforced, no decay runs): conflict scans use it to find
        what a memory might contradict. Scoped to its own session unless ``cross_session``.
        """
        k = check.positive_int(k, "k")
        with self._lock:
            slot = self._slot(node_id)
            table, now = self._s.table, self.clock.now()
            vector = self._s.vectors.reconstruct(np.array([slot]))[0]
            session = None if cross_session else int(table.session[slot])
            sims, slots = nearest(self._s, vector, 2 * k + 1, session)  # room for inactive
            keep = (
                (slots != slot)
                & table.alive[slots]
                & (table.status[slots] == ACTIVE_CODE)
                & (table.expires[slots] > now)
            )
            slots, sims = slots[keep], sims[keep]
            order = np.lexsort((slots, -sims))[:k]
            return [(self._snapshot(int(slots[i])), float(sims[i])) for i in order]

    def embedding_of(self, node_id: str) -> np.ndarray:
        with self._lock:
            vector: np.ndarray = self._s.vectors.reconstruct(np.array([self._slot(node_id)]))[0]
            return vector

    def stats(self) -> dict[str, Any]:
        """Counts and weight summary for dashboards and logs."""
        with self._lock:
            table = self._s.table
            slots = table.alive_slots()
            weights = table.weight[slots]
            kinds = np.bincount(table.kind[slots], minlength=len(MemoryKind))
            statuses = np.bincount(table.status[slots], minlength=len(MemoryStatus))
            counters = self._s.counters
            return {
                "nodes": len(slots),
                "edges": len(self._s.edges),
                "sessions": len(self._s.sessions),
                "max_nodes": self.config.max_nodes,
                "by_kind": {k.value: int(kinds[i]) for i, k in enumerate(MemoryKind)},
                "by_status": {s.value: int(statuses[i]) for i, s in enumerate(MemoryStatus)},
                "weight_mean": float(weights.mean()) if len(slots) else 0.0,
                "weight_min": float(weights.min()) if len(slots) else 0.0,
                "weight_max": float(weights.max()) if len(slots) else 0.0,
                "pinned": int(table.pinned[slots].sum()),
                "added": counters["added"],
                "merged": counters["merged"],
                "retrievals": counters["retrievals"],
                "decay_passes": counters["decay_passes"],
                "evicted": {
                    r.value: counters[f"evicted:{r.value}"]
                    for r in EvictionReason
                    if counters[f"evicted:{r.value}"]
                },
                "evicted_total": sum(v for k, v in counters.items() if k.startswith("evicted:")),
                "embedder": self.embedder.name,
                "decay_strategy": self.config.decay_strategy,
                "now": self.clock.now(),
            }

    def to_networkx(self, session_id: str | None = None) -> nx.MultiDiGraph:
        """An id-keyed copy of (a session of) the graph with node and edge attributes."""
        with self._lock:
            nodes = self.nodes(session_id)
            graph: nx.MultiDiGraph = nx.MultiDiGraph()
            for node in nodes:
                graph.add_node(node.id, node=node)
            for edge in (
                self.edges() if session_id is None else {e for n in nodes for e in self.edges(n.id)}
            ):
                if edge.source_id in graph and edge.target_id in graph:
                    graph.add_edge(
                        edge.source_id,
                        edge.target_id,
                        key=edge.relation.value,
                        relation=edge.relation,
                        strength=edge.strength,
                    )
            return graph

    # ------------------------------------------------------------------ forgetting
    def decay(self) -> dict[str, int]:
        """Recompute all weights and evict expired, weak and orphaned memories; returns counts."""
        with self._lock:
            return forgetting.decay_pass(self._s, self.clock.now())

    def maybe_decay(self) -> None:
        """Run ``decay`` when ``decay_interval_seconds`` of clock time passed since the last."""
        interval = self.config.decay_interval_seconds
        if interval > 0 and self.clock.now() - self._s.last_decay >= interval:
            self.decay()

    def merge_duplicates(self, session_id: str | None = None) -> int:
        """Merge near-duplicates (similarity >= merge_threshold) within each session."""
        with self._lock:
            sessions = (
                [self._session(session_id)] if session_id else list(self._s.sessions.values())
            )
            return sum(forgetting.merge_session(self._s, s, self.clock.now()) for s in sessions)

    def summarize_session(self, session_id: str) -> MemoryNode | None:
        """Add a summary memory for the session; what it covers is down-weighted."""
        with self._lock:
            session = self._session(session_id)
            return self._summarize(session, self._s.session_slots(session), MemoryKind.SUMMARY)

    def summarize_nodes(
        self, session_id: str, node_ids: Sequence[str], *, kind: MemoryKind | str
    ) -> MemoryNode | None:
        """Fold some of a session's memories into one summary memory of ``kind`` (an
        episode, say); it ``summarizes`` every one of them, and what its text covers is
        down-weighted. None when fewer than two active memories are left to fold."""
        folded = check.kind(kind)
        with self._lock:
            session = self._session(session_id)
            slots = np.array([self._slot(i) for i in node_ids], np.int64)
            if slots.size and np.any(self._s.table.session[slots] != session.code):
                raise InputError("node_ids", f"must all belong to session {session_id!r}")
            return self._summarize(session, slots, folded, link_all=True)

    def _summarize(
        self, session: SessionState, slots: np.ndarray, kind: MemoryKind, *, link_all: bool = False
    ) -> MemoryNode | None:
        table = self._s.table
        slots = slots[
            (table.kind[slots] != kind_code(MemoryKind.SUMMARY))
            & (table.kind[slots] != kind_code(kind))
            & (table.status[slots] == ACTIVE_CODE)
        ]
        if len(slots) < 2:
            return None
        ids = [str(table.ids[s]) for s in slots.tolist()]
        items = [
            SummaryItem(
                ids[i], str(table.contents[s]), float(table.weight[s]), float(table.created[s])
            )
            for i, s in enumerate(slots.tolist())
        ]
        summary = self._summarizer.summarize(items, self.config.max_content_chars)
        covered = [table.slot_of[i] for i in summary.covered_ids if i in table.slot_of]
        if not covered:
            return None
        provenance = tuple(
            dict.fromkeys(p for s in covered for p in (table.provenance[s] or (str(table.ids[s]),)))
        )
        write = _Write(
            content=summary.text,
            session_id=session.id,
            kind=kind,
            metadata={"type": kind.value, "covers": len(covered)}
            | ({"folds": len(ids)} if link_all else {}),
            importance=1.0,
            confidence=1.0,
            expires=math.inf,
            pinned=False,
            provenance=provenance,
            links_to=(),
        )
        vector = self._vectors([write.content], None)[0]
        node = self._insert(write, vector, allow_merge=False, auto_link=False)
        summary_slot = table.slot_of[node.id]
        # only what the text covers, and only what the insert's capacity check left alive
        covered_now = np.array(
            [table.slot_of[i] for i in summary.covered_ids if i in table.slot_of], np.int64
        )
        linked = ids if link_all else summary.covered_ids
        for s in [table.slot_of[i] for i in linked if i in table.slot_of]:
            self._s.edges.link(summary_slot, s, Relation.SUMMARIZES, 1.0)
        table.strength[covered_now] *= self.config.summary_downweight
        self._refresh_weight(np.append(covered_now, summary_slot))
        self._emit(
            SummaryCreated,
            session_id=session.id,
            node_id=node.id,
            source_ids=tuple(summary.covered_ids),
            content=summary.text,
        )
        return self._snapshot(summary_slot)

    def end_session(self, session_id: str, mode: str | None = None) -> int:
        """End a session: ``keep``, ``fade`` (weights drop, decay reclaims them), ``summarize``
        (summary, originals down-weighted) or ``purge`` (gone now, caches included).
        Returns the number of memories affected."""
        mode = mode or self.config.session_end_mode
        if mode not in SESSION_END_MODES:
            raise InputError("mode", f"must be one of {', '.join(SESSION_END_MODES)}, got {mode!r}")
        with self._lock:
            session = self._session(session_id)
            now = self.clock.now()
            slots = self._s.session_slots(session)
            affected = len(slots)
            if mode == "purge":
                forgetting.purge_session(self._s, session, now)
            elif mode == "fade":
                table = self._s.table
                unpinned = slots[~table.pinned[slots]]
                table.strength[unpinned] = np.minimum(
                    table.strength[unpinned], self.config.fade_strength
                )
                table.accessed[unpinned] = np.minimum(table.accessed[unpinned], now)
                self._refresh_weight(unpinned)
            elif mode == "summarize":
                self.summarize_session(session_id)
            if mode != "purge":  # an ended session has no working tier to protect: its
                # last turns ("Thanks, that's all") compete like the rest (issue #25)
                self._s.table.working[self._s.session_slots(session)] = False
                session.working.clear()
                session.ended = True
            self._emit(SessionEnded, session_id=session_id, mode=mode, affected=affected)
            return affected

    # ------------------------------------------------------------------ snapshots
    def save_snapshot(self, path: str | Path) -> Path:
        """Write nodes, edges, weights, embeddings, config and clock time to one file.

        Only a short copy is taken under the lock (the vectors are gathered after it, a
        chunk at a time; ``snapshot.capture``); encoding and writing happen outside it,
        so a recorder's periodic snapshot barely delays the agent's own calls.
        """
        with self._lock:
            frozen = snapshot.freeze(self._s)
        return snapshot.write(snapshot.complete(frozen, self._lock), Path(path))

    @classmethod
    def load_snapshot(
        cls, path: str | Path, *, embedder: Embedder | None = None, clock: Clock | None = None
    ) -> ElasticMemoryAtlas:
        """Rebuild an atlas exactly as saved (its own embedder and clock may be given)."""
        try:
            data = snapshot.read(Path(path))
            atlas = cls(data.config, embedder=embedder, clock=clock)
            with atlas._lock:
                snapshot.restore(atlas._s, data)
        except AtlasError:
            raise
        except (LookupError, TypeError, ValueError, AttributeError) as exc:
            # a readable archive whose metadata was tampered with inside
            raise InputError("snapshot", f"{path} holds malformed data ({exc!r})") from exc
        return atlas

    # ------------------------------------------------------------------ internals
    def _prepare(
        self,
        content: object,
        session_id: object,
        kind: object,
        metadata: object,
        importance: object,
        confidence: object,
        ttl_hours: object,
        pinned: object,
        provenance: object,
        links_to: object,
        *,
        field: str = "content",
    ) -> _Write:
        cfg = self.config
        text = check.content(content, cfg.max_content_chars, field)
        meta = check.metadata(metadata)
        if importance is None and self._word_frequencies:
            wait_word_frequencies()  # never a second load of the table on this thread
        # a pluggable estimator is checked like a caller's value: NaN would poison every weight
        imp = check.unit_interval(
            self._importance(text, meta) if importance is None else importance, "importance"
        )
        ttl = (
            cfg.default_ttl_hours
            if ttl_hours is None
            else check.finite(ttl_hours, "ttl_hours", low=0.0)
        )
        return _Write(
            content=text,
            session_id=check.session_id(session_id),
            kind=check.kind(kind),
            metadata=meta,
            importance=float(imp),
            confidence=check.unit_interval(confidence, "confidence"),
            expires=math.inf if ttl is None else self.clock.now() + ttl * 3600.0,
            pinned=bool(pinned),
            provenance=check.string_tuple(provenance, "provenance"),  # type: ignore[arg-type]
            links_to=check.string_tuple(links_to, "links_to"),  # type: ignore[arg-type]
            explicit_importance=importance is not None,
        )

    def _vectors(
        self,
        texts: list[str],
        given: Sequence[Any] | np.ndarray | None,
        field: str = "embedding",
    ) -> np.ndarray:
        if given is None:
            return embed_checked(self.embedder, texts)
        return check_vectors(given, self.embedder.dim, field=field)

    def _check_links(self, ids: tuple[str, ...]) -> None:
        for ident in ids:
            if ident not in self._s.table.slot_of:
                raise NotFoundError("memory (links_to)", ident)

    def _insert(
        self, write: _Write, vector: np.ndarray, *, allow_merge: bool = True, auto_link: bool = True
    ) -> MemoryNode:
        s, cfg, table = self._s, self.config, self._s.table
        now = self.clock.now()
        session = s.sessions.get(write.session_id) or s.new_session(write.session_id, now)
        family = None
        if write.kind is MemoryKind.SESSION and not write.pinned:  # a line of a family
            family, _ = family_key(session.code, write.content)
            write = self._novel(family, write)
        sims, neighbours = nearest(s, vector, cfg.max_auto_links + 1, session.code)
        if (
            allow_merge
            and len(sims)
            and sims[0] >= cfg.merge_threshold
            and table.status[neighbours[0]] == ACTIVE_CODE
        ):
            repeated = family is not None and s.families.get(family).seen > NOVELTY_FREE
            return self._merge_into(
                int(neighbours[0]), write, float(sims[0]), now, reinforce=not repeated
            )
        node_id = s.new_id()
        slot = table.allocate(node_id)
        table.session[slot] = session.code
        table.contents[slot] = write.content
        try:
            s.index(np.array([slot]), vector[None, :])
        except Exception:
            table.release(slot)
            raise
        table.metadata[slot] = write.metadata or None  # no empty dict per memory
        table.provenance[slot] = write.provenance
        table.strength[slot] = base_strength(write.importance, cfg)
        table.importance[slot] = write.importance
        table.confidence[slot] = write.confidence
        table.created[slot] = table.accessed[slot] = now
        table.count[slot] = 0
        table.expires[slot] = write.expires
        table.pinned[slot] = write.pinned
        table.kind[slot] = kind_code(write.kind)
        table.status[slot] = ACTIVE_CODE
        s.edges.add_node(slot)
        links: list[str] = []
        if auto_link:
            for sim, other in zip(sims.tolist(), neighbours.tolist(), strict=True):
                if len(links) >= cfg.max_auto_links or sim < cfg.link_threshold:
                    break
                s.edges.link(slot, other, Relation.SIMILAR_TO, float(sim))
                links.append(str(table.ids[other]))
            previous = table.slot_of.get(session.last_id) if session.last_id else None
            if cfg.link_previous and previous is not None:
                s.edges.link(previous, slot, Relation.BEFORE, 1.0)
        for target in write.links_to:
            s.edges.link(slot, table.slot_of[target], Relation.RELATED_TO, 1.0)
            links.append(target)
        session.last_id = node_id
        self._enter_working(session, node_id)
        self._refresh_weight(np.array([slot]))
        if family is not None:
            s.families.add_member(family, slot)
        s.counters["added"] += 1
        self._emit(
            MemoryAdded,
            session_id=session.id,
            node_id=node_id,
            content=write.content,
            kind=write.kind,
            weight=float(table.weight[slot]),
            importance=write.importance,
            links=tuple(links),
            provenance=write.provenance,
            embedding=vector.tobytes(),  # float32 as indexed: a follower adds the same
        )
        if (
            family is not None
            and cfg.family_fold_at is not None
            and len(s.families.get(family).members) >= cfg.family_fold_at
        ):
            self._fold_family(family, keep=slot, session=session)
        forgetting.enforce_capacity(s, protect=slot, now=now)
        node = self._snapshot(slot)  # before a due decay pass may expire it and free the slot
        self.maybe_decay()
        return node

    def _novel(self, key: str, write: _Write) -> _Write:
        """Count a line into its family; its importance shrinks with the lines seen before
        (``families.novelty``) unless the caller set it."""
        index = self._s.families if self._s.families.built else build_index(self._s)
        family = index.get(key)
        family.seen += 1
        if write.explicit_importance:
            return write
        family.importance = max(family.importance, write.importance)
        return replace(write, importance=write.importance * novelty(family.seen - 1))

    def _fold_family(self, key: str, *, keep: int, session: SessionState) -> None:
        """Fold a family's older lines into one summary (``families.plan_fold``)."""
        fold = plan_fold(self._s, key, keep)
        if fold is None:
            return
        write = _Write(
            content=fold.text,
            session_id=session.id,
            kind=MemoryKind.SUMMARY,
            metadata=fold.metadata,
            importance=fold.importance,
            confidence=1.0,
            expires=math.inf,
            pinned=False,
            provenance=fold.provenance,
            links_to=(),
            explicit_importance=True,
        )
        now = self.clock.now()
        vector = self._vectors([write.content], None)[0]
        table = self._s.table
        source_ids = tuple(str(table.ids[s]) for s in fold.slots.tolist())
        node = self._insert(write, vector, allow_merge=False, auto_link=False)
        # what the insert's capacity check or decay pass left of the folded lines
        left = np.array([table.slot_of[i] for i in source_ids if i in table.slot_of], np.int64)
        forgetting.remove(self._s, left, EvictionReason.MERGED, now)
        if node.id in table.slot_of:
            self._s.families.set_summary(key, table.slot_of[node.id])
        self._emit(
            SummaryCreated,
            session_id=session.id,
            node_id=node.id,
            source_ids=source_ids,
            content=fold.text,
        )

    def _merge_into(
        self, slot: int, write: _Write, similarity: float, now: float, *, reinforce: bool = True
    ) -> MemoryNode:
        s, table = self._s, self._s.table
        table.provenance[slot] = tuple(dict.fromkeys((*table.provenance[slot], *write.provenance)))
        meta = dict(table.metadata[slot] or {})  # replaced, never edited: snapshots share it
        meta["merged_count"] = int(meta.get("merged_count", 0)) + 1
        table.metadata[slot] = meta
        table.confidence[slot] = max(float(table.confidence[slot]), write.confidence)
        table.expires[slot] = max(float(table.expires[slot]), write.expires)
        table.pinned[slot] |= write.pinned
        for target in write.links_to:
            s.edges.link(slot, table.slot_of[target], Relation.RELATED_TO, 1.0)
        if reinforce:  # a family's repeats add provenance, not weight
            self._reinforce(np.array([slot]), now)
        session = s.sessions[s.session_of(slot)]
        self._enter_working(session, str(table.ids[slot]))
        s.counters["merged"] += 1
        self._emit(
            MemoriesMerged,
            session_id=session.id,
            kept_id=str(table.ids[slot]),
            merged_id=None,
            merged_content=write.content,
            similarity=similarity,
        )
        return self._snapshot(slot)

    def _enter_working(self, session: SessionState, node_id: str) -> None:
        size = self.config.working_memory_size
        if size == 0:
            return
        table = self._s.table
        if node_id in session.working:
            session.working.remove(node_id)
        session.working.append(node_id)
        table.working[table.slot_of[node_id]] = True
        while len(session.working) > size:
            old = table.slot_of.get(session.working.popleft())
            if old is not None:
                table.working[old] = False

    def _reinforce(self, slots: np.ndarray, now: float) -> None:
        table, cfg = self._s.table, self.config
        table.strength[slots] = np.minimum(
            table.strength[slots] * cfg.reinforce_factor, cfg.weight_cap
        )
        table.count[slots] += 1
        table.accessed[slots] = now
        self._refresh_weight(slots)
        if self._s.bus.active:
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
        if self._s.bus.active:
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
