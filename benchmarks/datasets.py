"""Benchmark data: agent-memory-like texts with random or real (MiniLM) 384-d vectors.

Texts come from templates over small vocabularies, so BM25 sees a realistic mix of
frequent and rare terms. Each text is a distinct combination of template, person, thing,
place and time (every template uses all four), so no two differ only in their numbers:
the engine folds such lines into one family summary (``memory_core.engine.families``),
and a "100k" atlas of them would hold far fewer memories. ``random`` pairs them with random unit vectors (the worst case
for approximate search: no clusters); ``minilm`` embeds them with the real model
through the persistent embedding cache, so only the first run pays for the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory_core import AtlasConfig
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
    "Decision: the {t} for {p} in {l} is approved {w}, budget {n} euros",
    "{p} reported a problem with the {t} at {l} {w}, ticket {n}",
    "Remember that {p} cannot stand the {t} in {l} {w}",
    "The {t} {p} set up in {l} failed {w} with error code {n}",
    "{p} wants the {t} delivered to {l} {w}",
    "Note: {p} changed the {t} deadline in {l} to {w}",
    "{p} never uses the {t} in {l} {w}; use the backup plan {n} instead",
    "Meeting with {p} in {l} {w} about the {t}",
    "{p} confirmed {w} that the {t} in {l} costs {n} dollars",
    "Reminder for {p}: {t} at {l} {w}, reference {n}",
)
_POOLS = (_TEMPLATES, _PEOPLE, _THINGS, _PLACES, _TIMES)
MAX_TEXTS = int(np.prod([len(pool) for pool in _POOLS]))
"""Distinct combinations: how many texts ``synthetic_texts`` can make."""


@dataclass(slots=True, frozen=True)
class Dataset:
    """Memories to load and queries to ask, with their vectors (unit rows, float32)."""

    name: str
    texts: list[str]
    vectors: np.ndarray
    query_texts: list[str]
    query_vectors: np.ndarray


def synthetic_texts(n: int, seed: int) -> list[str]:
    """``n`` memory-like sentences, reproducible from ``seed``, distinct in their words
    (combinations drawn without replacement), not only in their numbers."""
    if not 0 <= n <= MAX_TEXTS:
        raise ValueError(f"n must be between 0 and {MAX_TEXTS:,} distinct texts, got {n}")
    rng = np.random.default_rng(seed)
    combos = rng.choice(MAX_TEXTS, size=n, replace=False)
    tpl, people, things, places, times = np.unravel_index(combos, [len(p) for p in _POOLS])
    numbers = rng.permutation(n) + 100
    return [
        _TEMPLATES[tpl[i]].format(
            p=_PEOPLE[people[i]],
            t=_THINGS[things[i]],
            l=_PLACES[places[i]],
            w=_TIMES[times[i]],
            n=int(numbers[i]),
        )
        for i in range(n)
    ]


def copy_tag(k: int) -> str:
    """The ``k``-th of distinct word suffixes (" (noted by Alice in Berlin on Monday)"),
    for benchmarks that store a text several times: copies that differ only in numbers,
    or not at all, would fold into one family summary in one session."""
    shape = (len(_PEOPLE), len(_PLACES), len(_TIMES))
    if not 0 <= k < int(np.prod(shape)):
        raise ValueError(f"k must be between 0 and {int(np.prod(shape)) - 1}, got {k}")
    person, place, time = (int(i) for i in np.unravel_index(k, shape))
    return f" (noted by {_PEOPLE[person]} in {_PLACES[place]} {_TIMES[time]})"


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
    """Same texts, real embeddings (pass a ``CachedEmbedder`` to pay for the model once).

    Texts that differ in one word can embed closer than the engine's ``merge_threshold``
    ("... delivered to Nairobi on Tuesday" / "... in October", cosine 0.98) and would merge
    into one memory; a few more texts are drawn and the later of each such pair skipped."""
    total = n + n_queries
    texts = synthetic_texts(total + total // 20 + 32, seed)
    vectors = embed_checked(embedder, texts)
    keep = apart(vectors, AtlasConfig().merge_threshold)[:total]
    if len(keep) < total:
        raise ValueError(f"only {len(keep)} of the {total} texts embed apart, n={n}")
    texts, vectors = [texts[i] for i in keep], vectors[keep]
    return Dataset("minilm", texts[:n], vectors[:n], texts[n:], vectors[n:])


def apart(vectors: np.ndarray, threshold: float, block: int = 1024) -> np.ndarray:
    """Rows to keep, in order: each below ``threshold`` cosine to every kept row before it
    (unit rows; similarities in blocks of ``block`` rows, a loop only over rows that have
    a close one before them)."""
    dropped = np.zeros(len(vectors), dtype=bool)
    for start in range(0, len(vectors), block):
        stop = min(start + block, len(vectors))
        close = vectors[start:stop] @ vectors[:stop].T >= threshold
        close &= np.arange(stop)[None, :] < np.arange(start, stop)[:, None]  # earlier rows only
        for row in np.flatnonzero(close.any(axis=1)).tolist():
            dropped[start + row] = bool((close[row] & ~dropped[:stop]).any())
    return np.flatnonzero(~dropped)
