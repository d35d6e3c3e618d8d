"""Demo player: watch a sample conversation flow into the live atlas, turn by turn."""

import streamlit as st

from memory_core.dashboard.access import Action
from memory_core.dashboard.demo import (
    LIVE_PRESETS,
    MAX_SPEED,
    PlayerState,
    picker_value,
    preset_description,
    preset_summary,
    sample_files,
)
from memory_core.dashboard.graph_view import DEFAULT_MAX_NODES, select_drawn
from memory_core.dashboard.rule_log import buffered, notes
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.identity import denied
from memory_core.dashboard.ui.panels import (
    GRAPH_REFRESH,
    STATUS_REFRESH,
    counters,
    graph_panel,
    inspector,
    legend,
)
from memory_core.dashboard.ui.shared import dashboard_state, live_system, viewer
from memory_core.dashboard.ui.watch import follow_shared

require_app_shell()

system = live_system()
player = system.player
files = sample_files()

st.title("Demo player")
st.caption(
    "Press Play. Each turn of a recorded conversation is first used to recall (recalled memories "
    "grow and get a red ring), then stored and linked to similar memories, while the clock runs "
    "and weights decay. Weak memories fade to pale blue and are evicted below the threshold; "
    "each finished session is summarized (square). The live atlas runs a fast-forgetting demo "
    "preset so this happens within a minute; switch to 'tuned' to see the shipped defaults."
)
if not files:
    st.error("No sample conversations found (set ATLAS_SAMPLE_DIR or run from the repository).")
    st.stop()
follow_shared(system)


def _load() -> None:
    name = st.session_state["demo_conversation"]
    player.load(files[name])
    system.activity.record(viewer(), f"cued {name} (the demo started over)", "demo")


def _apply_preset() -> None:
    name = st.session_state["demo_preset"]
    system.apply_preset(name, LIVE_PRESETS[name])
    system.activity.record(viewer(), f"switched the preset to {name}", "preset")


def _did(action: str, verb: str) -> None:
    """Run a player action and record who did it (every browser shares the player)."""
    getattr(player, action)()
    system.activity.record(viewer(), verb, "demo")


names = list(files)
# The player is shared by every tab: the picker shows what it holds, not a stale default.
st.session_state["demo_conversation"] = picker_value(player.status(), names)
top = st.columns([3, 1, 1, 1, 1], vertical_alignment="bottom")
choice = top[0].selectbox(
    "Conversation",
    names,
    key="demo_conversation",
    on_change=_load,
    help="One player for the whole server: every tab sees the same replay.",
)
if player.status().state is PlayerState.EMPTY:
    player.load(files[choice])
blocked = denied(Action.WRITE)  # playing writes into the shared live atlas
top[1].button(
    "Play",
    icon=":material/play_arrow:",
    on_click=_did,
    args=("play", "pressed Play"),
    type="primary",
    width="stretch",
    disabled=blocked is not None,
    help=blocked,
)
top[2].button(
    "Pause", icon=":material/pause:", on_click=_did, args=("pause", "paused"), width="stretch"
)
top[3].button(
    "Step",
    icon=":material/skip_next:",
    on_click=_did,
    args=("step", "stepped one turn"),
    width="stretch",
    disabled=blocked is not None,
)
top[4].button(
    "Reset",
    icon=":material/replay:",
    on_click=_did,
    args=("reset", "pressed Reset"),
    width="stretch",
    disabled=blocked is not None,
)

presets = list(LIVE_PRESETS) + ([] if system.preset in LIVE_PRESETS else [system.preset])
st.session_state["demo_preset"] = system.preset
st.selectbox(
    "Forgetting preset of the live atlas",
    presets,
    key="demo_preset",
    on_change=_apply_preset,
    disabled=blocked is not None,
    help="'demo' forgets fast on purpose so a minute of play shows fading and eviction; "
    "'tuned' is the shipped default (what tuning found best for agents), which keeps "
    "nearly everything for days.",
)
st.caption(
    f"Running **{system.preset}**: {preset_summary(system.atlas.config)}. "
    + preset_description(system.preset)
)

speed_col, scale_col = st.columns(2)
with speed_col:
    speed = st.slider("Speed (turns per second)", 0.5, MAX_SPEED / 5, player.status().speed, 0.5)
    if speed != player.status().speed:
        player.set_speed(speed)
with scale_col:
    scale = st.select_slider(
        "Clock speed (atlas seconds per conversation second)",
        options=[1.0, 30.0, 60.0, 120.0, 300.0, 600.0],
        value=player.status().time_scale,
    )
    if scale != player.status().time_scale:
        player.set_time_scale(scale)


def status_view() -> None:
    status = player.status()
    counters(system.atlas, per_row=2)
    started = system.activity.last_of("demo")
    elsewhere = started is not None and started.actor.viewer != viewer().viewer
    state = (
        f"the demo plays in another session ({started.actor.seen_by(viewer().viewer)})"
        if elsewhere and started is not None and status.state is PlayerState.PLAYING
        else status.state.value
    )
    st.progress(status.progress, text=f"{state} · turn {status.position} of {status.total}")
    if status.error:
        st.error(status.error)
    if status.last is not None:
        last = status.last
        st.caption(
            f"Turn {last.turn.id} ({last.turn.speaker}) · recalled {len(last.recalled)} · "
            f"evicted {last.evicted}{' · session ended' if last.session_ended else ''}"
        )
        st.text(last.turn.text)
        for message in last.rules:
            st.info(message)
    if status.state is not PlayerState.PLAYING and st.session_state.get("demo_polling"):
        st.session_state["demo_polling"] = False
        st.rerun()


def graph_view() -> None:
    last = player.status().last
    graph_panel(
        system.atlas,
        dashboard_state().node_filter,
        version=system.buffer.last_seq,
        highlight=dict(last.recalled) if last else None,
        height=560,
        inspectable=True,
        notes=notes(buffered(system.buffer)),
    )


playing = player.status().state is PlayerState.PLAYING
st.session_state["demo_polling"] = playing
left, right = st.columns([1, 2.4])
with left:
    st.fragment(status_view, run_every=STATUS_REFRESH if playing else None)()
with right:
    st.fragment(graph_view, run_every=GRAPH_REFRESH if playing else None)()
legend()
st.subheader("Inspect a memory")
drawn, _ = select_drawn(
    dashboard_state().node_filter.apply(system.atlas.nodes()), DEFAULT_MAX_NODES
)
inspector(system.atlas, system.buffer, tuple(n.id for n in drawn))
