"""Pages that show the shared live atlas follow what other browser sessions do to it.

The live atlas, its demo player and its preset are one per server. A page showing them
says so, names who changed them last, and keeps a small fragment that reads the live
system's ``watch_key`` (a tuple of counters, no atlas read): when another session
pressed Play, switched the preset or wrote a memory, the page reruns and draws the new
state; otherwise the fragment only refreshes the "12 s ago" caption. It reads every
``WATCH_BUSY`` seconds while things change (a change in the last minute, or the demo
playing) and every ``WATCH_QUIET`` seconds at rest, where each read still costs a
fragment rerun (measured by ``benchmarks/idle_pages_bench.py``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from memory_core.dashboard.demo import PlayerState
from memory_core.dashboard.live import LiveSystem
from memory_core.dashboard.ui.shared import viewer

WATCH_BUSY = 2.0
"""Seconds between two reads of the watch key while the shared atlas changes."""
WATCH_QUIET = 10.0
"""Seconds between two reads when nothing changed for ``BUSY_FOR`` seconds."""
BUSY_FOR = 60.0
_SEEN, _BUSY = "_shared_watch_key", "_shared_watch_busy"


def busy(system: LiveSystem, now: float | None = None) -> bool:
    """Whether the shared atlas is changing: the demo plays, or a change is recent."""
    if system.player.status().state is PlayerState.PLAYING:
        return True
    last = system.activity.last
    return last is not None and (now if now is not None else time.time()) - last.at < BUSY_FOR


def follow_shared(system: LiveSystem) -> None:
    """Say the live atlas is shared and who changed it last; rerun when someone else does."""
    st.session_state[_SEEN] = system.watch_key()
    st.session_state[_BUSY] = busy(system)
    every = WATCH_BUSY if st.session_state[_BUSY] else WATCH_QUIET
    st.fragment(_watch, run_every=every)(system, viewer().viewer)


@contextmanager
def own_change(system: LiveSystem) -> Iterator[None]:
    """Wrap a change this page makes to the shared atlas in the middle of its run.

    The rest of the run draws the result, so the watch must not rerun the page for it.
    It did: the key read at the top of the run no longer matched, so right after every
    Playground message the watch called a full ``st.rerun()``. Under load the server
    runs seconds ahead of the browser, which then received the message's run, the
    watch's run and the full rerun in one burst and now and then dropped the chat and
    results block (same session, state intact, no error). The key only moves on when
    it was current before the change: a change another session made since the top of
    the run still reruns the page; one made during the change is drawn by this run.
    """
    before = system.watch_key()
    try:
        yield
    finally:
        if st.session_state.get(_SEEN) == before:
            st.session_state[_SEEN] = system.watch_key()


def _watch(system: LiveSystem, viewer_id: str) -> None:
    if system.watch_key() != st.session_state.get(_SEEN):
        st.rerun()  # the whole page: another session changed what it shows
    if st.session_state.get(_BUSY) and not busy(system):
        st.rerun()  # quiet again: one full run to slow the watch down
    st.caption(
        "Shared: every browser on this server sees and changes this live atlas. "
        + system.activity.describe(viewer_id)
    )
