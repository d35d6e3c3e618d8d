"""Text embedders: a protocol, the offline MiniLM default, a hashing fake and a cache."""

from memory_core.embedding.base import Embedder, check_vectors
from memory_core.embedding.cache import CachedEmbedder, EmbeddingCache
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.embedding.minilm import MiniLMEmbedder, default_embedder
from memory_core.embedding.registry import DEFAULT_EMBEDDER, EMBEDDERS, make_embedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "check_vectors",
    "default_embedder",
    "make_embedder",
]
