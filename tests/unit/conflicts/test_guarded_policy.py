"""Replays with ``conflicts=True``: writes go through the guard, superseded memories stay out."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.config import AtlasConfig
from memory_core.conflicts.guarded_policy import GuardedAtlasPolicy
from memory_core.errors import InputError
from memory_core.harness.replay import ReplaySettings, harness_embedder, replay_conversation
from memory_core.harness.session_format import load_conversation
from memory_core.model import MemoryStatus

SAMPLE = Path(__file__).resolve().parents[3] / "sample_sessions" / "trip-approval.json"


def test_conflicts_need_the_atlas_policy() -> None:
    with pytest.raises(InputError, match="conflicts"):
        ReplaySettings(policy="fifo", conflicts=True)


def test_a_guarded_replay_resolves_and_never_retrieves_what_it_superseded() -> None:
    conversation = load_conversation(SAMPLE)
    replay = replay_conversation(
        conversation,
        AtlasConfig(),
        settings=ReplaySettings(conflicts=True),
        embedder=harness_embedder("hashing"),
    )
    policy = replay.policy
    assert isinstance(policy, GuardedAtlasPolicy)
    superseded = {d.existing_id for d in policy.decisions if d.resolution.value == "supersede"}
    assert superseded and sum(policy.resolutions().values()) == len(policy.decisions)
    for node_id in superseded & {n.id for n in policy.atlas.nodes()}:
        assert policy.atlas.get(node_id).status is MemoryStatus.SUPERSEDED
    assert not superseded & {h for f in replay.result.facts for h in f.hits}
    assert all(replay.stored.values())  # the sample has no forget request: every turn stored
