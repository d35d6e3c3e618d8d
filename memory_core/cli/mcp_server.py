"""An MCP server exposing one atlas: ``memory_write``, ``memory_read``, ``memory_forget``,
``session_end``, ``memory_stats`` tools and an ``atlas://graph`` resource.

Writes and reads go through the agent loop (``memory_core.agent.loop.TurnLoop``): the
same write filter, attribution and orchestrator rules as every other turn, so a write of
"forget what I just said" soft-deletes instead of being stored, and a session that grows
past ``episode_after_memories`` folds its oldest memories into an episode.

Engine errors become MCP tool errors whose text names the bad field, so a client (or
the model behind it) can correct the call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from memory_core.agent.loop import Stored, TurnLoop
from memory_core.agent.memory import AtlasMemory, GuardedMemory, TurnMemory
from memory_core.agent.remember import RememberPolicy, everything
from memory_core.agent.rules import Orchestrator, orchestrator_for
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.events import MemoryRead
from memory_core.engine.model import MemoryNode, RetrievalHit
from memory_core.errors import AtlasError

if TYPE_CHECKING:
    from memory_core.conflicts.guard import ConflictGuard, GuardResult

T = TypeVar("T")

INSTRUCTIONS = (
    "Elastic Atlas agent memory. Call memory_read with the user's message before answering, "
    "memory_write for new facts, preferences, decisions and errors, session_end when a conversation ends."
)


def node_view(node: MemoryNode) -> dict[str, Any]:
    """JSON-ready view of a memory (no embedding)."""
    return {
        "id": node.id,
        "content": node.content,
        "session_id": node.session_id,
        "kind": node.kind.value,
        "status": node.status.value,
        "weight": round(node.weight, 4),
        "confidence": node.confidence,
        "created_at": node.created_at,
        "access_count": node.access_count,
        "provenance": list(node.provenance),
        "metadata": node.metadata,
    }


def hit_view(hit: RetrievalHit) -> dict[str, Any]:
    return {
        **node_view(hit.node),
        "score": round(hit.score, 4),
        "cross_session": hit.cross_session,
        "breakdown": hit.breakdown.as_dict(),
    }


def graph_view(atlas: ElasticMemoryAtlas) -> dict[str, Any]:
    """The whole graph as plain JSON (the ``atlas://graph`` resource)."""
    return {
        "stats": atlas.stats(),
        "nodes": [node_view(n) for n in atlas.nodes()],
        "edges": [
            {
                "source": e.source_id,
                "target": e.target_id,
                "relation": e.relation.value,
                "strength": e.strength,
            }
            for e in atlas.edges()
        ],
    }


def _guard(call: Callable[[], T]) -> T:
    try:
        return call()
    except AtlasError as exc:
        raise ToolError(str(exc)) from exc


def write_view(done: Stored[MemoryNode | GuardResult]) -> dict[str, Any]:
    """What ``memory_write`` answers: the stored memory, what the conflict guard decided
    and the rules that fired; what a forget request soft-deleted; or that the write filter
    declined it."""
    if done.forget is not None:
        return {"forgotten": list(done.forget.forgotten), "message": done.forget.message}
    stored = done.stored
    if stored is None:
        return {"stored": False, "message": "not worth remembering (write filter)"}
    if isinstance(stored, MemoryNode):
        view = node_view(stored)
    elif stored.node is None:  # the guard's own forget request ("forget my salary")
        view = {"stored": False}
    else:
        view = node_view(stored.node)
    if not isinstance(stored, MemoryNode) and stored.decisions:
        view["conflicts"] = [
            {"resolution": d.resolution.value, "existing_id": d.existing_id, "reason": d.reason}
            for d in stored.decisions
        ]
    if done.rules:
        view["rules"] = [{"rule": e.rule, "message": e.message} for e in done.rules]
    return view


def build_server(
    atlas: ElasticMemoryAtlas,
    *,
    name: str = "elastic-atlas",
    remember: RememberPolicy = everything,
    rules: Orchestrator | bool = True,
    guard: ConflictGuard | None = None,
) -> MCPServer:
    """An MCP server bound to ``atlas`` (transport chosen by the caller's ``run``).

    ``remember`` is the write filter (every explicit write by default); ``rules`` the
    orchestrator (``True``: one over ``atlas``; ``False``: no rules); ``guard`` a conflict
    guard over ``atlas`` that writes go through, so corrections supersede (and count
    towards knowledge review).
    """
    server: MCPServer = MCPServer(name, instructions=INSTRUCTIONS, version="0.1.0")
    # stores a MemoryNode, or through the guard its GuardResult (``write_view`` tells)
    memory: TurnMemory[RetrievalHit, Any] = (
        AtlasMemory(atlas) if guard is None else GuardedMemory(guard)
    )
    loop = TurnLoop(
        memory,
        remember=remember,
        link_top=0,  # a write links only to what the client names
        rules=orchestrator_for(atlas, rules),
    )

    @server.tool(
        description="Store a memory (fact, preference, decision, event) in a session; "
        "name the speaker ('user', a person's name) so questions about who said what find it."
    )
    def memory_write(
        content: str,
        session_id: str = "default",
        kind: str = "session",
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        confidence: float = 1.0,
        ttl_hours: float | None = None,
        pinned: bool = False,
        links_to: list[str] | None = None,
        speaker: str | None = None,
    ) -> dict[str, Any]:
        meta = metadata if speaker is None else {**(metadata or {}), "speaker": speaker}
        options = {
            "kind": kind,
            "importance": importance,
            "confidence": confidence,
            "ttl_hours": ttl_hours,
            "pinned": pinned,
            "links_to": links_to,
        }
        turn = _guard(
            lambda: loop.turn(
                content,
                session_id=session_id,
                top_k=1,
                recall=False,  # the client reads with memory_read
                metadata=meta,
                options=options,
            )
        )
        return write_view(turn.done)

    @server.tool(
        description="Retrieve the memories most relevant to a query, with score breakdowns."
    )
    def memory_read(
        query: str,
        top_k: int = 5,
        session_id: str | None = None,
        cross_session: bool = False,
        kinds: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        reinforce: bool = True,
    ) -> dict[str, Any]:
        at = atlas.clock.now()  # before the call: a write that starts later comes after it
        options = {"cross_session": cross_session, "kinds": kinds, "metadata": metadata}
        hits = _guard(
            lambda: loop.recall(
                query, session_id=session_id, top_k=top_k, reinforce=reinforce, options=options
            )
        )
        if atlas.events.active:  # a recorder listens: log the read for replay
            atlas.events.publish(
                MemoryRead(
                    at=at,
                    session_id=session_id,
                    query=query,
                    top_k=top_k,
                    cross_session=cross_session,
                    reinforce=reinforce,
                    returned=tuple(h.node.id for h in hits),
                    provenance=tuple(h.node.provenance for h in hits),
                )
            )
        return {"hits": [hit_view(h) for h in hits]}

    @server.tool(
        description="Forget a memory: tombstone it (kept for audit) or, with hard=true, delete it."
    )
    def memory_forget(node_id: str, hard: bool = False) -> dict[str, Any]:
        if hard:
            _guard(lambda: atlas.delete(node_id))
            return {"id": node_id, "deleted": True}
        return node_view(_guard(lambda: atlas.forget(node_id)))

    @server.tool(description="End a session: keep, fade, summarize or purge its memories.")
    def session_end(session_id: str, mode: str | None = None) -> dict[str, Any]:
        affected = _guard(lambda: atlas.end_session(session_id, mode))
        return {
            "session_id": session_id,
            "mode": mode or atlas.config.session_end_mode,
            "affected": affected,
        }

    @server.tool(description="Counts, weights and evictions of the memory.")
    def memory_stats() -> dict[str, Any]:
        return atlas.stats()

    @server.resource(
        "atlas://graph",
        name="graph",
        mime_type="application/json",
        description="Snapshot of the memory graph: nodes, edges, stats.",
    )
    def graph() -> str:
        return json.dumps(graph_view(atlas))

    return server
