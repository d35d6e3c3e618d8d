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
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import numpy as np
from jinja2 import Template
from plotly.colors import sequential, unlabel_rgb
from pyvis.network import Network

from memory_core.errors import InputError
from memory_core.model import MemoryEdge, MemoryKind, MemoryNode, MemoryStatus, Relation

SizeBy = Literal["importance", "degree"]
SIZE_OPTIONS: tuple[SizeBy, ...] = ("importance", "degree")
DEFAULT_MAX_NODES = 150
MAX_DRAWN_NODES = 1_000
LABEL_CHARS = 28
TOOLTIP_CHARS = 600
_PALETTE = np.array([unlabel_rgb(c) for c in sequential.Blues], dtype=float)
COLOR_FLOOR = 0.2
"""Weakest memories use this point of the scale, so they stay visible on white."""
GREY = "#c8c8c8"
HIGHLIGHT_BORDER = "#e11d48"

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
    "physics": {
        "enabled": True,
        "solver": "forceAtlas2Based",
        "forceAtlas2Based": {"gravitationalConstant": -40, "springLength": 90},
        "stabilization": {"enabled": True, "iterations": 150, "fit": True},
    },
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


@dataclass(frozen=True, slots=True)
class GraphView:
    """A rendered graph: the HTML and what it shows."""

    html: str
    drawn: tuple[str, ...]
    hidden: int
    edge_count: int

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


def node_size(node: MemoryNode, degree: int, size_by: SizeBy) -> float:
    if size_by == "degree":
        return 10.0 + 6.0 * math.sqrt(degree)
    return 10.0 + 22.0 * node.importance


def label(text: str, limit: int = LABEL_CHARS) -> str:
    """One-line short label; the canvas draws it as text."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def tooltip(node: MemoryNode, score: float | None = None) -> str:
    """Plain-text hover text (vis-network shows it with ``innerText``)."""
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
    return "\n".join(lines)


def build_graph(
    nodes: Sequence[MemoryNode],
    edges: Iterable[MemoryEdge],
    *,
    weight_range: tuple[float, float],
    highlight: Mapping[str, float] | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    size_by: SizeBy = "importance",
    height_px: int = 560,
) -> GraphView:
    """Draw the heaviest ``max_nodes`` nodes and the edges between them.

    Args:
        weight_range: (floor, cap) of the atlas, so colours mean the same on every page.
        highlight: node id -> retrieval score of memories to ring in red (playground).
        max_nodes: cap on drawn nodes; the rest are counted in ``GraphView.hidden``.
    """
    if size_by not in SIZE_OPTIONS:
        raise InputError("size_by", f"must be one of {', '.join(SIZE_OPTIONS)}, got {size_by!r}")
    highlight = dict(highlight or {})
    kept, hidden = select_drawn(nodes, max_nodes)
    ids = {n.id for n in kept}
    drawn_edges = [e for e in edges if e.source_id in ids and e.target_id in ids]
    degree: Counter[str] = Counter()
    for e in drawn_edges:
        degree[e.source_id] += 1
        degree[e.target_id] += 1
    net = Network(height=f"{height_px}px", width="100%", directed=True, cdn_resources="in_line")
    colors = weight_colors([n.weight for n in kept], *weight_range)
    for node, color in zip(kept, colors, strict=True):
        net.add_node(node.id, **_node_attrs(node, degree[node.id], size_by, color, highlight))
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
        html=_render(net),
        drawn=tuple(n.id for n in kept),
        hidden=hidden,
        edge_count=len(drawn_edges),
    )


def _node_attrs(
    node: MemoryNode,
    degree: int,
    size_by: SizeBy,
    color: str,
    highlight: Mapping[str, float],
) -> dict[str, Any]:
    active = node.status is MemoryStatus.ACTIVE
    fill = color if active else GREY
    score = highlight.get(node.id)
    border = HIGHLIGHT_BORDER if score is not None else ("#555555" if active else GREY)
    return {
        "label": label(node.content),
        "title": tooltip(node, score),
        "shape": KIND_SHAPES[node.kind],
        "size": node_size(node, degree, size_by),
        "color": {"background": fill, "border": border},
        "borderWidth": 4 if score is not None else 1,
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


def _render(net: Network) -> str:
    """pyvis's template with the innerHTML popup forced off, then made self-contained."""
    nodes, edges, heading, height, width, options = net.get_network_data()
    html: str = _template().render(
        height=height,
        width=width,
        nodes=nodes,
        edges=edges,
        heading=heading,
        options=options,
        physics_enabled=True,
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
    return html.replace("</head>", _PAGE_STYLE + "</head>", 1)


def external_urls(html: str) -> list[str]:
    """Every URL the page would make the browser load (must be empty)."""
    return _RESOURCE_REF.findall(html)


def _check_max_nodes(max_nodes: int) -> None:
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int):
        raise InputError("max_nodes", f"must be an integer, got {max_nodes!r}")
    if not 1 <= max_nodes <= MAX_DRAWN_NODES:
        raise InputError("max_nodes", f"must be in [1, {MAX_DRAWN_NODES}], got {max_nodes}")
