from __future__ import annotations

import pytest

from memory_core.engine.config import AtlasConfig
from memory_core.errors import NotFoundError
from memory_core.harness.explain import explain, explain_missed
from memory_core.harness.replay import ReplaySettings, replay_conversation


def test_an_evicted_fact_says_when_and_why(small, embedder) -> None:
    replay = replay_conversation(
        small, AtlasConfig(max_nodes=3), settings=ReplaySettings(policy="fifo"), embedder=embedder
    )
    e = explain(replay, "kf1")
    assert e.verdict == "evicted"
    fate = e.evidence[0]
    assert fate.stored_as is not None and fate.held_by is None
    assert fate.steps[-1].kind == "evicted" and fate.steps[-1].reason == "capacity"
    assert fate.after_turn == "s1-t4"  # fifo at 3: the 4th add evicts the first memory
    assert "capacity" in e.summary and "s1-t4" in e.summary


def test_a_held_fact_outranked_names_what_beat_it(small, embedder) -> None:
    replay = replay_conversation(
        small,
        AtlasConfig(),
        settings=ReplaySettings(policy="unlimited", top_k=1),
        embedder=embedder,
    )
    missed = [f for f in replay.result.facts if f.expect == "recalled" and not f.recalled]
    recalled = [f for f in replay.result.facts if f.recalled]
    assert recalled
    assert explain(replay, recalled[0].fact_id).verdict == "recalled"
    for fact in missed:
        e = explain(replay, fact.fact_id)
        assert e.verdict == "outranked" and e.rank is not None and e.rank > 1
        assert len(e.outranked_by) == min(e.rank - 1, 5) and e.outranked_by[0].id in e.summary


def test_never_stored_when_the_write_filter_declined(small, embedder) -> None:
    replay = replay_conversation(
        small,
        AtlasConfig(),
        settings=ReplaySettings(policy="unlimited"),
        embedder=embedder,
        write_filter=lambda text, meta: "colour" not in text,
    )
    e = explain(replay, "kf1")
    assert e.verdict == "never_stored" and e.evidence[0].stored_as is None


def test_atlas_merges_are_followed(make_conversation, embedder) -> None:
    conv = make_conversation(
        [
            [
                "I really love green tea in the morning.",
                "Okay.",
                "I really love green tea in the morning.",
            ]
        ],
        [(["s1-t3"], "green tea", "recalled")],
    )
    replay = replay_conversation(conv, AtlasConfig(), embedder=embedder)
    assert replay.stored["s1-t1"] == replay.stored["s1-t3"]  # the repeat merged into the first
    e = explain(replay, "kf1")
    assert e.verdict == "recalled" and e.evidence[0].held_by == replay.stored["s1-t1"]


def test_explain_missed_covers_wrong_outcomes_only(small, embedder) -> None:
    replay = replay_conversation(
        small, AtlasConfig(max_nodes=2), settings=ReplaySettings(policy="fifo"), embedder=embedder
    )
    wrong = {f.fact_id for f in replay.result.facts if f.recalled != (f.expect == "recalled")}
    assert {e.fact_id for e in explain_missed(replay)} == wrong
    with pytest.raises(NotFoundError):
        explain(replay, "kf99")
