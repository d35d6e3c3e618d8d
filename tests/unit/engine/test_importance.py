"""Importance estimators: density heuristic in [0, 1], overrides and the registry."""

from __future__ import annotations

import pytest

from memory_core.importance import IMPORTANCE_ESTIMATORS, constant, information_density


@pytest.mark.parametrize("text", ["ok", "Thanks!", "lol", "hmmm", "Sure."])
def test_filler_is_nearly_worthless(text: str) -> None:
    assert information_density(text, {}) == 0.05


def test_informative_beats_chatty() -> None:
    chatty = information_density("it was what it was", {})
    fact = information_density("User prefers window seats on flights to Berlin in May 2026", {})
    assert fact > chatty
    assert 0.0 <= chatty <= 1.0
    assert 0.0 <= fact <= 1.0


def test_cues_and_types_add_importance() -> None:
    plain = information_density("the blue car parked outside", {})
    # 0.2 + 0.3 * 4 distinct content words / 5 words + min(0.2, 0.04 * 4)
    assert plain == pytest.approx(0.2 + 0.3 * 4 / 5 + 0.16)
    cued = information_density("the blue car always outside", {})
    assert cued == pytest.approx(plain + 0.2)
    typed = information_density("the blue car parked outside", {"type": "preference"})
    assert typed == pytest.approx(plain + 0.25)


def test_metadata_override_is_clamped() -> None:
    assert information_density("anything", {"importance": 0.3}) == 0.3
    assert information_density("anything", {"importance": 7}) == 1.0
    assert information_density("anything", {"importance": -2}) == 0.0
    assert information_density("ok", {"importance": True}) == 0.05  # bools are not numbers


def test_no_words_and_upper_bound() -> None:
    assert information_density("?!", {}) == 0.1
    loud = (
        "IMPORTANT: User Alice must never book flights before 9am, budget 500 EUR, "
        "allergic to peanuts, prefers Lufthansa"
    )
    assert information_density(loud, {"type": "instruction"}) == 1.0


def test_registry() -> None:
    assert IMPORTANCE_ESTIMATORS["density"] is information_density
    assert IMPORTANCE_ESTIMATORS["constant"] is constant
    assert constant("anything", {}) == 0.5
