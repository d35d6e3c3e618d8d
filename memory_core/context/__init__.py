"""The task context graph (issue #24): what the conversation is about, kept consistent.

Every turn is parsed into typed values, slot values (who, which attribute, what value),
entities and a goal (``extract``); they become nodes and edges of a property graph with
the first seed's four node types and six edge types (``graph``), where a new value for a
slot deprecates the old one instead of overwriting it, and "forget what I said about X"
soft-deletes. Queries (``query``) give the constraints in force and a tool's arguments.

This part imports only the engine-free helpers (``embedding``, ``errors``); the agent
loop imports it, never the other way round.
"""

from memory_core.context.extract.parse import MODEL_PACKAGE, ParserUnavailable
from memory_core.context.extract.patterns import Value, find_values
from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import (
    EntityMention,
    Extractor,
    TurnFacts,
    default_extractor,
    extract_slots,
    warm,
)
from memory_core.context.graph import ContextGraph
from memory_core.context.model import Edge, EdgeType, Node, NodeType, PendingReview
from memory_core.context.query import (
    Query,
    active_constraints,
    constraint_for,
    describe,
    entities,
    subgraph_for_tool,
)
from memory_core.context.update import Applied, ContextSettings, Health, TaskContext

__all__ = [
    "MODEL_PACKAGE",
    "Applied",
    "ContextGraph",
    "ContextSettings",
    "Edge",
    "EdgeType",
    "EntityMention",
    "Extractor",
    "Health",
    "Node",
    "NodeType",
    "ParserUnavailable",
    "PendingReview",
    "Query",
    "SlotValue",
    "TaskContext",
    "TurnFacts",
    "Value",
    "active_constraints",
    "constraint_for",
    "default_extractor",
    "describe",
    "entities",
    "extract_slots",
    "find_values",
    "subgraph_for_tool",
    "warm",
]
