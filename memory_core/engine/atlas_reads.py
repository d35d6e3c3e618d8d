"""Reads of ``ElasticMemoryAtlas``: ranked retrieval and read-only views."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np

from memory_core.engine import validate as check
from memory_core.engine.atlas_base import AtlasBase
from memory_core.engine.model import (
    EvictionReason,
    MemoryEdge,
    MemoryKind,
    MemoryNode,
    MemoryStatus,
    RetrievalHit,
    ScoreBreakdown,
)
from memory_core.engine.retrieval import Query, nearest, rank
from memory_core.engine.table import ACTIVE_CODE, kind_code


class ReadMixin(AtlasBase):
    """``retrieve`` and the snapshots, views and counts of the graph."""

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
        hints: Mapping[str, float] | None = None,
    ) -> list[RetrievalHit]:
        """Rank memories for ``query``; hits are reinforced unless ``reinforce=False``.

        ``hints``: memory id -> score on BM25's scale for memories the caller knows to be
        about the query (the agent loop's entity route); they join the candidates and the
        score stands in for their BM25 where it is larger (``retrieval``). Ids no longer
        held are left out."""
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
        hinted = check.hints(hints) if hints else None
        given = None if query_embedding is None else [query_embedding]
        vector = self._vectors([text], given, "query_embedding")[0]
        q = Query(
            text, vector, top_k, session_id, bool(cross_session), kind_codes, since_v, until_v, meta,
            hinted,
        )  # fmt: skip
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
        ids = list(node_ids)
        with self._lock:
            slot_of = self._s.table.slot_of
            try:  # one dict look per id; an unknown one is named by ``_slot`` below
                slots = [slot_of[i] for i in ids]
            except (KeyError, TypeError):
                slots = [self._slot(i) for i in ids]
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
