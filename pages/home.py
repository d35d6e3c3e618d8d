"""Home: what Elastic Atlas is, which page serves whom, and one-click starts."""

import streamlit as st

from memory_core.dashboard.access import Action
from memory_core.dashboard.demo import sample_files
from memory_core.dashboard.home import AUDIENCES, PITCH, start_demo
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.identity import denied
from memory_core.dashboard.ui.shared import live_system

require_app_shell()

st.title("Elastic Atlas")
st.markdown(PITCH)

play, ab, review = st.columns(3)
blocked = denied(Action.WRITE)
if play.button(
    "Play the demo",
    icon=":material/play_circle:",
    type="primary",
    width="stretch",
    disabled=blocked is not None,
    help=blocked or "Replays a sample conversation into the live atlas and opens the player.",
):
    start_demo(live_system().player, sample_files())
    st.switch_page("pages/demo_player.py")
if ab.button(
    "Open a sample A/B",
    icon=":material/tune:",
    width="stretch",
    help="Starts the default comparison (seed-linear against tuned, three short conversations).",
):
    st.session_state["ab_autorun"] = True
    st.switch_page("pages/ab_tuning.py")
if review.button("Open the review queue", icon=":material/gavel:", width="stretch"):
    st.switch_page("pages/conflict_review.py")

for column, audience in zip(st.columns(len(AUDIENCES)), AUDIENCES, strict=True):
    with column.container(border=True):
        st.subheader(audience.who)
        st.caption(f"wants to {audience.wants}")
        for page, answers in audience.pages:
            st.page_link(page)
            st.caption(answers)
