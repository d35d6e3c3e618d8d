"""The sidebar shown on every page: which atlas to look at and the shared filters."""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from memory_core.dashboard.access import Action
from memory_core.dashboard.follow import (
    DEFAULT_EVERY,
    EVERY_RANGE,
    atlas_label,
    check_every,
    status_text,
)
from memory_core.dashboard.locations import shown_text
from memory_core.dashboard.sources import (
    load_recorded,
    open_snapshot,
    recorded_snapshots,
    snapshot_label,
)
from memory_core.dashboard.state import SOURCE_LABELS, AtlasSource, Keys, LoadedAtlas
from memory_core.dashboard.ui.identity import denied, identity_panel
from memory_core.dashboard.ui.shared import (
    current_atlas,
    dashboard_state,
    followed,
    follower,
    live_system,
    refresh_followed,
)
from memory_core.engine.model import MemoryKind
from memory_core.errors import AtlasError
from memory_core.store.watch import RecordedAtlas, recorded_atlases


def render_sidebar() -> None:
    with st.sidebar:
        identity_panel()
        st.radio(
            "Atlas",
            options=list(AtlasSource),
            format_func=lambda s: SOURCE_LABELS[AtlasSource(s)],
            key=Keys.SOURCE,
        )
        source = dashboard_state().source
        if source is AtlasSource.FOLLOW:
            _follow_picker()
        elif source is AtlasSource.RECORDED:
            _recorded_picker()
        elif source is AtlasSource.SNAPSHOT:
            _snapshot_upload()
        _filters()
        _recording_badge()


def _recorded_picker() -> None:
    system = live_system()
    db = system.recording.db
    if db is None:
        st.warning(shown_text(f"No database: {system.recording.error}"))
        return
    blocked = denied(Action.WRITE)
    if st.button(
        "Save the live atlas to the database",
        disabled=blocked is not None,
        help=blocked,
        width="stretch",
    ):
        try:
            info = system.save_snapshot_to_db("dashboard")
            st.toast(f"Saved snapshot of {info.node_count} memories")
        except AtlasError as exc:
            st.error(str(exc))
    try:
        snapshots = recorded_snapshots(db)
    except AtlasError as exc:
        st.warning(shown_text(f"Database unavailable: {exc}"))
        return
    if not snapshots:
        st.info("No recorded snapshot yet.")
        return
    labels = {s.id: snapshot_label(s) for s in snapshots}
    chosen = st.selectbox("Recorded snapshot", list(labels), format_func=labels.__getitem__)
    if st.button("Load snapshot", width="stretch") and chosen is not None:
        try:
            atlas, graphs = load_recorded(db, chosen, system.atlas.embedder)
        except AtlasError as exc:
            st.error(str(exc))
            return
        dashboard_state().loaded = LoadedAtlas(atlas, labels[chosen], AtlasSource.RECORDED, graphs)
    _loaded_note(AtlasSource.RECORDED)


def _follow_picker() -> None:
    """Pick a recording agent and keep its newest snapshot on screen."""
    system = live_system()
    db = system.recording.db
    if db is None:
        st.warning(shown_text(f"No database: {system.recording.error}"))
        return
    try:
        agents = {a.id: a for a in _recorded_agents(system.recording.atlas_id)}
    except AtlasError as exc:
        st.warning(shown_text(f"Database unavailable: {exc}"))
        return
    if not agents:
        st.session_state.pop(Keys.FOLLOWED, None)
        st.info("No recording agent yet. Start one with `atlas mcp --record`.")
        return
    atlas_id = st.selectbox(
        "Recording agent",
        list(agents),
        format_func=lambda i: atlas_label(agents[i]),
        key=Keys.FOLLOW_ATLAS,
    )
    every = st.number_input(
        "Check every (seconds)",
        min_value=EVERY_RANGE[0],
        max_value=EVERY_RANGE[1],
        value=DEFAULT_EVERY,
        step=0.5,
        key=Keys.FOLLOW_EVERY,
    )
    if atlas_id is None:
        return
    agent = agents[atlas_id]
    try:
        refresh_followed(agent.id, agent.name)
    except AtlasError as exc:
        st.warning(f"Cannot follow: {exc}")
        return
    st.fragment(_follow_status, run_every=timedelta(seconds=check_every(every)))(agent)


@st.cache_data(ttl=5, show_spinner=False)
def _recorded_agents(own_id: str | None) -> list[RecordedAtlas]:
    """The picker's list (a few grouped queries), shared by sessions for a few seconds."""
    db = live_system().recording.db
    return [] if db is None else recorded_atlases(db, exclude={own_id} if own_id else ())


def _follow_status(agent: RecordedAtlas) -> None:
    """Runs every few seconds: rerun the pages when the agent's atlas or log moved."""
    try:
        changed = refresh_followed(agent.id, agent.name)
    except AtlasError as exc:
        st.warning(f"Cannot follow: {exc}")
        return
    if changed:  # news since the last full run: rerun the app, the pages read the new head
        _recorded_agents.clear()  # the picker's counts and live mark too
        st.rerun()
    seen = followed()
    if seen is not None:
        copy = follower(seen.atlas_id)
        applied = copy.seq if copy.stalled is None else None
        st.caption(status_text(seen.head, applied=applied))
        if copy.stalled is not None:
            st.caption(f"Following snapshots only: {copy.stalled}")


def _snapshot_upload() -> None:
    upload = st.file_uploader("Snapshot file (.npz)", type=["npz"])
    state = dashboard_state()
    if upload is not None:
        label = f"file {upload.name}"
        current = state.loaded
        if current is None or current.label != label:
            try:
                atlas, graphs = open_snapshot(
                    upload.getvalue(), live_system().atlas.embedder, name=upload.name
                )
            except AtlasError as exc:
                st.error(f"Not a readable snapshot: {exc}")
                return
            state.loaded = LoadedAtlas(atlas, label, AtlasSource.SNAPSHOT, graphs)
    _loaded_note(AtlasSource.SNAPSHOT)


def _loaded_note(source: AtlasSource) -> None:
    loaded = dashboard_state().loaded
    if loaded is None or loaded.source is not source:
        st.caption("Nothing loaded: pages show the live atlas.")
    else:
        st.caption("Showing:")
        st.text(loaded.label)


def _filters() -> None:
    atlas, _ = current_atlas()
    st.divider()
    st.subheader("Filters")
    sessions = sorted(atlas.sessions())
    _prune(Keys.SESSIONS, sessions)
    st.multiselect("Sessions", sessions, key=Keys.SESSIONS, placeholder="all sessions")
    st.multiselect("Kinds", [k.value for k in MemoryKind], key=Keys.KINDS, placeholder="all kinds")
    cap = float(atlas.config.weight_cap)
    if float(st.session_state.get(Keys.MIN_WEIGHT, 0.0)) > cap:
        st.session_state[Keys.MIN_WEIGHT] = cap
    st.slider("Minimum weight", 0.0, cap, step=0.05, key=Keys.MIN_WEIGHT)
    st.text_input("Text contains", key=Keys.TEXT, placeholder="any text")


def _prune(key: str, allowed: list[str]) -> None:
    """Drop selections that no longer exist (a session purged, another atlas chosen)."""
    current = st.session_state.get(key)
    if current:
        st.session_state[key] = [v for v in current if v in allowed]


def _recording_badge() -> None:
    status = live_system().recording_status()
    st.divider()
    if status.get("healthy"):
        st.caption(f"Recording to the database · {status['written']} events written")
    elif status.get("error") == "recording is off":
        st.caption("Database recording is off.")
    else:
        problem = status.get("error") or status.get("last_error")
        st.warning(shown_text(f"Database recording is failing; events are buffered. {problem}"))
