"""The one cached factory of the dashboard, plus the accessors every page starts with.

``st.cache_resource`` builds the ``LiveSystem`` once per server process and hands the
same object to every browser session; the atlas inside takes its own lock on every
call, so concurrent sessions are safe. The embedder is chosen from
``$ATLAS_DASHBOARD_EMBEDDER`` when the system is first built (tests set ``hashing``).
"""

from __future__ import annotations

import uuid
from collections.abc import MutableMapping
from typing import Any, cast

import streamlit as st

from memory_core.dashboard.background import Actor
from memory_core.dashboard.follow import Followed, poll
from memory_core.dashboard.jobs import JobRegistry
from memory_core.dashboard.live import LiveSystem
from memory_core.dashboard.stack_dumps import enable_stack_dumps
from memory_core.dashboard.state import AtlasSource, DashboardState, Keys
from memory_core.dashboard.ui.identity import REVIEWER_KEY, current_identity
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.errors import InputError
from memory_core.store.follow import AtlasFollower


@st.cache_resource(show_spinner="Starting the live atlas (loading the embedding model)…")
def live_system() -> LiveSystem:
    enable_stack_dumps()  # once per server process, like the system itself
    return LiveSystem.from_env()


@st.cache_resource(show_spinner=False)
def job_registry() -> JobRegistry:
    """The server's long jobs (A/B runs, sweeps, scans): every browser session sees them."""
    return JobRegistry()


_VIEWER_KEY = "_atlas_viewer_id"


def viewer() -> Actor:
    """This browser session as the author of shared changes: a random id kept for the
    session (a reload is a new session), and the signed-in or typed reviewer name."""
    st.session_state.setdefault(_VIEWER_KEY, uuid.uuid4().hex[:12])
    viewer_id = str(st.session_state[_VIEWER_KEY])
    typed = st.session_state.get(REVIEWER_KEY) or st.session_state.get("reviewer_kept", "")
    who = current_identity(str(typed))
    return Actor(viewer_id, None if who.anonymous else who.name)


def dashboard_state() -> DashboardState:
    return DashboardState(cast("MutableMapping[str, Any]", st.session_state))


@st.cache_resource(max_entries=4, show_spinner=False)
def follower(atlas_id: str) -> AtlasFollower:
    """A followed agent's copy, shared by every browser session (read-only use): loaded
    from a checkpoint once, then kept current by applying the agent's recorded events."""
    system = live_system()
    if system.recording.db is None:
        raise InputError("database", f"not available: {system.recording.error}")
    return AtlasFollower(system.recording.db, atlas_id, embedder=system.atlas.embedder)


def followed() -> Followed | None:
    """What the sidebar last saw of the followed agent (None unless following one)."""
    if dashboard_state().source is not AtlasSource.FOLLOW:
        return None
    seen = st.session_state.get(Keys.FOLLOWED)
    return seen if isinstance(seen, Followed) else None


def refresh_followed(atlas_id: str, name: str) -> bool:
    """Poll the followed agent; on news store it and apply its new events. True on news."""
    db = live_system().recording.db
    if db is None:
        return False
    seen, changed = poll(db, atlas_id, name, followed())
    if changed or follower(atlas_id).atlas is None:
        follower(atlas_id).catch_up()  # another session may have applied them already
    st.session_state[Keys.FOLLOWED] = seen
    return changed


def current_atlas() -> tuple[ElasticMemoryAtlas, str]:
    """The atlas the sidebar selected and a label for it (the live one if none is loaded).

    A followed agent is polled again here (one cheap query), so a page always draws its
    newest state, whoever triggered the run.
    """
    state = dashboard_state()
    seen = followed()
    if seen is not None:
        refresh_followed(seen.atlas_id, seen.name)
        seen = followed()
    copy = follower(seen.atlas_id).atlas if seen is not None else None
    if seen is not None and copy is not None:
        return copy, seen.label
    loaded = state.loaded
    if state.source not in (AtlasSource.LIVE, AtlasSource.FOLLOW) and loaded is not None:
        return loaded.atlas, loaded.label
    return live_system().atlas, "live atlas"


def atlas_version(atlas: ElasticMemoryAtlas) -> int:
    """Changes whenever ``atlas`` does: the live event count, a followed copy's changes;
    loaded atlases never change."""
    system = live_system()
    if atlas is system.atlas:
        return system.buffer.last_seq
    seen = followed()
    return follower(seen.atlas_id).changes if seen is not None else 0
