"""What happens to memories after they are written: links, status, pins, merges,
summaries and the end of a session."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from memory_core.engine import forgetting
from memory_core.engine import validate as check
from memory_core.engine.atlas_writes import WriteMixin, _Write
from memory_core.engine.config import SESSION_END_MODES
from memory_core.engine.events import (
    MemoryLinked,
    MemoryUpdated,
    SessionEnded,
    StatusChanged,
    SummaryCreated,
)
from memory_core.engine.model import (
    STATUS_CODES,
    EvictionReason,
    MemoryEdge,
    MemoryKind,
    MemoryNode,
    MemoryStatus,
    Relation,
)
from memory_core.engine.state import SessionState
from memory_core.engine.summarize import Summarizer, SummaryItem
from memory_core.engine.table import ACTIVE_CODE, kind_code, status_code
from memory_core.errors import InputError

DEPRECATION_FACTOR = 0.3


class LifecycleMixin(WriteMixin):
    """Edits of stored memories, and the passes that fold a session's memories."""

    _summarizer: Summarizer

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
