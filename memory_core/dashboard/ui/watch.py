"""Pages that show the shared live atlas follow what other browser sessions do to it.

The live atlas, its demo player and its preset are one per server. A page showing them
says so, names who changed them last, and keeps a small fragment that reads the live
system's ``watch_key`` (a tuple of counters, no atlas read) every few seconds: when
another session pressed Play, switched the preset or wrote a memory, the page reruns
and draws the new state; otherwise the fragment only refreshes the "12 s ago" caption.
"""

from __future__ import annotations

import streamlit as st

from memory_core.dashboard.live import LiveSystem
from memory_core.dashboard.ui.shared import viewer

WATCH_EVERY = 3.0
"""Seconds between two reads of the watch key (a few microseconds each)."""
_SEEN = "_shared_watch_key"


def follow_shared(system: LiveSystem) -> None:
    """Say the live atlas is shared and who changed it last; rerun when someone else does."""
    st.session_state[_SEEN] = system.watch_key()
    st.fragment(_watch, run_every=WATCH_EVERY)(system, viewer().viewer)


def _watch(system: LiveSystem, viewer_id: str) -> None:
    if system.watch_key() != st.session_state.get(_SEEN):
        st.rerun()  # the whole page: another session changed what it shows
    st.caption(
        "Shared: every browser on this server sees and changes this live atlas. "
        + system.activity.describe(viewer_id)
    )
