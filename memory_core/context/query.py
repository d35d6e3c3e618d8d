"""Queries over the context graph: the seed's chain and the shortcuts a loop or a tool uses.

    graph.query().match_node("Goal", id=g).follow_edge("SATISFIES").get_nodes("Constraint")

A ``Query`` is a list of steps run by ``get_nodes``; every step starts from index lookups
(nodes of a type, the edges of a node), never a scan of the whole graph. Deprecated and
soft-deleted nodes and edges are left out unless ``include_deprecated`` /
``include_soft_deleted`` ask for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memory_core.context.model import Edge, EdgeType, Node, NodeType, Scalar
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.context.graph import ContextGraph

DIRECTIONS = ("out", "in", "both")


class Query:
    """A chain of steps over one graph; ``get_nodes`` runs it."""

    __slots__ = ("_frontier", "_graph", "include_deprecated", "include_soft_deleted")

    def __init__(
        self,
        graph: ContextGraph,
        *,
        include_deprecated: bool = False,
        include_soft_deleted: bool = False,
    ) -> None:
        self._graph = graph
        self.include_deprecated = include_deprecated
        self.include_soft_deleted = include_soft_deleted
        self._frontier: list[Node] | None = None  # None: nothing matched yet (all nodes)

    def _visible(self, item: Node | Edge) -> bool:
        return (self.include_deprecated or not item.deprecated) and (
            self.include_soft_deleted or not item.soft_deleted
        )

    def match_node(self, type_: NodeType | str, *, id: str | None = None, **attrs: Scalar) -> Query:
        """Start from nodes of a type (one node with ``id``), with these attribute values."""
        kind = _node_type(type_)
        if id is not None:
            nodes = [self._graph.node(id)] if id in self._graph else []
            nodes = [n for n in nodes if n.type is kind]
        else:
            nodes = self._graph.nodes(
                kind,
                include_deprecated=self.include_deprecated,
                include_soft_deleted=self.include_soft_deleted,
            )
        self._frontier = [n for n in nodes if self._visible(n) and _has(n, attrs)]
        return self

    def follow_edge(self, type_: EdgeType | str, *, direction: str = "out") -> Query:
        """Move to the nodes one edge of this type away (``out``: along it)."""
        kind = _edge_type(type_)
        if direction not in DIRECTIONS:
            raise InputError("direction", f"must be one of {', '.join(DIRECTIONS)}")
        graph = self._graph
        seen: dict[str, Node] = {}
        for node in self._start():
            edges: list[tuple[Edge, str]] = []
            if direction in ("out", "both"):
                edges += [(e, e.target) for e in graph.out_edges(node.id, kind)]
            if direction in ("in", "both"):
                edges += [(e, e.source) for e in graph.in_edges(node.id, kind)]
            for edge, other in edges:
                if self._visible(edge):
                    target = graph.node(other)
                    if self._visible(target):
                        seen.setdefault(target.id, target)
        self._frontier = list(seen.values())
        return self

    def filter_by(self, predicate: Callable[[Node], bool] | None = None, **attrs: Scalar) -> Query:
        """Keep nodes with these attribute values (and for which ``predicate`` is true)."""
        self._frontier = [
            n for n in self._start() if _has(n, attrs) and (predicate is None or predicate(n))
        ]
        return self

    def get_nodes(self, type_: NodeType | str | None = None) -> list[Node]:
        """The nodes reached (of this type, if given)."""
        kind = _node_type(type_) if type_ is not None else None
        return [n for n in self._start() if kind is None or n.type is kind]

    def _start(self) -> list[Node]:
        if self._frontier is None:
            self._frontier = self._graph.nodes(
                include_deprecated=self.include_deprecated,
                include_soft_deleted=self.include_soft_deleted,
            )
        return self._frontier


def _has(node: Node, attrs: dict[str, Scalar]) -> bool:
    return all(node.attr(k) == v for k, v in attrs.items())


def _node_type(value: NodeType | str) -> NodeType:
    try:
        return NodeType(value)
    except ValueError:
        allowed = ", ".join(t.value for t in NodeType)
        raise InputError("node type", f"{value!r} is not one of {allowed}") from None


def _edge_type(value: EdgeType | str) -> EdgeType:
    try:
        return EdgeType(value)
    except ValueError:
        allowed = ", ".join(t.value for t in EdgeType)
        raise InputError("edge type", f"{value!r} is not one of {allowed}") from None


# -- shortcuts ---------------------------------------------------------------------------
def active_constraints(
    graph: ContextGraph, goal: str | None = None, *, subject: str | None = "user"
) -> list[Node]:
    """The constraints in force (of one goal, when given; of one subject, unless None)."""
    if goal is not None:
        found = graph.query().match_node(NodeType.GOAL, id=goal).follow_edge("SATISFIES")
        nodes = found.get_nodes(NodeType.CONSTRAINT)
    else:
        nodes = [node for _, _, node in graph.active_slots()]
    return [n for n in nodes if subject is None or n.attr("subject") == subject]


def constraint_for(graph: ContextGraph, slot: str, *, subject: str = "user") -> Node | None:
    """The constraint in force for a slot: the exact slot name, else the active constraint
    whose slot has every word of ``slot`` ("hotel" finds "hotel budget")."""
    exact = graph.active_for_slot(subject, slot)
    if exact is not None:
        return exact
    found = [
        n
        for n in graph.mentioning(slot)
        if n.type is NodeType.CONSTRAINT and n.active and n.attr("subject") == subject
    ]
    return max(found, key=lambda n: n.recorded_at, default=None)


def entities(graph: ContextGraph, goal: str | None = None) -> list[Node]:
    """Active entities (those a goal references, directly or through another entity)."""
    if goal is None:
        return graph.nodes(NodeType.ENTITY)
    first = graph.query().match_node(NodeType.GOAL, id=goal).follow_edge("REFERENCES").get_nodes()
    second = graph.query()
    second._frontier = first
    more = second.follow_edge("REFERENCES").get_nodes(NodeType.ENTITY)
    return list({n.id: n for n in [*first, *more] if n.type is NodeType.ENTITY}.values())


def subgraph_for_tool(graph: ContextGraph, goal: str | None = None) -> dict[str, Any]:
    """What a tool gets instead of the conversation: ``{"goal": "track delivery",
    "order_id": "ORD-20240721-889", "product": "iPhone 15", "delivery_method": ...}``."""
    out: dict[str, Any] = {}
    goal_node = graph.node(goal) if goal is not None and goal in graph else None
    if goal_node is not None:
        out["goal"] = goal_node.label
    for entity in entities(graph, goal):
        kind = str(entity.attr("kind") or "entity")
        if kind == "person":
            continue
        for name, value in entity.attributes:
            if name.endswith("_id") and value is not None:
                out.setdefault(name, value)
        key = "product" if kind in ("product", "org", "work_of_art") else _key(kind)
        if kind != entity.label or not any(k.endswith("_id") for k, _ in entity.attributes):
            out.setdefault(key, entity.label)
    for node in active_constraints(graph, goal):
        out.setdefault(_key(str(node.attr("slot"))), node.attr("value"))
    return out


def _key(name: str) -> str:
    return "_".join(name.lower().split())


def describe(graph: ContextGraph, goal: str | None = None) -> list[str]:
    """The active subgraph as short lines for a responder's context, most useful first:
    the constraints in force, newest first (with what they replaced), the goal, the key
    entities."""
    lines: list[str] = []
    for node in sorted(active_constraints(graph), key=lambda n: -n.recorded_at):
        replaced = [
            graph.node(e.target).attr("value")
            for e in graph.out_edges(node.id, EdgeType.CONFLICTS_WITH)
            if not e.soft_deleted
        ]
        note = f" (replaces {', '.join(str(r) for r in replaced)})" if replaced else ""
        lines.append(f"In force: {node.attr('slot')} = {node.attr('value')}{note}")
    if goal is not None and goal in graph and graph.node(goal).active:
        lines.append(f"Current goal: {graph.node(goal).label}")
    for entity in entities(graph, goal):
        details = ", ".join(f"{k} {v}" for k, v in entity.attributes if k != "kind")
        lines.append(f"Entity: {entity.label}" + (f" ({details})" if details else ""))
    return lines
