"""Incremental BM25: tokenisation, scores against the formula, removal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.engine.index import LexicalIndex, tokenize
from memory_core.errors import IndexError_


def test_tokenize_drops_stopwords_and_folds_plurals() -> None:
    assert tokenize("The user prefers Window seats!") == ["user", "prefer", "window", "seat"]
    assert tokenize("a I x glass") == ["glass"]  # 'ss' endings are not plurals
    assert tokenize("bus gas") == ["bus", "gas"]  # too short to fold
    assert tokenize("") == []


def bm25(tf: float, dl: float, avgdl: float, n_docs: int, df: int) -> float:
    k1, b = 1.2, 0.75
    idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def test_scores_follow_bm25() -> None:
    index = LexicalIndex()
    index.add(0, "window seat window")  # tokens: window seat window (3)
    index.add(1, "aisle seat")  # 2
    index.add(2, "vegetarian meal please")  # 3
    scores, slots = index.search("window seat", 10)
    avgdl = 8 / 3
    expected = {
        0: bm25(2, 3, avgdl, 3, 1) + bm25(1, 3, avgdl, 3, 2),
        1: bm25(1, 2, avgdl, 3, 2),
    }
    assert slots.tolist() == [0, 1]
    assert scores.tolist() == pytest.approx([expected[0], expected[1]], rel=1e-5)


def test_top_k_and_ties_break_by_slot() -> None:
    index = LexicalIndex()
    for slot in (5, 3, 9):
        index.add(slot, "coffee")
    index.add(1, "tea")
    scores, slots = index.search("coffee", 2)
    assert slots.tolist() == [3, 5]
    assert scores[0] == scores[1]


def test_remove_updates_postings_and_lengths() -> None:
    index = LexicalIndex()
    index.add(0, "red apple")
    index.add(1, "green apple pie")
    index.remove(0)
    index.remove(0)  # twice is harmless
    assert len(index) == 1
    scores, slots = index.search("apple red", 5)
    assert slots.tolist() == [1]
    assert scores[0] == pytest.approx(bm25(1, 3, 3.0, 1, 1), rel=1e-5)
    assert index.search("red", 5)[1].size == 0
    index.remove(1)
    assert index.search("apple", 5)[1].size == 0


def test_a_term_of_one_document_grows_and_shrinks_like_any_other() -> None:
    """A term one document holds is stored compactly until a second holds it."""
    index = LexicalIndex()
    index.add(100_000, "kiwi kiwi kiwi")
    assert [a.tolist() for a in index.postings("kiwi")] == [[100_000], [3.0]]
    index.add_many(np.array([4, 9]), ["kiwi once", "kiwi twice kiwi"], np.array([0, 0]))
    index.add(6, "kiwi")
    assert [a.tolist() for a in index.postings("kiwi")] == [
        [100_000, 4, 9, 6],
        [3.0, 1.0, 2.0, 1.0],
    ]
    index.add_many(np.array([5]), ["lone mango"], np.array([0]))
    assert index.search("mango", 3)[1].tolist() == [5]
    index.remove_many([100_000, 5, 9])
    assert [a.tolist() for a in index.postings("kiwi")] == [[4, 6], [1.0, 1.0]]
    assert index.search("mango", 3)[1].size == 0
    assert [a.size for a in index.postings("mango")] == [0, 0]


def test_slots_beyond_initial_capacity() -> None:
    index = LexicalIndex()
    index.add(1000, "far away slot")
    index.add(3, "near slot")
    _, slots = index.search("far", 1)
    assert slots.tolist() == [1000]


def test_no_match_and_empty_query() -> None:
    index = LexicalIndex()
    assert index.search("anything", 3)[1].size == 0
    index.add(0, "something")
    assert index.search("nothing in common", 3)[1].size == 0
    assert index.search("the of and", 3)[1].size == 0
    assert index.search("something", 0)[1].size == 0


def test_remove_many_equals_removing_one_by_one() -> None:
    """One slot at a time takes the single-document path (a Python search of postings up
    to 64 long, numpy beyond: 'shared' is held by all 150); the same postings result."""
    texts = {slot: f"shared term{slot % 3} word{slot % 5} extra{slot}" for slot in range(150)}
    batch, single = LexicalIndex(), LexicalIndex()
    for slot, text in texts.items():
        batch.add(slot, text)
        single.add(slot, text)
    doomed = [1, 7, 8, 20, 39, 149, 999]
    batch.remove_many(doomed)
    for slot in doomed:
        single.remove(slot)
    assert len(batch) == len(single) == 144
    for term in {t for text in texts.values() for t in tokenize(text)}:
        for b, s in zip(batch.postings(term), single.postings(term), strict=True):
            np.testing.assert_array_equal(b, s)
    for query in ("shared", "term1 word2", "extra7", "extra8 term0"):
        b_scores, b_slots = batch.search(query, 50)
        s_scores, s_slots = single.search(query, 50)
        assert b_slots.tolist() == s_slots.tolist()
        np.testing.assert_array_equal(b_scores, s_scores)
        assert not set(b_slots.tolist()) & set(doomed)


def test_a_group_search_scores_as_an_index_of_that_group_alone() -> None:
    docs = {
        0: ("green tea in the morning", 1),
        1: ("black tea and green apples", 2),
        2: ("tea with milk", 1),
        3: ("the green door", 2),
        4: ("green green green tea", 1),
    }
    shared, alone = LexicalIndex(), LexicalIndex()
    for slot, (text, group) in docs.items():
        shared.add(slot, text, group)
        if group == 1:
            alone.add(slot, text)
    for query in ("green tea", "milk", "door"):
        scores, slots = shared.search(query, 10, group=1)
        want_scores, want_slots = alone.search(query, 10)
        assert slots.tolist() == want_slots.tolist()
        np.testing.assert_allclose(scores, want_scores, rtol=1e-6)
    # the atlas-wide search ranks all groups under one set of statistics
    _, everywhere = shared.search("green", 10)
    assert sorted(everywhere.tolist()) == [0, 1, 3, 4]
    shared.remove_many([0, 2, 4])
    assert shared.search("tea", 10, group=1)[1].size == 0
    assert shared.search("tea", 10)[1].tolist() == [1]


def test_a_slot_already_indexed_is_refused_and_nothing_changes() -> None:
    index = LexicalIndex()
    index.add(3, "green tea")
    with pytest.raises(IndexError_, match="slot 3"):
        index.add(3, "black coffee")
    assert len(index) == 1
    assert index.search("coffee", 5)[1].size == 0
    assert index.search("tea", 5)[1].tolist() == [3]


@pytest.mark.parametrize("separator_inside", [False, True])
def test_add_many_builds_the_index_add_builds(separator_inside: bool) -> None:
    texts = [
        "The user prefers window seats",
        "Window seat booked; it's the user's choice",
        "rock'n'roll 'quoted' words and numbers 42 42",
        "the of and",  # no terms at all
        "Seats, seats and more SEATS" + ("\x00glass" if separator_inside else ""),
    ]
    slots = np.array([7, 2, 30, 4, 11])
    groups = np.array([1, 0, 1, 2, 0], dtype=np.int32)
    one_by_one, bulk = LexicalIndex(), LexicalIndex()
    one_by_one.add(5, "window seat already there", 0)
    bulk.add(5, "window seat already there", 0)
    for slot, text, group in zip(slots.tolist(), texts, groups.tolist(), strict=True):
        one_by_one.add(slot, text, group)
    bulk.add_many(slots, texts, groups)
    assert list(bulk._postings) == list(one_by_one._postings)
    for term in one_by_one._postings:
        slots, tf = one_by_one.postings(term)
        assert bulk.postings(term)[0].tolist() == slots.tolist(), term
        assert bulk.postings(term)[1].tolist() == tf.tolist(), term
    for query in ("window seat", "glass seats", "rock'n roll 42", "user choice"):
        for group in (None, 0, 1):
            a, b = one_by_one.search(query, 10, group=group), bulk.search(query, 10, group=group)
            assert a[1].tolist() == b[1].tolist() and a[0].tolist() == b[0].tolist()
    assert len(bulk) == len(one_by_one) == 6
    with pytest.raises(IndexError_, match="already holds"):
        bulk.add_many(np.array([40, 2]), ["new", "again"], np.array([0, 0]))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet="aAbsS'1 \x00-é\u0130\u212a\u03a3.zZ", min_size=1, max_size=30),
        min_size=1,
        max_size=12,
    )
)
def test_add_many_tokenises_as_add_does(texts: list[str]) -> None:
    """Apostrophes, separators, non-ASCII letters that lower-case to ASCII (Kelvin sign,
    dotted I): the bulk path's terms and lengths are those of ``tokenize``."""
    one_by_one, bulk = LexicalIndex(), LexicalIndex()
    for slot, text in enumerate(texts):
        one_by_one.add(slot, text)
    bulk.add_many(np.arange(len(texts)), texts, np.zeros(len(texts), dtype=np.int32))
    assert list(bulk._postings) == list(one_by_one._postings)
    for term in one_by_one._postings:
        slots, tf = one_by_one.postings(term)
        assert bulk.postings(term)[0].tolist() == slots.tolist()
        assert bulk.postings(term)[1].tolist() == tf.tolist()
    n = len(texts)
    assert bulk._dl[:n].tolist() == one_by_one._dl[:n].tolist()


def test_scores_are_the_float32_formula_bit_for_bit() -> None:
    """Each posting's score is ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl /
    avgdl))`` in float32, summed per document in float64 in term order: what ranking and
    the snapshots' identical-results checks rely on (the arithmetic runs in place)."""
    rng = np.random.default_rng(11)
    words = [f"word{i}" for i in range(40)]
    texts = [" ".join(rng.choice(words, rng.integers(1, 12))) for _ in range(400)]
    index = LexicalIndex()
    index.add_many(np.arange(400), texts, np.zeros(400, dtype=np.int64))
    lengths = np.array([len(tokenize(t)) for t in texts], dtype=np.float32)
    avgdl = max(float(lengths.sum()) / 400, 1.0)
    for q in range(20):
        query = " ".join(rng.choice(words, 6))
        totals = np.zeros(400)
        for term in set(tokenize(query)):
            slots, tf = index.postings(term)
            idf = np.float32(math.log(1.0 + (400 - len(slots) + 0.5) / (len(slots) + 0.5)))
            norm = index.k1 * (1.0 - index.b + index.b * lengths[slots] / avgdl)
            np.add.at(totals, slots, idf * tf * (index.k1 + 1.0) / (tf + norm))
        scores, found = index.search(query, 400)
        np.testing.assert_array_equal(scores, totals[found].astype(np.float32))
        assert sorted(found.tolist()) == np.flatnonzero(totals > 0).tolist(), q
