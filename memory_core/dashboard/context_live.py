"""Where the dashboard's task context graphs come from, and where they go.

The live atlas's turns (playground, demo) run through the agent loop, whose orchestrator
keeps one graph per user (per session for turns that name no user) in its context stage
(``agent.context_graph.ContextStage``), named by scope key (``context.scope``: ``user:<id>``
or ``session:<id>``); a snapshot loaded in the sidebar brings the graphs saved in it. A
user's graph names the sessions that wrote each version, so the pages say which session
set a value and which one changed it. The pages read either
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
from memory_core.context.scope import scope_owner, scope_user
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
class ScopeGraph:
    """One graph (a user's, or a session's) as records (every version), read at one
    instant, with the sessions that wrote it in order."""

    scope: str
    nodes: tuple[ContextNodeRecord, ...]
    edges: tuple[ContextEdgeRecord, ...]
    sessions: tuple[str, ...] = ()
    pending: frozenset[str] = frozenset()

    def has(self, node_id: str) -> bool:
        return any(n.id == node_id for n in self.nodes)


Graphs = Mapping[str, ContextGraph]
"""Task context graphs by scope key: the live loop's, or those a loaded snapshot carries."""


def live_graphs(rules: Orchestrator | None) -> dict[str, ContextGraph]:
    """The live loop's graphs by scope key (none without rules or with the graph off)."""
    stage = None if rules is None else rules.context
    return {} if stage is None else stage.graphs()


def held_nodes(rules: Orchestrator | None) -> frozenset[str]:
    """Nodes in force whose replacement the live loop holds back for a reviewer."""
    stage = None if rules is None else rules.context
    return (
        frozenset()
        if stage is None
        else frozenset(h.pending.existing_id for h in stage.held().values())
    )


def graph_scopes(graphs: Graphs) -> list[str]:
    """Scope keys that have a graph, sorted."""
    return sorted(graphs)


def sessions_of(graphs: Graphs, scope: str) -> list[str]:
    """The sessions that wrote the scope's graph, in order (a session's own graph: that
    session, also when its versions name none, as graphs kept per session did)."""
    graph = graphs.get(scope)
    written = graph.sessions() if graph is not None else []
    return written or ([] if scope_user(scope) or graph is None else [scope_owner(scope)])


def scope_label(graphs: Graphs, scope: str) -> str:
    """How a picker names a graph: whose it is and the sessions in it."""
    sessions = sessions_of(graphs, scope)
    user = scope_user(scope)
    owner = f"user {user}" if user is not None else f"session {scope_owner(scope)}"
    if user is None or not sessions:
        return owner
    return f"{owner} · sessions {', '.join(sessions)}"


def scope_graph(
    graphs: Graphs, scope: str, rule_events: Iterable[RuleFired] = ()
) -> ScopeGraph | None:
    """The scope's graph as records, None when there is none.

    ``rule_events`` (the live buffer's): a ``context_review`` rule of one of the graph's
    sessions names the constraint in force whose replacement waits for a reviewer; it is
    shown as pending review.
    """
    graph = graphs.get(scope)
    if graph is None:
        return None
    sessions = tuple(sessions_of(graphs, scope))
    fallback = sessions[0] if len(sessions) == 1 else None
    nodes, edges = graph_records(graph, session_id=fallback)
    pending = frozenset(
        e.node_id for e in rule_events if e.rule == CONTEXT_REVIEW and e.session_id in sessions
    )
    return ScopeGraph(scope, tuple(nodes), tuple(edges), sessions, pending)


def scope_of_node(graphs: Graphs, node_id: str) -> str | None:
    """The graph that holds ``node_id`` (a review page's link names only the node)."""
    return next((s for s in graph_scopes(graphs) if node_id in graphs[s]), None)


def nodes_behind(
    graphs: Graphs, memory_ids: Iterable[str], sessions: Sequence[str]
) -> list[tuple[str, ContextNodeRecord]]:
    """(scope, node) for the newest version of every node that came from one of
    ``memory_ids`` or is one of them (a held-back context change whose value in force has
    no memory left names its node), looking in the graphs ``sessions`` (those of a reviewed
    pair) wrote into."""
    wanted = {m for m in memory_ids if m}
    named = set(sessions)
    found: list[tuple[str, ContextNodeRecord]] = []
    for scope in graph_scopes(graphs) if wanted else ():
        if not named.intersection(sessions_of(graphs, scope)):
            continue
        graph = scope_graph(graphs, scope)
        if graph is not None:
            found += [
                (scope, n)
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
    """What a snapshot of the live atlas carries beside it: every graph."""
    return {SECTION: section_bytes(graphs)} if graphs else {}


def save_graphs(graphs: Graphs, repo: ContextGraphRepository, atlas_id: str) -> int:
    """Store every graph in the context graph tables (one ``graph_key`` per scope key; a
    session's own graph names that session on versions that do not say)."""
    return sum(
        save_graph(
            repo,
            graph_key(atlas_id, scope),
            graph,
            session_id=None if scope_user(scope) else scope_owner(scope),
        )
        for scope, graph in sorted(graphs.items())
    )


class ContextReviewLink:
    """The live loop's held-back context changes go to the Conflict review desk, and the
    reviewer's answers come back to the graph.

    The desk (``conflict_view.desk_for``: one queue per atlas, SQL when recording) is made
    on the first change held back, and this link listens to its review service from then
    on: "Accept new" (or a merge) applies the change in its graph, "Keep old" /
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
