"""MiniLM's batches grouped by token count (``minilm._batches_by_tokens``): each text's
vector comes back in its own row, the same as when it is embedded alone (up to float
rounding), however the texts were regrouped."""

from __future__ import annotations

import numpy as np
import pytest

from memory_core import MiniLMEmbedder

pytestmark = pytest.mark.integration

TEXTS = [
    "Thanks",
    "I'd like a hotel under 180 EUR per night for the four of us, close to the station.",
    "make it SF Express",
    "ok",
    "Which districts? At least 55 square metres, and a balcony if there is one available.",
    "switch to annual billing",
    "Video call",
    "My wife wants the window seat, and I'll take the aisle one next to her if it's free.",
    "need an SUV",
]


def test_texts_regrouped_by_tokens_come_back_in_their_own_rows() -> None:
    embedder = MiniLMEmbedder(batch_size=3)  # three batches: the long texts are regrouped
    together = embedder.embed(TEXTS)
    alone = np.stack([embedder.embed([text])[0] for text in TEXTS])
    assert together.shape == (len(TEXTS), embedder.dim)
    assert np.abs(together - alone).max() < 1e-5


def test_a_small_call_runs_on_one_torch_thread_and_gives_the_threads_back() -> None:
    import torch

    from memory_core.embedding import minilm

    embedder = MiniLMEmbedder()
    default = minilm._default_threads()
    many = embedder.embed(TEXTS * 2)  # above ONE_THREAD_TEXTS: torch's own threads
    seen: list[int] = []
    forward = minilm._load_model("cpu").forward

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return forward(*args, **kwargs)

    model = minilm._load_model("cpu")
    model.forward = spy
    try:
        few = embedder.embed(TEXTS[:2])
    finally:
        del model.forward
    assert seen == [1]
    assert torch.get_num_threads() == default
    assert np.abs(few - many[:2]).max() < 1e-5
