"""The orchestrator's rules in the agent loop (hashing embedder): episodes, knowledge review
after corrections, forget requests — each fires a ``RuleFired`` event."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, MemoryKind, MemoryStatus, Relation
from memory_core.agent import AgentSettings, MemoryAgent
from memory_core.agent.intent import FORGET_EXAMPLES, IntentDetector
from memory_core.agent.rules import (
    EPISODE,
    FORGET_REQUEST,
    KNOWLEDGE_REVIEW,
    NOTHING_TO_FORGET,
    SOFT_DELETE_REASON,
    Orchestrator,
)
from memory_core.engine.events import RuleFired
from memory_core.engine.model import MemoryNode
from memory_core.errors import ConfigError
from memory_core.testing import EventRecorder, HashingEmbedder, ManualClock

FACTS = [
    "The project deadline is Friday the 14th",
    "Priya approves purchases above 500 euros",
    "The Berlin office opens at nine",
    "Dana is allergic to cats",
    "The printer on floor two jams on thick paper",
    "Support tickets close after fourteen days",
    "The team offsite is in Lisbon this year",
    "Finance wants receipts within a week",
]


def make(**config: Any) -> tuple[MemoryAgent, EventRecorder]:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(**config), embedder=HashingEmbedder(64), clock=ManualClock()
    )
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    agent = MemoryAgent(atlas, session_id="s1", settings=AgentSettings(remember="everything"))
    return agent, recorder


def fired(recorder: EventRecorder, rule: str) -> list[RuleFired]:
    return [e for e in recorder.of_type("rule") if isinstance(e, RuleFired) and e.rule == rule]


def say(agent: MemoryAgent, text: str, speaker: str = "user") -> MemoryNode:
    stored = agent.observe(text, metadata={"speaker": speaker}).stored
    assert stored is not None, text
    return stored


# -- episode ---------------------------------------------------------------------------


def test_a_session_past_the_threshold_folds_its_oldest_memories_into_an_episode() -> None:
    agent, recorder = make(episode_after_memories=5, merge_threshold=1.0)
    said = [say(agent, fact) for fact in FACTS[:5]]
    assert fired(recorder, EPISODE) == []  # 5 is not more than 5
    step = agent.observe(FACTS[5], metadata={"speaker": "user"})
    (event,) = fired(recorder, EPISODE)
    assert step.rules == [event]
    assert event.message == "episode created from 5 memories"
    assert event.source_ids == tuple(n.id for n in said)
    episode = agent.atlas.get(event.node_id)
    assert episode.kind is MemoryKind.EPISODIC and episode.session_id == "s1"
    folded = {
        e.target_id for e in agent.atlas.edges(episode.id) if e.relation is Relation.SUMMARIZES
    }
    assert folded == set(event.source_ids)
    rules = agent.loop.rules
    assert rules is not None
    assert [n.content for n in rules.short_term("s1")] == ["user: " + FACTS[5]]
    say(agent, FACTS[6])  # two short-term memories now: no second episode
    assert len(fired(recorder, EPISODE)) == 1


def test_a_turn_merging_into_a_folded_memory_is_not_folded_again() -> None:
    agent, recorder = make(episode_after_memories=3)
    first = say(agent, FACTS[0])
    for fact in FACTS[1:4]:
        say(agent, fact)
    (event,) = fired(recorder, EPISODE)
    assert first.id in event.source_ids
    assert say(agent, FACTS[0]).id == first.id  # a repeat merges into the folded memory
    say(agent, FACTS[4])
    assert len(fired(recorder, EPISODE)) == 1  # short term: FACTS[3], FACTS[4] only
    forgotten = say(agent, FACTS[5])
    agent.atlas.forget(forgotten.id)  # a memory that left the short term is not counted
    say(agent, FACTS[6])
    assert len(fired(recorder, EPISODE)) == 1
    say(agent, FACTS[7])
    (_, second) = fired(recorder, EPISODE)
    assert forgotten.id not in second.source_ids and len(second.source_ids) == 3


def test_the_episode_rule_is_off_with_none() -> None:
    agent, recorder = make(episode_after_memories=None, merge_threshold=1.0)
    for fact in FACTS:
        say(agent, fact)
    assert fired(recorder, EPISODE) == []
    assert all(n.kind is not MemoryKind.EPISODIC for n in agent.atlas.nodes())


def test_thresholds_are_validated_by_the_config() -> None:
    with pytest.raises(ConfigError, match="episode_after_memories"):
        AtlasConfig(episode_after_memories=1)
    with pytest.raises(ConfigError, match="review_after_corrections"):
        AtlasConfig(review_after_corrections=0)
    with pytest.raises(ConfigError, match="forget_intent_similarity"):
        AtlasConfig(forget_intent_similarity=1.5)


# -- knowledge review after corrections ------------------------------------------------


def correct(atlas: ElasticMemoryAtlas, text: str, previous: MemoryNode | None) -> MemoryNode:
    """Store ``text`` superseding ``previous``, as the conflict guard does."""
    if previous is not None:
        atlas.set_status(previous.id, MemoryStatus.SUPERSEDED, reason="corrected")
    node = atlas.add(text, session_id="s1")
    if previous is not None:
        atlas.link(node.id, previous.id, Relation.SUPERSEDES)
    return node


BUDGETS = [f"The travel budget is {n} euros" for n in (100, 200, 300, 400, 500)]


def test_a_statement_corrected_three_times_goes_to_review_once() -> None:
    agent, recorder = make()
    submitted: list[tuple[str, int, str]] = []

    def review(node: MemoryNode, corrections: int, root: str) -> str | None:
        submitted.append((node.id, corrections, root))
        return "item-1"

    rules = Orchestrator(agent.atlas, review=review)
    nodes: list[MemoryNode] = []
    for text in BUDGETS[:3]:
        nodes.append(correct(agent.atlas, text, nodes[-1] if nodes else None))
        assert rules.after_store(nodes[-1].id, "s1") == []  # at most two corrections
    nodes.append(correct(agent.atlas, BUDGETS[3], nodes[-1]))
    (event,) = rules.after_store(nodes[3].id, "s1")
    assert event.rule == KNOWLEDGE_REVIEW
    assert event.message == "moved to knowledge review after 3 corrections"
    assert (event.node_id, event.item_id) == (nodes[3].id, "item-1")
    assert event.source_ids == (nodes[0].id,)
    assert submitted == [(nodes[3].id, 3, nodes[0].id)]
    assert fired(recorder, KNOWLEDGE_REVIEW) == [event]
    fourth = correct(agent.atlas, BUDGETS[4], nodes[3])
    assert rules.after_store(fourth.id, "s1") == []  # the entity is in review already


def test_without_a_knowledge_base_the_review_rule_says_so() -> None:
    agent, _ = make(review_after_corrections=1)
    second = correct(agent.atlas, BUDGETS[1], correct(agent.atlas, BUDGETS[0], None))
    (event,) = Orchestrator(agent.atlas).after_store(second.id, "s1")
    assert event.item_id is None
    assert event.message == (
        "due for knowledge review after 1 correction (no knowledge base attached)"
    )


# -- forget requests -------------------------------------------------------------------


def test_forget_that_soft_deletes_the_last_user_memory_and_keeps_it_for_audit() -> None:
    agent, recorder = make()
    kept = say(agent, FACTS[0])
    regret = say(agent, FACTS[1])
    say(agent, "Noted, purchases above 500 need Priya", speaker="assistant")
    before = len(agent.atlas)
    step = agent.step("forget what I just said")
    assert step.forgotten == (regret.id,)
    assert step.stored is None and step.response == f"{SOFT_DELETE_REASON}: 1 memory"
    assert len(agent.atlas) == before  # kept for audit, the request itself not stored
    assert agent.atlas.get(regret.id).status is MemoryStatus.TOMBSTONED
    assert agent.atlas.get(kept.id).status is MemoryStatus.ACTIVE
    hits = agent.atlas.retrieve(FACTS[1], top_k=5, session_id="s1", reinforce=False)
    assert regret.id not in [h.node.id for h in hits]
    (event,) = fired(recorder, FORGET_REQUEST)
    assert event.source_ids == (regret.id,) and event.message == "soft-deleted on request: 1 memory"


def test_forget_with_nothing_to_forget_says_so_and_changes_nothing() -> None:
    agent, recorder = make()
    say(agent, FACTS[0], speaker="assistant")  # only the assistant spoke in s1
    snapshot = [(n.id, n.status, n.weight) for n in agent.atlas.nodes()]
    events = len(recorder.events)
    step = agent.step("forget that")
    assert step.response == NOTHING_TO_FORGET and step.forgotten == ()
    assert [(n.id, n.status, n.weight) for n in agent.atlas.nodes()] == snapshot
    assert fired(recorder, FORGET_REQUEST) == []
    assert [e.type for e in recorder.events[events:]] == []  # no write of any kind


def test_forget_in_an_empty_atlas_says_so() -> None:
    agent, _ = make()
    assert agent.observe("please forget that").response == NOTHING_TO_FORGET
    assert len(agent.atlas) == 0


def test_forget_recent_sets_how_far_that_reaches() -> None:
    agent, _ = make(forget_recent=2)
    first, second, third = (say(agent, fact) for fact in FACTS[:3])
    assert agent.step("forget that").forgotten == (second.id, third.id)
    assert agent.atlas.get(first.id).status is MemoryStatus.ACTIVE


def test_with_the_rule_off_a_forget_request_is_stored_like_any_turn() -> None:
    agent, recorder = make(forget_on_request=False)
    say(agent, FACTS[0])
    assert agent.step("forget what I just said").stored is not None
    assert fired(recorder, FORGET_REQUEST) == []


def test_an_agent_without_rules_runs_none() -> None:
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(64), clock=ManualClock())
    agent = MemoryAgent(
        atlas, session_id="s1", settings=AgentSettings(remember="everything"), rules=False
    )
    assert agent.loop.rules is None
    agent.step("The travel budget is 100 euros")
    assert agent.step("forget that").stored is not None


def test_intent_needs_the_threshold_and_to_beat_every_look_alike() -> None:
    detector = IntentDetector(HashingEmbedder(64))
    assert all(detector.matches(text, 0.45) for text in FORGET_EXAMPLES)
    intent, other = detector.similarity("remember this")
    assert other > intent
    assert not detector.matches("remember this", 0.0)
    assert not detector.matches("forget what I just said", 1.01)
