"""The phrase twin (``embedding.phrase_twin``): which runner a call goes to, and which
embedders share the process's phrase memory. The runners are fakes; the real ones are in
``tests/integration/engine/test_minilm_onnx.py``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from support.embedders import CallRecordingEmbedder

from memory_core.embedding import phrase_twin
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.embedding.recent import RecentEmbedder


def _words(texts: Sequence[str]) -> int:
    """A stand-in for the tokenizer: texts x the longest one's words."""
    return len(texts) * max(len(t.split()) for t in texts)


def _twin() -> tuple[phrase_twin.PhraseTwin, CallRecordingEmbedder, CallRecordingEmbedder]:
    small = CallRecordingEmbedder(HashingEmbedder())
    large = CallRecordingEmbedder(HashingEmbedder())
    twin = phrase_twin.PhraseTwin(small=small, large=large, count_tokens=_words)
    return twin, small, large


def test_a_call_of_few_tokens_goes_to_the_small_runner_and_the_rest_to_the_large() -> None:
    twin, small, large = _twin()
    limit = phrase_twin.SMALL_CALL_TOKENS
    few = ["hotel budget", "window seat"]
    at_limit = ["word " * (limit // 2)] * 2
    over = ["word " * (limit // 2 + 1)] * 2
    many_short = ["ok"] * (phrase_twin.SMALL_CALL_TEXTS + 1)
    for texts in (few, at_limit, over, many_short):
        vectors = twin.embed(texts)
        np.testing.assert_allclose(vectors, HashingEmbedder().embed(texts), atol=1e-6)
    assert small.calls == [few, at_limit]
    assert large.calls == [over, many_short]
    assert twin.dim == HashingEmbedder().dim


def test_warm_loads_the_small_runner_when_it_can_be_warmed() -> None:
    warmed: list[bool] = []

    class Warmable(HashingEmbedder):
        def warm(self) -> None:
            warmed.append(True)

    phrase_twin.PhraseTwin(small=Warmable(), large=HashingEmbedder(), count_tokens=_words).warm()
    phrase_twin.PhraseTwin(
        small=HashingEmbedder(), large=HashingEmbedder(), count_tokens=_words
    ).warm()  # nothing to load: no error
    assert warmed == [True]


def test_an_embedder_that_is_not_minilm_keeps_a_memory_of_its_own() -> None:
    hashing = HashingEmbedder()
    first = phrase_twin.phrase_memory(hashing, 10)
    second = phrase_twin.phrase_memory(hashing, 10)
    assert isinstance(first, RecentEmbedder)
    assert first is not second
    assert first.name == hashing.name
    np.testing.assert_allclose(first.embed(["a b"]), hashing.embed(["a b"]), atol=1e-6)
