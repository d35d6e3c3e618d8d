"""Importance estimators: word surprisal in [0, 1], overrides and the registry."""

from __future__ import annotations

import pytest

from memory_core.engine.importance import (
    HALF_IMPORTANCE_SURPRISAL,
    IMPORTANCE_ESTIMATORS,
    constant,
    information_density,
    surprisal,
)


@pytest.mark.parametrize("text", ["ok", "Thanks!", "lol", "Sure.", "you and the"])
def test_filler_is_worth_little(text: str) -> None:
    assert information_density(text, {}) < 0.15


def test_rare_words_carry_more_than_common_ones() -> None:
    assert surprisal("the") == 0.0
    assert surprisal("you") < 0.1
    assert 0.0 < surprisal("house") < surprisal("lighthouse") < surprisal("zxqv")


def test_informative_beats_chatty() -> None:
    chatty = information_density("Hey! Good to see you! How have you been?", {})
    fact = information_density("User prefers window seats on flights to Berlin in May 2026", {})
    assert 0.0 <= chatty < fact <= 1.0


def test_repeating_a_word_adds_nothing() -> None:
    once = information_density("lighthouse", {})
    assert information_density("lighthouse lighthouse LIGHTHOUSE", {}) == once


def test_half_importance_at_the_documented_surprisal() -> None:
    words = ["zxqv", "qvzx", "vxzq"]  # unseen words: 7 each
    text = " ".join(words)
    total = 3 * surprisal("zxqv")
    assert information_density(text, {}) == pytest.approx(
        total / (total + HALF_IMPORTANCE_SURPRISAL)
    )


def test_declared_types_add_importance() -> None:
    plain = information_density("the blue car parked outside", {})
    typed = information_density("the blue car parked outside", {"type": "preference"})
    assert typed == pytest.approx(plain + 0.25)


def test_metadata_override_is_clamped() -> None:
    assert information_density("anything", {"importance": 0.3}) == 0.3
    assert information_density("anything", {"importance": 7}) == 1.0
    assert information_density("anything", {"importance": -2}) == 0.0
    assert information_density("ok", {"importance": True}) < 0.15  # bools are not numbers


def test_no_words_and_upper_bound() -> None:
    assert information_density("?!", {}) == 0.0
    loud = (
        "IMPORTANT: User Alice must never book flights before 9am, budget 500 EUR, "
        "allergic to peanuts, prefers Lufthansa"
    )
    assert information_density(loud, {}) > 0.65
    rare = " ".join(f"zq{chr(97 + i)}x" for i in range(26))  # 26 unseen words
    assert information_density(rare, {"type": "instruction"}) == 1.0


def test_registry() -> None:
    assert IMPORTANCE_ESTIMATORS["density"] is information_density
    assert IMPORTANCE_ESTIMATORS["constant"] is constant
    assert constant("anything", {}) == 0.5


@pytest.mark.parametrize("ack", ["ok", "lol", "thanks", "👍", "😂😂", "got it", "k", "np"])
def test_acknowledgements_start_weak(ack: str) -> None:
    fact = information_density("The user is allergic to penicillin.", {})
    assert information_density(ack, {}) < fact / 2  # "np", a rare word to wordfreq: 0.15
