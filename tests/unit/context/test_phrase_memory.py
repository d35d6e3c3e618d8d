"""The extractor's memory of embedded phrases (``turn._Memo``): a phrase met before does
not reach the model again, and a full memory lets go of the phrases used longest ago, not
of everything."""

from __future__ import annotations

import numpy as np
import pytest
from support.embedders import CallRecordingEmbedder

from memory_core.context.extract.turn import _Memo
from memory_core.embedding.base import embed_checked
from memory_core.embedding.hashing import HashingEmbedder


def test_a_phrase_met_before_is_not_embedded_again() -> None:
    model = CallRecordingEmbedder(HashingEmbedder())
    memo = _Memo(model)
    first = memo.embed(["make it", "Thanks", "make it"])
    again = memo.embed(["Thanks", "make it"])
    assert model.calls == [["make it", "Thanks"]]
    assert np.array_equal(again, first[[1, 0]])


def test_a_full_memory_lets_go_of_the_phrase_used_longest_ago(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_Memo, "LIMIT", 2)
    model = CallRecordingEmbedder(HashingEmbedder())
    memo = _Memo(model)
    for text in ("keep up", "Thanks", "keep up", "make it"):  # "Thanks": used longest ago
        memo.embed([text])
    model.calls.clear()
    memo.embed(["keep up", "make it"])
    assert model.calls == []
    memo.embed(["Thanks"])
    assert model.calls == [["Thanks"]]


def test_more_texts_than_the_memory_holds_are_still_all_embedded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_Memo, "LIMIT", 2)
    texts = ["a pool", "a cat", "first class"]
    vectors = _Memo(HashingEmbedder()).embed(texts)
    assert np.array_equal(vectors, embed_checked(HashingEmbedder(), texts))
