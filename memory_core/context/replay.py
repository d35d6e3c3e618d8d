"""A whole conversation into a graph at once (a replay), and the graph as plain JSON.

``replay`` extracts all turns in one batch (``nlp.pipe``, one embedding call for the turns
unless the caller has their vectors, one for their phrases, one for their slot names) and
inserts them in order, each with its turn index and id as provenance. ``graph_json`` is the shape
``atlas context --json`` prints and tools read: nodes with their type, label, attributes,
state and turns; edges with their type and state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory_core.context.extract.turn import Extractor
from memory_core.context.update import Applied, ContextSettings, TaskContext


@dataclass(frozen=True, slots=True)
class TurnInput:
    """One turn of a conversation to replay."""

    id: str
    speaker: str
    text: str
    at: float | None = None


def replay(
    turns: Sequence[TurnInput],
    extractor: Extractor,
    *,
    user: str = "user",
    settings: ContextSettings | None = None,
    vectors: np.ndarray | None = None,
) -> tuple[TaskContext, list[Applied]]:
    """Every turn through one ``TaskContext``; returns it and what each turn changed
    (``vectors``: the turns' unit embeddings, one row per turn, when the caller has them)."""
    context = TaskContext(user, embedder=extractor.embedder, settings=settings)
    facts = extractor.extract_many([(t.text, t.speaker, t.at) for t in turns], vectors)
    context.prime_slot_names(v.slot for f in facts for v in f.slots)
    applied = [
        context.observe(f, turn=index, memory_id=turn.id)
        for index, (turn, f) in enumerate(zip(turns, facts, strict=True))
    ]
    return context, applied


def graph_json(context: TaskContext, turn_ids: Sequence[str] = ()) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [...]}`` with every node and edge (deprecated and
    soft-deleted ones flagged, not left out); ``turns`` are the turns' ids when given."""
    graph = context.graph

    def turn_name(index: int) -> str | int:
        return turn_ids[index] if 0 <= index < len(turn_ids) else index

    nodes = [
        {
            "id": n.id,
            "type": n.type.value,
            "label": n.label,
            "attributes": dict(n.attributes),
            "deprecated": n.deprecated,
            "soft_deleted": n.soft_deleted,
            "turns": [turn_name(t) for t in n.turns],
        }
        for n in graph.nodes(include_deprecated=True, include_soft_deleted=True)
    ]
    edges = [
        {
            "source": e.source,
            "target": e.target,
            "type": e.type.value,
            "deprecated": e.deprecated,
            "soft_deleted": e.soft_deleted,
        }
        for e in graph.edges(include_deprecated=True, include_soft_deleted=True)
    ]
    return {"nodes": nodes, "edges": edges}
