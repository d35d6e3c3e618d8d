"""Nearest labelled prototype: classify a text by the closest of a few labelled examples.

A handful of example sentences per label, embedded once on first use; a text belongs to
the label of its nearest example. A model judges paraphrases that a word list would miss,
and a new label is a few more examples, not new code. Used by the agent's forget-request
detector (``agent/intent.py``) and by the task context graph (``context/``) for turn
intents, goals and slot names.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory_core.embedding.base import Embedder, embed_checked
from memory_core.errors import InputError


@dataclass(frozen=True, slots=True)
class Nearest:
    """The nearest label of a text, how close its nearest example is, and the runner-up's."""

    label: str
    similarity: float
    runner_up: str | None
    runner_up_similarity: float

    @property
    def margin(self) -> float:
        """How much closer the winner is than the best other label (1 when there is none)."""
        return self.similarity - self.runner_up_similarity if self.runner_up else 1.0


class PrototypeClassifier:
    """Labels, each with example texts; the examples are embedded once, on first use.

    Thread-safe: the example matrix is built under a lock, then only read.
    """

    __slots__ = ("_embedder", "_labels", "_lock", "_starts", "_vectors", "examples")

    def __init__(self, embedder: Embedder, examples: Mapping[str, Sequence[str]]) -> None:
        if not examples or any(not texts for texts in examples.values()):
            raise InputError("examples", "every label needs at least one example text")
        self._embedder = embedder
        self.examples = {label: tuple(texts) for label, texts in examples.items()}
        self._labels = list(self.examples)
        # each label's examples are consecutive rows: row where each label's examples start
        sizes = [len(texts) for texts in self.examples.values()]
        self._starts = np.cumsum([0, *sizes[:-1]])
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def vectors(self) -> np.ndarray:
        """The examples' unit vectors, in label order (embedded on the first call)."""
        if self._vectors is None:
            with self._lock:
                if self._vectors is None:
                    texts = [t for texts in self.examples.values() for t in texts]
                    self._vectors = embed_checked(self._embedder, texts)
        return self._vectors

    def best_per_label(self, vector: np.ndarray) -> dict[str, float]:
        """Cosine of a unit ``vector`` to each label's nearest example."""
        best = np.maximum.reduceat(self.vectors() @ vector, self._starts)
        return dict(zip(self._labels, best.tolist(), strict=True))

    def nearest(self, text: str, vector: np.ndarray | None = None) -> Nearest:
        """The label of the nearest example to ``text`` (or to its unit ``vector``)."""
        query = embed_checked(self._embedder, [text])[0] if vector is None else vector
        return self.nearest_vector(query)

    def nearest_vector(self, vector: np.ndarray) -> Nearest:
        return nearest_of(self.best_per_label(vector))

    def nearest_many(self, texts: Sequence[str]) -> list[Nearest]:
        """``nearest`` for a batch: one embedding call."""
        if not texts:
            return []
        vectors = embed_checked(self._embedder, list(texts))
        return [self.nearest_vector(v) for v in vectors]


def nearest_of(scores: Mapping[str, float]) -> Nearest:
    """The best of per-label scores (``best_per_label``'s, or a subset of them: a caller
    that reads some labels apart from the others ranks the rest with this)."""
    if not scores:
        raise InputError("scores", "need at least one label")
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    label, similarity = ranked[0]
    if len(ranked) == 1:
        return Nearest(label, similarity, None, -1.0)
    return Nearest(label, similarity, ranked[1][0], ranked[1][1])
