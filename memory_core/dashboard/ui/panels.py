"""Render functions shared by several pages (graph, legend, counters, node inspector).

Thin by design: each reads its inputs, calls the tested functions of this package and
draws. Memory text is only ever shown through ``st.text``, dataframes or the graph's
plain-text tooltips, never through markdown or raw HTML.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from memory_core.dashboard.buffer import EventBuffer
from memory_core.dashboard.eviction_view import forgotten_total
from memory_core.dashboard.filters import NodeFilter
from memory_core.dashboard.follow import recorded_node_events
from memory_core.dashboard.graph_view import (
    DEFAULT_MAX_NODES,
    INSPECT_MESSAGE,
    GraphView,
    SizeBy,
    build_graph,
    legend_html,
)
from memory_core.dashboard.inspector import node_details, node_options
from memory_core.dashboard.ui.shared import followed, live_system
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.events import AtlasEvent
from memory_core.errors import NotFoundError

_MEMO = "_graph_memo"
STATUS_REFRESH = 1.0
"""Seconds between refreshes of counters while something plays."""
GRAPH_REFRESH = 3.0
"""Seconds between redraws of the graph while something plays (a redraw re-lays it out)."""
_CLICK_BRIDGE_JS = (
    """
export default function(component) {
  const { setTriggerValue } = component;
  const onMessage = (event) => {
    const d = event.data;
    if (d && d.type === '"""
    + INSPECT_MESSAGE
    + """' && typeof d.id === 'string' && d.id.length <= 64) {
      setTriggerValue('node', d.id);
    }
  };
  window.addEventListener('message', onMessage);
  return () => window.removeEventListener('message', onMessage);
}
"""
)
_graph_clicks = st.components.v2.component("atlas_graph_clicks", js=_CLICK_BRIDGE_JS)
"""Listens for node clicks from the graph iframes on this page (see graph_view)."""


def graph_panel(
    atlas: ElasticMemoryAtlas,
    flt: NodeFilter,
    *,
    version: int,
    highlight: Mapping[str, float] | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    size_by: SizeBy = "importance",
    height: int = 540,
    inspectable: bool = False,
    notes: Mapping[str, str] | None = None,
) -> GraphView:
    """Draw the filtered graph (strongest ``max_nodes``) in an iframe and say what is hidden.

    ``version`` changes whenever the atlas does (the live buffer's last sequence number);
    while it stays the same the previous drawing is reused, so polling pages stay cheap
    and do not starve the demo thread of the GIL.
    """
    key = (
        id(atlas),
        version,
        flt,
        tuple(sorted((highlight or {}).items())),
        max_nodes,
        size_by,
        height,
        tuple(sorted((notes or {}).items())),
    )
    memo = st.session_state.get(_MEMO)
    if memo is not None and memo[0] == key:
        view: GraphView = memo[1]
        empty: bool = memo[2]
    else:
        nodes = flt.apply(atlas.nodes())
        same = memo is not None and memo[0][0] == id(atlas) and memo[0][6] == height
        view = build_graph(
            nodes,
            atlas.edges(),
            highlight=highlight,
            max_nodes=max_nodes,
            size_by=size_by,
            height_px=height,
            previous=memo[1].positions if memo is not None and same else None,  # stays put
            notes=notes,
        )
        empty = not nodes
        st.session_state[_MEMO] = (key, view, empty)
    if empty:
        st.info("No memories to draw yet." if not flt.active else "No memory matches the filters.")
        return view
    st.iframe(view.html, height=height + 8, alt="Memory graph")
    unlabelled = len(view.drawn) - view.labelled
    st.caption(
        f"{len(view.drawn)} memories and {view.links_text} drawn"
        + (f"; {unlabelled} labels left out where they would overlap" if unlabelled else "")
        + f". {view.note}".rstrip(". ")
        + ". Hover a node for its text"
        + (", click it to inspect it below." if inspectable else ".")
    )
    st.html(legend_html(view, size_by))  # our own strings only: no memory text
    return view


def legend() -> None:
    with st.expander("How to read the graph"):
        st.text(
            "Colour: weight, on a scale from the weakest to the strongest memory drawn "
            "(pale blue = weak, dark blue = strong). Grey = deprecated, superseded or "
            "tombstoned.\nShape: the kind of memory. Size: importance (or number of links). "
            "Red ring: recalled by the last turn or message.\nEdges: one colour and style "
            "per relation (key under the graph); arrows point from the earlier or the "
            "causing memory.\nA memory keeps its place between redraws; new ones settle "
            "around it. Labels are drawn only where they do not overlap a stronger one."
        )


def counters(atlas: ElasticMemoryAtlas, *, per_row: int = 4) -> None:
    stats = atlas.stats()
    cells = [c for _ in range(4 // per_row) for c in st.columns(per_row)]
    c1, c2, c3, c4 = cells
    c1.metric("Memories", stats["nodes"])
    c2.metric(
        "Links",
        stats["edges"],
        help="Pairs of memories joined by at least one relation, in the whole atlas (the "
        "graph draws each relation of a pair as its own line, and only the memories drawn).",
    )
    c3.metric(
        "Evicted",
        forgotten_total(stats),
        help="Memories forgotten by decay, capacity, expiry or merging; purged sessions "
        "(the demo's Reset) are erased on purpose and not counted.",
    )
    c4.metric("Mean weight", f"{stats['weight_mean']:.2f}")


def clicked_node(key: str) -> str | None:
    """The id of the node just clicked in a graph drawn on this page (``graph_view``'s
    click script posts it), None on any other rerun."""
    clicked = _graph_clicks(key=key, on_node_change=lambda: None).node
    return clicked if isinstance(clicked, str) else None


def inspector(atlas: ElasticMemoryAtlas, buffer: EventBuffer | None, ids: tuple[str, ...]) -> None:
    """Pick one drawn memory and show its facts, neighbours and history."""
    drawn = [atlas.get(i) for i in ids if i in atlas]
    options = node_options(drawn)
    if not options:
        return
    clicked = clicked_node("graph_clicks")
    if clicked in options:  # a node clicked in the graph
        st.session_state["inspector_node"] = clicked
    keep_choice("inspector_node", options)
    chosen = st.selectbox(
        "Inspect a memory",
        options=list(options),
        format_func=lambda i: options.get(i, i),
        key="inspector_node",
    )
    if chosen is None:
        return
    events = _node_events(buffer, chosen)
    try:
        details = node_details(atlas, chosen, events or ())
    except NotFoundError:
        st.warning("That memory has just been evicted.")
        return
    st.text(details.node.content)
    left, right = st.columns(2)
    left.dataframe(details.facts, hide_index=True, width="stretch")
    right.dataframe(details.neighbours, hide_index=True, width="stretch")
    if events is None:
        st.caption("No event history for a loaded snapshot.")
    elif details.history:
        st.dataframe(details.history, hide_index=True, width="stretch")


def keep_choice(key: str, options: Mapping[str, str], default: str | None = None) -> None:
    """Keep a keyed picker's choice, or ``default`` when it is gone, and make it show the
    option's current label.

    A keyed selectbox remembers the label the browser last showed ("… w=2.86"), and
    Streamlit maps that old label back to the same option without telling the browser,
    so after a decay pass or an approval the picker kept saying the old weight or status.
    Setting the choice through session state sends the current label with the page.
    """
    chosen = st.session_state.get(key)
    if chosen in options:
        st.session_state[key] = chosen
    elif default is not None:
        st.session_state[key] = default


def _node_events(buffer: EventBuffer | None, node_id: str) -> list[AtlasEvent] | None:
    """The memory's events from the live buffer or the followed agent's log; None if
    neither exists (a loaded snapshot)."""
    if buffer is not None:
        return buffer.for_node(node_id)
    agent, db = followed(), live_system().recording.db
    if agent is None or db is None:
        return None
    return recorded_node_events(db.events, agent.atlas_id, node_id)
