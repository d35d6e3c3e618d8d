"""The task context graph's unsure changes reach the conflicts review queue, and the
reviewer's answer reaches the graph (scripted turn facts, a fake slot-name embedder: no
parser, no model)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from support.embedders import SlotNameEmbedder

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.agent.context_graph import ContextStage
from memory_core.agent.rules import CONTEXT_REVIEW, Orchestrator
from memory_core.conflicts.context_items import ContextReviewSink, is_context_item
from memory_core.conflicts.items import ReviewAction
from memory_core.conflicts.queue import InMemoryReviewQueue
from memory_core.conflicts.review import ConflictReview
from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import TurnFacts
from memory_core.context.query import active_constraints, constraint_for
from memory_core.engine.model import MemoryStatus
from memory_core.testing import EventRecorder

START = 1_721_563_200.0


class Scripted:
    """An extractor that returns the next prepared facts (the parse is tested elsewhere)."""

    def __init__(self, turns: Sequence[TurnFacts]) -> None:
        self._turns: Iterator[TurnFacts] = iter(turns)

    def extract(self, text: str, **_: Any) -> TurnFacts:
        return next(self._turns)


def money(slot: str, number: float, text: str) -> SlotValue:
    return SlotValue("user", slot, text, "money", number, "EUR", "night", topic="hotel")


def facts(slot: SlotValue, goal: str | None = None, *, small_talk: bool = False) -> TurnFacts:
    return TurnFacts(
        "", "user", START, "state", 1.0, goal, 0.9 if goal else 0.0, (slot,), small_talk=small_talk
    )


@pytest.fixture
def loop() -> tuple[ElasticMemoryAtlas, Orchestrator, ConflictReview, EventRecorder]:
    return make_loop(facts(money("room budget", 250, "250 EUR")))


def make_loop(
    second: TurnFacts,
) -> tuple[ElasticMemoryAtlas, Orchestrator, ConflictReview, EventRecorder]:
    """The agent's rules with a graph fed scripted facts (a hotel budget, then ``second``)
    and a review queue that answers the graph."""
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=SlotNameEmbedder(), clock=ManualClock(START)
    )
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    turns = [facts(money("hotel budget", 180, "180 EUR"), goal="book hotel"), second]
    stage = ContextStage(atlas, extractor=Scripted(turns))  # type: ignore[arg-type]
    queue = InMemoryReviewQueue()
    review = ConflictReview(atlas, queue)
    rules = Orchestrator(atlas, context=stage, context_review=ContextReviewSink(atlas, queue))
    review.listeners.append(
        lambda item, action: stage.answer(item.id, accept=action is ReviewAction.ACCEPT_NEW)
    )
    review.undo_listeners.append(lambda item: stage.withdraw(item.id))
    return atlas, rules, review, recorder


def talk(atlas: ElasticMemoryAtlas, rules: Orchestrator) -> tuple[str, str]:
    said = atlas.add("A hotel in Lisbon under 180 EUR a night, please.", session_id="trip")
    rules.context_turn(said.content, "trip", speaker="user", memory_id=said.id)
    changed = atlas.add("The room budget can be 250 EUR.", session_id="trip")
    rules.context_turn(changed.content, "trip", speaker="user", memory_id=changed.id)
    return said.id, changed.id


def test_an_unsure_change_is_queued_with_its_memories_and_node(loop: Any) -> None:
    atlas, rules, review, recorder = loop
    said, changed = talk(atlas, rules)
    (item,) = review.queue.items()
    graph = rules.context.of("trip").graph
    in_force = constraint_for(graph, "hotel budget")
    assert in_force is not None and in_force.attr("value") == "180 EUR"  # not applied yet
    assert (item.old_id, item.new_id, item.session_id) == (said, changed, "trip")
    assert item.old_text.startswith("A hotel in Lisbon") and item.kind == "value_change"
    assert is_context_item(item.reason) and in_force.id in item.reason
    assert "'room budget'" in item.reason and "'250 EUR'" in item.reason
    assert item.suggested is ReviewAction.ACCEPT_NEW and item.score == pytest.approx(0.7)
    (event,) = [e for e in recorder.of_type("rule") if e.rule == CONTEXT_REVIEW]
    assert (event.node_id, event.item_id, event.source_ids) == (in_force.id, item.id, (changed,))
    assert list(rules.context.held()) == [item.id]


def test_accept_new_applies_the_change_in_the_graph(loop: Any) -> None:
    atlas, rules, review, _ = loop
    said, changed = talk(atlas, rules)
    (item,) = review.queue.items()
    review.act(item.id, ReviewAction.ACCEPT_NEW, reviewer="ana")
    graph = rules.context.of("trip").graph
    now = constraint_for(graph, "hotel budget")
    assert now is not None and now.attr("value") == "250 EUR"
    assert atlas.get(said).status is not MemoryStatus.ACTIVE  # superseded, as any value change
    assert atlas.get(changed).status is MemoryStatus.ACTIVE
    assert rules.context.held() == {}
    # a repeat of the same click changes nothing more
    review.act(item.id, ReviewAction.ACCEPT_NEW, reviewer="ana")
    assert constraint_for(graph, "hotel budget").attr("value") == "250 EUR"  # type: ignore[union-attr]


def test_undo_of_accept_new_puts_the_value_in_force_back(loop: Any) -> None:
    atlas, rules, review, _ = loop
    talk(atlas, rules)
    (item,) = review.queue.items()
    graph = rules.context.of("trip").graph
    before = constraint_for(graph, "hotel budget")
    entry = review.act(item.id, ReviewAction.ACCEPT_NEW, reviewer="ana")
    accepted = constraint_for(graph, "hotel budget")
    assert accepted is not None and accepted.attr("value") == "250 EUR"
    review.undo(entry.id, reviewer="ana")
    back = constraint_for(graph, "hotel budget")
    assert back is not None and back.id == before.id and back.attr("value") == "180 EUR"
    goal = rules.context.of("trip").goal_id
    assert [c.id for c in active_constraints(graph, goal)] == [before.id]  # SATISFIES again
    withdrawn = graph.node(accepted.id)
    assert withdrawn.soft_deleted and withdrawn.version == accepted.version + 1  # kept, audited
    (replaced,) = graph.edges("CONFLICTS_WITH", include_deprecated=True, include_soft_deleted=True)
    assert replaced.soft_deleted and graph.edges("CONFLICTS_WITH") == []
    assert list(rules.context.held()) == [item.id]  # open again: the answer can be given anew
    review.act(item.id, ReviewAction.ACCEPT_NEW, reviewer="ana")
    again = constraint_for(graph, "hotel budget")
    assert again is not None and again.attr("value") == "250 EUR"


def test_undo_after_the_conversation_moved_on_keeps_the_newer_state(loop: Any) -> None:
    atlas, rules, review, _ = loop
    talk(atlas, rules)
    (item,) = review.queue.items()
    stage = rules.context
    graph = stage.of("trip").graph
    entry = review.act(item.id, ReviewAction.ACCEPT_NEW, reviewer="ana")
    accepted = constraint_for(graph, "hotel budget")
    stage.of("trip").observe(facts(money("hotel budget", 300, "300 EUR")), turn=2)
    size = graph.log_size()
    review.undo(entry.id, reviewer="ana")
    now = constraint_for(graph, "hotel budget")
    assert now is not None and now.attr("value") == "300 EUR" and now.id != accepted.id
    assert graph.log_size() == size  # the graph wrote nothing: all or nothing
    assert list(stage.held()) == [item.id]


def test_keep_old_leaves_the_graph_as_it_is(loop: Any) -> None:
    atlas, rules, review, _ = loop
    talk(atlas, rules)
    (item,) = review.queue.items()
    review.act(item.id, ReviewAction.KEEP_OLD, reviewer="ana")
    in_force = constraint_for(rules.context.of("trip").graph, "hotel budget")
    assert in_force is not None and in_force.attr("value") == "180 EUR"
    assert rules.context.held() == {}


def test_without_a_sink_the_change_is_only_published(loop: Any) -> None:
    atlas, rules, review, recorder = loop
    rules.context_review = None
    talk(atlas, rules)
    assert review.queue.items() == []
    (event,) = [e for e in recorder.of_type("rule") if e.rule == CONTEXT_REVIEW]
    assert event.item_id is None


def test_a_turn_not_stored_is_queued_with_its_value(loop: Any) -> None:
    atlas, rules, review, _ = loop
    said = atlas.add("A hotel in Lisbon under 180 EUR a night, please.", session_id="trip")
    rules.context_turn(said.content, "trip", speaker="user", memory_id=said.id)
    rules.context_turn("The room budget can be 250 EUR.", "trip", speaker="user")
    (item,) = review.queue.items()
    assert item.new_id is None and item.new_text == "room budget: 250 EUR"


def test_small_talk_queues_nothing_and_changes_nothing() -> None:
    """An unsure change a person would not review (here: proposed by small talk) reaches
    neither the queue nor the rule events, and the value in force stays."""
    atlas, rules, review, recorder = make_loop(
        facts(money("room budget", 250, "250 EUR"), small_talk=True)
    )
    talk(atlas, rules)
    assert review.queue.items() == [] and rules.context.held() == {}
    assert not [e for e in recorder.of_type("rule") if e.rule == CONTEXT_REVIEW]
    in_force = constraint_for(rules.context.of("trip").graph, "hotel budget")
    assert in_force is not None and in_force.attr("value") == "180 EUR"
