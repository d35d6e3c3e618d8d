"""Benchmark data: agent-memory-like texts with random or real (MiniLM) 384-d vectors.

Texts come from templates over small vocabularies, so BM25 sees a realistic mix of
frequent and rare terms. ``random`` pairs them with random unit vectors (the worst case
for approximate search: no clusters); ``minilm`` embeds them with the real model
through the persistent embedding cache, so only the first run pays for the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory_core.embedding.base import Embedder, embed_checked

DIM = 384

_PEOPLE = [
    "Alice",
    "Bruno",
    "Chen",
    "Dmitri",
    "Elena",
    "Farah",
    "Gustav",
    "Hana",
    "Ivan",
    "Jonas",
    "Keiko",
    "Lars",
    "Maya",
    "Nadia",
    "Omar",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zoe",
]
_THINGS = [
    "green tea",
    "oat milk",
    "window seat",
    "vegetarian meals",
    "dark mode",
    "weekly report",
    "quarterly budget",
    "database migration",
    "pump station",
    "login error",
    "flight to Lisbon",
    "hotel booking",
    "birthday party",
    "API rate limit",
    "memory leak",
    "invoice",
    "refund request",
    "delivery address",
    "phone number",
    "meeting notes",
    "design review",
    "test coverage",
    "docker image",
    "backup schedule",
    "contract renewal",
    "sales forecast",
    "onboarding checklist",
    "travel approval",
    "expense claim",
    "training plan",
    "support ticket",
    "shipping delay",
    "password reset",
    "team offsite",
    "coffee order",
    "gym membership",
    "parking permit",
    "dentist appointment",
    "insurance claim",
    "tax return",
]
_PLACES = [
    "Berlin",
    "Lisbon",
    "Osaka",
    "Nairobi",
    "Toronto",
    "the office",
    "home",
    "the warehouse",
    "the data centre",
    "the client site",
    "Madrid",
    "Seoul",
    "Oslo",
    "Cairo",
    "Lima",
    "the lab",
    "the cafe",
    "the airport",
]
_TIMES = [
    "on Monday",
    "on Tuesday",
    "on Wednesday",
    "on Thursday",
    "on Friday",
    "next week",
    "this morning",
    "tonight",
    "before the deadline",
    "after lunch",
    "at 9am",
    "at 3pm",
    "in March",
    "in October",
    "tomorrow",
]
_TEMPLATES = (
    "{p} prefers {t} {w} in {l}",
    "{p} asked to move the {t} to {l} {w}",
    "Decision: the {t} for {p} is approved, budget {n} euros",
    "{p} reported a problem with the {t} at {l}, ticket {n}",
    "Remember that {p} is allergic to {t}",
    "The {t} failed {w} with error code {n}",
    "{p} wants the {t} delivered to {l} {w}",
    "Note: {p} changed the {t} deadline to {w}",
    "{p} never uses the {t}; use the backup plan {n} instead",
    "Meeting with {p} in {l} {w} about the {t}",
    "{p} confirmed the {t} costs {n} dollars",
    "Reminder for {p}: {t} at {l} {w}, reference {n}",
)


@dataclass(slots=True, frozen=True)
class Dataset:
    """Memories to load and queries to ask, with their vectors (unit rows, float32)."""

    name: str
    texts: list[str]
    vectors: np.ndarray
    query_texts: list[str]
    query_vectors: np.ndarray


def synthetic_texts(n: int, seed: int) -> list[str]:
    """``n`` distinct memory-like sentences, reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    picks = [rng.integers(0, len(pool), n) for pool in (_TEMPLATES, _PEOPLE, _THINGS, _PLACES)]
    times = rng.integers(0, len(_TIMES), n)
    numbers = rng.permutation(n) + 100
    return [
        _TEMPLATES[picks[0][i]].format(
            p=_PEOPLE[picks[1][i]],
            t=_THINGS[picks[2][i]],
            l=_PLACES[picks[3][i]],
            w=_TIMES[times[i]],
            n=int(numbers[i]),
        )
        for i in range(n)
    ]


def random_unit_vectors(n: int, seed: int, dim: int = DIM) -> np.ndarray:
    """Gaussian rows scaled to unit length: uniformly spread directions."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def random_dataset(n: int, n_queries: int, seed: int = 7) -> Dataset:
    texts = synthetic_texts(n + n_queries, seed)
    vectors = random_unit_vectors(n + n_queries, seed + 1)
    return Dataset("random", texts[:n], vectors[:n], texts[n:], vectors[n:])


def minilm_dataset(n: int, n_queries: int, embedder: Embedder, seed: int = 7) -> Dataset:
    """Same texts, real embeddings (pass a ``CachedEmbedder`` to pay for the model once)."""
    texts = synthetic_texts(n + n_queries, seed)
    vectors = embed_checked(embedder, texts)
    return Dataset("minilm", texts[:n], vectors[:n], texts[n:], vectors[n:])
