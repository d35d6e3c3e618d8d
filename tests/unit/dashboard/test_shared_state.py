"""Shared live state is visible: who changed it, other sessions follow, replays ask first."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from memory_core.dashboard.background import Actor
from memory_core.dashboard.demo import PlayerState, sample_files
from memory_core.dashboard.eviction_view import ERASED_TEXT
from memory_core.dashboard.home import replay_warning
from memory_core.engine.events import MemoryEvicted

from .test_pages import app, go, shared  # noqa: F401 - fixture reuse

ROOT = Path(__file__).resolve().parents[3]


def test_a_replay_started_over_leaves_no_erased_evictions_behind(app: AppTest) -> None:  # noqa: F811
    system = shared()
    player = system.player
    player.load(sample_files()["trip-approval"])
    while player.step() is not None:
        pass
    evicted = system.buffer.events(types=("evicted",))
    assert evicted, "the demo preset evicts during trip-approval"
    player.reset()  # purges the replay's sessions
    left = [
        e
        for e in system.buffer.events(types=("evicted",))
        if isinstance(e, MemoryEvicted) and e.session_id.startswith("demo:")
    ]
    assert left == []  # not shown as "text erased" rows
    assert ERASED_TEXT  # the label privacy purges still use


def test_replaying_a_finished_demo_warns_that_it_resets_it_for_everyone() -> None:
    files = sample_files()
    from memory_core.dashboard.live import LiveSystem
    from memory_core.testing import HashingEmbedder

    system = LiveSystem(embedder=HashingEmbedder(64))
    try:
        player = system.player
        player.load(files["npc-innkeeper"])
        assert replay_warning(player.status(), "") is None  # ready: Play destroys nothing
        while player.step() is not None:
            pass
        warning = replay_warning(player.status(), "Last change: ana pressed Play · 3 s ago")
        assert warning is not None and "removes the demo's memories for everyone" in warning
        assert "ana pressed Play" in warning
    finally:
        system.close()


def test_home_asks_before_starting_a_finished_demo_over(app: AppTest) -> None:  # noqa: F811
    player = shared().player
    player.load(sample_files()["npc-innkeeper"])
    while player.step() is not None:
        pass
    app.run()
    next(b for b in app.button if b.label == "Play the demo").click().run()
    assert not app.exception
    assert player.status().state is PlayerState.FINISHED  # nothing reset yet
    assert not any(b.label == "Replay from the start" and b.disabled for b in app.button)


def test_another_sessions_play_is_named_on_the_demo_page(app: AppTest) -> None:  # noqa: F811
    system = shared()
    go(app, "pages/demo_player.py")
    other = Actor("someone-else", None)
    system.player.step()
    system.activity.record(other, "pressed Play", "demo")
    app.run()
    captions = " ".join(str(c.value) for c in app.caption)
    assert "Shared: every browser on this server" in captions
    assert "another browser session pressed Play" in captions


def test_the_watch_is_busy_only_while_the_shared_atlas_changes() -> None:
    from memory_core.dashboard.live import LiveSystem
    from memory_core.dashboard.ui.watch import BUSY_FOR, busy
    from memory_core.testing import HashingEmbedder

    system = LiveSystem(embedder=HashingEmbedder(64))
    try:
        assert not busy(system)  # nothing happened yet: the slow watch
        change = system.activity.record(Actor("v1"), "wrote a message", "memories")
        assert busy(system, now=change.at + 1)
        assert not busy(system, now=change.at + BUSY_FOR + 1)
        before = system.watch_key()
        system.activity.record(Actor("v2"), "switched the preset to tuned", "preset")
        assert system.watch_key() != before
    finally:
        system.close()


def test_a_playground_message_does_not_make_its_own_page_rerun(app: AppTest) -> None:  # noqa: F811
    """The watch reruns the page for other sessions' changes, not for the page's own
    message: that rerun raced the message's run and, under load, the browser dropped
    the chat and results block (tests/e2e/test_concurrent_sessions.py)."""
    system = shared()
    go(app, "pages/playground.py")
    app.chat_input[0].set_value("session A remembers the blue umbrella").run()
    assert not app.exception
    seen = app.session_state["_shared_watch_key"]
    assert seen == system.watch_key()  # the watch sees nothing new: no full rerun
    system.activity.record(Actor("someone-else"), "wrote a message in session b", "memories")
    assert system.watch_key() != seen  # another session's change still reruns the page


def test_a_change_by_another_session_the_page_has_not_drawn_still_reruns_it(
    app: AppTest,  # noqa: F811
) -> None:
    system = shared()
    drawn = system.watch_key()
    system.activity.record(Actor("someone-else"), "pressed Play", "demo")  # after the draw

    def page_writes_a_message(drawn: tuple[object, ...]) -> None:
        import streamlit as st

        from memory_core.dashboard.background import Actor
        from memory_core.dashboard.ui.shared import live_system
        from memory_core.dashboard.ui.watch import own_change

        st.session_state["_shared_watch_key"] = drawn
        with own_change(live_system()):
            live_system().activity.record(Actor("me"), "wrote a message", "memories")

    run = AppTest.from_function(page_writes_a_message, args=(drawn,))
    run.run()
    assert not run.exception
    assert run.session_state["_shared_watch_key"] == drawn  # still behind: the watch reruns
