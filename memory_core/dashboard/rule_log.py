"""What the agent loop's rules did, for the eviction log and the graph.

A reviewer of a rule wants: when, which rule, what it said ("episode created from 50
memories"), in which session, on which memories (with their texts, so a wrong "forget
that" is spotted), what came of it (the episode memory, the knowledge item), and a way to
undo a soft delete. Rows come from the live event buffer or the database log, like the
eviction log's; ``notes`` turns the same events into hover lines for the graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_core.agent.rules import CONTEXT_REVIEW, EPISODE, FORGET_REQUEST, KNOWLEDGE_REVIEW
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import to_datetime
from memory_core.engine.events import RuleFired
from memory_core.engine.model import MemoryStatus

if TYPE_CHECKING:
    from memory_core.dashboard.buffer import EventBuffer
    from memory_core.store.records import StoredEvent
    from memory_core.store.repositories import EventRepository

RULE_LABELS: Mapping[str, str] = {
    EPISODE: "episode summary",
    KNOWLEDGE_REVIEW: "knowledge review",
    FORGET_REQUEST: "soft delete on request",
}
PREVIEW_TEXTS = 3
PREVIEW_CHARS = 80
UNDO_REASON = "soft delete undone by a reviewer"
STORED_LIMIT = 500
"""Newest rule firings read from the database log."""


@dataclass(frozen=True, slots=True)
class RuleRow:
    """One rule firing."""

    at: float
    rule: str
    session_id: str
    message: str
    node_id: str
    source_ids: tuple[str, ...]
    item_id: str | None = None

    @property
    def undoable(self) -> bool:
        return self.rule == FORGET_REQUEST

    def display_record(self, atlas: ElasticMemoryAtlas | None = None) -> dict[str, Any]:
        """Table row; with ``atlas``, the texts of the memories it acted on (still held)."""
        result = {
            EPISODE: f"episode memory {self.node_id}",
            KNOWLEDGE_REVIEW: f"knowledge item {self.item_id}" if self.item_id else "not submitted",
            FORGET_REQUEST: "tombstoned (kept for audit)",
            CONTEXT_REVIEW: f"conflict review item {self.item_id} (node {self.node_id})"
            if self.item_id
            else f"not queued (node {self.node_id})",
        }.get(self.rule, self.node_id)
        return {
            "when": to_datetime(self.at),
            "rule": RULE_LABELS.get(self.rule, self.rule),
            "what happened": self.message,
            "session": self.session_id,
            "memories": len(self.source_ids),
            "result": result,
            "texts": " | ".join(texts(atlas, self.source_ids)) if atlas is not None else "",
        }


def row_from_event(event: RuleFired) -> RuleRow:
    return RuleRow(
        at=event.at,
        rule=event.rule,
        session_id=event.session_id or "",
        message=event.message,
        node_id=event.node_id,
        source_ids=tuple(event.source_ids),
        item_id=event.item_id,
    )


def row_from_stored(event: StoredEvent) -> RuleRow:
    """Map a logged ``rule`` event."""
    payload = event.payload
    item = payload.get("item_id")
    return RuleRow(
        at=event.at.timestamp(),
        rule=str(payload.get("rule", "")),
        session_id=event.session_id or "",
        message=str(payload.get("message", "")),
        node_id=event.node_id or str(payload.get("node_id", "")),
        source_ids=tuple(str(i) for i in payload.get("source_ids") or ()),
        item_id=None if item is None else str(item),
    )


def stored_rule_rows(
    repo: EventRepository,
    *,
    atlas_id: str | None = None,
    session_id: str | None = None,
    limit: int = STORED_LIMIT,
) -> list[RuleRow]:
    """The newest ``limit`` rule firings of the database log, newest first."""
    from memory_core.store.records import EventFilter

    flt = EventFilter(atlas_id=atlas_id, types=(RuleFired.type,), session_id=session_id)
    page = repo.query(flt, offset=0, limit=limit, order_by="at", descending=True)
    return [row_from_stored(e) for e in page.items]


def rule_rows(events: Iterable[RuleFired], *, session_id: str | None = None) -> list[RuleRow]:
    """Rows newest first, optionally of one session."""
    rows = [row_from_event(e) for e in events]
    rows = [r for r in rows if session_id is None or r.session_id == session_id]
    return sorted(rows, key=lambda r: (-r.at, r.node_id))


def texts(atlas: ElasticMemoryAtlas, ids: Iterable[str], limit: int = PREVIEW_TEXTS) -> list[str]:
    """Short texts of the first ``limit`` of ``ids`` still in ``atlas``, then "+N more"."""
    held = [i for i in ids if i in atlas]
    out = []
    for node_id in held[:limit]:
        text = " ".join(atlas.get(node_id).content.split())
        out.append(text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…")
    if len(held) > limit:
        out.append(f"+{len(held) - limit} more")
    return out


def undo_forget(atlas: ElasticMemoryAtlas, row: RuleRow) -> list[str]:
    """Bring back what a forget request soft-deleted (still tombstoned and held); the ids."""
    if not row.undoable:
        return []
    restored = []
    for node_id in row.source_ids:
        if node_id in atlas and atlas.get(node_id).status is MemoryStatus.TOMBSTONED:
            atlas.set_status(node_id, MemoryStatus.ACTIVE, reason=UNDO_REASON)
            restored.append(node_id)
    return restored


def notes(events: Iterable[RuleFired]) -> dict[str, str]:
    """Node id -> what rules did to it, one line per firing, for the graph's hover text."""
    lines: dict[str, list[str]] = {}
    for event in events:
        if event.rule == EPISODE:
            lines.setdefault(event.node_id, []).append(event.message)
            for node_id in event.source_ids:
                lines.setdefault(node_id, []).append(f"folded into episode {event.node_id}")
        elif event.rule == KNOWLEDGE_REVIEW:
            lines.setdefault(event.node_id, []).append(event.message)
        else:
            for node_id in event.source_ids:
                lines.setdefault(node_id, []).append(event.message)
    return {node_id: "\n".join(found) for node_id, found in lines.items()}


def buffered(buffer: EventBuffer) -> list[RuleFired]:
    """The rule events the live buffer holds, oldest first."""
    return [e for e in buffer.events(types=(RuleFired.type,)) if isinstance(e, RuleFired)]
