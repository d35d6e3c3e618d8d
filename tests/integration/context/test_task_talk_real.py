"""Kinds of task talk through the real parser and MiniLM: a value said with the one it
replaces, an offer the user accepts, a change the assistant records, a turn that forgets
one thing and states another, whose value a possessive names."""

from __future__ import annotations

from memory_core.context.extract.turn import default_extractor, extract_slots
from memory_core.context.query import active_constraints
from memory_core.context.replay import TurnInput, replay

AT = 1_721_563_200.0  # 2024-07-21


def talk(*turns: tuple[str, str]) -> list[tuple[str, str]]:
    inputs = [TurnInput(str(i), who, text, AT) for i, (who, text) in enumerate(turns)]
    context, _ = replay(inputs, default_extractor())
    return sorted(
        (str(n.attr("slot")), str(n.attr("value"))) for n in active_constraints(context.graph)
    )


def test_a_value_said_instead_of_another() -> None:
    (later,) = extract_slots("Could we make it 8 instead of 7:30?")
    assert (later.value, later.replaces) == ("8", "7:30")
    (office,) = [v for v in extract_slots("send it to my office instead of home") if v.replaces]
    assert (office.value, office.replaces) == ("my office", "home")
    in_force = talk(
        ("user", "Book a table for four at 7:30 pm, please."),
        ("user", "Could we make it 8 instead of 7:30?"),
    )
    assert ("table time", "8") in in_force or any(v == "8" for _, v in in_force), in_force
    assert not any("7:30" in v for _, v in in_force)


def test_an_offer_the_user_accepts_is_in_force() -> None:
    in_force = talk(
        ("user", "Can you get us a table on Saturday night for five?"),
        ("assistant", "They have 9:15 for five on Saturday."),
        ("user", "grab it"),
    )
    assert any(v == "9:15" for _, v in in_force), in_force


def test_the_reply_to_a_change_records_it() -> None:
    in_force = talk(
        ("user", "I need a rental car from 2 March, returning on the 9th."),
        ("user", "Actually, change the return to a later day."),
        ("assistant", "Done: return on 12 March."),
    )
    assert ("return date", "12 March") in in_force, in_force
    assert not any(v == "the 9th" for _, v in in_force)


def test_a_turn_that_forgets_something_still_states_the_rest() -> None:
    in_force = talk(
        ("user", "I'm after a new telly, 55 inch, OLED, no more than £1,300."),
        ("user", "Actually, make it 65 inch."),
        ("user", "Too much. Back to 55. And forget OLED, mini-LED is fine too."),
    )
    assert any("55" in v for _, v in in_force) and not any("65" in v for _, v in in_force)
    assert not any("OLED" in v for _, v in in_force), in_force


def test_a_possessed_thing_is_not_someone_else() -> None:
    (returning,) = extract_slots("Also, return on the 10th instead, our flight moved.", at=AT)
    assert returning.subject == "user" and returning.resolved == "2024-07-10"
    (wifes,) = extract_slots("my wife wants a room under 300 euros")
    assert wifes.subject == "user's wife"
