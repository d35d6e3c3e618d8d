"""Writes of ``ElasticMemoryAtlas``: validate, embed, merge or insert, link, fold families."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memory_core.engine import forgetting
from memory_core.engine import validate as check
from memory_core.engine.atlas_base import AtlasBase
from memory_core.engine.decay import base_strength
from memory_core.engine.events import MemoriesMerged, MemoryAdded, SummaryCreated
from memory_core.engine.families import NOVELTY_FREE, build_index, family_key, novelty, plan_fold
from memory_core.engine.importance import ImportanceEstimator
from memory_core.engine.model import EvictionReason, MemoryKind, MemoryNode, Relation
from memory_core.engine.pending import Pending, PendingInsert
from memory_core.engine.preload import wait_word_frequencies
from memory_core.engine.retrieval import nearest
from memory_core.engine.state import SessionState
from memory_core.engine.table import ACTIVE_CODE, kind_code
from memory_core.errors import InputError, NotFoundError

WriteFilter = Callable[[str, Mapping[str, Any]], bool]
"""Decides whether a candidate memory is worth keeping (used by ``offer``)."""


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


class WriteMixin(AtlasBase):
    """``add``, ``add_many`` and ``offer``, and the insert path they share."""

    _importance: ImportanceEstimator
    _write_filter: WriteFilter | None
    _pending: Pending
    _word_frequencies: bool

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
            return self._insert(write, vector[0], defer_insert=True)

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

    def _check_links(self, ids: tuple[str, ...]) -> None:
        for ident in ids:
            if ident not in self._s.table.slot_of:
                raise NotFoundError("memory (links_to)", ident)

    def _insert(
        self,
        write: _Write,
        vector: np.ndarray,
        *,
        allow_merge: bool = True,
        auto_link: bool = True,
        defer_insert: bool = False,
    ) -> MemoryNode:
        """Merge ``write`` into a near-duplicate or store it. ``defer_insert`` (``add``
        alone): over an HNSW index, leave the vector's insert to ``engine.pending``."""
        s, cfg, table = self._s, self.config, self._s.table
        now = self.clock.now()
        session = s.sessions.get(write.session_id) or s.new_session(write.session_id, now)
        family = None
        if write.kind is MemoryKind.SESSION and not write.pinned:  # a line of a family
            family = family_key(session.code, write.content)
            write = self._novel(family, write)
        sims, neighbours = nearest(
            s, vector, cfg.max_auto_links + 1, session.code, ef_search=cfg.hnsw_link_ef_search
        )
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
        deferred = defer_insert and s.vectors.kind == "hnsw"
        try:
            s.index(np.array([slot]), None if deferred else vector[None, :])
        except Exception:
            table.release(slot)
            raise
        if deferred:  # ``vector`` is the engine's own (normalised) copy of the caller's
            self._pending.defer(PendingInsert(slot, node_id, vector))
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
            and s.families.get(family).size >= cfg.family_fold_at
        ):
            self._pending.settle()  # the summary's vector goes in after this one's
            self._fold_family(family, keep=slot, session=session)
        if forgetting.excess(s) > 0:
            self._pending.settle()  # an eviction takes vectors out of the index
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
        kept = novelty(family.seen - 1)
        if kept == 1.0:  # a family's first lines keep it all: no copy of the write
            return write
        return replace(write, importance=write.importance * kept)

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
