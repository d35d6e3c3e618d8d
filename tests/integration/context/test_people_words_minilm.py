"""The people classifier over MiniLM reads its words on onnxruntime (session 14): the same
labels as torch float32, similarities within 1e-5, for its examples and for nouns a chat
puts in a subject."""

from __future__ import annotations

import numpy as np
import pytest

from memory_core.context.extract import labels
from memory_core.embedding.minilm import MiniLMEmbedder
from memory_core.embedding.phrase_twin import word_memory
from memory_core.embedding.prototypes import PrototypeClassifier
from memory_core.embedding.recent import RecentEmbedder

pytestmark = pytest.mark.integration

NOUNS = ["aunt", "crew", "city", "landlord", "sister-in-law", "dentist", "the team", "insurer"]


def test_the_same_people_decisions_as_torch_float32() -> None:
    torch = MiniLMEmbedder()
    words = word_memory(torch, 100)
    assert isinstance(words, RecentEmbedder)
    ours = PrototypeClassifier(words, labels.PEOPLE_EXAMPLES)
    theirs = PrototypeClassifier(torch, labels.PEOPLE_EXAMPLES)
    assert np.abs(ours.vectors() - theirs.vectors()).max() < 1e-5
    for a, b in zip(ours.nearest_many(NOUNS), theirs.nearest_many(NOUNS), strict=True):
        assert a.label == b.label
        assert a.similarity == pytest.approx(b.similarity, abs=1e-5)
