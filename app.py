"""Elastic Atlas dashboard. Run with ``make run`` or ``streamlit run app.py``.

A thin entrypoint: page files live in ``pages/``, everything they compute in
``memory_core.dashboard``.
"""

from pathlib import Path

import streamlit as st

import memory_core.dashboard.ui as dashboard_ui
from memory_core.dashboard.access import exposure_refusal
from memory_core.dashboard.ui.sidebar import render_sidebar

# The tab icon is a file Streamlit serves itself: a ":material/...:" page icon makes the
# browser fetch it from fonts.gstatic.com, and the dashboard must work offline.
ICON = Path(dashboard_ui.__file__).with_name("atlas_icon.png")
st.set_page_config(page_title="Elastic Atlas", page_icon=str(ICON), layout="wide")
refusal = exposure_refusal(st.get_option("server.address"))
if refusal is not None:
    st.error(refusal)
    st.stop()

navigation = st.navigation(
    {
        "": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)],
        "Watch": [
            st.Page("pages/demo_player.py", title="Demo player", icon=":material/play_circle:"),
            st.Page("pages/live_graph.py", title="Live graph", icon=":material/hub:"),
            st.Page("pages/playground.py", title="Playground", icon=":material/chat:"),
        ],
        "Analyse": [
            st.Page("pages/weights.py", title="Weights", icon=":material/bar_chart:"),
            st.Page("pages/eviction_log.py", title="Eviction log", icon=":material/delete_sweep:"),
        ],
        "Tune": [
            st.Page("pages/key_facts.py", title="Mark key facts", icon=":material/flag:"),
            st.Page("pages/ab_tuning.py", title="A/B tuning", icon=":material/tune:"),
        ],
        "Review": [
            st.Page("pages/conflict_review.py", title="Conflict review", icon=":material/gavel:"),
            st.Page(
                "pages/knowledge_audit.py", title="Knowledge audit", icon=":material/fact_check:"
            ),
        ],
    }
)
render_sidebar()
navigation.run()
