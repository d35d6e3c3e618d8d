"""The seed's own example, in English, end to end through the agent loop with the real
MiniLM embedder and the real English pipeline: a goal with its entities, a change that
conflicts with and deprecates the default courier, the answer from the constraint in force,
and "forget what I just said" soft-deleting the change."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.agent import AgentSettings, MemoryAgent
from memory_core.context import EdgeType, NodeType, constraint_for, subgraph_for_tool
from memory_core.embedding.minilm import default_embedder
from memory_core.errors import InputError

pytestmark = pytest.mark.integration

AT = datetime(2024, 7, 21, 9, tzinfo=UTC).timestamp()


@pytest.fixture
def agent() -> MemoryAgent:
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=default_embedder(), clock=ManualClock(AT))
    return MemoryAgent(atlas, session_id="s1", settings=AgentSettings(remember="everything"))


def _labels(graph, ids):  # type: ignore[no-untyped-def]
    return [graph.node(i).label for i in ids]


def test_the_seed_example_through_the_agent_loop(agent: MemoryAgent) -> None:
    stage = agent.loop.rules.context  # type: ignore[union-attr]
    assert stage is not None
    agent.step("Check where my iPhone 15 I ordered yesterday is")
    graph = stage.of("s1").graph
    (goal,) = graph.nodes(NodeType.GOAL)
    assert goal.label == "track delivery"
    assert [e.target for e in graph.out_edges(graph.user_id, EdgeType.HAS_GOAL)] == [goal.id]
    (order,) = graph.query().match_node("Goal", id=goal.id).follow_edge("REFERENCES").get_nodes()
    assert order.label == "order"
    (phone,) = graph.query().match_node("Entity", id=order.id).follow_edge("REFERENCES").get_nodes()
    assert phone.label == "iPhone 15" and phone.turns == (0,)

    agent.observe(
        "Your order ORD-20240721-889 ships by standard courier.",
        metadata={"speaker": "assistant"},
    )
    default = constraint_for(graph, "delivery method")
    assert default is not None and default.attr("value") == "standard courier"
    assert graph.node(order.id).attr("order_id") == "ORD-20240721-889"

    change = agent.step("Never mind, make it SF Express cash on delivery")
    assert change.stored is not None
    new = constraint_for(graph, "delivery method")
    assert new is not None and new.attr("value") == "SF Express cash on delivery"
    assert new.memories == (change.stored.id,)
    chain = graph.query().match_node("Goal", id=goal.id).follow_edge("SATISFIES").get_nodes()
    assert [n.id for n in chain] == [new.id]
    (conflict,) = graph.out_edges(new.id, EdgeType.CONFLICTS_WITH)
    assert conflict.target == default.id
    old = graph.node(default.id)
    assert old.deprecated and not old.soft_deleted  # kept, not in force
    (old_edge,) = graph.in_edges(default.id, EdgeType.SATISFIES)
    assert old_edge.deprecated and old_edge.invalid_at is not None
    assert subgraph_for_tool(graph, goal.id)["order_id"] == "ORD-20240721-889"
    assert subgraph_for_tool(graph, goal.id)["delivery_method"] == "SF Express cash on delivery"

    answer = agent.step("How will my order be delivered?")
    assert answer.response is not None
    assert "In force: delivery method = SF Express cash on delivery" in answer.response
    assert "(replaces standard courier)" in answer.response

    forget = agent.step("forget what I just said")
    assert forget.forgotten  # the orchestrator's rule soft-deleted the memory ...
    assert graph.node(new.id).soft_deleted  # ... and the graph the change
    assert new.id not in {n.id for n in graph.nodes(NodeType.CONSTRAINT)}
    back = constraint_for(graph, "delivery method")
    assert back is not None and back.id == default.id  # what it replaced is in force again


def test_the_hotel_limit_is_answered_from_the_constraint_in_force(agent: MemoryAgent) -> None:
    agent.step("I need a hotel in Lisbon, my budget is 180 EUR per night")
    agent.step("Actually make it 200 EUR per night for the hotel")
    step = agent.step("What is my hotel limit?")
    assert step.response is not None and "200 EUR per night" in step.response
    assert "= 200 EUR per night (replaces 180 EUR per night)" in step.context
    assert "= 180 EUR" not in step.context  # the old value only as what was replaced


@pytest.mark.parametrize(
    "text",
    ["", "🙂🙂🙂 🎉", "<div><b>Budget</b>: 300 EUR</div><script>alert(1)</script>",
     "Je voudrais une chambre pour deux personnes à 90 euros la nuit",
     "我想订一个酒店", "word " * 20_000],
)  # fmt: skip
def test_bad_turns_are_kept_and_do_not_break_the_graph(agent: MemoryAgent, text: str) -> None:
    stage = agent.loop.rules.context  # type: ignore[union-attr]
    assert stage is not None
    if len(text) > agent.atlas.config.max_content_chars:  # refused at the atlas's boundary
        with pytest.raises(InputError, match="max_content_chars"):
            agent.observe(text)
        assert len(stage.of("s1").graph) == 1  # nothing but the user: the graph is unchanged
    elif text:
        step = agent.observe(text)  # stored whole (the parser reads at most its first 2,000)
        assert step.stored is None or step.stored.content.endswith(text[-20:].strip())
    agent.step("my budget is 300 EUR")
    assert constraint_for(stage.of("s1").graph, "budget") is not None
