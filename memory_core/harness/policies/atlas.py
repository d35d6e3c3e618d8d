"""The engine as a harness policy: ``ElasticMemoryAtlas`` under the run's configuration."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

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
from memory_core.engine.model import EvictionReason
from memory_core.harness.policies.base import Held, Hit, Lifecycle


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
        # ... and of those that carry any of the turns last asked for (``carrying``), kept
        # in step too, so a sample per turn does not scan every held memory's provenance
        self._sampled: frozenset[str] = frozenset()
        self._carriers: dict[str, tuple[str, ...]] = {}
        self._last: dict[str, Held] = {}  # each carrier's last sample (most weights stay)
        self.atlas.subscribe(
            self._on_event, (MemoryAdded, MemoryEvicted, MemoriesMerged, SummaryCreated)
        )

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
            self._hold(node.id, node.provenance)
        return node.id

    def retrieve(
        self,
        text: str,
        vector: np.ndarray,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
        hints: Mapping[str, float] | None = None,
    ) -> list[Hit]:
        """``hints``: memory id -> score from the agent loop's entity route (the engine's
        ``retrieve(hints=...)``)."""
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
            hints=hints,
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
        """Held memories carrying any of ``turn_ids``: from the carriers kept in step with
        the events when the same turns were asked for last time (a replay samples the key
        facts' evidence turns after every turn), else by one scan of every provenance."""
        if turn_ids is not self._sampled and turn_ids != self._sampled:
            self._sampled = turn_ids
            self._carriers = {
                node_id: provenance
                for node_id, provenance in self._provenance.items()
                if not turn_ids.isdisjoint(provenance)
            }
            self._last = {}
        found, last = self._carriers, self._last
        out = []
        for (node_id, provenance), weight in zip(
            found.items(), self.atlas.weights(found), strict=True
        ):
            held = last.get(node_id)  # the previous sample's, while nothing about it moved
            if held is None or held.weight != weight or held.provenance is not provenance:
                held = last[node_id] = Held(node_id, provenance, weight)
            out.append(held)
        return out

    def evictions(self) -> dict[str, int]:
        return dict(self._evicted)

    def _hold(self, node_id: str, provenance: tuple[str, ...]) -> None:
        """Record a held memory's provenance, in the carriers too when it names a sampled turn."""
        self._provenance[node_id] = provenance
        if not self._sampled.isdisjoint(provenance):
            self._carriers[node_id] = provenance
        else:
            self._carriers.pop(node_id, None)

    def _on_event(self, event: AtlasEvent) -> None:
        if isinstance(event, MemoryAdded):
            self._hold(event.node_id, event.provenance)
        elif isinstance(event, MemoryEvicted):
            self._provenance.pop(event.node_id, None)
            self._carriers.pop(event.node_id, None)
            self._last.pop(event.node_id, None)
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
            self._hold(event.kept_id, tuple(dict.fromkeys((*kept, *merged))))
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
