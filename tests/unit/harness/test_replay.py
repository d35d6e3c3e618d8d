from __future__ import annotations

import math

import numpy as np
import pytest
from support.embedders import CallRecordingEmbedder

from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError
from memory_core.harness.metrics import summarize
from memory_core.harness.policies import AtlasPolicy
from memory_core.harness.replay import (
    Progress,
    ReplaySettings,
    conversation_texts,
    embed_conversation,
    replay_all,
    replay_conversation,
)

from .conftest import FILLER


def strip_wall(d: dict) -> dict:
    d = dict(d)
    d.pop("wall_seconds")
    return d


@pytest.mark.parametrize("policy", ["atlas", "fifo", "lru", "random", "unlimited", "seed-linear"])
def test_same_inputs_give_identical_results(small, embedder, policy: str) -> None:
    settings = ReplaySettings(policy=policy, capacity_fraction=0.3)
    config = AtlasConfig(seed=7)
    a = replay_conversation(small, config, settings=settings, embedder=embedder).result
    b = replay_conversation(small, config, settings=settings, embedder=embedder).result
    assert strip_wall(a.to_dict(trajectories=True)) == strip_wall(b.to_dict(trajectories=True))


def test_unlimited_memory_recalls_a_distinctive_fact(small, embedder) -> None:
    r = replay_conversation(
        small, AtlasConfig(), settings=ReplaySettings(policy="unlimited"), embedder=embedder
    ).result
    kf1 = next(f for f in r.facts if f.fact_id == "kf1")
    assert kf1.recalled and kf1.retained and kf1.rank == 1
    assert r.final_nodes == r.turns == 19


def test_capacity_fraction_sets_max_nodes_per_conversation(small, embedder) -> None:
    settings = ReplaySettings(policy="fifo", capacity_fraction=0.25)
    replay = replay_conversation(
        small, AtlasConfig(max_nodes=999), settings=settings, embedder=embedder
    )
    assert replay.config.max_nodes == math.ceil(0.25 * 19) == replay.result.max_nodes
    assert replay.result.final_nodes == 5
    assert replay.result.evictions == {"capacity": 14}
    # fifo keeps the last turns only: the first session's fact is gone
    kf1 = next(f for f in replay.result.facts if f.fact_id == "kf1")
    assert not kf1.retained and not kf1.recalled and kf1.weight is None


def test_trajectories_start_when_the_evidence_arrives(small, embedder) -> None:
    r = replay_conversation(
        small, AtlasConfig(), settings=ReplaySettings(policy="atlas"), embedder=embedder
    ).result
    assert len(r.trajectory_times) == r.turns
    kf2 = next(f for f in r.facts if f.fact_id == "kf2")  # evidence s1-t6: the 6th turn
    assert kf2.trajectory[:5] == (None,) * 5 and kf2.trajectory[5] is not None
    assert list(r.trajectory_times) == sorted(r.trajectory_times)


def test_sampling_every_n_turns(small, embedder) -> None:
    r = replay_conversation(
        small,
        AtlasConfig(),
        settings=ReplaySettings(policy="lru", trajectory_every=4),
        embedder=embedder,
    ).result
    assert len(r.trajectory_times) == 19 // 4
    assert all(len(f.trajectory) == 4 for f in r.facts)


def test_clock_follows_the_turns_and_session_ends_run(small, embedder) -> None:
    replay = replay_conversation(
        small, AtlasConfig(session_end_mode="purge"), settings=ReplaySettings(), embedder=embedder
    )
    assert isinstance(replay.policy, AtlasPolicy)
    last_turn = list(small.turns())[-1]
    assert replay.policy.atlas.clock.now() == last_turn.at
    # every session was purged at its end: nothing is left to recall
    assert replay.result.final_nodes == 0
    assert replay.result.evictions["session_purge"] > 0
    assert summarize([replay.result]).recall_at_k == 0.0


def test_links_go_to_what_the_turn_retrieved(small, embedder) -> None:
    replay = replay_conversation(
        small,
        AtlasConfig(max_nodes=None, link_previous=False, max_auto_links=0),
        settings=ReplaySettings(link_top=2),
        embedder=embedder,
    )
    atlas = replay.policy.atlas
    related = [e for e in atlas.edges() if e.relation.value == "related_to"]
    assert related
    assert all(len([e for e in related if e.source_id == n.id]) <= 2 for n in atlas.nodes())


def test_write_filter_declines_turns(small, embedder) -> None:
    replay = replay_conversation(
        small,
        AtlasConfig(),
        settings=ReplaySettings(policy="unlimited"),
        embedder=embedder,
        write_filter=lambda text, meta: "door" in text,
    )
    assert replay.result.final_nodes == 2
    assert set(replay.stored) == {"s1-t6", "s2-t9"}


def test_progress_reports_every_turn(small, embedder) -> None:
    seen: list[Progress] = []
    replay_all(
        [small, small],
        AtlasConfig(),
        settings=ReplaySettings(policy="fifo"),
        embedder=embedder,
        progress=seen.append,
    )
    assert len(seen) == 38
    assert [p.turn for p in seen[:19]] == list(range(1, 20))
    assert seen[-1] == Progress("synthetic", 1, 2, 19, 19)


def test_texts_are_embedded_once_per_conversation(small, embedder) -> None:
    counting = CallRecordingEmbedder(embedder)
    replay_conversation(small, AtlasConfig(session_end_mode="keep"), embedder=counting)
    assert counting.calls == [conversation_texts(small)]
    texts = conversation_texts(small)
    assert len(texts) == len(set(texts))
    assert any(t.endswith(": " + FILLER[0]) for t in texts)  # stored with who said it


def test_given_vectors_are_used_as_they_are(small, embedder) -> None:
    vectors = embed_conversation(small, embedder)
    counting = CallRecordingEmbedder(embedder)
    replay_conversation(
        small,
        AtlasConfig(),
        settings=ReplaySettings(policy="fifo"),
        embedder=counting,
        vectors=vectors,
    )
    assert counting.calls == []
    assert all(isinstance(v, np.ndarray) for v in vectors.values())


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"policy": "nope"}, "policy"),
        ({"top_k": 0}, "top_k"),
        ({"context_k": 2, "link_top": 3}, "link_top"),
        ({"capacity_fraction": 0.0}, "capacity_fraction"),
        ({"capacity_fraction": 1.5}, "capacity_fraction"),
        ({"trajectory_every": True}, "trajectory_every"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(InputError, match=field):
        ReplaySettings(**kwargs)


def test_rules_run_in_the_replay_only_when_asked(make_conversation, embedder) -> None:
    """The replay goes through the agent loop: with ``rules`` a forget request soft-deletes
    the user's last memory instead of being stored; without, it is an ordinary turn."""
    talk = make_conversation(
        [["The door code is 4471.", "Noted, 4471.", "forget what I just said", *FILLER[:3]]],
        [(["s1-t1"], "door code 4471", "recalled")],
    )
    plain = replay_conversation(talk, AtlasConfig(), embedder=embedder)
    ruled = replay_conversation(
        talk, AtlasConfig(), settings=ReplaySettings(rules=True), embedder=embedder
    )
    assert "s1-t3" in plain.stored and "s1-t3" not in ruled.stored
    assert plain.result.facts[0].recalled and not ruled.result.facts[0].recalled
    assert isinstance(ruled.policy, AtlasPolicy)
    gone = ruled.policy.atlas.get(ruled.stored["s1-t1"])
    assert gone.status.value == "tombstoned"  # kept for audit


def test_rules_need_the_atlas_policy() -> None:
    with pytest.raises(InputError, match="rules"):
        ReplaySettings(policy="fifo", rules=True)
