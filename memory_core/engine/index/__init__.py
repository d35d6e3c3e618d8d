"""Per-session search structures: a FAISS vector index and an incremental BM25 index."""

from memory_core.engine.index.lexical import LexicalIndex, tokenize
from memory_core.engine.index.vector import VectorIndex

__all__ = ["LexicalIndex", "VectorIndex", "tokenize"]
