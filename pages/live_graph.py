"""Live graph: the selected atlas drawn with the shared filters, and a node inspector."""

import streamlit as st

from memory_core.dashboard.access import Action
from memory_core.dashboard.context_live import live_graphs
from memory_core.dashboard.demo import PlayerState
from memory_core.dashboard.graph_view import MAX_DRAWN_NODES, SIZE_OPTIONS, select_drawn
from memory_core.dashboard.rule_log import buffered, notes
from memory_core.dashboard.state import AtlasSource
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.context_panel import entity_view, view_mode
from memory_core.dashboard.ui.identity import denied
from memory_core.dashboard.ui.panels import GRAPH_REFRESH, counters, graph_panel, inspector, legend
from memory_core.dashboard.ui.shared import (
    atlas_version,
    current_atlas,
    dashboard_state,
    live_system,
    viewer,
)
from memory_core.dashboard.ui.watch import follow_shared, own_change

require_app_shell()

system = live_system()
state = dashboard_state()
atlas, atlas_label = current_atlas()
is_live = atlas is system.atlas

st.title("Live graph")
if view_mode() == "entities":
    st.caption(
        "The task context graph of the live atlas's conversations: goals, entities and the "
        "constraints in force, with what each replaced."
    )
    if is_live:
        follow_shared(system)  # redrawn when another session talks or the demo plays
        entity_view(
            live_graphs(system.player.rules),
            preferred_session=state.playground_session,
            rule_events=buffered(system.buffer),
        )
    elif state.loaded is not None and state.loaded.atlas is atlas:
        entity_view(state.loaded.graphs, empty=f"The {atlas_label} carries no task context graph.")
    else:
        st.info(f"The {atlas_label} has no task context graph here: choose the live atlas.")
    st.stop()
st.caption(f"Showing the {atlas_label}. Filters are in the sidebar.")
if is_live:
    follow_shared(system)

c1, c2, c3 = st.columns([2, 2, 3], vertical_alignment="bottom")
max_nodes = c1.slider("Most memories drawn", 10, MAX_DRAWN_NODES, 150, 10, key="graph_max_nodes")
size_by = c2.radio("Size by", SIZE_OPTIONS, horizontal=True, key="graph_size_by")
if is_live:
    hours = c3.number_input("Let time pass (hours)", 0.0, 8760.0, 6.0, 1.0, key="skip_hours")
    blocked = denied(Action.WRITE)
    if c3.button(
        "Skip ahead and decay",
        icon=":material/fast_forward:",
        disabled=blocked is not None,
        help=blocked,
    ):
        with own_change(system):
            evicted = system.skip_ahead(hours)
            system.activity.record(viewer(), f"skipped {hours:g} h ahead", "memories")
        st.toast(f"Decay pass done; evicted {sum(evicted.values())} memories")


def live_view() -> None:
    counters(atlas)
    graph_panel(
        atlas,
        state.node_filter,
        version=atlas_version(atlas),
        highlight=state.highlight if is_live else None,
        max_nodes=max_nodes,
        size_by=size_by,
        inspectable=True,
        notes=notes(buffered(system.buffer)) if is_live else None,
    )


playing = is_live and system.player.status().state is PlayerState.PLAYING
st.fragment(live_view, run_every=GRAPH_REFRESH if playing else None)()
legend()

st.subheader("Node inspector")
drawn, _ = select_drawn(state.node_filter.apply(atlas.nodes()), max_nodes)
if drawn:
    inspector(
        atlas,
        system.buffer if state.source is AtlasSource.LIVE else None,
        tuple(n.id for n in drawn),
    )
else:
    st.caption("Nothing to inspect.")
