"""Where the dashboard's task context graphs come from, and where they go.

The live atlas's turns (playground, demo) run through the agent loop, whose orchestrator
keeps one graph per session in its context stage (``agent.context_graph.ContextStage``);
the pages read those graphs here, as the store's records, so they draw the same way as
a stored graph. Saving the live atlas to the database puts its graphs into the same
snapshot and into the context graph tables (``store.context_io``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_core.agent.rules import CONTEXT_REVIEW
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


def live_stage(rules: Orchestrator | None) -> ContextStage | None:
    """The context stage of the live loop's orchestrator (None: no rules, or the graph off)."""
    return None if rules is None else rules.context


def graph_sessions(stage: ContextStage | None) -> list[str]:
    """Sessions that have a graph, sorted (none without a stage)."""
    return sorted(stage.sessions()) if stage is not None else []


def session_graph(
    stage: ContextStage | None, session_id: str, rule_events: Iterable[RuleFired] = ()
) -> SessionGraph | None:
    """The session's graph, None when the session has none (never creates one).

    ``rule_events`` (the live buffer's): a ``context_review`` rule names the constraint in
    force whose replacement waits for a reviewer; it is shown as pending review.
    """
    if stage is None or session_id not in stage.sessions():
        return None
    nodes, edges = graph_records(stage.of(session_id).graph, session_id=session_id)
    pending = frozenset(
        e.node_id for e in rule_events if e.rule == CONTEXT_REVIEW and e.session_id == session_id
    )
    return SessionGraph(session_id, tuple(nodes), tuple(edges), pending)


def session_of_node(stage: ContextStage | None, node_id: str) -> str | None:
    """The session whose graph holds ``node_id`` (a review page's link names only the node)."""
    if stage is None:
        return None
    return next((s for s in graph_sessions(stage) if node_id in stage.of(s).graph), None)


def nodes_behind(
    stage: ContextStage | None, memory_ids: Iterable[str], sessions: Sequence[str]
) -> list[tuple[str, ContextNodeRecord]]:
    """(session, node) for the newest version of every node that came from one of
    ``memory_ids``, looking in the graphs of ``sessions`` (those of a reviewed pair)."""
    wanted = {m for m in memory_ids if m}
    found: list[tuple[str, ContextNodeRecord]] = []
    for session_id in dict.fromkeys(sessions):
        graph = session_graph(stage, session_id) if wanted else None
        if graph is not None:
            found += [
                (session_id, n) for n in latest(graph.nodes) if wanted.intersection(n.memory_ids)
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


def snapshot_sections(stage: ContextStage | None) -> dict[str, bytes]:
    """What a snapshot of the live atlas carries beside it: every session's graph."""
    sessions = graph_sessions(stage)
    if stage is None or not sessions:
        return {}
    return {SECTION: section_bytes({s: stage.of(s).graph for s in sessions})}


def save_graphs(stage: ContextStage | None, repo: ContextGraphRepository, atlas_id: str) -> int:
    """Store every session's graph of the live atlas in the context graph tables."""
    written = 0
    for session_id in graph_sessions(stage):
        assert stage is not None  # it has sessions
        graph = stage.of(session_id).graph
        written += save_graph(repo, graph_key(atlas_id, session_id), graph, session_id=session_id)
    return written
