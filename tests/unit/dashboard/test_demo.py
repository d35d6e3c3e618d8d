import time
from pathlib import Path

import pytest

from memory_core.dashboard.buffer import EventBuffer
from memory_core.dashboard.demo import DemoPlayer, PlayerState, demo_session_id, sample_files
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.errors import InputError
from memory_core.harness.session_format import Conversation, load_conversation
from memory_core.testing import ManualClock


@pytest.fixture
def conversation() -> Conversation:
    return load_conversation(sample_files()["trip-approval"])


@pytest.fixture
def player(atlas: ElasticMemoryAtlas, clock: ManualClock, conversation: Conversation):  # type: ignore[no-untyped-def]
    p = DemoPlayer(atlas, clock, speed=50.0)
    p.load(conversation)
    yield p
    p.close()


def test_samples_are_found() -> None:
    files = sample_files()
    assert "trip-approval" in files and all(p.suffix == ".json" for p in files.values())
    assert sample_files(Path("/nonexistent")) == {}


def test_step_adds_recalls_and_advances_the_clock(
    player: DemoPlayer, atlas: ElasticMemoryAtlas, clock: ManualClock, conversation: Conversation
) -> None:
    assert player.status().state is PlayerState.READY
    first = player.step()
    assert first is not None and len(atlas) == 1
    assert first.session_id == demo_session_id(conversation, "s1")
    before = clock.now()
    results = [player.step() for _ in range(4)]
    assert len(atlas) == 5 and clock.now() > before
    assert any(r is not None and r.recalled for r in results)  # user turns recall earlier ones
    assert player.status().position == 5


def test_full_replay_recalls_decays_summarizes_and_finishes(
    player: DemoPlayer, atlas: ElasticMemoryAtlas
) -> None:
    buffer = EventBuffer()
    atlas.subscribe(buffer)
    while player.step() is not None:
        pass
    status = player.status()
    assert status.state is PlayerState.FINISHED and status.position == status.total
    types = {e.type for e in buffer.events()}
    assert {"added", "reinforced", "decay", "summary", "session_end"} <= types
    assert len(atlas.sessions()) == 4  # one per session of the conversation
    assert player.step() is None


def test_play_runs_off_the_caller_thread_and_pause_stops_it(
    player: DemoPlayer, atlas: ElasticMemoryAtlas
) -> None:
    started = time.monotonic()
    player.play()
    assert time.monotonic() - started < 0.5  # play() returns at once
    deadline = time.monotonic() + 20
    while player.status().position < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    player.pause()
    assert player.wait_until_idle(5)
    frozen = player.status().position
    time.sleep(0.2)
    assert player.status().position == frozen >= 3
    assert player.status().state is PlayerState.PAUSED


def test_reset_removes_the_demo_memories(player: DemoPlayer, atlas: ElasticMemoryAtlas) -> None:
    atlas.add("a memory that is not part of the demo", session_id="mine")
    for _ in range(6):
        player.step()
    player.reset()
    assert player.status().state is PlayerState.READY and player.status().position == 0
    assert [n.session_id for n in atlas.nodes()] == ["mine"]


def test_play_twice_and_pause_when_idle_are_harmless(player: DemoPlayer) -> None:
    player.pause()
    player.play()
    player.play()
    player.pause()
    assert player.wait_until_idle(5)


@pytest.mark.parametrize("speed", [0.0, -1.0, 1e9, True])
def test_rejects_bad_speed(player: DemoPlayer, speed: float) -> None:
    before = player.status().speed
    with pytest.raises(InputError, match="speed"):
        player.set_speed(speed)
    assert player.status().speed == before


def test_demo_preset_shows_forgetting_within_the_default_conversation() -> None:
    from memory_core.dashboard.demo import DEMO_CONFIG, DemoPlayer, sample_files
    from memory_core.dashboard.eviction_view import forgotten_total
    from memory_core.dashboard.live import FastForwardClock
    from memory_core.engine.atlas import ElasticMemoryAtlas
    from memory_core.testing import HashingEmbedder, ManualClock

    clock = FastForwardClock(ManualClock(1.75e9))
    atlas = ElasticMemoryAtlas(DEMO_CONFIG, embedder=HashingEmbedder(), clock=clock)
    player = DemoPlayer(atlas, clock)
    player.load(sample_files()["trip-approval"])
    for _ in range(20):  # ten seconds of play at the default speed
        player.step()
    assert atlas.stats()["weight_min"] < 0.5  # some memories visibly faded
    while player.step() is not None:
        pass
    assert forgotten_total(atlas.stats()) > 0  # the low-weight turns go during play
    held = len(atlas)
    clock.advance(8760 * 3600.0)  # the Live graph page's skip of a year
    atlas.decay()
    assert forgotten_total(atlas.stats()) >= held // 2  # most of it is forgotten then


def test_picker_follows_the_shared_player() -> None:
    from memory_core.dashboard.demo import PlayerState, PlayerStatus, picker_value

    def status(conversation: str | None) -> PlayerStatus:
        return PlayerStatus(PlayerState.READY, conversation, "", 0, 0, 1.0, 1.0, None, None)

    names = ["a", "npc-innkeeper", "trip-approval"]
    assert picker_value(status("npc-innkeeper"), names) == "npc-innkeeper"
    assert picker_value(status(None), names) == "trip-approval"
    assert picker_value(status("gone"), ["a"]) == "a"


def test_a_conversations_turns_share_one_user_across_its_sessions(
    player: DemoPlayer, atlas: ElasticMemoryAtlas, conversation: Conversation
) -> None:
    # the conflict guard compares sessions only through one user's memories (issue #29
    # point 5): a demo conversation is one person's, so its scan must see all its sessions
    while player.step() is not None:
        pass
    users = {n.metadata.get("user_id") for n in atlas.nodes() if "turn" in n.metadata}
    assert users == {f"demo:{conversation.id}"}
