"""Extraction with the real English pipeline and the real MiniLM embedder: who a value
belongs to, which slot it sets, free choices, intents and entities; bad input survives."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_core.context import TaskContext, constraint_for, default_extractor, extract_slots

pytestmark = pytest.mark.integration

AT = datetime(2024, 7, 21, 12, tzinfo=UTC).timestamp()


def _slots(text: str, speaker: str = "user") -> list[tuple[str, str, str]]:
    return [(s.subject, s.slot, s.value) for s in extract_slots(text, speaker=speaker, at=AT)]


def test_the_same_slot_from_two_phrasings() -> None:
    first = _slots("I want a hotel under 180 EUR per night for 4")
    assert ("user", "hotel budget", "180 EUR per night") in first
    assert ("user", "party size", "for 4") in first
    assert _slots("Actually my budget for the hotel is 200 euros max") == [
        ("user", "hotel budget", "200 euros")
    ]


def test_other_people_are_other_subjects() -> None:
    assert _slots("My wife wants a hotel under 300 EUR")[0][0] == "user's wife"
    assert _slots("my boss said the budget is 5000 dollars")[0][0] == "user's boss"
    # the assistant's "your" is the user
    assert _slots("Your order ORD-20240721-889 ships by standard courier.", "assistant")[0][0] == (
        "user"
    )


def test_a_free_choice_is_named_by_the_nearest_attribute() -> None:
    (choice,) = extract_slots("Never mind, make it SF Express cash on delivery")
    assert (choice.slot, choice.value, choice.kind) == (
        "delivery method",
        "SF Express cash on delivery",
        "choice",
    )
    assert 0.5 <= choice.confidence < 1.0


def test_a_choice_without_a_verb_is_named_by_what_it_answers() -> None:
    extractor = default_extractor()
    asked = "Pay by card now, or cash when you collect it?"
    (cash,) = extractor.extract("Cash.", reply_to=asked).slots
    assert (cash.slot, cash.value, cash.kind) == ("payment method", "Cash", "choice")
    assert extractor.extract("Cash.").slots == ()  # alone, one word names no attribute
    offered = "Delivery to your home, or pick it up at the store?"
    replayed = extractor.extract_many(
        [(offered, "assistant", None), ("Home delivery, thanks.", "user", None)]
    )
    assert [(s.slot, s.value) for s in replayed[1].slots] == [("delivery method", "Home delivery")]


def test_markers_and_negation() -> None:
    (flying,) = extract_slots("We are not flying on Friday", at=AT)
    assert flying.negated and flying.resolved == "2024-07-26"
    (ordered,) = extract_slots("I ordered a laptop last week", at=AT)
    assert ordered.time_marker == "past"


def test_turn_facts_of_the_seed_example() -> None:
    facts = default_extractor().extract("Check where my iPhone 15 I ordered yesterday is", at=AT)
    assert facts.goal == "track delivery"
    by_label = {e.label: e for e in facts.entities}
    assert by_label["iPhone 15"].kind == "product"
    assert by_label["order"].about == ("iPhone 15",)
    forget = default_extractor().extract("forget what I said about the hotel")
    assert (forget.intent, forget.forget_topic) == ("forget", "hotel")


@pytest.mark.parametrize(
    "text",
    ["", "   ", "🙂🙂🙂", "<b>hi</b> <script>alert(1)</script>", "Je voudrais une chambre à 90 euros",
     "x" * 100_000 + " 200 EUR", "A1-" * 30_000],
)  # fmt: skip
def test_bad_input_gives_facts_not_errors(text: str) -> None:
    facts = default_extractor().extract(text, at=AT)
    assert facts.text == text  # nothing lost: the turn is kept whole
    context = TaskContext()
    context.observe(facts, turn=0, memory_id="m0")
    context.observe(default_extractor().extract("my budget is 300 EUR", at=AT), turn=1)
    assert constraint_for(context.graph, "budget") is not None
    assert facts.parsed_chars <= 2_000
    assert all(len(s.value) <= 200 for s in facts.slots)


def test_the_speaker_with_someone_else_is_the_speaker() -> None:
    assert _slots("My wife and I are looking for a flat under 1500 euros a month")[0][0] == "user"


def test_a_change_verb_names_no_slot() -> None:
    assert _slots("I'd like to increase it to thirty pounds") == [
        ("user", "budget", "thirty pounds")
    ]
    assert _slots("can we push it to 1:15")[0][1] == "time"


def test_from_one_value_to_another_after_a_change_verb() -> None:
    (moved,) = extract_slots("Can you move it from Monday to Tuesday?", at=AT)
    assert (moved.subject, moved.value, moved.replaces) == ("user", "Tuesday", "Monday")
    assert len(extract_slots("I work from 9am to 5pm", at=AT)) == 1  # a range, one value


def test_a_window_of_times_is_one_value() -> None:
    assert [s.value for s in extract_slots("Yes please, 13:00 to 17:00.", at=AT)] == [
        "13:00 to 17:00"
    ]


def test_a_longer_one_is_no_end_of_a_value() -> None:
    (term,) = extract_slots("let's make that eighteen months, a longer one is better", at=AT)
    assert term.time_marker is None
    (old,) = extract_slots("I no longer need 3 rooms", at=AT)
    assert old.time_marker == "used to"
