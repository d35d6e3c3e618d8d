"""Values the user accepts from the other side, and values said with the one they replace
(hand-written turn facts and the hashing embedder: no parser, no model)."""

from __future__ import annotations

import pytest

from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import TurnFacts
from memory_core.context.model import EdgeType, NodeType
from memory_core.context.query import active_constraints
from memory_core.context.update import TaskContext
from memory_core.testing import HashingEmbedder

DAY = 1_721_563_200.0


def facts(
    intent: str = "state", *slots: SlotValue, speaker: str = "user", text: str = ""
) -> TurnFacts:
    return TurnFacts(text, speaker, DAY, intent, 1.0, "book table", 0.9, tuple(slots))


def time(value: str, resolved: str, *, subject: str = "user", **kw: object) -> SlotValue:
    return SlotValue(subject, "table time", value, "time", resolved=resolved, topic="table", **kw)  # type: ignore[arg-type]


def in_force(ctx: TaskContext) -> list[tuple[str, str]]:
    return sorted(
        (str(n.attr("slot")), str(n.attr("value"))) for n in active_constraints(ctx.graph)
    )


def deprecated_values(ctx: TaskContext) -> list[str]:
    nodes = ctx.graph.nodes(NodeType.CONSTRAINT, include_deprecated=True)
    return sorted(str(n.attr("value")) for n in nodes if n.deprecated)


@pytest.fixture
def ctx() -> TaskContext:
    return TaskContext("u-1", embedder=HashingEmbedder(64))


def test_a_confirmation_adopts_what_the_assistant_proposed(ctx: TaskContext) -> None:
    ctx.observe(facts("state", SlotValue("user", "party size", "5 people", "people", 5.0)), turn=0)
    offer = time("7pm", "19:00", subject="assistant")
    ctx.observe(facts("ask", offer, speaker="assistant", text="Shall I book 7pm?"), turn=1)
    applied = ctx.observe(facts("confirm"), turn=2)
    assert in_force(ctx) == [("party size", "5 people"), ("table time", "7pm")]
    (adopted,) = [i for i in applied.added if ctx.graph.node(i).type is NodeType.CONSTRAINT]
    assert any(
        e.source == ctx.graph.user_id for e in ctx.graph.in_edges(adopted, EdgeType.VALIDATES)
    )


def test_a_confirmation_adopts_no_alternatives_prices_or_stale_offers(ctx: TaskContext) -> None:
    either = [
        time("4:40 pm", "16:40", subject="assistant"),
        time("9:10", "09:10", subject="assistant"),
    ]
    price = SlotValue("assistant", "table budget", "40 EUR", "money", 40.0, "EUR")
    ctx.observe(facts("state", *either, price, speaker="assistant"), turn=0)
    ctx.observe(facts("confirm"), turn=1)
    assert in_force(ctx) == []
    ctx.observe(
        facts("state", time("7pm", "19:00", subject="assistant"), speaker="assistant"), turn=2
    )
    ctx.observe(facts("state"), turn=3)  # the user said something else first
    ctx.observe(facts("confirm"), turn=4)
    assert in_force(ctx) == []


def test_the_reply_to_a_change_records_what_was_set(ctx: TaskContext) -> None:
    ctx.observe(facts("state", time("7:30 pm", "19:30")), turn=0)
    ctx.observe(facts("change", text="can we do it later?"), turn=1)
    moved = time("8:00 pm", "20:00", subject="assistant")
    ctx.observe(facts("state", moved, speaker="assistant", text="Moved to 8:00 pm."), turn=2)
    assert in_force(ctx) == [("table time", "8:00 pm")]
    assert deprecated_values(ctx) == ["7:30 pm"]


def test_an_assistant_question_after_a_change_sets_nothing(ctx: TaskContext) -> None:
    ctx.observe(facts("state", time("7:30 pm", "19:30")), turn=0)
    ctx.observe(facts("change"), turn=1)
    asked = time("8:00 pm", "20:00", subject="assistant")
    ctx.observe(facts("ask", asked, speaker="assistant", text="8:00 pm then?"), turn=2)
    assert in_force(ctx) == [("table time", "7:30 pm")]


def test_a_value_said_instead_of_another_replaces_the_one_holding_it(ctx: TaskContext) -> None:
    ctx.observe(facts("state", time("7:30 pm", "19:30")), turn=0)
    other = SlotValue("user", "number", "8", "number", 8.0, replaces="7:30")
    ctx.observe(facts("change", other), turn=1)
    assert in_force(ctx) == [("table time", "8")]
    assert deprecated_values(ctx) == ["7:30 pm"]


def test_a_replaced_value_never_said_before_is_kept_as_the_earlier_one(ctx: TaskContext) -> None:
    pickup = SlotValue("user", "pickup time", "9pm", "time", resolved="21:00", topic="pickup",
                       replaces="6")  # fmt: skip
    applied = ctx.observe(facts("change", pickup), turn=0)
    assert in_force(ctx) == [("pickup time", "9pm")]
    assert deprecated_values(ctx) == ["6"] and len(applied.conflicts) == 1


def test_an_amount_never_replaces_a_count_of_the_same_name(ctx: TaskContext) -> None:
    count = SlotValue("user", "session", "eight sessions", "number", 8.0, topic="session")
    cost = SlotValue("user", "session", "760 USD", "money", 760.0, "USD", topic="session")
    ctx.observe(facts("state", count), turn=0)
    ctx.observe(facts("state", cost), turn=1)
    assert in_force(ctx) == [("session", "eight sessions"), ("session money", "760 USD")]


def test_a_turn_that_forgets_one_thing_still_states_the_others(ctx: TaskContext) -> None:
    size = SlotValue("user", "screen size", "65 inch", "number", 65.0, topic="screen")
    panel = SlotValue("user", "panel", "OLED", confidence=0.9)
    ctx.observe(facts("state", size, panel), turn=0)
    back = SlotValue("user", "screen size", "55 inch", "number", 55.0, topic="screen")
    again = SlotValue("user", "panel", "OLED", confidence=0.9)  # read again inside "forget OLED"
    forgetting = TurnFacts("", "user", DAY, "forget", 1.0, None, 0.0, (back, again), (),
                           forget_topic="oled")  # fmt: skip
    applied = ctx.observe(forgetting, turn=1)
    assert in_force(ctx) == [("screen size", "55 inch")]
    assert applied.forgotten and deprecated_values(ctx) == ["65 inch"]
    whole = TurnFacts("", "user", DAY, "forget", 1.0, None, 0.0, (again,))  # "forget that"
    ctx.observe(whole, turn=2)
    assert in_force(ctx) == [("screen size", "65 inch")]  # the last change undone, OLED not back


def test_an_amount_without_a_topic_changes_the_latest_amount_not_a_count(
    ctx: TaskContext,
) -> None:
    cap = SlotValue("user", "stay budget", "5,000 euros", "money", 5000.0, "EUR", topic="stay")
    hours = SlotValue("user", "hour", "seven", "number", 7.0, topic="hour")
    raised = SlotValue("user", "budget", "6,000 euros", "money", 6000.0, "EUR")
    for turn, value in enumerate((cap, hours, raised)):
        ctx.observe(facts("state", value), turn=turn)
    assert in_force(ctx) == [("hour", "seven"), ("stay budget", "6,000 euros")]
    assert deprecated_values(ctx) == ["5,000 euros"]


def test_a_number_in_words_changes_an_amount_of_its_magnitude(ctx: TaskContext) -> None:
    monthly = SlotValue("user", "gift budget", "thirty pounds", "money", 30.0, "GBP", topic="gift")
    ctx.observe(facts("state", monthly), turn=0)
    ctx.observe(facts("change", SlotValue("user", "number", "twenty-five", "number", 25.0)), turn=1)
    assert in_force(ctx) == [("gift budget", "twenty-five")]
