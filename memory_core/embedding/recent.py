"""Bounded memories of recent results, the least recently used let go first.

``RecentCache`` is the memory (thread-safe, by text); ``RecentEmbedder`` an embedder that
keeps the vectors it computed in one, so a caller can embed many texts in one model call
(``prime``) and look each one up later, and a long-running agent embeds a phrasing it met
before ("make it", "Thanks") once. Unlike ``CachedEmbedder`` (every vector, optionally on
disk) it holds a bounded number of texts, in memory only: the context graph's candidate
phrases and the contradiction judge's slot readings.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

import numpy as np

from memory_core.embedding.base import Embedder, embed_checked

V = TypeVar("V")


class RecentCache(Generic[V]):
    """Up to ``capacity`` values by text; a lookup marks a text used, and a full memory lets
    go of the texts used longest ago."""

    __slots__ = ("_items", "_lock", "capacity")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def missing(self, texts: Iterable[str]) -> list[str]:
        """The texts not held, each once, in order."""
        with self._lock:
            return list(dict.fromkeys(t for t in texts if t not in self._items))

    def get_many(self, texts: Sequence[str]) -> list[V | None]:
        """The value of each text (None when not held), marking the held ones used."""
        found: list[V | None] = []
        with self._lock:
            for text in texts:
                value = self._items.get(text)
                if value is not None:
                    self._items.move_to_end(text)
                found.append(value)
        return found

    def clear(self) -> None:
        """Let go of everything (a benchmark's cold start)."""
        with self._lock:
            self._items.clear()

    def put_many(self, items: Iterable[tuple[str, V]]) -> None:
        pairs = list(items)  # computed before the lock is taken
        with self._lock:
            self._items.update(pairs)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)


class RecentEmbedder:
    """An embedder with a ``RecentCache`` of the vectors it computed. Thread-safe: model
    calls run outside the cache's lock."""

    __slots__ = ("_inner", "_vectors")

    def __init__(self, inner: Embedder, *, capacity: int) -> None:
        self._inner = inner
        self._vectors: RecentCache[np.ndarray] = RecentCache(capacity)

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def clear(self) -> None:
        """Let go of every vector (a benchmark's cold start)."""
        self._vectors.clear()

    def prime(self, texts: Sequence[str]) -> None:
        """Embed the texts not held, in one call."""
        missing = self._vectors.missing(texts)
        if missing:
            self._vectors.put_many(zip(missing, embed_checked(self._inner, missing), strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.prime(texts)
        found = [v for v in self._vectors.get_many(texts) if v is not None]
        if len(found) < len(texts):  # more texts than the memory holds
            return embed_checked(self._inner, list(texts))
        return np.stack(found)
