"""The live graph's entity view and the review pages' links into it (Streamlit only).

Thin: the graph comes from ``context_live``, everything drawn from ``context_view``.
Node text reaches the page only through the graph's plain-text tooltips and dataframes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

import streamlit as st

from memory_core.dashboard.context_live import (
    Graphs,
    graph_scopes,
    nodes_behind,
    scope_graph,
    scope_label,
    scope_of_node,
    sessions_of,
)
from memory_core.dashboard.context_view import (
    DEFAULT_MAX_ENTITY_NODES,
    MAX_ENTITY_NODES,
    VIEW_MODES,
    ViewMode,
    build_entity_graph,
    constraints_in_force,
    focus_options,
    legend_html,
    link_rows,
    query_focus,
)
from memory_core.dashboard.ui.panels import clicked_node

if TYPE_CHECKING:
    from memory_core.engine.events import RuleFired

LIVE_GRAPH_PAGE = "pages/live_graph.py"
MODE_KEY = "graph_view_mode"
SESSION_KEY = "entity_session"
FOCUS_KEY = "entity_focus"
LIVE_EMPTY = (
    "No task context graph yet: talk in the Playground or play the demo. Each turn adds the "
    "goals, entities and constraints it names."
)
_APPLIED = "_graph_link_applied"
"""The last link (view, focus) applied, so a link moves the widgets once, not on every rerun."""
_LINK_FOCUS = "_entity_link_focus"
"""The node a link asked to focus, handed from the toggle to the entity view once."""


def view_mode() -> ViewMode:
    """The memories / entities toggle; a link's ``?view=entities&focus=<id>`` sets it once."""
    mode, focus = query_focus(dict(st.query_params))
    if mode is not None and st.session_state.get(_APPLIED) != (mode, focus):
        st.session_state[_APPLIED] = (mode, focus)
        st.session_state[MODE_KEY] = mode
        if focus is not None:
            st.session_state[_LINK_FOCUS] = focus
    st.session_state.setdefault(MODE_KEY, "memories")
    chosen = st.segmented_control(
        "View",
        VIEW_MODES,
        key=MODE_KEY,
        help="Memories: the atlas. Entities: the task context graph.",
    )
    return chosen if chosen in VIEW_MODES else "memories"


def entity_view(
    graphs: Graphs,
    *,
    preferred_session: str | None = None,
    rule_events: Sequence[RuleFired] = (),
    empty: str = LIVE_EMPTY,
) -> None:
    """Pick a graph (a user's, spanning their sessions, or a session's without a user),
    draw it, list the constraints in force with the sessions that set and replaced them
    (``rule_events``: the live buffer's, which name the constraints waiting for a
    reviewer)."""
    scopes = graph_scopes(graphs)
    if not scopes:
        st.info(empty)
        return
    link_focus = st.session_state.pop(_LINK_FOCUS, None)
    linked = scope_of_node(graphs, link_focus) if link_focus else None
    if linked is not None:
        st.session_state[SESSION_KEY] = linked
    elif st.session_state.get(SESSION_KEY) not in scopes:
        preferred = [s for s in scopes if preferred_session in sessions_of(graphs, s)]
        st.session_state[SESSION_KEY] = (preferred or scopes)[-1]
    c1, c2, c3 = st.columns([2, 1, 2], vertical_alignment="bottom")
    scope = c1.selectbox(
        "Conversation (user or session)",
        scopes,
        key=SESSION_KEY,
        format_func=lambda s: scope_label(graphs, s),
        help="A user's graph spans their sessions; a session that names no user has its own.",
    )
    show_forgotten = c2.toggle("Show forgotten", key="entity_show_forgotten")
    max_nodes = c3.slider(
        "Most nodes drawn", 10, MAX_ENTITY_NODES, DEFAULT_MAX_ENTITY_NODES, 10,
        key="entity_max_nodes",
    )  # fmt: skip
    graph = scope_graph(graphs, scope, rule_events)
    if graph is None:
        st.info("That conversation has no graph any more.")
        return
    options = focus_options(graph.nodes, graph.pending)
    clicked = clicked_node("entity_clicks")  # a node clicked in the drawing
    if link_focus in options or clicked in options:
        st.session_state[FOCUS_KEY] = link_focus if link_focus in options else clicked
    elif st.session_state.get(FOCUS_KEY) not in options:
        st.session_state[FOCUS_KEY] = None
    focus = st.selectbox(
        "Focus on a node",
        [None, *options],
        format_func=lambda i: "(none)" if i is None else options[i],
        key=FOCUS_KEY,
        placeholder="(none): the whole conversation",
    )
    view = build_entity_graph(
        graph.nodes,
        graph.edges,
        show_forgotten=show_forgotten,
        max_nodes=int(max_nodes),
        focus=focus,
        pending=graph.pending,
    )
    st.iframe(view.html, height=568, alt="Task context graph")
    st.caption(
        f"{len(view.drawn)} nodes and {view.edge_count} edges drawn"
        + (f"; {view.note}" if view.note else "")
        + ". Hover a node for its slot, value, turns and memories; click it to focus on it."
    )
    st.html(legend_html())  # our own strings only
    st.subheader("Constraints in force")
    rows = constraints_in_force(graph.nodes, graph.edges, graph.pending)
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch")
    else:
        st.caption("No constraint is in force in this conversation.")


def context_links(
    graphs: Graphs,
    memory_ids: Sequence[str | None],
    sessions: Sequence[str],
    pending: Collection[str] = (),
) -> None:
    """The context nodes a reviewed pair or item produced, each with a link that opens the
    live graph's entity view focused on it (``pending``: nodes in force whose replacement
    waits for a reviewer, shown as such)."""
    found = nodes_behind(graphs, [m for m in memory_ids if m], sessions)
    if not found:
        st.caption("No task context node came from these memories.")
        return
    st.dataframe(link_rows([n for _, n in found], pending), hide_index=True, width="stretch")
    for _, node in found[:8]:
        st.page_link(
            LIVE_GRAPH_PAGE,
            label=f"Open {node.type.lower()} {node.id} in the live graph",
            icon=":material/hub:",
            query_params={"view": "entities", "focus": node.id},
        )
