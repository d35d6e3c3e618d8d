"""Embedders by name: the one place a name (``--embedder``, ``$ATLAS_DASHBOARD_EMBEDDER``,
a sweep spec) becomes an embedder.

Each name gives one process-wide instance behind a cache, so the CLI, the harness and the
dashboard embed a text once per process and get the same vector for it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from memory_core.embedding.base import Embedder
from memory_core.embedding.cache import CachedEmbedder
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.embedding.minilm import default_embedder
from memory_core.errors import InputError

DEFAULT_EMBEDDER = "minilm"


@cache
def _hashing() -> Embedder:
    return CachedEmbedder(HashingEmbedder())


EMBEDDERS: dict[str, Callable[[], Embedder]] = {"minilm": default_embedder, "hashing": _hashing}
"""``minilm``: the real model behind the persistent cache in the data folder (default).
``hashing``: the fast deterministic fake, for tests and smoke runs only."""


def make_embedder(name: str = DEFAULT_EMBEDDER, *, field: str = "embedder") -> Embedder:
    """The embedder registered as ``name``; ``field`` names the setting in the error."""
    factory = EMBEDDERS.get(name)
    if factory is None:
        raise InputError(field, f"must be one of {', '.join(EMBEDDERS)}, got {name!r}")
    return factory()
