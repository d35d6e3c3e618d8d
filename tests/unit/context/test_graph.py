"""The context graph from hand-written turn facts (no parser, no model): ids, versions,
conflicts that deprecate, pending reviews, forgetting, confirmation, queries, time travel,
records and the health rule."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from support.embedders import SlotNameEmbedder

from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import EntityMention, TurnFacts
from memory_core.context.graph import ContextGraph
from memory_core.context.model import EdgeType, NodeType
from memory_core.context.query import (
    active_constraints,
    constraint_for,
    describe,
    entities,
    subgraph_for_tool,
)
from memory_core.context.update import ContextSettings, TaskContext
from memory_core.errors import InputError

DAY = 1_721_563_200.0


def money(slot: str, number: float, text: str, *, subject: str = "user", **kw: object) -> SlotValue:
    return SlotValue(subject, slot, text, "money", number, "EUR", "night", topic="hotel", **kw)  # type: ignore[arg-type]


def facts(
    intent: str = "state",
    *,
    slots: Sequence[SlotValue] = (),
    goal: str | None = None,
    entities: Sequence[EntityMention] = (),
    speaker: str = "user",
    at: float = DAY,
    forget_topic: str | None = None,
) -> TurnFacts:
    return TurnFacts("", speaker, at, intent, 1.0, goal, 0.9 if goal else 0.0,
                     tuple(slots), tuple(entities), forget_topic)  # fmt: skip


@pytest.fixture
def ctx() -> TaskContext:
    return TaskContext("u-1", embedder=SlotNameEmbedder())


def test_the_same_thing_said_twice_is_one_node(ctx: TaskContext) -> None:
    a = ctx.observe(
        facts(goal="book hotel", slots=[money("hotel budget", 180, "180 EUR")]),
        turn=0,
        memory_id="m0",
    )
    b = ctx.observe(
        facts(goal="book hotel", slots=[money("hotel budget", 180, "180 euros")]),
        turn=1,
        memory_id="m1",
    )
    assert len(a.added) == 2 and b.added == []
    (constraint,) = ctx.graph.nodes(NodeType.CONSTRAINT)
    assert constraint.turns == (0, 1) and constraint.memories == ("m0", "m1")
    assert constraint.version == 2 and len(ctx.graph.versions(constraint.id)) == 2
    assert constraint.id.startswith("C-") and constraint.label == "hotel budget: 180 EUR"


def test_another_value_conflicts_and_deprecates(ctx: TaskContext) -> None:
    ctx.observe(facts(goal="book hotel", slots=[money("hotel budget", 180, "180 EUR")]), turn=0)
    applied = ctx.observe(facts("change", slots=[money("hotel limit", 200, "200 EUR")]), turn=1)
    new, old = applied.conflicts[0]
    graph = ctx.graph
    assert graph.node(old).deprecated and not graph.node(new).deprecated
    assert constraint_for(graph, "hotel budget").id == new  # type: ignore[union-attr]
    assert [n.id for n in active_constraints(graph)] == [new]
    (conflict,) = graph.out_edges(new, EdgeType.CONFLICTS_WITH)
    assert conflict.target == old
    (old_edge,) = graph.in_edges(old, EdgeType.SATISFIES)
    assert old_edge.deprecated and old_edge.invalid_at == DAY and old_edge.expired_at == DAY
    # deprecated, not deleted: still there when asked
    assert old in {n.id for n in graph.nodes(NodeType.CONSTRAINT, include_deprecated=True)}


def test_an_unsure_slot_match_is_a_pending_review(ctx: TaskContext) -> None:
    ctx.observe(facts(goal="book hotel", slots=[money("hotel budget", 180, "180 EUR")]), turn=0)
    applied = ctx.observe(
        facts(slots=[money("room budget", 250, "250 EUR")]), turn=1, memory_id="m1"
    )
    (item,) = applied.pending
    assert (item.existing_slot, item.existing_value, item.value, item.similarity) == (
        "hotel budget", "180 EUR", "250 EUR", 0.7,
    )  # fmt: skip
    assert applied.added == [] and len(active_constraints(ctx.graph)) == 1
    accepted = ctx.resolve(item, accept=True)
    assert (
        accepted.conflicts and constraint_for(ctx.graph, "hotel budget").attr("value") == "250 EUR"
    )  # type: ignore[union-attr]


def test_a_low_confidence_choice_does_not_replace(ctx: TaskContext) -> None:
    sure = SlotValue("user", "delivery method", "standard courier", confidence=0.9)
    unsure = SlotValue("user", "delivery method", "blue box", confidence=0.52)
    ctx.observe(facts(slots=[sure]), turn=0)
    applied = ctx.observe(facts(slots=[unsure]), turn=1)
    assert (
        applied.pending
        and constraint_for(ctx.graph, "delivery method").attr("value") == "standard courier"
    )  # type: ignore[union-attr]


def test_other_subjects_are_not_user_constraints(ctx: TaskContext) -> None:
    ctx.observe(facts(slots=[money("hotel budget", 300, "300 EUR", subject="user's wife")]), turn=0)
    assert active_constraints(ctx.graph) == []
    (wife,) = [n for n in entities(ctx.graph) if n.label == "wife"]
    assert wife.attr("hotel budget") == "300 EUR" and wife.attr("kind") == "person"


def test_forget_the_last_turn_restores_what_it_replaced(ctx: TaskContext) -> None:
    ctx.observe(
        facts(
            goal="track delivery", slots=[SlotValue("user", "delivery method", "standard courier")]
        ),
        turn=0,
    )
    changed = ctx.observe(
        facts("change", slots=[SlotValue("user", "delivery method", "SF Express")]), turn=1
    )
    forgot = ctx.observe(facts("forget"), turn=2)
    graph = ctx.graph
    assert forgot.forgotten == [changed.added[0]] and graph.node(changed.added[0]).soft_deleted
    assert constraint_for(graph, "delivery method").attr("value") == "standard courier"  # type: ignore[union-attr]
    assert forgot.restored == [changed.conflicts[0][1]]
    hidden = graph.query().match_node("Constraint").get_nodes()
    shown = graph.query(include_soft_deleted=True).match_node("Constraint").get_nodes()
    assert len(hidden) == 1 and len(shown) == 2
    assert ctx.observe(facts("forget"), turn=3).forgotten  # the turn before: the first one


def test_forget_about_a_topic(ctx: TaskContext) -> None:
    ctx.observe(facts(goal="book hotel", slots=[money("hotel budget", 180, "180 EUR"),
                                               SlotValue("user", "party size", "4", "people", 4.0)]), turn=0)  # fmt: skip
    forgot = ctx.observe(facts("forget", forget_topic="hotel"), turn=1)
    assert len(forgot.forgotten) == 1
    assert [n.attr("slot") for n in active_constraints(ctx.graph)] == ["party size"]


def test_confirm_validates_and_cancel_closes_the_goal(ctx: TaskContext) -> None:
    first = ctx.observe(
        facts(goal="book table", slots=[SlotValue("user", "party size", "4", "people", 4.0)]),
        turn=0,
    )
    ctx.observe(facts("confirm"), turn=1)
    (validates,) = ctx.graph.edges(EdgeType.VALIDATES)
    assert validates.source == ctx.graph.user_id and validates.target in first.added
    goal = ctx.goal_id
    ctx.observe(facts("cancel"), turn=2)
    assert goal is not None and ctx.graph.node(goal).deprecated and ctx.goal_id is None


def test_seed_chain_and_tool_subgraph(ctx: TaskContext) -> None:
    order = EntityMention("order", "order", (("order_id", "ORD-20240721-889"),), ("iPhone 15",))
    phone = EntityMention("iPhone 15", "product")
    ctx.observe(facts("ask", goal="track delivery", entities=[phone, order]), turn=0)
    ctx.observe(facts(slots=[SlotValue("user", "delivery method", "SF Express")]), turn=1)
    graph, goal = ctx.graph, ctx.goal_id
    assert goal is not None
    chain = (
        graph.query().match_node("Goal", id=goal).follow_edge("SATISFIES").get_nodes("Constraint")
    )
    assert [n.attr("value") for n in chain] == ["SF Express"]
    refs = graph.query().match_node("Goal", id=goal).follow_edge("REFERENCES").get_nodes()
    assert [n.label for n in refs] == ["order"]
    assert [n.label for n in graph.query().match_node("Entity", kind="product").get_nodes()] == [
        "iPhone 15"
    ]
    assert subgraph_for_tool(graph, goal) == {
        "goal": "track delivery",
        "order_id": "ORD-20240721-889",
        "product": "iPhone 15",
        "delivery_method": "SF Express",
    }
    lines = describe(graph, goal)
    assert lines[:2] == ["In force: delivery method = SF Express", "Current goal: track delivery"]
    with pytest.raises(InputError, match="node type"):
        graph.query().match_node("Thing")
    with pytest.raises(InputError, match="edge type"):
        graph.query().follow_edge("LIKES")


def test_time_travel_and_records(ctx: TaskContext) -> None:
    ctx.observe(
        facts(goal="book hotel", slots=[money("hotel budget", 180, "180 EUR")], at=DAY), turn=0
    )
    ctx.observe(facts(slots=[money("hotel budget", 200, "200 EUR")], at=DAY + 60), turn=1)
    before = ctx.graph.as_of(DAY + 30)
    assert [n.attr("value") for n in active_constraints(before)] == ["180 EUR"]
    assert [n.attr("value") for n in active_constraints(ctx.graph)] == ["200 EUR"]
    copy = ContextGraph.from_records(ctx.graph.to_records(), user="u-1")
    assert copy.to_records() == ctx.graph.to_records()
    assert [n.attr("value") for n in active_constraints(copy)] == ["200 EUR"]
    with pytest.raises(InputError, match=r"records\[0\]"):
        ContextGraph.from_records([{"record": "node"}])


def test_health_fires_above_the_constraint_limit() -> None:
    ctx = TaskContext("u", settings=ContextSettings(max_constraints=2))
    slots = [SlotValue("user", f"slot {i}", f"value {i}") for i in range(3)]
    assert not ctx.observe(facts(slots=slots[:2]), turn=0).health.fired  # type: ignore[union-attr]
    health = ctx.observe(facts(slots=slots[2:]), turn=1).health
    assert health is not None and health.fired and "3 constraints" in health.reason


def test_a_value_naming_no_topic_changes_the_latest_of_its_kind(ctx: TaskContext) -> None:
    freeze = SlotValue(
        "user", "freeze duration", "3 months", "duration", 3.0, "month", topic="freeze"
    )
    ctx.observe(facts(slots=[freeze]), turn=0)
    applied = ctx.observe(
        facts(
            "change", slots=[SlotValue("user", "duration", "2 months", "duration", 2.0, "month")]
        ),
        turn=1,
    )
    assert len(applied.conflicts) == 1
    assert [n.attr("value") for n in active_constraints(ctx.graph)] == ["2 months"]


def test_a_bare_number_changes_only_a_value_of_its_magnitude(ctx: TaskContext) -> None:
    rooms = SlotValue("user", "room", "2 rooms", "number", 2.0, topic="room")
    ctx.observe(facts(slots=[rooms, money("flat budget", 1200, "1,200 EUR")]), turn=0)
    bare = SlotValue("user", "number", "1400", "number", 1400.0)
    assert ctx.observe(facts(slots=[bare]), turn=1).conflicts
    assert sorted(str(n.attr("value")) for n in active_constraints(ctx.graph)) == [
        "1400",
        "2 rooms",
    ]
    nothing = ctx.observe(facts(slots=[SlotValue("user", "number", "7", "number", 7.0)]), turn=2)
    assert nothing.added == [] and nothing.conflicts == []


def test_a_bare_number_under_a_noun_naming_no_slot_goes_by_magnitude(ctx: TaskContext) -> None:
    ctx.observe(facts(slots=[money("hotel budget", 180, "180 EUR")]), turn=0)
    cap = SlotValue(
        "user", "week", "200", "number", 200.0, topic="week"
    )  # "the cap goes up to 200"
    applied = ctx.observe(facts(slots=[cap]), turn=1)
    assert len(applied.conflicts) == 1
    assert [n.attr("value") for n in active_constraints(ctx.graph)] == ["200"]
    far = SlotValue("user", "floor", "3", "number", 3.0, topic="floor")
    assert ctx.observe(facts(slots=[far]), turn=2).conflicts == []


def test_values_in_two_units_are_never_one_slot(ctx: TaskContext) -> None:
    size = SlotValue("user", "inch", "14 inch", "number", 14.0, "inch", topic="inch")
    ctx.observe(facts(slots=[size]), turn=0)
    memory = SlotValue("user", "ram", "16gb", "number", 16.0, "gb", topic="ram")
    assert ctx.observe(facts(slots=[memory]), turn=1).conflicts == []
    assert sorted(str(n.attr("value")) for n in active_constraints(ctx.graph)) == [
        "14 inch",
        "16gb",
    ]


def test_cancelling_a_named_thing_keeps_the_goal(ctx: TaskContext) -> None:
    addon = SlotValue("user", "plan", "sports add-on")
    ctx.observe(facts(goal="change subscription", slots=[addon]), turn=0)
    goal = ctx.goal_id
    cancelled = TurnFacts("", "user", DAY, "cancel", 1.0, None, 0.0, cancel_topic="sports add-on")
    applied = ctx.observe(cancelled, turn=1)
    assert applied.deprecated and active_constraints(ctx.graph) == []
    assert ctx.goal_id == goal and goal is not None and ctx.graph.node(goal).active
