"""Weights: how strong the memories are, how that relates to age, and how it evolved."""

import streamlit as st

from memory_core import DecayApplied
from memory_core.dashboard.follow import recorded_decays
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.shared import current_atlas, dashboard_state, followed, live_system
from memory_core.dashboard.weights import (
    SPLIT_OPTIONS,
    below_line_note,
    evolution_figure,
    evolution_frame,
    histogram_figure,
    scatter_figure,
    weight_frame,
    with_gaps,
)

require_app_shell()

system = live_system()
atlas, atlas_label = current_atlas()
threshold = atlas.config.evict_threshold

st.title("Weight distribution")
st.caption(
    f"{atlas_label} · eviction threshold {threshold:g} (red dashed line) · filters in the sidebar"
)

nodes = dashboard_state().node_filter.apply(atlas.nodes())
if not nodes:
    st.info("No memories to chart yet. Play the demo or write in the playground.")
    st.stop()
frame = weight_frame(nodes, atlas.clock.now())

c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
split_by = c1.radio("Split by", SPLIT_OPTIONS, horizontal=True, key="weights_split")
log_y = c2.toggle("Log scale", key="weights_log")

left, right = st.columns(2)
with left:
    st.subheader("Histogram")
    st.plotly_chart(
        histogram_figure(frame, split_by=split_by, log_y=log_y, threshold=threshold),
        key="weights_hist",
    )
    working = [i for s in atlas.sessions() for i in atlas.session_info(s)["working"]]
    below = below_line_note(nodes, threshold, working)
    if below:
        st.caption(below)
with right:
    st.subheader("Weight vs age")
    st.plotly_chart(
        scatter_figure(frame, split_by=split_by, threshold=threshold), key="weights_scatter"
    )

st.subheader("Distribution over the run")
agent, db = followed(), system.recording.db
if atlas is system.atlas:
    decays: list[DecayApplied] | None = [
        e for e in system.buffer.events(types=("decay",)) if isinstance(e, DecayApplied)
    ]
    scope = "decay passes of the whole atlas (not filtered)"
elif agent is not None and db is not None:
    decays = recorded_decays(db.events, agent.atlas_id)
    scope = f"newest recorded decay passes of the {agent.label} (min, mean, max)"
else:
    decays = None
if decays is None:
    st.caption("A loaded snapshot has no history; switch to the live atlas to see the evolution.")
elif decays:
    evolution = evolution_frame(decays)
    st.plotly_chart(evolution_figure(evolution, threshold=threshold), key="weights_evolution")
    gaps = with_gaps(evolution)[1]
    st.caption(
        f"{len(decays)} {scope}."
        + (f" The lines break at {gaps} long pause(s) between passes." if gaps else "")
    )
else:
    st.caption("No decay pass yet.")
