"""Is this input a request to forget what was just said? Decided by meaning, not by words.

The input's embedding is compared with a few example requests and a few look-alikes that
are not requests ("remember this", "don't forget to ..."): it is a request when its nearest
request example is at least ``AtlasConfig.forget_intent_similarity`` close and closer than
every look-alike. A model judges paraphrases a word list would miss, and reads "don't
forget to book the train" as the reminder it is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory_core.embedding.base import Embedder, embed_checked
from memory_core.embedding.prototypes import PrototypeClassifier
from memory_core.errors import InputError

FORGET_EXAMPLES: tuple[str, ...] = (
    "forget what I just said",
    "forget that",
    "please forget that",
    "never mind, forget it",
    "scratch that",
    "disregard what I just told you",
    "delete what I just said from your memory",
)
"""Requests to forget the last thing said, in the forms users type them."""
NOT_FORGET_EXAMPLES: tuple[str, ...] = (
    "remember this",
    "don't forget to do it",
    "I forgot it at home",
    "I keep forgetting things",
    "what did I just say?",
)
"""Look-alikes that are not requests to forget: reminders, statements, questions."""


class IntentDetector:
    """Nearest-example test of an input against one intent's examples and look-alikes
    (a two-label ``PrototypeClassifier``)."""

    __slots__ = ("_classifier", "examples", "look_alikes")

    def __init__(
        self,
        embedder: Embedder,
        examples: Sequence[str] = FORGET_EXAMPLES,
        look_alikes: Sequence[str] = NOT_FORGET_EXAMPLES,
    ) -> None:
        if not examples:
            raise InputError("examples", "an intent needs at least one example")
        self.examples = tuple(examples)
        self.look_alikes = tuple(look_alikes)
        labels = {_INTENT: self.examples}
        if self.look_alikes:
            labels[_OTHER] = self.look_alikes
        self._classifier = PrototypeClassifier(embedder, labels)

    @property
    def embedder(self) -> Embedder:
        return self._classifier.embedder

    def similarity(self, text: str, vector: np.ndarray | None = None) -> tuple[float, float]:
        """Cosine of ``text`` (or its unit ``vector``) to the nearest example and to the
        nearest look-alike (-1 when there are none)."""
        query = embed_checked(self._classifier.embedder, [text])[0] if vector is None else vector
        best = self._classifier.best_per_label(query)
        return best[_INTENT], best.get(_OTHER, -1.0)

    def matches(self, text: str, threshold: float, vector: np.ndarray | None = None) -> bool:
        """At least ``threshold`` close to an example, and closer to it than to any look-alike."""
        intent, other = self.similarity(text, vector)
        return intent >= threshold and intent > other


_INTENT = "intent"
_OTHER = "look-alike"
