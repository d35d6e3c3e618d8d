"""The trip-approval talk end to end through the agent loop, with the real MiniLM embedder
and the real English pipeline (issue #24): the expense cap said in session 1 and raised
in session 3 by the same user is one slot of one graph, so the old cap is deprecated and
"what is my cap?" in session 3 is answered from the 6,000 euros in force, naming what it
replaced. The same talk with no user named keeps each session's graph apart (issue #29's
rule); purging session 3 puts the 5,000 back in force."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.agent import AgentSettings, MemoryAgent
from memory_core.agent.context_graph import ContextStage
from memory_core.agent.rules import Orchestrator
from memory_core.conflicts.detector import user_metadata
from memory_core.context import NodeType, active_constraints
from memory_core.embedding.minilm import default_embedder
from memory_core.harness.session_format import load_conversation

pytestmark = pytest.mark.integration

TALK = Path(__file__).resolve().parents[3] / "sample_sessions" / "trip-approval.json"
ASK_AFTER = "s3-t4"  # "Updated: cap of 6,000 euros, ..."
QUESTION = "What is my cap?"


def play(user: str | None) -> tuple[MemoryAgent, ContextStage, ElasticMemoryAtlas]:
    """Sessions 1 and 2 of the talk and session 3 up to the raised cap; the agent of
    session 3 is returned (every turn as said, the user's through ``step``)."""
    conversation = load_conversation(TALK)
    first = conversation.sessions[0].turns[0].at
    assert first is not None
    clock = ManualClock(first)
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=default_embedder(), clock=clock)
    rules = Orchestrator(atlas)
    agent: MemoryAgent | None = None
    for session in conversation.sessions[:3]:
        agent = MemoryAgent(
            atlas, session_id=session.id, settings=AgentSettings(remember="everything"),
            rules=rules,
        )  # fmt: skip
        for turn in session.turns:
            if turn.at is not None and turn.at > clock.now():
                clock.advance(turn.at - clock.now())
            metadata = {"speaker": turn.speaker, **user_metadata(user)}
            if turn.speaker == "user":
                agent.step(turn.text, metadata=metadata)
            else:
                agent.observe(turn.text, metadata=metadata)
            if turn.id == ASK_AFTER:
                break
    assert agent is not None and rules.context is not None
    return agent, rules.context, atlas


def caps(stage: ContextStage, scope: str) -> list[tuple[str, bool, str | None]]:
    graph = stage.context(scope).graph
    return [
        (str(n.attr("value")), n.deprecated, graph.origin(n.id))
        for n in graph.nodes(NodeType.CONSTRAINT, include_deprecated=True)
        if "000 euros" in str(n.attr("value"))
    ]


def test_the_cap_raised_in_session_3_is_the_one_in_force_for_the_user() -> None:
    agent, stage, atlas = play("ana")
    assert list(stage.graphs()) == ["user:ana"]
    assert caps(stage, "user:ana") == [("5,000 euros", True, "s1"), ("6,000 euros", False, "s3")]
    step = agent.step(QUESTION, metadata={"speaker": "user", **user_metadata("ana")})
    assert step.response is not None and "= 6,000 euros (replaces 5,000 euros)" in step.response
    in_force = [str(n.attr("value")) for n in active_constraints(stage.context("user:ana").graph)]
    assert "6,000 euros" in in_force and "5,000 euros" not in in_force

    atlas.end_session("s3", mode="purge")  # what session 3 said and changed goes
    assert caps(stage, "user:ana") == [("5,000 euros", False, "s1")]


def test_without_a_user_each_session_keeps_its_own_cap() -> None:
    agent, stage, _ = play(None)
    assert sorted(stage.graphs()) == ["session:s1", "session:s2", "session:s3"]
    assert caps(stage, "session:s1") == [("5,000 euros", False, "s1")]
    assert caps(stage, "session:s3") == [("6,000 euros", False, "s3")]
    step = agent.step(QUESTION, metadata={"speaker": "user"})
    assert "6,000 euros" in step.context and "replaces 5,000" not in step.context
