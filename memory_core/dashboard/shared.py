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

from memory_core.atlas import ElasticMemoryAtlas
from memory_core.dashboard.live import LiveSystem
from memory_core.dashboard.state import AtlasSource, DashboardState


@st.cache_resource(show_spinner="Starting the live atlas (loading the embedding model)…")
def live_system() -> LiveSystem:
    return LiveSystem.from_env()


def dashboard_state() -> DashboardState:
    return DashboardState(cast("MutableMapping[str, Any]", st.session_state))


def current_atlas() -> tuple[ElasticMemoryAtlas, str]:
    """The atlas the sidebar selected and a label for it (the live one if none is loaded)."""
    state = dashboard_state()
    loaded = state.loaded
    if state.source is not AtlasSource.LIVE and loaded is not None:
        return loaded.atlas, loaded.label
    return live_system().atlas, "live atlas"


def atlas_version(atlas: ElasticMemoryAtlas) -> int:
    """Changes whenever ``atlas`` does: the live event count; loaded atlases never change."""
    system = live_system()
    return system.buffer.last_seq if atlas is system.atlas else 0
