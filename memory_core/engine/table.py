"""Columnar live state of all memories.

Numbers that decay, ranking and eviction touch for every memory sit in contiguous numpy
columns indexed by *slot*; per-memory Python objects (text, metadata, provenance) sit in
lists beside them. Slots of removed memories are reused.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from memory_core.engine.model import KIND_CODES, STATUS_CODES, MemoryKind, MemoryNode, MemoryStatus

_FLOAT_COLUMNS = ("strength", "weight", "created", "accessed", "expires")
_SMALL_FLOAT_COLUMNS = ("importance", "confidence", "assoc")
_INT_COLUMNS = ("count", "session", "degree", "member_pos")
_CODE_COLUMNS = ("kind", "status")
_BOOL_COLUMNS = ("alive", "pinned", "working")


class NodeTable:
    """Slot-addressed columns; ``alive`` marks which slots hold a memory."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self.high = 0  # slots [0, high) have been used at least once
        for name in _FLOAT_COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=np.float64))
        for name in _SMALL_FLOAT_COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=np.float32))
        for name in _INT_COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=np.int32))
        for name in _CODE_COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=np.int8))
        for name in _BOOL_COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=bool))
        self.ids: list[str | None] = [None] * capacity
        self.contents: list[str | None] = [None] * capacity
        self.metadata: list[dict[str, Any] | None] = [None] * capacity
        self.provenance: list[tuple[str, ...]] = [()] * capacity
        self.slot_of: dict[str, int] = {}
        self._free: list[int] = []
        self._members: dict[int, np.ndarray] = {}  # session code -> its slots (a prefix)
        self._n_members: dict[int, int] = {}

    # these attributes are created dynamically above; declared for type checkers
    strength: np.ndarray
    weight: np.ndarray
    created: np.ndarray
    accessed: np.ndarray
    expires: np.ndarray
    importance: np.ndarray
    confidence: np.ndarray
    assoc: np.ndarray
    count: np.ndarray
    session: np.ndarray
    degree: np.ndarray
    member_pos: np.ndarray  # where a slot sits in its session's list; -1 if in none
    kind: np.ndarray
    status: np.ndarray
    alive: np.ndarray
    pinned: np.ndarray
    working: np.ndarray

    def __len__(self) -> int:
        return len(self.slot_of)

    def alive_slots(self) -> np.ndarray:
        return np.flatnonzero(self.alive[: self.high])

    def allocate(self, node_id: str) -> int:
        if self._free:
            slot = self._free.pop()
        else:
            if self.high == self.capacity:
                self._grow()
            slot = self.high
            self.high += 1
        self.slot_of[node_id] = slot
        self.ids[slot] = node_id
        self.alive[slot] = True
        self.member_pos[slot] = -1
        return slot

    def allocate_many(self, node_ids: list[str]) -> np.ndarray:
        """``allocate`` for many ids at once, into never-used slots (one run, ascending;
        free slots stay free)."""
        start, end = self.high, self.high + len(node_ids)
        while self.capacity < end:
            self._grow()
        self.high = end
        self.ids[start:end] = node_ids
        self.slot_of.update(zip(node_ids, range(start, end), strict=True))
        self.alive[start:end] = True
        self.member_pos[start:end] = -1
        return np.arange(start, end, dtype=np.int64)

    def join(self, slot: int, session: int) -> None:
        """Put an allocated slot into a session (once)."""
        members = self._members.get(session)
        n = self._n_members.get(session, 0)
        if members is None or n == len(members):
            grown = np.empty(max(4, 2 * n), dtype=np.int64)
            if members is not None:
                grown[:n] = members
            members = self._members[session] = grown
        members[n] = slot
        self._n_members[session] = n + 1
        self.session[slot] = session
        self.member_pos[slot] = n

    def join_many(self, slots: np.ndarray, sessions: np.ndarray) -> None:
        """``join`` for many allocated slots at once: the same lists in the same order."""
        order = np.argsort(sessions, kind="stable")
        codes = sessions[order]
        starts = np.flatnonzero(np.diff(codes, prepend=-1))
        ends = [*starts[1:].tolist(), len(codes)][: len(starts)]
        for session, start, end in zip(codes[starts].tolist(), starts.tolist(), ends, strict=True):
            joining = slots[order[start:end]]
            members = self._members.get(session)
            n = self._n_members.get(session, 0)
            if members is None or n + len(joining) > len(members):
                grown = np.empty(max(4, 2 * n, n + len(joining)), dtype=np.int64)
                if members is not None:
                    grown[:n] = members[:n]
                members = self._members[session] = grown
            members[n : n + len(joining)] = joining
            self._n_members[session] = n + len(joining)
            self.session[joining] = session
            self.member_pos[joining] = np.arange(n, n + len(joining))

    def members(self, session: int) -> np.ndarray:
        """A session's slots in no particular order (a view: valid until the next change)."""
        members = self._members.get(session)
        if members is None:
            return np.empty(0, dtype=np.int64)
        return members[: self._n_members[session]]

    def release(self, slot: int) -> None:
        self._leave(slot)
        node_id = self.ids[slot]
        if node_id is not None:
            del self.slot_of[node_id]
        self.ids[slot] = None
        self.contents[slot] = None
        self.metadata[slot] = None
        self.provenance[slot] = ()
        self.alive[slot] = False
        self.pinned[slot] = False
        self.working[slot] = False
        self.degree[slot] = 0
        self.assoc[slot] = 0.0
        self._free.append(slot)

    def _leave(self, slot: int) -> None:
        """Take a slot out of its session's list: the list's last slot takes its place."""
        pos = int(self.member_pos[slot])
        if pos < 0:
            return
        session = int(self.session[slot])
        members, last = self._members[session], self._n_members[session] - 1
        moved = int(members[last])
        members[pos] = moved
        self.member_pos[moved] = pos
        self.member_pos[slot] = -1
        if last:
            self._n_members[session] = last
        else:  # an empty session keeps no list behind
            del self._members[session], self._n_members[session]

    def _grow(self) -> None:
        new = self.capacity * 2
        for name in (
            *_FLOAT_COLUMNS,
            *_SMALL_FLOAT_COLUMNS,
            *_INT_COLUMNS,
            *_CODE_COLUMNS,
            *_BOOL_COLUMNS,
        ):
            old = getattr(self, name)
            grown = np.zeros(new, dtype=old.dtype)
            grown[: self.capacity] = old
            setattr(self, name, grown)
        pad = new - self.capacity
        self.ids.extend([None] * pad)
        self.contents.extend([None] * pad)
        self.metadata.extend([None] * pad)
        self.provenance.extend([()] * pad)
        self.capacity = new

    def snapshot(
        self, slot: int, session_id: str, embedding: np.ndarray | None = None
    ) -> MemoryNode:
        """An immutable-by-convention copy of one memory."""
        expires = float(self.expires[slot])
        return MemoryNode(
            id=str(self.ids[slot]),
            content=str(self.contents[slot]),
            session_id=session_id,
            kind=KIND_CODES[self.kind[slot]],
            status=STATUS_CODES[self.status[slot]],
            weight=float(self.weight[slot]),
            strength=float(self.strength[slot]),
            importance=float(self.importance[slot]),
            confidence=float(self.confidence[slot]),
            created_at=float(self.created[slot]),
            last_accessed_at=float(self.accessed[slot]),
            access_count=int(self.count[slot]),
            expires_at=None if math.isinf(expires) else expires,
            pinned=bool(self.pinned[slot]),
            provenance=self.provenance[slot],
            metadata=dict(self.metadata[slot] or {}),
            embedding=embedding,
        )

    def snapshots(self, slots: np.ndarray, session_names: list[str | None]) -> list[MemoryNode]:
        """``snapshot`` of many memories, each column read once for all of them (the
        same values: ``tolist`` makes the Python numbers ``float()`` would)."""
        rows = np.asarray(slots, dtype=np.int64)
        if not len(rows):
            return []
        expires = self.expires[rows].tolist()
        columns = zip(
            rows.tolist(),
            self.session[rows].tolist(),
            self.kind[rows].tolist(),
            self.status[rows].tolist(),
            self.weight[rows].tolist(),
            self.strength[rows].tolist(),
            self.importance[rows].tolist(),
            self.confidence[rows].tolist(),
            self.created[rows].tolist(),
            self.accessed[rows].tolist(),
            self.count[rows].tolist(),
            expires,
            self.pinned[rows].tolist(),
            strict=True,
        )
        return [
            MemoryNode(
                id=str(self.ids[slot]),
                content=str(self.contents[slot]),
                session_id=str(session_names[session]),
                kind=KIND_CODES[kind],
                status=STATUS_CODES[status],
                weight=weight,
                strength=strength,
                importance=importance,
                confidence=confidence,
                created_at=created,
                last_accessed_at=accessed,
                access_count=count,
                expires_at=None if math.isinf(until) else until,
                pinned=pinned,
                provenance=self.provenance[slot],
                metadata=dict(self.metadata[slot] or {}),
            )
            for (
                slot,
                session,
                kind,
                status,
                weight,
                strength,
                importance,
                confidence,
                created,
                accessed,
                count,
                until,
                pinned,
            ) in columns
        ]


def kind_code(kind: MemoryKind) -> int:
    return KIND_CODES.index(kind)


def status_code(status: MemoryStatus) -> int:
    return STATUS_CODES.index(status)


ACTIVE_CODE = status_code(MemoryStatus.ACTIVE)
