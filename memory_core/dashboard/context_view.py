"""The task context graph as people see it: entities as hubs, goals and constraints
coloured by state, and the constraints in force with the one each replaced.

Everything here works on the store's plain records (``ContextNodeRecord`` /
``ContextEdgeRecord``, every version), so the live graph and one loaded from the database
are drawn the same way. A node is shown at its newest version; older versions are its
history. Readable at hundreds of memories: the drawing keeps the user, goals,
constraints in force and the busiest entities first, caps the count, and labels only
the hubs and what is in force (every node keeps its hover text).
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pyvis.network import Network

from memory_core.dashboard.graph_view import label, layout, render_network
from memory_core.errors import InputError
from memory_core.store.context_graphs import ContextEdgeRecord, ContextNodeRecord

ViewMode = Literal["memories", "entities"]
VIEW_MODES: tuple[ViewMode, ...] = ("memories", "entities")
NodeState = Literal["active", "pending review", "deprecated", "forgotten"]
DEFAULT_MAX_ENTITY_NODES = 120
MAX_ENTITY_NODES = 600
LABELLED_HUBS = 12
"""Entities labelled on the canvas: the busiest ones (the rest show on hover)."""
LABELLED_CONSTRAINTS = 12
"""Constraints in force labelled on the canvas: the most recently said ones."""
_IN_FORCE = ("active", "pending review")
LABEL_ALL_BELOW = 30
"""A drawing of at most this many nodes labels every one (the replaced ones too)."""

STATE_COLORS: dict[NodeState, str] = {
    "active": "#16a34a",
    "pending review": "#d97706",
    "deprecated": "#b8bcc4",
    "forgotten": "#eef0f3",
}
TYPE_SHAPES = {"User": "star", "Goal": "diamond", "Constraint": "square", "Entity": "dot"}
ENTITY_COLOR = "#60a5fa"
USER_COLOR = "#334155"
FOCUS_BORDER = "#e11d48"
EDGE_COLORS = {
    "HAS_GOAL": "#334155",
    "SATISFIES": "#16a34a",
    "CONFLICTS_WITH": "#dc2626",
    "REFERENCES": "#60a5fa",
    "MODIFIES": "#7c3aed",
    "VALIDATES": "#0f766e",
}
_DASHES = [6, 4]
_OPTIONS: dict[str, Any] = {
    "physics": {"enabled": False},
    "interaction": {"hover": True, "tooltipDelay": 120},
    "nodes": {"font": {"size": 12, "face": "sans-serif"}},
    "edges": {"smooth": {"enabled": True, "type": "continuous"}, "font": {"size": 9}},
}


def latest(nodes: Iterable[ContextNodeRecord]) -> list[ContextNodeRecord]:
    """Each node at its newest version, in id order."""
    newest: dict[str, ContextNodeRecord] = {}
    for node in nodes:
        kept = newest.get(node.id)
        if kept is None or node.version > kept.version:
            newest[node.id] = node
    return [newest[i] for i in sorted(newest)]


def latest_edges(edges: Iterable[ContextEdgeRecord]) -> list[ContextEdgeRecord]:
    newest: dict[str, ContextEdgeRecord] = {}
    for edge in edges:
        kept = newest.get(edge.id)
        if kept is None or edge.version > kept.version:
            newest[edge.id] = edge
    return [newest[i] for i in sorted(newest)]


def node_state(node: ContextNodeRecord, pending: Collection[str] = ()) -> NodeState:
    """``pending``: ids of nodes in force whose replacement waits for a person (the graph
    was unsure a new value is for the same slot and queued it for review)."""
    if node.soft_deleted:
        return "forgotten"
    if node.deprecated:
        return "deprecated"
    if node.id in pending:
        return "pending review"
    return "active"


def slot_of(node: ContextNodeRecord) -> str:
    """What a constraint constrains ("hotel limit"), or "" when it does not say."""
    value = node.attributes.get("slot") or node.attributes.get("attribute") or ""
    return str(value)


def value_of(node: ContextNodeRecord) -> str:
    value = node.attributes.get("value")
    return label(str(value), 60) if value not in (None, "") else label(node.label, 60)


@dataclass(frozen=True, slots=True)
class EntityGraphView:
    """A rendered entity view: the HTML and what it shows."""

    html: str
    drawn: tuple[str, ...]
    hidden: int
    forgotten_hidden: int
    edge_count: int
    labelled: int

    @property
    def note(self) -> str:
        parts = []
        if self.hidden:
            parts.append(f"{self.hidden} less connected nodes are not drawn")
        if self.forgotten_hidden:
            parts.append(f"{self.forgotten_hidden} forgotten nodes are hidden")
        return "; ".join(parts)


def visible(
    nodes: Sequence[ContextNodeRecord], *, show_forgotten: bool
) -> tuple[list[ContextNodeRecord], int]:
    """Newest versions, without soft-deleted ones unless asked; and how many were hidden."""
    current = latest(nodes)
    if show_forgotten:
        return current, 0
    shown = [n for n in current if not n.soft_deleted]
    return shown, len(current) - len(shown)


_TYPE_RANK = {"User": 0, "Goal": 1, "Constraint": 2, "Entity": 3}
_DRAW_RANK = {"User": 0, "Goal": 1, "Entity": 2, "Constraint": 3}
"""Drawing order: hubs before the constraints hanging off them, leaf entities last."""
HUB_DEGREE = 2
_STATE_RANK: dict[NodeState, int] = {
    "active": 0,
    "pending review": 0,
    "deprecated": 1,
    "forgotten": 2,
}


def select_nodes(
    nodes: Sequence[ContextNodeRecord],
    edges: Sequence[ContextEdgeRecord],
    max_nodes: int,
    focus: str | None = None,
    pending: Collection[str] = (),
) -> tuple[list[ContextNodeRecord], int]:
    """The ``max_nodes`` nodes most worth drawing and how many were left out.

    The focused node and its neighbours come first, then what is in force: the user,
    goals, entities linked to at least ``HUB_DEGREE`` nodes (the hubs, busiest first),
    constraints, other entities; then what was replaced or forgotten.
    """
    _check_max_nodes(max_nodes)
    degree = _degrees(edges)
    near = _neighbours(edges, focus) if focus else set()
    ranked = sorted(
        nodes,
        key=lambda n: (
            0 if n.id == focus else 1 if n.id in near else 2,
            _STATE_RANK[node_state(n, pending)],
            _DRAW_RANK.get(n.type, 4) if n.type != "Entity" or degree[n.id] >= HUB_DEGREE else 4,
            -degree[n.id],
            -max(n.turns, default=-1),  # then the most recently said
            n.id,
        ),
    )
    return ranked[:max_nodes], max(0, len(ranked) - max_nodes)


def build_entity_graph(
    nodes: Sequence[ContextNodeRecord],
    edges: Sequence[ContextEdgeRecord],
    *,
    show_forgotten: bool = False,
    max_nodes: int = DEFAULT_MAX_ENTITY_NODES,
    focus: str | None = None,
    pending: Collection[str] = (),
    height_px: int = 560,
) -> EntityGraphView:
    """Draw the graph's newest versions: a self-contained pyvis page (no CDN)."""
    shown, forgotten = visible(nodes, show_forgotten=show_forgotten)
    current_edges = [e for e in latest_edges(edges) if show_forgotten or not e.soft_deleted]
    kept, hidden = select_nodes(shown, current_edges, max_nodes, focus, pending)
    ids = {n.id for n in kept}
    drawn_edges = [e for e in current_edges if e.source in ids and e.target in ids]
    degree = _degrees(drawn_edges)
    hubs = {
        n.id
        for n in sorted(
            (n for n in kept if n.type == "Entity"), key=lambda n: (-degree[n.id], n.id)
        )[:LABELLED_HUBS]
        if degree[n.id] >= HUB_DEGREE
    }
    in_force = [n for n in kept if n.type == "Constraint" and node_state(n, pending) in _IN_FORCE]
    recent = sorted(in_force, key=lambda n: (-max(n.turns, default=-1), n.id))
    labelled = {n.id for n in kept if n.type in ("User", "Goal") and not n.soft_deleted}
    labelled |= hubs | {n.id for n in recent[:LABELLED_CONSTRAINTS]}
    if len(kept) <= LABEL_ALL_BELOW:
        labelled = {n.id for n in kept}
    if focus in ids:
        labelled.add(focus)
    positions = layout([n.id for n in kept], ((e.source, e.target) for e in drawn_edges))
    net = Network(height=f"{height_px}px", width="100%", directed=True, cdn_resources="in_line")
    for node in kept:
        x, y = positions[node.id]
        attrs = _node_attrs(node, node_state(node, pending), degree[node.id], node.id == focus)
        if node.id not in labelled:
            attrs["label"] = " "
        net.add_node(node.id, x=x, y=y, **attrs)
    for edge in drawn_edges:
        net.add_edge(edge.source, edge.target, **_edge_attrs(edge))
    net.set_options(json.dumps(_OPTIONS))
    return EntityGraphView(
        html=render_network(net),
        drawn=tuple(n.id for n in kept),
        hidden=hidden,
        forgotten_hidden=forgotten,
        edge_count=len(drawn_edges),
        labelled=len(labelled & ids),
    )


def node_tooltip(node: ContextNodeRecord, state: NodeState) -> str:
    """Plain-text hover text (shown with ``innerText`` by vis-network)."""
    lines = [f"{node.type}: {label(node.label, 200)}", f"state: {state}"]
    if slot_of(node):
        lines.append(f"slot: {slot_of(node)}")
    extra = {k: v for k, v in node.attributes.items() if k not in ("slot",)}
    if extra:
        lines.append(label(", ".join(f"{k}={v}" for k, v in sorted(extra.items())), 200))
    lines.append(f"id {node.id} · version {node.version}")
    if node.origin_session_id:
        lines.append(f"first said in session {label(node.origin_session_id, 80)}")
    if node.session_id and node.session_id != node.origin_session_id:
        lines.append(f"this version by session {label(node.session_id, 80)}")
    if node.turns:
        lines.append("turns " + ", ".join(str(t) for t in node.turns[:12]))
    if node.memory_ids:
        lines.append("memories " + ", ".join(node.memory_ids[:6]))
    return "\n".join(lines)


def _node_attrs(
    node: ContextNodeRecord, state: NodeState, degree: int, focused: bool
) -> dict[str, Any]:
    if node.type == "Entity":
        fill = ENTITY_COLOR if state == "active" else STATE_COLORS[state]
        size = 10.0 + 6.0 * math.sqrt(degree)
    elif node.type == "User":
        fill, size = USER_COLOR, 20.0
    else:
        fill, size = STATE_COLORS[state], 16.0 if node.type == "Goal" else 13.0
    dashed = state in ("deprecated", "forgotten")
    return {
        "label": label(node.label),
        "title": node_tooltip(node, state),
        "shape": TYPE_SHAPES.get(node.type, "dot"),
        "size": size,
        "color": {"background": fill, "border": FOCUS_BORDER if focused else "#374151"},
        "borderWidth": 4 if focused else 2 if dashed else 1,
        "shapeProperties": {"borderDashes": _DASHES if dashed else False},
        "font": {"color": "#9a9a9a" if dashed else "#222222"},
    }


def _edge_attrs(edge: ContextEdgeRecord) -> dict[str, Any]:
    faded = edge.deprecated or edge.soft_deleted
    return {
        "title": f"{edge.type}" + (" (deprecated)" if edge.deprecated else ""),
        "color": "#c0c4cc" if faded else EDGE_COLORS.get(edge.type, "#888888"),
        "dashes": faded or edge.type == "CONFLICTS_WITH",
        "arrows": "to",
        "width": 1.0 if faded else 1.8,
    }


def legend_html() -> str:
    """The entity view's key, as HTML built only from our own strings."""
    states = " ".join(
        f"<span style='white-space:nowrap;margin-right:10px'><span style='display:inline-block;"
        f"width:11px;height:11px;background:{color};border:1px "
        f"{'dashed' if state in ('deprecated', 'forgotten') else 'solid'} #374151;"
        f"vertical-align:middle'></span>&nbsp;{state}</span>"
        for state, color in STATE_COLORS.items()
    )
    shapes = "★&nbsp;user ◆&nbsp;goal ■&nbsp;constraint ●&nbsp;entity (size: number of links)"
    edges = " ".join(
        f"<span style='white-space:nowrap;margin-right:10px'><span style='display:inline-block;"
        f"width:24px;border-top:2px {'dashed' if kind == 'CONFLICTS_WITH' else 'solid'} "
        f"{color};vertical-align:middle'></span>&nbsp;{kind}</span>"
        for kind, color in EDGE_COLORS.items()
    )
    rows = [
        f"goals and constraints by state: {states}",
        shapes + "; dashed: deprecated or forgotten",
        edges,
    ]
    return (
        "<div style='font:12px sans-serif;color:#333;line-height:1.9'>"
        + "".join(f"<div>{row}</div>" for row in rows)
        + "</div>"
    )


def constraints_in_force(
    nodes: Sequence[ContextNodeRecord],
    edges: Sequence[ContextEdgeRecord],
    pending: Collection[str] = (),
) -> list[dict[str, Any]]:
    """One row per constraint in force: its slot and value, the constraint it replaced
    (the one it CONFLICTS_WITH, else its own older value), the turns it came from, and
    the sessions that set each (a user's graph spans their sessions: "set in session 1,
    changed in session 3"; empty when the graph does not say)."""
    history: dict[str, list[ContextNodeRecord]] = defaultdict(list)
    for node in nodes:
        history[node.id].append(node)
    current = {n.id: n for n in latest(nodes)}
    replaced: dict[str, list[str]] = defaultdict(list)
    for edge in latest_edges(edges):
        if edge.type == "CONFLICTS_WITH" and edge.target in current:
            replaced[edge.source].append(edge.target)
    rows = []
    for node in current.values():
        state = node_state(node, pending)
        if node.type != "Constraint" or state not in _IN_FORCE:
            continue
        older = sorted((v for v in history[node.id] if v.version < node.version), key=_version)
        before = [current[i] for i in replaced[node.id]] or older[-1:]
        rows.append(
            {
                "slot": slot_of(node),
                "in force": value_of(node),
                "state": state,
                "replaced": "; ".join(value_of(b) for b in before),
                "set in": node.origin_session_id or "",
                "replaced set in": ", ".join(
                    dict.fromkeys(b.origin_session_id for b in before if b.origin_session_id)
                ),
                "turns": ", ".join(str(t) for t in node.turns),
                "node": node.id,
                "replaced node": ", ".join(b.id for b in before if b.id != node.id),
            }
        )
    return sorted(rows, key=lambda r: (r["slot"], r["in force"]))


def nodes_for_memories(
    nodes: Sequence[ContextNodeRecord], memory_ids: Iterable[str]
) -> list[ContextNodeRecord]:
    """Newest versions of the nodes that came from any of ``memory_ids`` (review links)."""
    wanted = {m for m in memory_ids if m}
    if not wanted:
        return []
    return [n for n in latest(nodes) if wanted.intersection(n.memory_ids)]


def link_rows(
    nodes: Sequence[ContextNodeRecord], pending: Collection[str] = ()
) -> list[dict[str, Any]]:
    """What a review page shows of the context nodes behind a pair or an item."""
    return [
        {
            "node": n.id,
            "type": n.type,
            "slot": slot_of(n),
            "label": label(n.label, 60),
            "state": node_state(n, pending),
            "set in": n.origin_session_id or "",
            "turns": ", ".join(str(t) for t in n.turns),
        }
        for n in sorted(nodes, key=lambda n: (_TYPE_RANK.get(n.type, 4), n.id))
    ]


def focus_options(
    nodes: Sequence[ContextNodeRecord], pending: Collection[str] = ()
) -> dict[str, str]:
    """Node id -> a one-line choice label, goals and constraints first."""
    ordered = sorted(latest(nodes), key=lambda n: (_TYPE_RANK.get(n.type, 4), n.label, n.id))
    return {n.id: f"{n.type} · {label(n.label, 40)} · {node_state(n, pending)}" for n in ordered}


def _version(node: ContextNodeRecord) -> int:
    return node.version


def _degrees(edges: Iterable[ContextEdgeRecord]) -> Counter[str]:
    degree: Counter[str] = Counter()
    for edge in edges:
        degree[edge.source] += 1
        degree[edge.target] += 1
    return degree


def _neighbours(edges: Iterable[ContextEdgeRecord], node_id: str) -> set[str]:
    return {
        e.target if e.source == node_id else e.source
        for e in edges
        if node_id in (e.source, e.target)
    }


def _check_max_nodes(max_nodes: int) -> None:
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int):
        raise InputError("max_nodes", f"must be an integer, got {max_nodes!r}")
    if not 1 <= max_nodes <= MAX_ENTITY_NODES:
        raise InputError("max_nodes", f"must be in [1, {MAX_ENTITY_NODES}], got {max_nodes}")


def query_focus(params: Mapping[str, str]) -> tuple[ViewMode | None, str | None]:
    """The view and node a link asked for (``?view=entities&focus=<id>``), unchecked ids
    dropped later by the page when the graph has no such node."""
    mode = params.get("view")
    focus = params.get("focus")
    return (
        mode if mode in VIEW_MODES else None,
        focus if isinstance(focus, str) and 0 < len(focus) <= 64 else None,
    )
