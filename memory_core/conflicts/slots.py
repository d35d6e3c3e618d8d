"""Which one-value attribute a claim fills, read by MiniLM: slot typing for the claim judge.

The claim judge compares values it can read off the surface (amounts, dates, names). A
person sees more: "barista at a café" and "head chef at an Italian restaurant" are two
values of one attribute (the job), "early riser" and "night owl" two values of the sleep
schedule, "married" and "single" two of the relationship status. Which attribute a
sentence is about is what a sentence embedding captures well (topic), so each claim is
typed by its nearest slot among a few example sentences per slot
(:class:`~memory_core.embedding.prototypes.PrototypeClassifier` over all-MiniLM-L6-v2).
The examples describe kinds of attributes people hold one value of at a time; they are
not taken from, nor tuned on, any labelled set's wording. The value is what is left of the
sentence once the words naming the attribute are removed (see ``claim_rules``).

Sentence vectors are cached per text and computed in one batch per pair (a stored memory
is judged many times; only new text costs a model run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memory_core.embedding.base import Embedder, embed_checked
from memory_core.embedding.prototypes import PrototypeClassifier
from memory_core.embedding.recent import RecentCache

SLOT_EXAMPLES: dict[str, tuple[str, ...]] = {
    "home": ("I live in a small town.", "My home is in the city.", "I moved to a new city."),
    "hometown": ("I'm originally from another country.", "I was born and raised abroad."),
    "job": (
        "I work as a nurse.",
        "My job is teaching.",
        "I'm unemployed and looking for work.",
        "I just started a new job at a company.",
    ),
    "age": ("I am 34 years old.", "I just turned forty.", "My age is twenty."),
    "relationship": ("I'm married.", "I'm single and not dating.", "I have a girlfriend."),
    "children": ("I have two kids.", "We don't have any children."),
    "siblings": ("I have an older brother.", "I'm an only child with no siblings."),
    "alive": ("My grandmother is still alive.", "My grandfather passed away."),
    "diet": ("I'm vegetarian.", "I eat meat."),
    "sleep": ("I'm an early riser and wake up at dawn.", "I'm a night owl and stay up late."),
    "personality": ("I'm an introvert.", "I'm a very outgoing and social person."),
    "seat": ("I prefer a window seat on planes.", "I always book an aisle seat."),
    "commute": ("I cycle to work.", "I drive to the office.", "I take the train to work."),
    "height": ("I'm six feet tall.", "My height is 170 cm."),
    "weight": ("I weigh 70 kilos.", "My weight is 150 pounds."),
    "pay": ("I earn 50k a year.", "My salary is 3,000 a month.", "I'm paid by the hour."),
    "degree": ("I studied history at university.", "My degree is in engineering."),
    "vehicle": ("I drive a Toyota.", "I don't own a car."),
    "phone": ("I use an iPhone.", "My phone is an Android."),
    "budget": ("My budget is 5,000 euros.", "The spending limit is 300 dollars."),
}
"""A few example sentences per one-value attribute: what a claim about it sounds like."""

SLOT_WORDS: dict[str, str] = {
    "home": "live living home house city town moved move based",
    "hometown": "originally born raised grew hometown from",
    "job": "work job working career employed start started position",
    "age": "age old year turned turn birthday",
    "relationship": "relationship status dating",
    "children": "kid kids child children",
    "siblings": "sibling siblings brother sister",
    "alive": "alive living",
    "diet": "eat eating diet food",
    "sleep": "sleep wake bed morning night",
    "personality": "person personality people",
    "seat": "seat book prefer flight plane",
    "commute": "commute work office get",
    "height": "tall height",
    "weight": "weigh weight",
    "pay": "earn salary pay paid make",
    "degree": "studied study degree university school",
    "vehicle": "car drive vehicle own",
    "phone": "phone use",
    "budget": "budget limit cap spend",
}
"""Words that name each attribute rather than give its value ("live" in "I live in Lyon")."""

MIN_SLOT_SIMILARITY = 0.5
"""Cosine to a slot's nearest example at which a claim is about that slot."""
MIN_SLOT_MARGIN = 0.04
"""How much nearer the winning slot must be than the runner-up."""


@dataclass(frozen=True, slots=True)
class SlotReading:
    """The slot a piece of text fills (``""`` when none is near enough) and its vector."""

    slot: str
    similarity: float
    vector: np.ndarray


class SlotReader:
    """Types texts by slot with a sentence embedder; readings kept per text (the most
    recently used ``capacity``), batched.

    Thread-safe: model calls run outside the memory's lock.
    """

    __slots__ = ("_cache", "_classifier")

    def __init__(self, embedder: Embedder, *, capacity: int = 16384) -> None:
        self._classifier = PrototypeClassifier(embedder, SLOT_EXAMPLES)
        self._cache: RecentCache[SlotReading] = RecentCache(capacity)

    @property
    def embedder(self) -> Embedder:
        return self._classifier.embedder

    def read(self, texts: Sequence[str]) -> list[SlotReading]:
        """The reading of every text; the texts not seen before are embedded in one call."""
        missing = self._cache.missing(texts)
        if missing:
            vectors = embed_checked(self._classifier.embedder, missing)
            self._cache.put_many(zip(missing, map(self._reading, vectors), strict=True))
        found = self._cache.get_many(texts)
        # a text evicted by a concurrent batch is read again alone
        return [
            r if r is not None else self._reading(embed_checked(self.embedder, [t])[0])
            for t, r in zip(texts, found, strict=True)
        ]

    def unread(self, texts: Sequence[str]) -> list[str]:
        """The texts :meth:`read` would embed (not kept), each once."""
        return self._cache.missing(texts)

    def prime(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Take vectors already computed by ``model`` (the atlas's embedder) for ``texts``,
        so they cost no model run here; ignored unless ``model`` is this reader's model."""
        if model != self.embedder.name:
            return
        new = set(self._cache.missing(texts))
        self._cache.put_many(
            (t, self._reading(np.asarray(v, dtype=np.float32)))
            for t, v in zip(texts, vectors, strict=True)
            if t in new
        )

    def _reading(self, vector: np.ndarray) -> SlotReading:
        nearest = self._classifier.nearest_vector(vector)
        near = nearest.similarity >= MIN_SLOT_SIMILARITY and nearest.margin >= MIN_SLOT_MARGIN
        return SlotReading(nearest.label if near else "", nearest.similarity, vector)
