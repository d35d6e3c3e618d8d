"""Replays with ``conflicts=True``: writes go through the guard, superseded memories stay out."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.embedding import make_embedder
from memory_core.engine.config import AtlasConfig
from memory_core.engine.model import MemoryStatus
from memory_core.errors import InputError
from memory_core.harness.guarded_policy import GuardedAtlasPolicy
from memory_core.harness.replay import ReplaySettings, replay_conversation
from memory_core.harness.session_format import load_conversation

SAMPLE = Path(__file__).resolve().parents[3] / "sample_sessions" / "monitoring-pump-station.json"


def test_conflicts_need_the_atlas_policy() -> None:
    with pytest.raises(InputError, match="conflicts"):
        ReplaySettings(policy="fifo", conflicts=True)


def test_a_guarded_replay_resolves_and_never_retrieves_what_it_superseded() -> None:
    conversation = load_conversation(SAMPLE)
    replay = replay_conversation(
        conversation,
        AtlasConfig(),
        settings=ReplaySettings(conflicts=True),
        embedder=make_embedder("hashing"),
    )
    policy = replay.policy
    assert isinstance(policy, GuardedAtlasPolicy)
    superseded = {d.existing_id for d in policy.decisions if d.resolution.value == "supersede"}
    assert superseded and sum(policy.resolutions().values()) == len(policy.decisions)
    for node_id in superseded & {n.id for n in policy.atlas.nodes()}:
        assert policy.atlas.get(node_id).status is MemoryStatus.SUPERSEDED
    assert not superseded & {h for f in replay.result.facts for h in f.hits}
    assert all(replay.stored.values())  # the sample has no forget request: every turn stored


def test_speaker_confidence_keeps_a_user_fact_against_an_assistant_turn() -> None:
    from memory_core import HashingEmbedder, ManualClock
    from memory_core.conflicts.policy import Resolution

    embedder = HashingEmbedder(64)
    policy = GuardedAtlasPolicy(
        AtlasConfig(), embedder, ManualClock(), speaker_confidence={"assistant": 0.7}
    )

    def say(turn: str, speaker: str, text: str) -> str:
        vector = embedder.embed([text])[0]
        meta = {"speaker": speaker}
        return policy.add(text, vector, turn_id=turn, session_id="s", links_to=[], metadata=meta)

    user = say("t1", "user", "The budget is 5000 euros.")
    echo = say("t2", "assistant", "The budget is now 6000 euros.")
    assert policy.decisions[-1].resolution is Resolution.KEEP_OLD
    assert policy.atlas.get(user).status is MemoryStatus.ACTIVE
    assert policy.atlas.get(echo).confidence == pytest.approx(0.3)
    say("t3", "user", "The budget is now 7000 euros.")
    assert policy.atlas.get(user).status is MemoryStatus.SUPERSEDED
    assert policy.resolutions()["supersede"] >= 1
