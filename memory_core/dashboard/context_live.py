"""Where the dashboard's task context graphs come from, and where they go.

The live atlas's turns (playground, demo) run through the agent loop, whose orchestrator
keeps one graph per session in its context stage (``agent.context_graph.ContextStage``);
a snapshot loaded in the sidebar brings the graphs saved in it. The pages read either
here, as the store's records, so they draw the same way. Saving the live atlas to the
database puts its graphs into the same snapshot and into the context graph tables
(``store.context_io``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_core.agent.rules import CONTEXT_REVIEW
from memory_core.conflicts.context_items import ACCEPTING, ContextReviewSink
from memory_core.conflicts.context_items import is_context_item as is_context_item  # pages
from memory_core.conflicts.items import ReviewAction, ReviewItem
from memory_core.context.graph import ContextGraph
from memory_core.context.model import Node, PendingReview
from memory_core.dashboard.context_view import latest
from memory_core.engine.events import RuleFired
from memory_core.store.context_graphs import ContextEdgeRecord, ContextNodeRecord
from memory_core.store.context_io import (
    SECTION,
    graph_key,
    graph_records,
    save_graph,
    section_bytes,
)

if TYPE_CHECKING:
    from memory_core.agent.context_graph import ContextStage
    from memory_core.agent.rules import Orchestrator
    from memory_core.dashboard.conflict_view import ConflictDesk
    from memory_core.knowledge.items import Citation, KnowledgeItem
    from memory_core.store.context_graphs import ContextGraphRepository

CORRECTED_KEY_PREFIX = "memory."
"""Key prefix of knowledge items made from a corrected statement (``memory.<root id>``)."""


@dataclass(frozen=True, slots=True)
class SessionGraph:
    """One session's graph as records (every version), read at one instant."""

    session_id: str
    nodes: tuple[ContextNodeRecord, ...]
    edges: tuple[ContextEdgeRecord, ...]
    pending: frozenset[str] = frozenset()

    def has(self, node_id: str) -> bool:
        return any(n.id == node_id for n in self.nodes)


Graphs = Mapping[str, ContextGraph]
"""Task context graphs by session: the live loop's, or those a loaded snapshot carries."""


def live_graphs(rules: Orchestrator | None) -> dict[str, ContextGraph]:
    """The live loop's graphs by session (none without rules or with the graph off)."""
    stage = None if rules is None else rules.context
    return {} if stage is None else {s: stage.of(s).graph for s in stage.sessions()}


def held_nodes(rules: Orchestrator | None) -> frozenset[str]:
    """Nodes in force whose replacement the live loop holds back for a reviewer."""
    stage = None if rules is None else rules.context
    return (
        frozenset() if stage is None else frozenset(p.existing_id for _, p in stage.held().values())
    )


def graph_sessions(graphs: Graphs) -> list[str]:
    """Sessions that have a graph, sorted."""
    return sorted(graphs)


def session_graph(
    graphs: Graphs, session_id: str, rule_events: Iterable[RuleFired] = ()
) -> SessionGraph | None:
    """The session's graph as records, None when the session has none.

    ``rule_events`` (the live buffer's): a ``context_review`` rule names the constraint in
    force whose replacement waits for a reviewer; it is shown as pending review.
    """
    graph = graphs.get(session_id)
    if graph is None:
        return None
    nodes, edges = graph_records(graph, session_id=session_id)
    pending = frozenset(
        e.node_id for e in rule_events if e.rule == CONTEXT_REVIEW and e.session_id == session_id
    )
    return SessionGraph(session_id, tuple(nodes), tuple(edges), pending)


def session_of_node(graphs: Graphs, node_id: str) -> str | None:
    """The session whose graph holds ``node_id`` (a review page's link names only the node)."""
    return next((s for s in graph_sessions(graphs) if node_id in graphs[s]), None)


def nodes_behind(
    graphs: Graphs, memory_ids: Iterable[str], sessions: Sequence[str]
) -> list[tuple[str, ContextNodeRecord]]:
    """(session, node) for the newest version of every node that came from one of
    ``memory_ids`` or is one of them (a held-back context change whose value in force has
    no memory left names its node), looking in the graphs of ``sessions`` (those of a
    reviewed pair)."""
    wanted = {m for m in memory_ids if m}
    found: list[tuple[str, ContextNodeRecord]] = []
    for session_id in dict.fromkeys(sessions):
        graph = session_graph(graphs, session_id) if wanted else None
        if graph is not None:
            found += [
                (session_id, n)
                for n in latest(graph.nodes)
                if n.id in wanted or wanted.intersection(n.memory_ids)
            ]
    return found


def item_memories(
    item: KnowledgeItem, citations: Sequence[Citation] = ()
) -> tuple[list[str], list[str]]:
    """The memory ids a knowledge item came from or was cited by, and their sessions: the
    corrected statement and the chain's first memory for an item the review rule made,
    the citing memories for any item."""
    memories: list[str] = []
    data = item.data or {}
    if isinstance(data.get("memory_id"), str):
        memories.append(data["memory_id"])
    if item.key.startswith(CORRECTED_KEY_PREFIX):
        memories.append(item.key[len(CORRECTED_KEY_PREFIX) :])
    memories += [c.cited_by_id for c in citations if c.cited_by_kind == "memory"]
    sessions = [s for s in (item.session_id, *(c.session_id for c in citations)) if s]
    return list(dict.fromkeys(memories)), list(dict.fromkeys(sessions))


def snapshot_sections(graphs: Graphs) -> dict[str, bytes]:
    """What a snapshot of the live atlas carries beside it: every session's graph."""
    return {SECTION: section_bytes(graphs)} if graphs else {}


def save_graphs(graphs: Graphs, repo: ContextGraphRepository, atlas_id: str) -> int:
    """Store every session's graph in the context graph tables (one ``graph_key`` each)."""
    return sum(
        save_graph(repo, graph_key(atlas_id, s), graph, session_id=s)
        for s, graph in sorted(graphs.items())
    )


class ContextReviewLink:
    """The live loop's held-back context changes go to the Conflict review desk, and the
    reviewer's answers come back to the graph.

    The desk (``conflict_view.desk_for``: one queue per atlas, SQL when recording) is made
    on the first change held back, and this link listens to its review service from then
    on: "Accept new" (or a merge) applies the change in the session's graph, "Keep old" /
    "Keep both" leave the graph as it is, and Undo takes the graph's side back too.
    """

    __slots__ = ("_desk", "_lock", "_stage", "_wired")

    def __init__(self, desk: Callable[[], ConflictDesk], stage: ContextStage) -> None:
        self._desk = desk
        self._stage = stage
        self._wired: ConflictDesk | None = None
        self._lock = threading.Lock()

    def __call__(self, session_id: str, pending: PendingReview, existing: Node) -> str:
        desk = self._desk()
        with self._lock:
            if self._wired is not desk:
                desk.review.listeners.append(self._answered)
                desk.review.undo_listeners.append(self._undone)
                self._wired = desk
        return ContextReviewSink(desk.guard.atlas, desk.queue)(session_id, pending, existing)

    def _answered(self, item: ReviewItem, action: ReviewAction) -> None:
        self._stage.answer(item.id, accept=action in ACCEPTING)

    def _undone(self, item: ReviewItem) -> None:
        self._stage.withdraw(item.id)


def connect_context_review(rules: Orchestrator, desk: Callable[[], ConflictDesk]) -> None:
    """Route the orchestrator's held-back context changes to ``desk``'s review queue."""
    if rules.context is not None:
        rules.context_review = ContextReviewLink(desk, rules.context)
