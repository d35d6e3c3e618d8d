"""Which unsure changes of the context graph reach a reviewer (``review_gate``): real ones
stay, pairs no person would review are dropped, neither applied nor held. Hand-written
turn facts and a fake slot-name embedder: no parser, no model."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from support.embedders import SlotNameEmbedder

from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import TurnFacts
from memory_core.context.model import Node, NodeType
from memory_core.context.query import active_constraints, constraint_for
from memory_core.context.review_gate import Refusal, refusal
from memory_core.context.update import TaskContext

DAY = 1_721_563_200.0
RELATED = 0.4


def said(
    *values: SlotValue,
    intent: str = "state",
    speaker: str = "user",
    small_talk: bool = False,
    text: str = "",
) -> TurnFacts:
    return TurnFacts(
        text, speaker, DAY, intent, 0.9, None, 0.0, tuple(values), small_talk=small_talk
    )


def date(slot: str, value: str, topic: str | None, **kw: object) -> SlotValue:
    return SlotValue("user", slot, value, "date", topic=topic, **kw)  # type: ignore[arg-type]


def money(slot: str, number: float, topic: str) -> SlotValue:
    return SlotValue("user", slot, f"{number:g} EUR", "money", number, "EUR", topic=topic)


def in_force(value: SlotValue, *, turns: Sequence[int] = (0,)) -> Node:
    attrs = {
        "slot": value.slot,
        "value": value.value,
        "kind": value.kind,
        "number": value.number,
        "unit": value.unit,
        "topic": value.topic,
        "time_marker": value.time_marker,
        "confidence": value.confidence,
        "resolved": value.resolved,
    }
    kept = tuple((k, v) for k, v in attrs.items() if v is not None)
    return Node("C-1", NodeType.CONSTRAINT, value.slot, value.slot, kept, turns=tuple(turns))


def near(a: str, b: str) -> float:
    """Topic similarity for the gate's last check: "hotel" and "room" are related."""
    return 0.55 if {a, b} == {"hotel", "room"} else 0.2


def why(value: SlotValue, existing: Node, facts: TurnFacts, turn: int = 1) -> Refusal | None:
    return refusal(value, existing, facts, turn, similarity=near, related=RELATED)


# -- real unsure changes stay ------------------------------------------------------------
def test_a_related_slot_with_another_value_goes_to_a_reviewer() -> None:
    new = money("room budget", 250, "room")
    assert why(new, in_force(money("hotel budget", 180, "hotel")), said(new)) is None


def test_a_change_the_assistant_records_goes_to_a_reviewer() -> None:
    new = SlotValue("user", "party ticket", "three tickets", "number", 3, topic="party ticket")
    old = SlotValue("user", "ticket", "four tickets", "number", 4, topic="party ticket")
    facts = said(new, intent="change", speaker="assistant")
    assert why(new, in_force(old), facts) is None


def test_a_choice_named_above_the_namers_bar_goes_to_a_reviewer() -> None:
    new = SlotValue("user", "vehicle", "a compact", confidence=0.56)
    assert (
        why(new, in_force(SlotValue("user", "vehicle", "an SUV", confidence=0.84)), said(new))
        is None
    )


def test_a_choice_of_the_same_kind_of_thing_with_another_modifier_goes_to_a_reviewer() -> None:
    """ "an aisle seat" against "a window seat": one head noun, but another thing."""
    new = SlotValue("user", "seat", "an aisle seat", confidence=0.56)
    old = in_force(SlotValue("user", "seat", "a window seat", confidence=0.7))
    assert why(new, old, said(new)) is None


def test_one_side_without_a_topic_is_judged_by_the_whole_slot_names() -> None:
    new = money("car budget", 750, "car")
    old = SlotValue("user", "budget", "700 EUR", "money", 700, "EUR")
    assert why(new, in_force(old), said(new)) is None


# -- junk goes ---------------------------------------------------------------------------
def test_a_thanks_and_sign_off_proposes_no_change() -> None:
    """The dashboard's example: the fair's dates against "Thanks. I'll check back in a
    couple of days" (small talk, by the intent classifier's examples)."""
    new = date("check date", "in a couple of days", "check")
    old = date("date", "12th of September", None)
    facts = said(new, small_talk=True, text="Thanks. I'll check back in a couple of days.")
    assert why(new, in_force(old), facts) is Refusal.SMALL_TALK


def test_a_question_proposes_no_change() -> None:
    new = money("room budget", 250, "room")
    old = in_force(money("hotel budget", 180, "hotel"))
    asked = said(new, intent="ask", text="Is the room budget still 250 EUR?")
    assert why(new, old, asked) is Refusal.QUESTION


def test_a_statement_the_classifier_reads_as_ask_still_goes_to_a_reviewer() -> None:
    """MiniLM puts "The room budget is 180 EUR per night." 0.490 from an ask example and
    0.488 from a statement: without a question mark it is no question."""
    new = money("room budget", 180, "room")
    old = in_force(money("hotel budget", 150, "hotel"))
    stated = said(new, intent="ask", text="The room budget is 180 EUR per night.")
    assert why(new, old, stated) is None


def test_two_values_of_one_turn_are_not_one_replacing_the_other() -> None:
    new = date("heating date", "Friday", "heating")
    old = in_force(date("boiler date", "yesterday", "boiler"), turns=(1,))
    assert why(new, old, said(new), turn=1) is Refusal.SAME_TURN


@pytest.mark.parametrize("side", ["new", "old"])
@pytest.mark.parametrize("marker", ["past", "used to"])
def test_a_narrated_value_is_no_setting(side: str, marker: str) -> None:
    plain = date("dinner date", "tonight", "dinner")
    narrated = date("dinner date", "last week", "dinner", time_marker=marker)
    new, old = (narrated, plain) if side == "new" else (plain, narrated)
    assert why(new, in_force(old), said(new)) is Refusal.NARRATED


def test_a_price_the_assistant_quotes_is_no_limit_of_the_user() -> None:
    new = money("total budget", 2080, "total")
    old = in_force(money("stay budget", 6000, "stay"))
    assert why(new, old, said(new, intent="change", speaker="assistant")) is Refusal.PRICE


def test_what_the_assistant_reports_doing_is_no_change_of_the_users() -> None:
    """The trip's booking confirmation: "Booked: ICE Amsterdam to Munich on 8 September"
    against the fair's 12th of September."""
    new = date("booked date", "8 September", "booked", resolved="2024-09-08")
    old = in_force(date("date", "12th of September", None, resolved="2024-09-12"))
    assert why(new, old, said(new, speaker="assistant")) is Refusal.REPORT
    assert why(new, old, said(new, intent="confirm", speaker="assistant")) is Refusal.REPORT


@pytest.mark.parametrize(
    ("value", "resolved", "days_later", "passed"),
    [
        ("this month", "2024-07", 10, False),  # said July 21; the 31st
        ("this month", "2024-07", 11, True),  # August 1
        ("this week", "2024-07-22", 7, False),  # the week's Sunday, the 28th
        ("this week", "2024-07-22", 8, True),
        ("this weekend", "2024-07-27", 7, False),
        ("this weekend", "2024-07-27", 8, True),
        ("tonight", "2024-07-21", 0, False),
        ("tomorrow", "2024-07-22", 2, True),
        ("next year", "2025", 200, False),
    ],
)
def test_a_date_that_had_passed_is_an_occasion_over_not_a_value_to_change(
    value: str, resolved: str, days_later: int, passed: bool
) -> None:
    """A user's graph spans sessions: "cooking this month" said in July against "dinner
    tonight" in August is another occasion. ``DAY`` is Sunday 21 July 2024."""
    new = date("dinner date", "tonight", "dinner")
    old = in_force(date("dinner date", value, "dinner", resolved=resolved))
    facts = TurnFacts("", "user", DAY + days_later * 86_400, "state", 0.9, None, 0.0, (new,))
    assert (why(new, old, facts) is Refusal.PASSED) is passed


def test_a_choice_in_force_named_below_the_namers_bar_is_no_value_of_its_slot() -> None:
    new = SlotValue("user", "contact method", "emails", confidence=0.55)
    old = in_force(SlotValue("user", "contact method", "Jo", confidence=0.45))
    assert why(new, old, said(new)) is Refusal.UNSURE_CHOICE


def test_one_value_said_in_other_words_is_no_change() -> None:
    new = SlotValue("user", "girl", "two little girls", "number", 2, topic="girl")
    old = in_force(SlotValue("user", "kid", "2 kids", "number", 2, topic="girl"))
    assert why(new, old, said(new)) is Refusal.SAME_VALUE


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("pets", "alternative pets"),
        ("animals", "other animals you could consider"),
        ("the business", "just a business"),
    ],
)
def test_a_choice_in_force_with_more_words_around_it_is_no_replacement(
    before: str, after: str
) -> None:
    """LoCoMo's chit-chat pairs: the same thing qualified (a kind of it, an alternative to
    it) leaves the choice in force standing."""
    new = SlotValue("user", "amenities", after, confidence=0.57)
    old = in_force(SlotValue("user", "amenities", before, confidence=0.75))
    assert why(new, old, said(new)) is Refusal.QUALIFIES


def test_a_choice_that_shares_only_a_word_part_is_no_qualified_one() -> None:
    """Whole words: "petsitter" does not qualify "pets"."""
    new = SlotValue("user", "amenities", "a petsitter", confidence=0.57)
    old = in_force(SlotValue("user", "amenities", "pets", confidence=0.75))
    assert why(new, old, said(new)) is None


def test_tomorrow_said_on_two_days_is_two_dates() -> None:
    new = date("opening date", "tomorrow", "opening", resolved="2024-07-23")
    old = in_force(date("opening date", "tomorrow", "opening", resolved="2024-07-22"))
    assert why(new, old, said(new)) is None


def test_unrelated_topics_are_not_one_slot() -> None:
    """ "watch date" and "feel date" share only their kind word."""
    new = date("feel date", "today", "feel")
    assert (
        why(new, in_force(date("watch date", "this week", "watch")), said(new)) is Refusal.UNRELATED
    )


def test_values_of_two_kinds_are_not_one_slot() -> None:
    new = SlotValue("user", "session", "760 USD", "money", 760, "USD", topic="session")
    old = in_force(SlotValue("user", "session", "8 sessions", "number", 8, topic="session"))
    assert why(new, old, said(new)) is Refusal.OTHER_KIND


# -- in the graph: dropped changes are neither applied nor held ---------------------------
@pytest.fixture
def ctx() -> TaskContext:
    return TaskContext("u-1", embedder=SlotNameEmbedder())


def hotel(slot: str, number: float) -> SlotValue:
    return SlotValue(
        "user", slot, f"{number:g} EUR", "money", number, "EUR", "night", topic="hotel"
    )


def test_the_graph_holds_a_real_unsure_change_for_a_reviewer(ctx: TaskContext) -> None:
    ctx.observe(said(hotel("hotel budget", 180)), turn=0)
    applied = ctx.observe(said(hotel("room budget", 250)), turn=1)
    (item,) = applied.pending
    assert (item.existing_value, item.value) == ("180 EUR", "250 EUR")


def test_the_graph_drops_an_unsure_change_of_small_talk(ctx: TaskContext) -> None:
    ctx.observe(said(hotel("hotel budget", 180)), turn=0)
    applied = ctx.observe(said(hotel("room budget", 250), small_talk=True), turn=1)
    assert applied.pending == [] and applied.added == []
    (only,) = active_constraints(ctx.graph)
    assert (
        only.attr("value") == "180 EUR" == constraint_for(ctx.graph, "hotel budget").attr("value")
    )  # type: ignore[union-attr]


def test_the_graph_keeps_a_choice_in_force_against_its_qualified_form(ctx: TaskContext) -> None:
    """An unsure choice (named below the graph's review bar) that only qualifies the one
    in force is neither applied nor held; another unsure choice is held."""
    ctx.observe(said(SlotValue("user", "amenities", "pets", confidence=0.75)), turn=0)
    qualified = SlotValue("user", "amenities", "alternative pets", confidence=0.57)
    applied = ctx.observe(said(qualified), turn=1)
    assert applied.pending == [] and applied.added == []
    assert constraint_for(ctx.graph, "amenities").attr("value") == "pets"  # type: ignore[union-attr]
    other = SlotValue("user", "amenities", "a pool", confidence=0.57)
    (item,) = ctx.observe(said(other), turn=2).pending
    assert (item.existing_value, item.value) == ("pets", "a pool")
