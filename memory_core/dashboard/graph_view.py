"""The memory graph as a self-contained pyvis/vis-network HTML page.

Two traps shape this module. pyvis's template links Bootstrap from a CDN even with
``cdn_resources="in_line"``, so every external reference is stripped and the result is
checked by ``external_urls``. And when any tooltip contains the substring "href", pyvis
switches to a popup that writes titles with ``innerHTML`` (Streamlit's iframe runs
scripts on the app's origin), so the template is always rendered with that popup off:
vis-network's own tooltip sets string titles with ``innerText``, i.e. as plain text.
Titles are therefore never HTML-escaped (that would show ``&amp;`` to the user).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

import networkx as nx
import numpy as np
from jinja2 import Template
from plotly.colors import sequential, unlabel_rgb
from pyvis.network import Network

from memory_core.engine.model import MemoryEdge, MemoryKind, MemoryNode, MemoryStatus, Relation
from memory_core.errors import InputError

SizeBy = Literal["importance", "degree"]
SIZE_OPTIONS: tuple[SizeBy, ...] = ("importance", "degree")
DEFAULT_MAX_NODES = 150
MAX_DRAWN_NODES = 1_000
LABEL_CHARS = 28
SHORT_LABEL_CHARS = 14
"""A label cut to this many characters where the full one would overlap (hover shows all)."""
TOOLTIP_CHARS = 600
_PALETTE = np.array([unlabel_rgb(c) for c in sequential.Blues], dtype=float)
COLOR_FLOOR = 0.2
"""Weakest memories use this point of the scale, so they stay visible on white."""
GREY = "#c8c8c8"
HIGHLIGHT_BORDER = "#e11d48"
RULE_BORDER = "#d97706"
"""Border of memories an agent-loop rule acted on (an episode, a soft delete, a review)."""
MIN_COLOR_SPAN = 0.05
"""Narrowest weight span the colour scale stretches over (one weight alone is mid-blue)."""
LAYOUT_WIDTH = 1000.0
"""Width of a row of packed groups; vis-network fits the drawing into the frame."""
CHAR_PX = 6.6
"""Width of one label character at the graph's 12 px font, for deciding what fits."""
LABEL_PX = 16.0
INSPECT_MESSAGE = "atlas-inspect"
"""``postMessage`` type a clicked node sends to the page (see ``panels.graph_panel``)."""
Positions = dict[str, tuple[float, float]]

KIND_SHAPES: dict[MemoryKind, str] = {
    MemoryKind.WORKING: "star",
    MemoryKind.SESSION: "dot",
    MemoryKind.EPISODIC: "diamond",
    MemoryKind.SUMMARY: "square",
    MemoryKind.KNOWLEDGE: "triangle",
}


@dataclass(frozen=True, slots=True)
class EdgeStyle:
    """How one relation is drawn."""

    color: str
    dashes: bool
    arrow: bool


RELATION_STYLES: dict[Relation, EdgeStyle] = {
    Relation.RELATED_TO: EdgeStyle("#0f766e", False, False),
    Relation.SIMILAR_TO: EdgeStyle("#60a5fa", True, False),
    Relation.BEFORE: EdgeStyle("#b0b0b0", False, True),
    Relation.AFTER: EdgeStyle("#b0b0b0", False, True),
    Relation.CAUSAL: EdgeStyle("#ea580c", False, True),
    Relation.PART_OF: EdgeStyle("#7c3aed", False, True),
    Relation.CONTRADICTS: EdgeStyle("#dc2626", True, False),
    Relation.SUMMARIZES: EdgeStyle("#16a34a", True, True),
    Relation.SUPERSEDES: EdgeStyle("#7f1d1d", False, True),
}

_OPTIONS: dict[str, Any] = {
    "layout": {"randomSeed": 7},
    "physics": {"enabled": False},  # positions come from ``layout``: stable between redraws
    "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False},
    "nodes": {"font": {"size": 12, "face": "sans-serif"}, "borderWidth": 1},
    "edges": {"smooth": {"enabled": True, "type": "continuous"}},
}

# Tags that would make the browser fetch something from elsewhere.
_EXTERNAL_TAG = re.compile(
    r"<(link|script)\b[^>]*\b(?:href|src)\s*=\s*[\"']?(?:https?:)?//[^>]*>(?:\s*</script>)?",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_EMPTY_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>", re.IGNORECASE)
# A reference the browser would load: an attribute, a CSS url() or @import.
_RESOURCE_REF = re.compile(
    r"""(?:\b(?:src|href|action|poster|data|srcset)\s*=\s*["']?|url\(\s*["']?|@import\s+["']?)"""
    r"""((?:https?:)?//[^\s"'()<>]+)""",
    re.IGNORECASE,
)
_PAGE_STYLE = (
    "<style>html,body{margin:0;padding:0;background:#ffffff;}"
    "#mynetwork{border:none !important;float:none !important;}"
    "div.vis-tooltip{max-width:420px;white-space:pre-wrap;font:12px sans-serif;}</style>"
)
# A click on a node tells the page which memory to inspect (ids are the atlas's own).
_CLICK_SCRIPT = (
    "<script>network.fit();network.on('click',function(p){if(p.nodes.length){"
    "window.parent.postMessage({type:'" + INSPECT_MESSAGE + "',id:String(p.nodes[0])},'*');}});"
    "</script>"
)


@dataclass(frozen=True, slots=True)
class GraphView:
    """A rendered graph: the HTML and what it shows."""

    html: str
    drawn: tuple[str, ...]
    hidden: int
    edge_count: int
    weight_range: tuple[float, float] = (0.0, 1.0)
    positions: Positions = field(default_factory=dict)
    labelled: int = 0
    relations: tuple[Relation, ...] = ()
    linked_pairs: int = 0
    """Pairs of drawn memories joined by at least one relation (what the Links counter
    counts); ``edge_count`` counts relations, and one pair may hold two."""

    @property
    def links_text(self) -> str:
        """The caption's "N links" part, saying why it can exceed the Links counter."""
        text = f"{self.edge_count} links"
        if self.linked_pairs != self.edge_count:
            text += (
                f" between {self.linked_pairs} pair{'' if self.linked_pairs == 1 else 's'} "
                "(a pair can hold two relations, "
                "e.g. before and similar_to; the Links counter counts pairs)"
            )
        return text

    @property
    def note(self) -> str:
        """The "N hidden" sentence the page shows under the graph ("" when nothing is)."""
        if not self.hidden:
            return ""
        return (
            f"Showing the {len(self.drawn)} strongest memories; {self.hidden} weaker "
            f"{'memory is' if self.hidden == 1 else 'memories are'} hidden."
        )


def select_drawn(nodes: Sequence[MemoryNode], max_nodes: int) -> tuple[list[MemoryNode], int]:
    """The ``max_nodes`` heaviest nodes (ties: newest first) and how many were left out."""
    _check_max_nodes(max_nodes)
    ranked = sorted(nodes, key=lambda n: (-n.weight, -n.created_at, n.id))
    return ranked[:max_nodes], max(0, len(ranked) - max_nodes)


def weight_colors(weights: Sequence[float], low: float, high: float) -> list[str]:
    """Colours of weights on the shared scale (pale blue = weak, dark blue = strong)."""
    w = np.asarray(weights, dtype=float)
    span = high - low
    t = np.zeros_like(w) if span <= 0 else np.clip((w - low) / span, 0.0, 1.0)
    t = COLOR_FLOOR + (1.0 - COLOR_FLOOR) * t
    stops = np.linspace(0.0, 1.0, len(_PALETTE))
    rgb = np.stack([np.interp(t, stops, _PALETTE[:, c]) for c in range(3)], axis=1)
    return [f"rgb({r:.0f}, {g:.0f}, {b:.0f})" for r, g, b in rgb]


def present_range(weights: Sequence[float]) -> tuple[float, float]:
    """The colour scale's ends: the weakest and strongest weight drawn, at least
    ``MIN_COLOR_SPAN`` apart, so the shades separate the memories actually on screen."""
    if not len(weights):
        return (0.0, 1.0)
    low, high = float(min(weights)), float(max(weights))
    if high - low < MIN_COLOR_SPAN:
        mid = (low + high) / 2
        low, high = mid - MIN_COLOR_SPAN / 2, mid + MIN_COLOR_SPAN / 2
    return (low, high)


def layout(
    ids: Sequence[str],
    links: Iterable[tuple[str, str]],
    previous: Mapping[str, tuple[float, float]] | None = None,
) -> Positions:
    """Pixel positions of ``ids``: memories placed before keep their place; a new one goes
    next to a placed neighbour, and new groups without one are packed beside the drawing.
    So a redraw moves nothing that was already on screen."""
    previous = previous or {}
    graph: nx.Graph = nx.Graph()
    graph.add_nodes_from(ids)
    graph.add_edges_from((a, b) for a, b in links if a in graph and b in graph and a != b)
    positions: Positions = {i: previous[i] for i in ids if i in previous}
    if len(positions) == len(ids):
        return positions
    if not positions:
        return _spread(_packed(graph))
    rng = np.random.default_rng(len(positions))
    pending = [i for i in ids if i not in positions]
    while pending:
        placed = [i for i in pending if any(n in positions for n in graph.neighbors(i))]
        for i in placed:
            near = np.mean([positions[n] for n in graph.neighbors(i) if n in positions], axis=0)
            positions[i] = _free_spot(near, positions, rng)
        pending = [i for i in pending if i not in positions]
        if not placed and pending:  # new groups: packed to the right of what is drawn
            extra = _packed(graph.subgraph(pending))
            shift = (
                max(x for x, _ in positions.values())
                + NODE_GAP * 2
                - min(x for x, _ in extra.values())
            )
            positions.update({i: (round(x + shift, 1), y) for i, (x, y) in extra.items()})
            pending = []
    return positions


NODE_GAP = 70.0
"""Pixels between neighbouring memories in the layout."""


def _packed(graph: nx.Graph) -> Positions:
    """Each connected group laid out on its own (seeded), groups packed in rows, biggest first."""
    positions: Positions = {}
    x = y = row_height = 0.0
    groups = sorted(nx.connected_components(graph), key=lambda c: (-len(c), min(c)))
    for group in groups:
        members = sorted(group)
        radius = NODE_GAP * 0.6 * math.sqrt(len(members))
        if x > 0 and x + 2 * radius > LAYOUT_WIDTH:
            x, y, row_height = 0.0, y + row_height + NODE_GAP, 0.0
        if len(members) == 1:
            raw = {members[0]: np.zeros(2)}
        else:
            raw = nx.spring_layout(graph.subgraph(members), seed=7, iterations=80)
        for i in members:
            px, py = raw[i] * radius
            positions[i] = (round(float(x + radius + px), 1), round(float(y + radius + py), 1))
        x += 2 * radius + NODE_GAP
        row_height = max(row_height, 2 * radius)
    return positions


LAYOUT_HEIGHT = 560.0
"""Height the first drawing of a small graph is spread to (about the frame's shape)."""
MAX_SPREAD = 4.0


def _spread(positions: Positions) -> Positions:
    """A first drawing stretched to about ``LAYOUT_WIDTH`` × ``LAYOUT_HEIGHT``: a small
    graph packed at node spacing would be zoomed in by the frame, its labels overlapping
    (31 of 32 left out on a 12-memory graph), where spread out they fit beside each
    other. At most ``MAX_SPREAD`` times, so a pair of memories does not fly apart."""
    if len(positions) < 2:
        return positions
    xs, ys = zip(*positions.values(), strict=True)
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    factor = min(
        LAYOUT_WIDTH / width if width else MAX_SPREAD,
        LAYOUT_HEIGHT / height if height else MAX_SPREAD,
        MAX_SPREAD,
    )
    if factor <= 1.0:
        return positions
    return {i: (round(x * factor, 1), round(y * factor, 1)) for i, (x, y) in positions.items()}


def _free_spot(
    near: np.ndarray, positions: Mapping[str, tuple[float, float]], rng: np.random.Generator
) -> tuple[float, float]:
    """A point about ``NODE_GAP`` from ``near`` that keeps clear of placed memories if it can."""
    taken = np.array(list(positions.values()))
    best, best_clearance = near, -1.0
    for ring, angle in enumerate(rng.uniform(0.0, 2 * math.pi, 24)):
        spot = near + NODE_GAP * (1 + ring // 8 * 0.5) * np.array(
            [math.cos(angle), math.sin(angle)]
        )
        clearance = float(np.min(np.linalg.norm(taken - spot, axis=1)))
        if clearance > best_clearance:
            best, best_clearance = spot, clearance
        if clearance >= NODE_GAP * 0.8:
            break
    return (round(float(best[0]), 1), round(float(best[1]), 1))


def fitting_labels(
    nodes: Sequence[MemoryNode],
    positions: Mapping[str, tuple[float, float]],
    sizes: Mapping[str, float] | None = None,
) -> dict[str, str]:
    """The label each memory gets where one fits without covering another memory or a
    stronger memory's label: strongest first, each label a box under its node; where
    the full label does not fit, a ``SHORT_LABEL_CHARS`` one is tried."""
    sizes = sizes or {}
    Box = tuple[float, float, float, float]

    def clear(box: Box, others: Iterable[Box]) -> bool:
        return all(box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3] for b in others)

    shapes = {
        n.id: (x - r, y - r, x + r, y + r)
        for n in nodes
        for (x, y), r in [(positions[n.id], sizes.get(n.id, 10.0))]
    }
    placed: list[Box] = []
    shown: dict[str, str] = {}
    for node in sorted(nodes, key=lambda n: (-n.weight, n.id)):
        x, y = positions[node.id]
        top = y + sizes.get(node.id, 10.0) + 2
        for text in dict.fromkeys((label(node.content), label(node.content, SHORT_LABEL_CHARS))):
            half = len(text) * CHAR_PX / 2
            box = (x - half, top, x + half, top + LABEL_PX)
            if clear(box, placed) and clear(box, (b for i, b in shapes.items() if i != node.id)):
                placed.append(box)
                shown[node.id] = text
                break
    return shown


def node_size(node: MemoryNode, degree: int, size_by: SizeBy) -> float:
    if size_by == "degree":
        return 10.0 + 6.0 * math.sqrt(degree)
    return 10.0 + 22.0 * node.importance


def label(text: str, limit: int = LABEL_CHARS) -> str:
    """One-line short label; the canvas draws it as text."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def tooltip(node: MemoryNode, score: float | None = None, note: str | None = None) -> str:
    """Plain-text hover text (vis-network shows it with ``innerText``); ``note`` says what
    the agent loop's rules did to the memory."""
    body = (
        node.content if len(node.content) <= TOOLTIP_CHARS else node.content[:TOOLTIP_CHARS] + "…"
    )
    lines = [
        body,
        "",
        f"weight {node.weight:.3f} · importance {node.importance:.2f} · "
        f"recalled {node.access_count}×",
        f"{node.kind.value} · {node.status.value} · session {node.session_id}",
    ]
    if score is not None:
        lines.append(f"retrieval score {score:.3f}")
    if note:
        lines.append(f"rule: {note}".replace("\n", "\nrule: "))
    return "\n".join(lines)


def build_graph(
    nodes: Sequence[MemoryNode],
    edges: Iterable[MemoryEdge],
    *,
    weight_range: tuple[float, float] | None = None,
    highlight: Mapping[str, float] | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    size_by: SizeBy = "importance",
    height_px: int = 560,
    previous: Mapping[str, tuple[float, float]] | None = None,
    notes: Mapping[str, str] | None = None,
) -> GraphView:
    """Draw the heaviest ``max_nodes`` nodes and the edges between them.

    Args:
        weight_range: ends of the colour scale; by default the weights drawn
            (``present_range``), so the shades tell the memories on screen apart.
        highlight: node id -> retrieval score of memories to ring in red (playground).
        max_nodes: cap on drawn nodes; the rest are counted in ``GraphView.hidden``.
        previous: positions of the last drawing (``GraphView.positions``): memories
            still drawn keep their place.
        notes: node id -> what the agent loop's rules did to it (``rule_log.notes``):
            shown on hover, the memory ringed in amber.
    """
    if size_by not in SIZE_OPTIONS:
        raise InputError("size_by", f"must be one of {', '.join(SIZE_OPTIONS)}, got {size_by!r}")
    highlight = dict(highlight or {})
    notes = dict(notes or {})
    kept, hidden = select_drawn(nodes, max_nodes)
    ids = {n.id for n in kept}
    drawn_edges = [e for e in edges if e.source_id in ids and e.target_id in ids]
    degree: Counter[str] = Counter()
    for e in drawn_edges:
        degree[e.source_id] += 1
        degree[e.target_id] += 1
    net = Network(height=f"{height_px}px", width="100%", directed=True, cdn_resources="in_line")
    scale = weight_range or present_range([n.weight for n in kept])
    colors = weight_colors([n.weight for n in kept], *scale)
    positions = layout(
        [n.id for n in kept], ((e.source_id, e.target_id) for e in drawn_edges), previous
    )
    sizes = {n.id: node_size(n, degree[n.id], size_by) for n in kept}
    labelled = fitting_labels(kept, positions, sizes)
    for node, color in zip(kept, colors, strict=True):
        attrs = _node_attrs(node, degree[node.id], size_by, color, highlight, notes.get(node.id))
        attrs["label"] = labelled.get(node.id, " ")  # no room: hover or click shows the text
        x, y = positions[node.id]
        net.add_node(node.id, x=x, y=y, **attrs)
    for e in drawn_edges:
        style = RELATION_STYLES[e.relation]
        net.add_edge(
            e.source_id,
            e.target_id,
            title=f"{e.relation.value} (strength {e.strength:.2f})",
            color=style.color,
            dashes=style.dashes,
            arrows="to" if style.arrow else "",
            width=1.0 + 2.5 * e.strength,
        )
    net.set_options(json.dumps(_OPTIONS))
    return GraphView(
        html=render_network(net),
        drawn=tuple(n.id for n in kept),
        hidden=hidden,
        edge_count=len(drawn_edges),
        weight_range=scale,
        positions=positions,
        labelled=len(labelled),
        relations=tuple(r for r in Relation if any(e.relation is r for e in drawn_edges)),
        linked_pairs=len({frozenset((e.source_id, e.target_id)) for e in drawn_edges}),
    )


def legend_html(view: GraphView, size_by: SizeBy = "importance") -> str:
    """The graph's key as HTML (only our own strings): colour scale with its ends, sizes,
    shapes, and every relation drawn with its own line style."""
    low, high = view.weight_range
    ramp = ", ".join(weight_colors(list(np.linspace(low, high, 6)), low, high))
    colour = (
        f"<span>weight {low:.2f}</span><span style='display:inline-block;width:140px;"
        f"height:10px;margin:0 6px;background:linear-gradient(90deg,{ramp})'></span>"
        f"<span>{high:.2f}</span><span style='display:inline-block;width:12px;height:10px;"
        f"margin-left:12px;background:{GREY}'></span>&nbsp;inactive"
    )
    sizes = (
        ("size: importance 0 → 1" if size_by == "importance" else "size: number of links")
        + f"; red ring: recalled; <span style='color:{RULE_BORDER}'>amber ring</span>: changed by a rule"
    )
    shapes = " ".join(f"{_SHAPE_GLYPHS[s]}&nbsp;{k.value}" for k, s in KIND_SHAPES.items())
    relations = " ".join(_relation_key(r) for r in (view.relations or tuple(RELATION_STYLES)))
    rows = [colour, sizes, shapes, relations]
    return (
        "<div style='font:12px sans-serif;color:#333;line-height:1.9'>"
        + "".join(f"<div>{row}</div>" for row in rows)
        + "</div>"
    )


_SHAPE_GLYPHS = {"star": "★", "dot": "●", "diamond": "◆", "square": "■", "triangle": "▲"}


def _relation_key(relation: Relation) -> str:
    """A short line in the relation's colour and style (CSS only: st.html drops SVG)."""
    style = RELATION_STYLES[relation]
    line = "dashed" if style.dashes else "solid"
    arrow = f"<span style='color:{style.color}'>&#9654;</span>" if style.arrow else ""
    return (
        "<span style='white-space:nowrap;margin-right:12px'><span style='display:inline-block;"
        f"width:28px;border-top:2px {line} {style.color};vertical-align:middle'></span>"
        f"{arrow}&nbsp;{relation.value}</span>"
    )


def _node_attrs(
    node: MemoryNode,
    degree: int,
    size_by: SizeBy,
    color: str,
    highlight: Mapping[str, float],
    note: str | None = None,
) -> dict[str, Any]:
    active = node.status is MemoryStatus.ACTIVE
    fill = color if active else GREY
    score = highlight.get(node.id)
    border = (
        HIGHLIGHT_BORDER
        if score is not None
        else RULE_BORDER
        if note
        else ("#555555" if active else GREY)
    )
    return {
        "label": label(node.content),
        "title": tooltip(node, score, note),
        "shape": KIND_SHAPES[node.kind],
        "size": node_size(node, degree, size_by),
        "color": {"background": fill, "border": border},
        "borderWidth": 4 if score is not None else 3 if note else 1,
        "font": {"color": "#222222" if active else "#9a9a9a"},
        "opacity": 1.0 if active else 0.55,
    }


@cache
def _template() -> Template:
    """pyvis's page template, compiled once: it inlines ~700 kB of JavaScript, and
    pyvis would otherwise re-lex all of it for every graph."""
    probe = Network(cdn_resources="in_line")
    template: Template = probe.templateEnv.get_template(probe.path)
    return template


def render_network(net: Network) -> str:
    """pyvis's template with the innerHTML popup forced off, then made self-contained.

    Physics is off in every drawing (positions come from ``layout``), so the template's
    physics part is too: with it on, a drawing of more than 100 nodes got pyvis's
    stabilisation progress bar, which nothing ever hid (no stabilisation runs)."""
    nodes, edges, heading, height, width, options = net.get_network_data()
    html: str = _template().render(
        height=height,
        width=width,
        nodes=nodes,
        edges=edges,
        heading=heading,
        options=options,
        physics_enabled=False,
        use_DOT=False,
        dot_lang=None,
        widget=False,
        bgcolor=net.bgcolor,
        conf=False,
        tooltip_link=False,
        neighborhood_highlight=False,
        select_menu=False,
        filter_menu=False,
        notebook=False,
        cdn_resources="in_line",
    )
    return make_self_contained(html)


def make_self_contained(html: str) -> str:
    """Drop CDN tags, comments and the empty heading; add the page's own small style."""
    html = _EXTERNAL_TAG.sub("", html)
    html = _COMMENT.sub("", html)
    html = _EMPTY_HEADING.sub("", html)
    html = html.replace("</head>", _PAGE_STYLE + "</head>", 1)
    return html.replace("</body>", _CLICK_SCRIPT + "</body>", 1)


def external_urls(html: str) -> list[str]:
    """Every URL the page would make the browser load (must be empty)."""
    return _RESOURCE_REF.findall(html)


def _check_max_nodes(max_nodes: int) -> None:
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int):
        raise InputError("max_nodes", f"must be an integer, got {max_nodes!r}")
    if not 1 <= max_nodes <= MAX_DRAWN_NODES:
        raise InputError("max_nodes", f"must be in [1, {MAX_DRAWN_NODES}], got {max_nodes}")
