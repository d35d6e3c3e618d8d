"""Reviewer actions on queued pairs, applied to the atlas, audited and undoable.

Every action goes through a ``_Changes`` recorder that remembers the previous value of
each status, confidence and edge it touches and each memory it creates; the list is
stored in the audit entry's ``after["changes"]`` and undo replays it backwards.
The atlas has no way to delete a single edge, so undo sets an edge the action created
to strength 0 (it no longer feeds association or graph expansion) and says so.

A second click on the same action returns the first click's audit entry; a different
action on a resolved item is refused until the first is undone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from memory_core.conflicts.items import (
    UNDO,
    AuditEntry,
    ItemStatus,
    ReviewAction,
    ReviewItem,
    require_reviewer,
)
from memory_core.conflicts.policy import ResolutionPolicy
from memory_core.conflicts.queue import ReviewQueue
from memory_core.engine import validate as check
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import to_datetime
from memory_core.engine.model import MemoryStatus, Relation
from memory_core.errors import InputError


@dataclass(slots=True)
class _Changes:
    """Atlas writes of one action, each with the value it replaced."""

    atlas: ElasticMemoryAtlas
    reviewer: str
    status: list[list[str]] = field(default_factory=list)  # [id, before, after]
    confidence: list[list[Any]] = field(default_factory=list)  # [id, before, after]
    edges: list[list[Any]] = field(default_factory=list)  # [src, dst, relation, before|None]
    created: list[str] = field(default_factory=list)
    allowed: str | None = None

    def set_status(self, node_id: str, status: MemoryStatus, reason: str) -> None:
        before = self.atlas.get(node_id).status
        if before is not status:
            self.atlas.set_status(node_id, status, reason=reason)
            self.status.append([node_id, before.value, status.value])

    def set_confidence(self, node_id: str, value: float) -> None:
        before = self.atlas.get(node_id).confidence
        if abs(before - value) > 1e-9:
            self.atlas.set_confidence(node_id, value)
            self.confidence.append([node_id, before, value])

    def link(self, source: str, target: str, relation: Relation, strength: float = 1.0) -> None:
        before = _edge_strength(self.atlas, source, target, relation)
        self.atlas.link(source, target, relation, strength)
        self.edges.append([source, target, relation.value, before])

    def add(self, text: str, session_id: str, confidence: float) -> str:
        added = self.atlas.stats()["added"]
        node = self.atlas.add(
            text, session_id=session_id, confidence=confidence, metadata={"reviewed": True}
        )
        if self.atlas.stats()["added"] > added:  # not folded into an existing memory
            self.created.append(node.id)
        return node.id

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "confidence": self.confidence,
            "edges": self.edges,
            "created": self.created,
            "allowed": self.allowed,
        }


def _edge_strength(
    atlas: ElasticMemoryAtlas, source: str, target: str, relation: Relation
) -> float | None:
    for edge in atlas.edges(source):
        if (edge.source_id, edge.target_id, edge.relation) == (source, target, relation):
            return edge.strength
    return None


Apply = Callable[["ConflictReview", ReviewItem, _Changes, str | None], None]


class ConflictReview:
    """Applies, audits and undoes reviewer decisions for one atlas and one queue."""

    def __init__(
        self,
        atlas: ElasticMemoryAtlas,
        queue: ReviewQueue,
        policy: ResolutionPolicy | None = None,
    ) -> None:
        self.atlas = atlas
        self.queue = queue
        self.policy = policy or ResolutionPolicy()
        self.listeners: list[Callable[[ReviewItem, ReviewAction], None]] = []
        """Told of every action applied (not of repeats or undos), after the atlas and the
        queue changed: the task context graph applies an accepted change this way."""
        self.undo_listeners: list[Callable[[ReviewItem], None]] = []
        """Told of every undo, after the atlas and the queue changed back (the item is open
        again): the task context graph takes back what it applied this way."""
        self._lock = threading.Lock()

    def act(
        self,
        item_id: str,
        action: ReviewAction | str,
        *,
        reviewer: str,
        merged_text: str | None = None,
    ) -> AuditEntry:
        """Apply ``action`` to an open item; a repeat of the applied action is a no-op."""
        who = require_reviewer(reviewer)
        chosen = _action(action)
        merged_text = (
            check.content(merged_text, self.atlas.config.max_content_chars, "merged_text")
            if chosen is ReviewAction.EDIT_MERGE
            else None  # only a merge has a text of its own
        )
        with self._lock, self.atlas.lock:
            item = self.queue.get(item_id)
            at = to_datetime(self.atlas.clock.now())
            if item.status is ItemStatus.RESOLVED or not self.queue.resolve(
                item_id, chosen, reviewer=who, at=at
            ):
                return self._applied(self.queue.get(item_id), chosen)
            before = self._state(item)
            changes = _Changes(self.atlas, who)
            try:
                _ACTIONS[chosen](self, item, changes, merged_text)
            except BaseException:
                _revert(self.atlas, self.queue, changes)
                self.queue.reopen(item_id)
                raise
            after = {**self._state(item, changes.created), "changes": changes.as_dict()}
            if merged_text is not None:
                after["merged_text"] = merged_text
            entry = self.queue.record(
                item_id, chosen.value, reviewer=who, at=at, before=before, after=after
            )
        for listener in list(self.listeners):
            listener(item, chosen)
        return entry

    def act_many(
        self, item_ids: Iterable[str], action: ReviewAction | str, *, reviewer: str
    ) -> list[AuditEntry]:
        """Bulk action (not ``edit_merge``, which needs one text per pair)."""
        chosen = _action(action)
        if chosen is ReviewAction.EDIT_MERGE:
            raise InputError("action", "edit_merge needs a merged text per pair: one at a time")
        require_reviewer(reviewer)
        return [self.act(i, chosen, reviewer=reviewer) for i in dict.fromkeys(item_ids)]

    def undo(self, entry_id: int, *, reviewer: str) -> AuditEntry:
        """Revert an action: statuses, confidences and edges back, created memories deleted,
        allow-list entry removed, item open again. Undoing twice returns the first undo."""
        who = require_reviewer(reviewer)
        with self._lock, self.atlas.lock:
            entry = self.queue.audit_entry(entry_id)
            if entry.action == UNDO:
                raise InputError("entry_id", "an undo cannot be undone: apply the action again")
            if entry.undone_by is not None:
                return self.queue.audit_entry(entry.undone_by)
            item = self.queue.get(entry.item_id)
            if not self.queue.reopen(item.id):
                raise InputError("entry_id", f"item {item.id} is not resolved by this entry")
            before = self._state(item, entry.after["changes"]["created"])
            reverted = _revert(self.atlas, self.queue, entry.after["changes"])
            undo = self.queue.record(
                item.id,
                UNDO,
                reviewer=who,
                at=to_datetime(self.atlas.clock.now()),
                before=before,
                after={**self._state(item), "reverted": reverted},
                undo_of=entry.id,
            )
            self.queue.mark_undone(entry.id, undo.id)
        for listener in list(self.undo_listeners):
            listener(item)
        return undo

    # ------------------------------------------------------------------ actions
    def _accept_new(self, item: ReviewItem, changes: _Changes, _text: str | None) -> None:
        new_id = item.new_id if item.new_id in self.atlas else None
        if item.old_id in self.atlas:
            changes.set_status(item.old_id, self.policy.old_status, "reviewer accepted the newer")
        if new_id is None:
            new_id = changes.add(item.new_text, item.session_id, self.policy.winner_confidence)
        else:
            changes.set_status(new_id, MemoryStatus.ACTIVE, "reviewer accepted it")
            confidence = self.atlas.get(new_id).confidence
            changes.set_confidence(new_id, max(confidence, self.policy.winner_confidence))
        if item.old_id in self.atlas and new_id != item.old_id:
            changes.link(new_id, item.old_id, Relation.SUPERSEDES)
            changes.link(new_id, item.old_id, Relation.CONTRADICTS, item.score)

    def _keep_old(self, item: ReviewItem, changes: _Changes, _text: str | None) -> None:
        if item.old_id in self.atlas:
            changes.set_status(item.old_id, MemoryStatus.ACTIVE, "reviewer kept it")
        if item.new_id is not None and item.new_id in self.atlas:
            changes.set_status(item.new_id, MemoryStatus.DEPRECATED, "reviewer kept the older")
            confidence = self.atlas.get(item.new_id).confidence
            changes.set_confidence(item.new_id, min(confidence, self.policy.loser_confidence))
            if item.old_id in self.atlas:
                changes.link(item.new_id, item.old_id, Relation.CONTRADICTS, item.score)

    def _keep_both(self, item: ReviewItem, changes: _Changes, _text: str | None) -> None:
        if not self.queue.is_allowed(item.key):
            self.queue.allow(
                item.key,
                reviewer=changes.reviewer,
                at=to_datetime(self.atlas.clock.now()),
                item_id=item.id,
                session_id=item.session_id,
                user_id=item.user_id,
            )
            changes.allowed = item.key

    def _edit_merge(self, item: ReviewItem, changes: _Changes, text: str | None) -> None:
        if text is None:
            raise InputError("merged_text", "is required for edit_merge")
        sides = [i for i in (item.old_id, item.new_id) if i is not None and i in self.atlas]
        for side in sides:  # retired first, so the merged text cannot fold into either
            changes.set_status(side, self.policy.old_status, "replaced by a reviewer's merge")
        merged = changes.add(text, item.session_id, self.policy.winner_confidence)
        for side in sides:
            if side != merged:
                changes.link(merged, side, Relation.SUPERSEDES)

    # ------------------------------------------------------------------ helpers
    def _applied(self, item: ReviewItem, action: ReviewAction) -> AuditEntry:
        """The entry of the action that resolved ``item``, if it is ``action``."""
        if item.resolution is not action:
            raise InputError(
                "action",
                f"item {item.id} is already resolved as {item.resolution}; undo that first",
            )
        for entry in self.queue.audit(item.id):
            if entry.action == action.value and entry.undone_by is None:
                return entry
        raise InputError("action", f"item {item.id} is being resolved by another reviewer")

    def _state(self, item: ReviewItem, extra: Iterable[str] = ()) -> dict[str, Any]:
        """Both memories (and any created ones) as they are now, for the audit trail."""
        memories: dict[str, dict[str, Any]] = {}
        for node_id in dict.fromkeys([item.old_id, item.new_id, *extra]):
            if node_id is None:
                continue
            if node_id not in self.atlas:
                memories[node_id] = {"present": False}
                continue
            node = self.atlas.get(node_id)
            memories[node_id] = {
                "present": True,
                "status": node.status.value,
                "confidence": round(float(node.confidence), 6),
                "content": node.content,
            }
        edges = [
            [e.source_id, e.target_id, e.relation.value, round(e.strength, 6)]
            for node_id in memories
            if memories[node_id]["present"]
            for e in self.atlas.edges(node_id)
            if e.source_id in memories
            and e.target_id in memories
            and e.relation in (Relation.SUPERSEDES, Relation.CONTRADICTS)
            and e.source_id == node_id
        ]
        current = self.queue.get(item.id)
        return {
            "item_status": current.status.value,
            "allowed": self.queue.is_allowed(item.key),
            "memories": memories,
            "edges": edges,
        }


_ACTIONS: dict[ReviewAction, Apply] = {
    ReviewAction.ACCEPT_NEW: ConflictReview._accept_new,
    ReviewAction.KEEP_OLD: ConflictReview._keep_old,
    ReviewAction.KEEP_BOTH: ConflictReview._keep_both,
    ReviewAction.EDIT_MERGE: ConflictReview._edit_merge,
}


def _action(value: ReviewAction | str) -> ReviewAction:
    try:
        return ReviewAction(value)
    except ValueError:
        allowed = ", ".join(a.value for a in ReviewAction)
        raise InputError("action", f"must be one of {allowed}, got {value!r}") from None


def _revert(
    atlas: ElasticMemoryAtlas, queue: ReviewQueue, changes: _Changes | dict[str, Any]
) -> dict[str, Any]:
    """Undo recorded changes, newest first; memories gone since are skipped and listed."""
    record = changes.as_dict() if isinstance(changes, _Changes) else changes
    skipped: list[str] = []
    neutralised: list[list[str]] = []
    for node_id in record["created"]:
        if node_id in atlas:
            atlas.delete(node_id)
    for source, target, relation, before in reversed(record["edges"]):
        if source not in atlas or target not in atlas:
            continue
        atlas.link(source, target, relation, 0.0 if before is None else before)
        if before is None:
            neutralised.append([source, target, relation])
    for node_id, before, _after in reversed(record["confidence"]):
        if node_id in atlas:
            atlas.set_confidence(node_id, before)
        else:
            skipped.append(node_id)
    for node_id, before, _after in reversed(record["status"]):
        if node_id in atlas:
            atlas.set_status(node_id, before, reason="review action undone")
        else:
            skipped.append(node_id)
    if record["allowed"]:
        queue.disallow(record["allowed"])
    return {"skipped": sorted(set(skipped)), "neutralised_edges": neutralised}
