"""MiniLM's bfloat16 twin (``embedding.bfloat16``): the context graph's larger phrase calls go
through it (``embedding.phrase_twin``).
Each vector is within float-rounding-of-bf16 of the float32 model's, in its own row however
the texts were batched, and only a MiniLM embedder gets the twin (others keep their own)."""

from __future__ import annotations

import numpy as np
import pytest

from memory_core import MiniLMEmbedder
from memory_core.embedding import bfloat16, phrase_twin
from memory_core.embedding.base import embed_checked
from memory_core.embedding.cache import CachedEmbedder
from memory_core.embedding.hashing import HashingEmbedder

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not bfloat16.available(), reason="no native bf16 on this processor"),
]

TEXTS = [
    "Thanks",
    "switch it to SF Express",
    "I'd like a window seat",
    "ok",
    "There are stalls seats at 65 and circle seats at 45, which would you like? Stalls",
    "take off",
    "hotel budget",
]


def test_vectors_are_the_float32_models_up_to_bf16_rounding_in_their_own_rows() -> None:
    twin = bfloat16.BFloat16MiniLM(batch_size=3)  # three batches: the texts are regrouped
    together = twin.embed(TEXTS)
    alone = np.stack([twin.embed([text])[0] for text in TEXTS])
    full = MiniLMEmbedder().embed(TEXTS)
    assert together.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.abs(together - alone).max() < 1e-2
    assert (np.sum(together * full, axis=1) > 0.999).all()
    assert twin.embed([]).shape == (0, 384)


def test_only_minilm_gets_the_shared_twin() -> None:
    bare = phrase_twin.phrase_memory(MiniLMEmbedder(), 100)
    cached = phrase_twin.phrase_memory(CachedEmbedder(MiniLMEmbedder()), 100)
    assert bare is cached  # one memory for the process
    assert bare.name == phrase_twin.NAME
    hashing = HashingEmbedder()
    own = phrase_twin.phrase_memory(hashing, 100)
    assert own is not phrase_twin.phrase_memory(hashing, 100)
    assert own.name == hashing.name
    assert np.array_equal(own.embed(["take off"]), embed_checked(hashing, ["take off"]))
