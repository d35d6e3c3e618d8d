"""A task context graph into the store and into snapshots, and back, equal.

The context package knows nothing of persistence and the store's tables know nothing of
the context package's types; this module is the one place that turns a ``ContextGraph``
(its ``to_records()``: every version in the order written) into the store's records and
back with ``from_records``, so a round trip gives a graph with the same versions in the
same order, each with the session that wrote it. In a snapshot an atlas's graphs (one per
user, or per session for turns that name no user) are the section ``context-graph``
(JSON), written into the same file as the atlas, so a stored snapshot row and its erasure
cover both.

Graphs were kept per session before (issue #24): a section of ``atlas-context/1`` names
each graph by its session and its records name no session; it still loads, each graph
under its session's scope key with its session as the writer of every version. Rows
stored then load the same way (their ``session_id`` is the graph's session).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from memory_core.context.graph import ContextGraph
from memory_core.context.scope import scope_key
from memory_core.engine.snapshot import add_sections, read_sections
from memory_core.errors import InputError
from memory_core.store.context_graphs import (
    ContextEdgeRecord,
    ContextGraphRepository,
    ContextNodeRecord,
    StoredGraph,
)

if TYPE_CHECKING:
    from memory_core.embedding.base import Embedder
    from memory_core.engine.atlas import ElasticMemoryAtlas
    from memory_core.engine.clock import Clock

SECTION = "context-graph"
"""Name of the snapshot section holding the graph."""
SECTION_FORMAT = "atlas-context/2"
"""Graphs named by scope key, every record with the session that wrote it."""
PER_SESSION_FORMAT = "atlas-context/1"
"""Before: graphs named by session, records without their session (still read)."""


def graph_records(
    graph: ContextGraph, *, session_id: str | None = None
) -> tuple[list[ContextNodeRecord], list[ContextEdgeRecord]]:
    """Every version of ``graph`` as store records; ``seq`` is its place in the log, its
    session the one that wrote it (``session_id`` when the graph does not know) and its
    origin the session that first made its node or edge."""
    nodes: list[ContextNodeRecord] = []
    edges: list[ContextEdgeRecord] = []
    for seq, record in enumerate(graph.to_records()):
        writer = record.get("session", session_id)
        origin = graph.origin(record["id"])
        common: dict[str, Any] = {
            "id": record["id"],
            "version": int(record["version"]),
            "seq": seq,
            "type": record["type"],
            "user_id": graph.user,
            "session_id": writer,
            "origin_session_id": origin if origin is not None else session_id,
            "recorded_at": record.get("recorded_at"),
            "soft_deleted": bool(record.get("soft_deleted", False)),
            "turns": tuple(record.get("turns", ())),
            "memory_ids": tuple(record.get("memories", ())),
        }
        if record["record"] == "node":
            nodes.append(
                ContextNodeRecord(
                    label=record["label"],
                    key=record.get("key", ""),
                    attributes=dict(record.get("attributes") or {}),
                    deprecated=bool(record.get("deprecated", False)),
                    **common,
                )
            )
        else:
            edges.append(
                ContextEdgeRecord(
                    source=record["source"],
                    target=record["target"],
                    label=record.get("fact", ""),
                    valid_at=record.get("valid_at"),
                    invalid_at=record.get("invalid_at"),
                    expired_at=record.get("expired_at"),
                    deprecated=record.get("invalid_at") is not None,
                    **common,
                )
            )
    return nodes, edges


def graph_from_stored(stored: StoredGraph) -> ContextGraph:
    """Rebuild the graph from its stored versions (replayed in log order; an edge whose
    node a session's erasure took is left out)."""
    users = {n.user_id for n in stored.nodes if n.user_id}
    users |= {e.user_id for e in stored.edges if e.user_id}
    if len(users) > 1:
        raise InputError("graph_id", f"{stored.graph_id} holds versions of several users")
    log: list[tuple[int, dict[str, Any]]] = [(n.seq, _node_dict(n)) for n in stored.nodes]
    log += [(e.seq, _edge_dict(e)) for e in stored.edges]
    log.sort(key=lambda item: item[0])
    return ContextGraph.from_records(
        (r for _, r in log), user=users.pop() if users else "user", partial=True
    )


def _node_dict(node: ContextNodeRecord) -> dict[str, Any]:
    return {
        "record": "node",
        "id": node.id,
        "type": node.type,
        "label": node.label,
        "key": node.key,
        "attributes": dict(node.attributes),
        "version": node.version,
        "recorded_at": node.recorded_at or 0.0,
        "deprecated": node.deprecated,
        "soft_deleted": node.soft_deleted,
        "turns": list(node.turns),
        "memories": list(node.memory_ids),
        **_writer(node),
    }


def _writer(record: ContextNodeRecord | ContextEdgeRecord) -> dict[str, Any]:
    return {"session": record.session_id} if record.session_id is not None else {}


def _edge_dict(edge: ContextEdgeRecord) -> dict[str, Any]:
    return {
        "record": "edge",
        "id": edge.id,
        "source": edge.source,
        "target": edge.target,
        "type": edge.type,
        "fact": edge.label,
        "valid_at": edge.valid_at or 0.0,
        "invalid_at": edge.invalid_at,
        "expired_at": edge.expired_at,
        "soft_deleted": edge.soft_deleted,
        "version": edge.version,
        "recorded_at": edge.recorded_at or 0.0,
        "turns": list(edge.turns),
        "memories": list(edge.memory_ids),
        **_writer(edge),
    }


def save_graph(
    repo: ContextGraphRepository,
    graph_id: str,
    graph: ContextGraph,
    *,
    session_id: str | None = None,
) -> int:
    """Store every version of ``graph`` under ``graph_id``; returns rows written."""
    nodes, edges = graph_records(graph, session_id=session_id)
    return repo.save(graph_id, nodes, edges)


def load_graph(repo: ContextGraphRepository, graph_id: str) -> ContextGraph:
    return graph_from_stored(repo.load(graph_id))


def section_bytes(graphs: Mapping[str, ContextGraph]) -> bytes:
    """Graphs by scope key (an atlas keeps one per user, ``context.scope``) as a snapshot
    section: JSON with each graph's user and every version in order."""
    document = {
        "format": SECTION_FORMAT,
        "graphs": [
            {"name": name, "user": graph.user, "records": graph.to_records()}
            for name, graph in sorted(graphs.items())
        ],
    }
    return json.dumps(document, allow_nan=False, separators=(",", ":")).encode()


def graphs_from_section(data: bytes) -> dict[str, ContextGraph]:
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(SECTION, f"is not JSON ({exc})") from exc
    formats = (SECTION_FORMAT, PER_SESSION_FORMAT)
    if not isinstance(document, dict) or document.get("format") not in formats:
        raise InputError(SECTION, f"must be an {SECTION_FORMAT} document")
    per_session = document["format"] == PER_SESSION_FORMAT
    entries = document.get("graphs")
    if not isinstance(entries, list):
        raise InputError(SECTION, "needs a 'graphs' list")
    graphs: dict[str, ContextGraph] = {}
    for i, entry in enumerate(entries):
        name, user, records = (
            (entry.get("name"), entry.get("user"), entry.get("records"))
            if isinstance(entry, dict)
            else (None, None, None)
        )
        if not isinstance(name, str) or not isinstance(user, str) or not isinstance(records, list):
            raise InputError(f"{SECTION}.graphs[{i}]", "needs 'name', 'user' and 'records'")
        if per_session:  # each graph was its session's: every version is that session's
            records = [{"session": name, **r} if isinstance(r, dict) else r for r in records]
            name = scope_key(name, None)
        graphs[name] = ContextGraph.from_records(records, user=user)
    return graphs


def save_snapshot_with_context(
    atlas: ElasticMemoryAtlas, graphs: Mapping[str, ContextGraph], path: str | Path
) -> Path:
    """``atlas.save_snapshot`` plus its graphs in the same file, replaced atomically (a
    crash leaves the old file or the new one, never half of one)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".atlas-", suffix=".npz", dir=target.parent)
    os.close(fd)
    try:
        atlas.save_snapshot(tmp)
        add_sections(Path(tmp), {SECTION: section_bytes(graphs)})
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load_snapshot_with_context(
    path: str | Path, *, embedder: Embedder | None = None, clock: Clock | None = None
) -> tuple[ElasticMemoryAtlas, dict[str, ContextGraph]]:
    """The atlas and the context graphs its snapshot carries (none: an empty dict)."""
    from memory_core.engine.atlas import ElasticMemoryAtlas

    atlas = ElasticMemoryAtlas.load_snapshot(path, embedder=embedder, clock=clock)
    return atlas, graphs_in_snapshot(path)


def graphs_in_snapshot(path: str | Path | BinaryIO) -> dict[str, ContextGraph]:
    """The context graphs a snapshot (a file, or its bytes in a buffer) carries, by name
    (empty when none)."""
    data = read_sections(path if not isinstance(path, str) else Path(path)).get(SECTION)
    return {} if data is None else graphs_from_section(data)


def graph_key(atlas_id: str, name: str) -> str:
    """A ``graph_id`` for one of an atlas's graphs (by scope key): short, stable."""
    digest = hashlib.blake2b(f"{atlas_id}\x00{name}".encode(), digest_size=16).hexdigest()
    return f"ctx-{digest}"
