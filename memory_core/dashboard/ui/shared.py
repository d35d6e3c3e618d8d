"""The one cached factory of the dashboard, plus the accessors every page starts with.

``st.cache_resource`` builds the ``LiveSystem`` once per server process and hands the
same object to every browser session; the atlas inside takes its own lock on every
call, so concurrent sessions are safe. The embedder is chosen from
``$ATLAS_DASHBOARD_EMBEDDER`` when the system is first built (tests set ``hashing``).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, cast

import streamlit as st

from memory_core.dashboard.follow import Followed, poll
from memory_core.dashboard.live import LiveSystem
from memory_core.dashboard.sources import load_recorded
from memory_core.dashboard.state import AtlasSource, DashboardState, Keys
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.errors import InputError, NotFoundError


@st.cache_resource(show_spinner="Starting the live atlas (loading the embedding model)…")
def live_system() -> LiveSystem:
    return LiveSystem.from_env()


def dashboard_state() -> DashboardState:
    return DashboardState(cast("MutableMapping[str, Any]", st.session_state))


@st.cache_resource(max_entries=4, show_spinner=False)
def followed_snapshot(snapshot_id: str) -> ElasticMemoryAtlas:
    """A followed agent's snapshot, loaded once for every browser session (read-only use)."""
    system = live_system()
    if system.recording.db is None:
        raise InputError("database", f"not available: {system.recording.error}")
    return load_recorded(system.recording.db, snapshot_id, system.atlas.embedder)


def followed() -> Followed | None:
    """What the sidebar last saw of the followed agent (None unless following one)."""
    if dashboard_state().source is not AtlasSource.FOLLOW:
        return None
    seen = st.session_state.get(Keys.FOLLOWED)
    return seen if isinstance(seen, Followed) else None


def refresh_followed(atlas_id: str, name: str) -> bool:
    """Poll the followed agent; on news store it and load its newest snapshot. True on news."""
    db = live_system().recording.db
    if db is None:
        return False
    seen, changed = poll(db, atlas_id, name, followed())
    if seen.head.snapshot_id is not None:
        try:  # a cache hit unless it is new (or fell out of the cache)
            followed_snapshot(seen.head.snapshot_id)
        except NotFoundError:  # pruned by the recorder meanwhile: the next one is newer
            seen, changed = poll(db, atlas_id, name, None)
    st.session_state[Keys.FOLLOWED] = seen
    return changed


def current_atlas() -> tuple[ElasticMemoryAtlas, str]:
    """The atlas the sidebar selected and a label for it (the live one if none is loaded).

    A followed agent is polled again here (one cheap query), so a page always draws its
    newest snapshot, whoever triggered the run.
    """
    state = dashboard_state()
    seen = followed()
    if seen is not None:
        refresh_followed(seen.atlas_id, seen.name)
        seen = followed()
    if seen is not None and seen.head.snapshot_id is not None:
        return followed_snapshot(seen.head.snapshot_id), seen.label
    loaded = state.loaded
    if state.source not in (AtlasSource.LIVE, AtlasSource.FOLLOW) and loaded is not None:
        return loaded.atlas, loaded.label
    return live_system().atlas, "live atlas"


def atlas_version(atlas: ElasticMemoryAtlas) -> int:
    """Changes whenever ``atlas`` does: the live event count; loaded atlases never change."""
    system = live_system()
    return system.buffer.last_seq if atlas is system.atlas else 0
