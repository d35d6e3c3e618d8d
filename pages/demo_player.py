"""Demo player: watch a sample conversation flow into the live atlas, turn by turn."""

import streamlit as st

from memory_core.dashboard.demo import DEFAULT_CONVERSATION, MAX_SPEED, PlayerState, sample_files
from memory_core.dashboard.panels import counters, graph_panel, legend
from memory_core.dashboard.shared import dashboard_state, live_system

system = live_system()
player = system.player
files = sample_files()

st.title("Demo player")
st.caption(
    "Press Play: each turn of a recorded conversation is recalled against, stored, linked and "
    "left to decay. Watch memories appear, grow when recalled, link to similar ones, fade as the "
    "clock runs, and get evicted when they fall below the threshold."
)
if not files:
    st.error("No sample conversations found (set ATLAS_SAMPLE_DIR or run from the repository).")
    st.stop()


def _load() -> None:
    player.load(files[st.session_state["demo_conversation"]])


names = list(files)
choice = st.selectbox(
    "Conversation",
    names,
    index=names.index(DEFAULT_CONVERSATION) if DEFAULT_CONVERSATION in names else 0,
    key="demo_conversation",
    on_change=_load,
)
if player.status().state is PlayerState.EMPTY:
    player.load(files[choice])

b1, b2, b3, b4, speed_col, scale_col = st.columns([1, 1, 1, 1, 3, 3], vertical_alignment="bottom")
b1.button(
    "Play", icon=":material/play_arrow:", on_click=player.play, type="primary", width="stretch"
)
b2.button("Pause", icon=":material/pause:", on_click=player.pause, width="stretch")
b3.button("Step", icon=":material/skip_next:", on_click=player.step, width="stretch")
b4.button("Reset", icon=":material/replay:", on_click=player.reset, width="stretch")
speed = speed_col.slider("Speed (turns per second)", 0.5, MAX_SPEED / 5, player.status().speed, 0.5)
if speed != player.status().speed:
    player.set_speed(speed)
scale = scale_col.select_slider(
    "Clock speed (atlas seconds per conversation second)",
    options=[1.0, 30.0, 60.0, 120.0, 300.0, 600.0],
    value=player.status().time_scale,
)
if scale != player.status().time_scale:
    player.set_time_scale(scale)


def live_view() -> None:
    status = player.status()
    counters(system.atlas)
    st.progress(
        status.progress, text=f"{status.state.value} · turn {status.position} of {status.total}"
    )
    if status.error:
        st.error(status.error)
    if status.last is not None:
        last = status.last
        st.caption(
            f"Last turn {last.turn.id} ({last.turn.speaker}) · recalled {len(last.recalled)} · "
            f"evicted {last.evicted}{' · session ended' if last.session_ended else ''}"
        )
        st.text(last.turn.text)
    recalled = dict(status.last.recalled) if status.last else None
    graph_panel(system.atlas, dashboard_state().node_filter, highlight=recalled, height=480)
    if status.state is not PlayerState.PLAYING and st.session_state.get("demo_polling"):
        st.session_state["demo_polling"] = False
        st.rerun()


playing = player.status().state is PlayerState.PLAYING
st.session_state["demo_polling"] = playing
st.fragment(live_view, run_every=1.0 if playing else None)()
legend()
