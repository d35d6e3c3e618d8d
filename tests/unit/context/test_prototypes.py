"""The nearest-labelled-prototype classifier both the agent's forget detector and the
context graph's intent, goal and slot namers use."""

from __future__ import annotations

import pytest

from memory_core.embedding.hashing import HashingEmbedder
from memory_core.embedding.prototypes import PrototypeClassifier
from memory_core.errors import InputError


def test_an_example_is_its_own_label() -> None:
    classifier = PrototypeClassifier(
        HashingEmbedder(64),
        {"greet": ("hello there", "good morning"), "leave": ("goodbye now", "see you later")},
    )
    for label, texts in classifier.examples.items():
        for text in texts:
            near = classifier.nearest(text)
            assert near.label == label and near.similarity == pytest.approx(1.0, abs=1e-5)
            assert near.margin > 0
    assert [n.label for n in classifier.nearest_many(["hello there", "see you later"])] == [
        "greet",
        "leave",
    ]
    assert classifier.nearest_many([]) == []


def test_one_label_has_no_runner_up() -> None:
    near = PrototypeClassifier(HashingEmbedder(32), {"only": ("a b c",)}).nearest("a b")
    assert near.runner_up is None and near.margin == 1.0


def test_a_label_without_examples_is_refused() -> None:
    with pytest.raises(InputError, match="examples"):
        PrototypeClassifier(HashingEmbedder(32), {"empty": ()})
