"""The task context graph's unsure changes, as items of the conflicts review queue.

When the graph (``memory_core.context``) is unsure a new value is for the same slot as
the constraint in force ("hotel cap: 200" against "hotel budget: 180 EUR per night"), it
does not apply the change and, when the pair is one a person would review
(``context.review_gate``: not small talk or a question, two real values of related slots),
returns a ``PendingReview``. ``ContextReviewSink`` puts it
in the queue a reviewer works through on the Conflict review page: the pair is the memory
the value in force came from and the memory of the turn that proposed the new one (the
page links both to their context nodes), the reason names the node in force, both slots,
both values and how close the slot names are. A reviewer's "Accept new" supersedes the
old memory as for any value change, and the graph applies the change through the
listener the agent loop registers (``agent.context_graph.ContextStage.answer``).
"""

from __future__ import annotations

from memory_core.conflicts.detector import USER_KEY
from memory_core.conflicts.items import ItemDraft, ReviewAction
from memory_core.conflicts.queue import ReviewQueue
from memory_core.conflicts.verdict import Kind
from memory_core.context.model import Node, PendingReview
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import to_datetime

KIND: Kind = "value_change"
"""A slot that takes another value: the verdict kind of a context item."""
REASON_PREFIX = "task context graph"
"""How a context item's reason starts (the page and tests tell the items apart by it)."""
ACCEPTING = frozenset({ReviewAction.ACCEPT_NEW, ReviewAction.EDIT_MERGE})
"""The reviewer's actions that mean "the new value replaces the one in force"."""


def context_reason(pending: PendingReview, existing: Node) -> str:
    """One sentence for the reviewer: which node, which slots and values, how sure."""
    return (
        f"{REASON_PREFIX}: is {pending.slot!r} = {pending.value!r} a new value of "
        f"{pending.existing_slot!r} = {pending.existing_value!r} (node {existing.id}, in "
        f"force)? Slot names {pending.similarity:.2f} close, below the graph's own "
        "threshold, so the change waits for a reviewer: accept the new to apply it."
    )


def is_context_item(reason: str) -> bool:
    return reason.startswith(f"{REASON_PREFIX}:")


def context_draft(
    atlas: ElasticMemoryAtlas, session_id: str, pending: PendingReview, existing: Node
) -> ItemDraft:
    """The queue item of one unsure change: old side the newest memory the constraint in
    force came from (its label when no memory is left), new side the proposing turn's
    memory (the value when the turn was not stored)."""
    old_memory = next((m for m in reversed(existing.memories) if m in atlas), None)
    new_memory = pending.memory_id if pending.memory_id in atlas else None
    old = atlas.get(old_memory) if old_memory is not None else None
    new = atlas.get(new_memory) if new_memory is not None else None
    similarity = max(-1.0, min(1.0, float(pending.similarity)))
    return ItemDraft(
        old_id=old.id if old is not None else existing.id,
        old_text=old.content if old is not None else existing.label,
        old_session_id=old.session_id if old is not None else session_id,
        new_id=new.id if new is not None else None,
        new_text=new.content if new is not None else f"{pending.slot}: {pending.value}",
        session_id=new.session_id if new is not None else session_id,
        similarity=similarity,
        score=max(0.0, similarity),
        reason=context_reason(pending, existing),
        kind=KIND,
        suggested=ReviewAction.ACCEPT_NEW,
        user_id=next(
            (str(n.metadata[USER_KEY]) for n in (new, old) if n and n.metadata.get(USER_KEY)),
            None,
        ),
    )


class ContextReviewSink:
    """Queues the graph's unsure changes for a reviewer; returns the item's id.

    Args:
        atlas: the memories the graph's nodes came from (their texts go on the item).
        queue: the review queue (the Conflict review page's, in memory or SQL).
    """

    __slots__ = ("atlas", "queue")

    def __init__(self, atlas: ElasticMemoryAtlas, queue: ReviewQueue) -> None:
        self.atlas = atlas
        self.queue = queue

    def __call__(self, session_id: str, pending: PendingReview, existing: Node) -> str:
        with self.atlas.lock:
            draft = context_draft(self.atlas, session_id, pending, existing)
        return self.queue.enqueue(draft, at=to_datetime(self.atlas.clock.now())).id
