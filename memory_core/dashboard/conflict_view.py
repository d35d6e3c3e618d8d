"""Everything the conflict review page computes: the queue desk, filters, diffs, audit rows.

The actions (``write``, ``scan``, ``act``, ``act_many``, ``undo``) check the caller's
role themselves: the page's disabled buttons are a courtesy, not the guard.

Memory text is user content: it is HTML-escaped *before* the ``<mark>`` tags that
highlight the differing parts are added, so a memory saying ``<script>`` is shown as
those characters and never runs. The page itself only reads state and draws.
"""

from __future__ import annotations

import difflib
import html
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory_core.conflicts.guard import ConflictGuard, Decision, GuardResult
from memory_core.conflicts.items import (
    AuditEntry,
    ItemFilter,
    ItemStatus,
    QueueCounts,
    ReviewAction,
    ReviewItem,
)
from memory_core.conflicts.policy import Resolution
from memory_core.conflicts.queue import InMemoryReviewQueue, ReviewQueue
from memory_core.conflicts.review import ConflictReview
from memory_core.dashboard.access import Action, Identity, require
from memory_core.dashboard.background import Actor
from memory_core.dashboard.jobs import SCAN, JobRegistry, ScanJob
from memory_core.dashboard.limits import memory_text, session_name
from memory_core.dashboard.ui.identity import REVIEWER_KEY
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import to_datetime
from memory_core.engine.model import MemoryEdge, MemoryNode, MemoryStatus, Relation
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.store.engine import Database

STATUS_CHOICES = ("open", "resolved", "all")
ACTION_LABELS: dict[ReviewAction, str] = {
    ReviewAction.ACCEPT_NEW: "Accept new",
    ReviewAction.KEEP_OLD: "Keep old",
    ReviewAction.KEEP_BOTH: "Keep both (not a conflict)",
    ReviewAction.EDIT_MERGE: "Edit / merge",
}
BULK_ACTIONS = (ReviewAction.ACCEPT_NEW, ReviewAction.KEEP_OLD, ReviewAction.KEEP_BOTH)
MARK_STYLE = "background:#fde68a;padding:0 2px;border-radius:2px"
_WORD = re.compile(r"\S+")


class ConflictKeys:
    """Session-state keys of the conflict review page (widgets write under these)."""

    REVIEWER = REVIEWER_KEY
    STATUS = "conflict_status"
    KINDS = "conflict_kinds"
    SESSION = "conflict_session"
    TEXT = "conflict_text"
    MIN_SCORE = "conflict_min_score"
    ITEM = "conflict_item"
    BULK = "conflict_bulk"
    BULK_ACTION = "conflict_bulk_action"
    MERGED = "conflict_merged"
    UNDO = "conflict_undo"
    WRITE_TEXT = "conflict_write_text"
    WRITE_SESSION = "conflict_write_session"
    WRITE_CONFIDENCE = "conflict_write_confidence"
    FLASH = "conflict_flash"
    WRITTEN = "conflict_written"
    """The guard's result of this session's last write: shown, with undo for supersedes."""
    LAST = "conflict_last_action"
    """(item id, audit entry id) of this session's last action: kept on screen."""


@dataclass(frozen=True, slots=True)
class ConflictDesk:
    """The live atlas's guard, review service and queue (SQL when the dashboard records)."""

    guard: ConflictGuard
    review: ConflictReview
    persisted: bool

    @property
    def queue(self) -> ReviewQueue:
        return self.guard.queue


_DESKS: weakref.WeakKeyDictionary[ElasticMemoryAtlas, ConflictDesk] = weakref.WeakKeyDictionary()
_DESKS_LOCK = threading.Lock()


def desk_for(atlas: ElasticMemoryAtlas, db: Database | None) -> ConflictDesk:
    """One desk per atlas for the whole server process, so every browser sees one queue.
    A new desk's guard warms up on a thread of its own (``ConflictGuard.warm_in_background``:
    its judge's models, the stored memories read), not in the first writes."""
    with _DESKS_LOCK:
        desk = _DESKS.get(atlas)
        if desk is None:
            queue: ReviewQueue
            if db is not None:
                from memory_core.conflicts.sql_queue import SqlReviewQueue

                queue = SqlReviewQueue(db)
            else:
                queue = InMemoryReviewQueue()
            guard = ConflictGuard(atlas, queue=queue)
            guard.warm_in_background()
            desk = ConflictDesk(guard, ConflictReview(atlas, queue, guard.policy), db is not None)
            _DESKS[atlas] = desk
        return desk


def write(
    desk: ConflictDesk, identity: Identity, text: str, *, session_id: str, confidence: float
) -> GuardResult:
    """Write a memory through the guard as ``identity`` (``AccessDeniedError`` if it may not);
    the text and session name pass the same checks as on every page (``limits``). Returns
    once the judge's second look at the write's open pairs is done too, its decisions
    included, so the page shows what the write did."""
    require(identity, Action.WRITE)
    result = desk.guard.add(
        memory_text(text, "memory"),
        session_id=session_name(session_id),
        confidence=confidence,
    )
    return desk.guard.settled(result)


def scan(desk: ConflictDesk, identity: Identity) -> list[ReviewItem]:
    """Queue every contradiction in the atlas, as ``identity``."""
    require(identity, Action.WRITE)
    return desk.guard.scan()


def automatic_supersedes(result: GuardResult) -> list[Decision]:
    """The memories a write retired on its own (no reviewer asked), to show with undo."""
    return [d for d in result.decisions if d.resolution is Resolution.SUPERSEDE]


def undo_supersede(
    desk: ConflictDesk, identity: Identity, decision: Decision, new_id: str | None
) -> None:
    """Put back a memory the guard superseded automatically, as ``identity``: active
    again, and the ``supersedes``/``contradicts`` edges from the new memory set to
    strength 0 (the atlas cannot delete one edge; the review page's undo does the same).
    A summary the guard re-issued without it stays re-issued."""
    require(identity, Action.WRITE)
    atlas = desk.guard.atlas
    with atlas.lock:
        atlas.set_status(
            decision.existing_id, MemoryStatus.ACTIVE, reason="automatic supersede undone"
        )
        if new_id is not None and new_id in atlas:
            for relation in (Relation.SUPERSEDES, Relation.CONTRADICTS):
                atlas.link(new_id, decision.existing_id, relation, 0.0)


def start_scan(desk: ConflictDesk, identity: Identity, jobs: JobRegistry, actor: Actor) -> ScanJob:
    """Start a scan of the whole atlas as a background job, as ``identity``
    (``AccessDeniedError`` if it may not write, ``JobBusyError`` while one runs)."""
    require(identity, Action.WRITE)
    return jobs.start(SCAN, lambda: ScanJob(desk.guard), actor)


def act(
    desk: ConflictDesk,
    identity: Identity,
    item_id: str,
    action: ReviewAction,
    *,
    merged_text: str | None = None,
) -> AuditEntry:
    """Resolve one item, recorded under ``identity``'s name.

    Raises:
        AccessDeniedError: read-only mode, a role that may not review, or no name;
            nothing is changed.
    """
    who = require(identity, Action.REVIEW)
    if merged_text is not None and merged_text.strip():
        merged_text = memory_text(merged_text, "merged text")
    return desk.review.act(item_id, action, reviewer=who.name, merged_text=merged_text)


def act_many(
    desk: ConflictDesk, identity: Identity, item_ids: Sequence[str], action: ReviewAction
) -> list[AuditEntry]:
    """The same action on several items, as ``identity`` (checked before any is touched)."""
    who = require(identity, Action.REVIEW)
    return desk.review.act_many(item_ids, action, reviewer=who.name)


def undo(desk: ConflictDesk, identity: Identity, entry_id: int) -> AuditEntry:
    """Revert an audit entry, as ``identity``."""
    who = require(identity, Action.REVIEW)
    return desk.review.undo(entry_id, reviewer=who.name)


def item_filter(
    status: str,
    kinds: Sequence[str] = (),
    session_id: str = "",
    text: str = "",
    min_score: float = 0.0,
) -> ItemFilter:
    """The page's filter widgets as a queue filter."""
    if status not in STATUS_CHOICES:
        raise InputError("status", f"must be one of {', '.join(STATUS_CHOICES)}, got {status!r}")
    return ItemFilter(
        status=None if status == "all" else ItemStatus(status),
        kinds=tuple(kinds),
        session_id=session_id or None,
        text=text.strip(),
        min_score=float(min_score),
    )


def item_label(item: ReviewItem) -> str:
    """One line naming an item in pickers (plain text, shortened)."""
    return f"{item.kind} · {item.score:.2f} · {_short(item.old_text)} ⟷ {_short(item.new_text)}"


def queue_rows(items: Iterable[ReviewItem]) -> list[dict[str, Any]]:
    """Table rows of the queue (dataframes show values as text)."""
    return [
        {
            "status": i.status.value,
            "kind": i.kind,
            "score": round(i.score, 3),
            "similarity": round(i.similarity, 3),
            "old": i.old_text,
            "new": i.new_text,
            "sessions": f"{i.old_session_id} → {i.session_id}",
            "suggested": i.suggested.value,
            "resolution": i.resolution.value if i.resolution else "",
            "reviewer": i.resolved_by or "",
            "flagged": i.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "id": i.id,
        }
        for i in items
    ]


def marked_html(text: str, ranges: Iterable[tuple[int, int]]) -> str:
    """``text`` escaped, with each character range wrapped in ``<mark>``."""
    out: list[str] = []
    pos = 0
    for start, end in _merged(ranges, len(text)):
        out.append(html.escape(text[pos:start]))
        out.append(f'<mark style="{MARK_STYLE}">{html.escape(text[start:end])}</mark>')
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def word_diff(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges of the words that differ between ``a`` and ``b`` (difflib)."""
    wa, wb = list(_WORD.finditer(a)), list(_WORD.finditer(b))
    matcher = difflib.SequenceMatcher(
        a=[m.group().lower() for m in wa], b=[m.group().lower() for m in wb], autojunk=False
    )
    ra: list[tuple[int, int]] = []
    rb: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            ra.append((wa[i1].start(), wa[i2 - 1].end()))
        if j2 > j1:
            rb.append((wb[j1].start(), wb[j2 - 1].end()))
    return ra, rb


def side_by_side(item: ReviewItem) -> tuple[str, str]:
    """HTML of the old and the new text with the differing parts marked.

    The judge's spans are used when they match the texts; otherwise a word diff.
    """
    spans = {"a": [], "b": []}  # type: dict[str, list[tuple[int, int]]]
    texts = {"a": item.old_text, "b": item.new_text}
    for span in item.spans:
        text = texts[span.side]
        if 0 <= span.start < span.end <= len(text) and text[span.start : span.end] == span.text:
            spans[span.side].append((span.start, span.end))
    if not spans["a"] and not spans["b"]:
        spans["a"], spans["b"] = word_diff(item.old_text, item.new_text)
    return marked_html(item.old_text, spans["a"]), marked_html(item.new_text, spans["b"])


def audit_rows(
    entries: Iterable[AuditEntry], wall_time: Callable[[float], float | None] | None = None
) -> list[dict[str, Any]]:
    """The audit trail as table rows; before/after summarised as status and confidence.

    ``wall_time`` turns the atlas's time (which the demo and "skip ahead" move forward)
    back into real time; the real UTC time comes first, the atlas time beside it.
    """

    def real(at: datetime) -> str:
        wall = wall_time(at.timestamp()) if wall_time is not None else at.timestamp()
        if wall is None:
            return "(before this server started)"
        return to_datetime(wall).strftime("%Y-%m-%d %H:%M:%S UTC")

    return [
        {
            "#": e.id,
            "action": e.action,
            "reviewer": e.reviewer,
            "at (UTC)": real(e.at),
            "atlas time": e.at.strftime("%Y-%m-%d %H:%M:%S"),
            "before": _summary(e.before),
            "after": _summary(e.after),
            "undone by": e.undone_by,
            "undoes": e.undo_of,
        }
        for e in entries
    ]


def by_score(items: Iterable[ReviewItem]) -> list[ReviewItem]:
    """Most certain contradictions first; newest first among equal scores."""
    return sorted(items, key=lambda i: (-i.score, -i.created_at.timestamp(), i.id))


def empty_state(status: str, counts: QueueCounts, *, narrowed: bool) -> str:
    """What to say when the filters leave no item: true about what else is waiting."""
    if counts.total == 0:
        return "Nothing to review: the queue is empty. Write contradicting memories above, or scan the atlas."
    if status == "open" and not narrowed:
        return f"Nothing left to review: all {counts.resolved} items are resolved."
    noun = {"open": "No open item", "resolved": "No resolved item", "all": "No item"}[status]
    head = noun + (" matches these filters" if narrowed else "")
    hint = " (set Status to open to review them)" if status != "open" and counts.open else ""
    return f"{head}; the queue holds {counts.open} open and {counts.resolved} resolved items{hint}."


def undoable(entries: Iterable[AuditEntry]) -> list[AuditEntry]:
    """Entries an undo can still revert (not undos themselves, not undone yet)."""
    return [e for e in entries if e.undo_of is None and e.undone_by is None]


def neighbourhood(
    atlas: ElasticMemoryAtlas, item: ReviewItem, *, limit: int = 40
) -> tuple[list[MemoryNode], list[MemoryEdge]]:
    """The pair, their direct neighbours (at most ``limit`` memories) and the edges among them."""
    with atlas.lock:
        seeds = [i for i in (item.old_id, item.new_id) if i is not None and i in atlas]
        ids = dict.fromkeys(seeds)
        for seed in seeds:
            for edge in atlas.edges(seed):
                ids.setdefault(edge.target_id if edge.source_id == seed else edge.source_id)
        chosen = list(ids)[:limit]
        nodes = [atlas.get(i) for i in chosen if i in atlas]
        keep = {n.id for n in nodes}
        edges = {
            e
            for n in nodes
            for e in atlas.edges(n.id)
            if e.source_id in keep and e.target_id in keep
        }
    return nodes, sorted(edges, key=lambda e: (e.source_id, e.target_id, e.relation.value))


def decision_lines(result: GuardResult) -> list[str]:
    """What a write through the guard did, one plain sentence per decision."""
    lines = [
        f"{d.resolution.value}: “{_short(d.existing_text, 60)}” ({d.kind}, score {d.score:.2f})"
        for d in result.decisions
    ]
    if result.second_look:
        lines.append(
            f"second look: {len(result.second_look)} pair(s) the fast judge was unsure of, "
            "read again by the cross-encoder; what it confirms is resolved like the rest "
            "(review queue, history)"
        )
    if result.node is not None:
        lines.insert(0, f"stored {result.node.id} with confidence {result.node.confidence:.2f}")
    return lines or ["nothing stored and nothing changed"]


def _summary(state: dict[str, Any]) -> str:
    memories = state.get("memories", {})
    parts = [
        f"{node_id}: {m['status']} {m['confidence']:.2f}"
        if m.get("present")
        else f"{node_id}: gone"
        for node_id, m in memories.items()
    ]
    if state.get("allowed"):
        parts.append("pair allowed")
    return "; ".join(parts)


def _merged(ranges: Iterable[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    clipped = sorted((max(0, s), min(length, e)) for s, e in ranges if e > s)
    out: list[tuple[int, int]] = []
    for start, end in clipped:
        if start >= length:
            break
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _short(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
