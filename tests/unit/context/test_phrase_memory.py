"""The extractor's memory of embedded phrases (``embedding.recent.RecentEmbedder``): a
phrase met before does not reach the model again, and a full memory lets go of the
phrases used longest ago, not of everything; a turn's slot names reach it in one call."""

from __future__ import annotations

import numpy as np
from support.embedders import CallRecordingEmbedder, SlotNameEmbedder

from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import TurnFacts
from memory_core.context.update import TaskContext
from memory_core.embedding.base import embed_checked
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.embedding.recent import RecentCache, RecentEmbedder


def test_a_phrase_met_before_is_not_embedded_again() -> None:
    model = CallRecordingEmbedder(HashingEmbedder())
    memo = RecentEmbedder(model, capacity=100)
    first = memo.embed(["make it", "Thanks", "make it"])
    again = memo.embed(["Thanks", "make it"])
    assert model.calls == [["make it", "Thanks"]]
    assert np.array_equal(again, first[[1, 0]])


def test_primed_phrases_are_embedded_in_one_call_and_then_looked_up() -> None:
    model = CallRecordingEmbedder(HashingEmbedder())
    memo = RecentEmbedder(model, capacity=100)
    memo.prime(["take off", "a window seat", "take off"])
    memo.embed(["a window seat"])
    memo.embed(["take off"])
    assert model.calls == [["take off", "a window seat"]]


def test_a_full_memory_lets_go_of_the_phrase_used_longest_ago() -> None:
    model = CallRecordingEmbedder(HashingEmbedder())
    memo = RecentEmbedder(model, capacity=2)
    for text in ("keep up", "Thanks", "keep up", "make it"):  # "Thanks": used longest ago
        memo.embed([text])
    model.calls.clear()
    memo.embed(["keep up", "make it"])
    assert model.calls == []
    memo.embed(["Thanks"])
    assert model.calls == [["Thanks"]]


def test_more_texts_than_the_memory_holds_are_still_all_embedded() -> None:
    texts = ["a pool", "a cat", "first class"]
    vectors = RecentEmbedder(HashingEmbedder(), capacity=2).embed(texts)
    assert np.array_equal(vectors, embed_checked(HashingEmbedder(), texts))


def test_a_lookup_keeps_a_value_in_the_cache() -> None:
    cache: RecentCache[int] = RecentCache(2)
    cache.put_many([("a", 1), ("b", 2)])
    assert cache.get_many(["a", "z"]) == [1, None]  # "a" used: "b" is now the oldest
    cache.put_many([("c", 3)])
    assert cache.get_many(["a", "b", "c"]) == [1, None, 3]
    assert cache.missing(["b", "a", "b"]) == ["b"]
    assert len(cache) == 2


def test_a_cleared_memory_embeds_again() -> None:
    model = CallRecordingEmbedder(HashingEmbedder())
    memo = RecentEmbedder(model, capacity=10)
    memo.embed(["keep up"])
    memo.clear()
    memo.embed(["keep up"])
    assert model.calls == [["keep up"], ["keep up"]]


def test_a_turn_comparing_two_new_slot_names_embeds_them_in_one_call() -> None:
    model = CallRecordingEmbedder(SlotNameEmbedder())
    ctx = TaskContext("u-1", embedder=model)

    def said(slot: str, number: float) -> TurnFacts:
        value = SlotValue(
            "user", slot, f"{number:g} EUR", "money", number, "EUR", "night", topic="hotel"
        )
        return TurnFacts("", "user", None, "state", 1.0, None, 0.0, (value,))

    ctx.observe(said("hotel budget", 180), turn=0)  # nothing to compare with yet
    assert model.calls == []
    both = said("hotel limit", 200)
    later = said("room budget", 250)
    ctx.observe(
        TurnFacts("", "user", None, "change", 1.0, None, 0.0, both.slots + later.slots), turn=1
    )
    assert len(model.calls) == 1
    assert set(model.calls[0]) == {"hotel budget", "hotel limit", "room budget"}
