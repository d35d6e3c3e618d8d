"""Home: what Elastic Atlas is, which page serves whom, and one-click starts."""

import streamlit as st

from memory_core.dashboard.access import Action
from memory_core.dashboard.demo import sample_files
from memory_core.dashboard.home import AUDIENCES, PITCH, replay_warning, start_demo
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.identity import denied
from memory_core.dashboard.ui.shared import live_system, viewer

require_app_shell()
PLAYER_PAGE = "pages/demo_player.py"


def play_demo() -> None:
    system = live_system()
    action = start_demo(system.player, sample_files())
    system.activity.record(viewer(), action, "demo")
    st.switch_page(PLAYER_PAGE)


@st.dialog("Replay the demo for everyone?")
def confirm_replay(warning: str) -> None:
    st.write(warning)
    replay, just_open = st.columns(2)
    if replay.button("Replay from the start", type="primary", width="stretch"):
        play_demo()
    if just_open.button("Just open the player", width="stretch"):
        st.switch_page(PLAYER_PAGE)


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
    system = live_system()
    warning = replay_warning(system.player.status(), system.activity.describe(viewer().viewer))
    if warning is None:
        play_demo()
    else:  # starting over removes the finished replay for every browser: ask first
        confirm_replay(warning)
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
