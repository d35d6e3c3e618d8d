"""The node inspector: one memory's facts, neighbours and event history, as table rows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memory_core.dashboard.graph_view import label
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import to_datetime
from memory_core.engine.events import (
    AtlasEvent,
    DecayApplied,
    MemoriesMerged,
    MemoryAdded,
    MemoryEvicted,
    MemoryReinforced,
    StatusChanged,
    SummaryCreated,
)
from memory_core.engine.model import MemoryNode, RetrievalHit


@dataclass(frozen=True, slots=True)
class NodeDetails:
    node: MemoryNode
    facts: list[dict[str, Any]]
    neighbours: list[dict[str, Any]]
    history: list[dict[str, Any]]


def node_options(nodes: Sequence[MemoryNode]) -> dict[str, str]:
    """Node id -> "label (weight)" for a select box, heaviest first."""
    ranked = sorted(nodes, key=lambda n: (-n.weight, n.id))
    return {n.id: f"{label(n.content, 48)}  ·  w={n.weight:.2f}" for n in ranked}


def node_details(
    atlas: ElasticMemoryAtlas, node_id: str, events: Iterable[AtlasEvent]
) -> NodeDetails:
    """Everything the inspector shows about ``node_id`` (which must still exist)."""
    node = atlas.get(node_id)
    now = atlas.clock.now()
    facts = [
        {"field": "weight", "value": f"{node.weight:.4f}"},
        {"field": "strength (decayed base)", "value": f"{node.strength:.4f}"},
        {"field": "importance", "value": f"{node.importance:.3f}"},
        {"field": "confidence", "value": f"{node.confidence:.3f}"},
        {"field": "recalled", "value": f"{node.access_count} times"},
        {"field": "age", "value": f"{(now - node.created_at) / 3600:.2f} h"},
        {"field": "last access", "value": f"{(now - node.last_accessed_at) / 3600:.2f} h ago"},
        {"field": "kind / status", "value": f"{node.kind.value} / {node.status.value}"},
        {"field": "session", "value": node.session_id},
        {"field": "pinned", "value": "yes" if node.pinned else "no"},
        {"field": "provenance", "value": ", ".join(node.provenance) or "—"},
    ]
    neighbours: list[dict[str, Any]] = []
    for edge in atlas.edges(node_id):
        other_id = edge.target_id if edge.source_id == node_id else edge.source_id
        if other_id not in atlas:
            continue
        other = atlas.get(other_id)
        neighbours.append(
            {
                "relation": edge.relation.value,
                "direction": "→" if edge.source_id == node_id else "←",
                "strength": round(edge.strength, 3),
                "memory": label(other.content, 60),
                "weight": round(other.weight, 3),
                "id": other_id,
            }
        )
    neighbours.sort(key=lambda r: (-r["strength"], r["id"]))
    history = merged_decays([row for e in events if (row := history_row(e, node_id)) is not None])
    history.reverse()  # newest first: what just happened is what one looks for
    return NodeDetails(node, facts, neighbours, history)


def merged_decays(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Oldest-first history with decay passes of the same second as one row.

    Letting time pass runs the automatic pass and the requested one at the same atlas
    time; two "decayed to" rows at one second read like a duplicate. The row keeps the
    weight after the last pass and says how many ran.
    """
    out: list[dict[str, Any]] = []
    passes = 1
    for row in rows:
        last = out[-1] if out else None
        same_second = (
            last is not None
            and row["event"] == last["event"] == "decay"
            and row["at"].replace(microsecond=0) == last["at"].replace(microsecond=0)
        )
        if same_second:
            passes += 1
            out[-1] = {**row, "detail": f"{row['detail']} ({passes} passes this second)"}
        else:
            passes = 1
            out.append(row)
    return out


def history_row(event: AtlasEvent, node_id: str) -> dict[str, Any] | None:
    """One line of a node's history, or None when the event does not concern it."""
    detail: str | None = None
    if isinstance(event, MemoryAdded) and event.node_id == node_id:
        detail = f"stored with weight {event.weight:.3f}, {len(event.links)} links"
    elif isinstance(event, MemoryReinforced) and event.node_id == node_id:
        detail = f"recalled (#{event.access_count}), weight {event.weight:.3f}"
    elif isinstance(event, DecayApplied) and node_id in event.weights:
        detail = f"decayed to {event.weights[node_id]:.3f}"
    elif isinstance(event, MemoriesMerged) and node_id in (event.kept_id, event.merged_id):
        detail = f"merged a near-duplicate (similarity {event.similarity:.2f})"
    elif isinstance(event, StatusChanged) and event.node_id == node_id:
        detail = f"{event.old.value} → {event.new.value}: {event.reason}"
    elif isinstance(event, SummaryCreated) and node_id in (event.node_id, *event.source_ids):
        detail = "summary created" if event.node_id == node_id else "covered by a summary"
    elif isinstance(event, MemoryEvicted) and event.node_id == node_id:
        detail = f"evicted: {event.reason.value}"
    if detail is None:
        return None
    return {"at": to_datetime(event.at), "event": event.type, "detail": detail}


def hits_table(hits: Sequence[RetrievalHit]) -> list[dict[str, Any]]:
    """The playground's score breakdown: one row per retrieved memory, best first."""
    rows = []
    for rank, hit in enumerate(hits, start=1):
        parts = hit.breakdown.as_dict()
        rows.append(
            {
                "rank": rank,
                "memory": label(hit.node.content, 60),
                "score": round(hit.score, 4),
                **{
                    k: round(v, 4) if isinstance(v, float) else v
                    for k, v in parts.items()
                    if k != "final"
                },
                "cross_session": hit.cross_session,
                "id": hit.node.id,
            }
        )
    return rows
