"""The BM25 postings a snapshot stores: the same index as tokenising the texts again,
older files and stale postings rebuild, malformed ones are refused, and a freeze holds
the postings of its instant while the index keeps changing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_core import ElasticMemoryAtlas, InputError
from memory_core.engine import snapshot
from memory_core.engine.index.lexical import LexicalIndex, posting_columns
from memory_core.errors import IndexError_

from .conftest import AtlasFactory, invariants
from .test_snapshot import (
    fields_of,
    header_of,
    hnsw_atlas,
    load,
    members,
    populated,
    rewrite,
    set_header,
    set_row,
)

QUERIES = (
    "window seats on flights",
    "peanuts allergy",
    "note about topic 3",
    "place 4",
    "Berlin Monday",
    "nothing matches this",
)


def churned(make_atlas: AtlasFactory) -> ElasticMemoryAtlas:
    """An atlas whose slots were freed and reused: its postings are not in slot order."""
    atlas, _ = populated(make_atlas)
    for i in range(12):
        atlas.add(f"note {i} about topic {i % 4} near place {i % 3}", session_id=f"s{i % 2}")
    for i in range(3):
        atlas.add(f"short lived {i} topic", session_id="gone")
    atlas.end_session("gone", mode="purge")
    for i in range(3):
        atlas.add(f"later note {i} on topic {i} in place 4", session_id="s0")
    return atlas


def bm25_state(index: LexicalIndex) -> dict[str, Any]:
    """Everything a search or removal reads, each term's postings in slot order."""
    live = [slot for slot, text in enumerate(index._texts) if text is not None]
    postings = {}
    for term in index._postings:
        slots, tf = index.postings(term)
        order = np.argsort(slots, kind="stable")
        postings[term] = (slots[order].tolist(), tf[order].tolist())
    return {
        "postings": postings,
        "texts": {slot: index._texts[slot] for slot in live},
        "lengths": index._dl[live].tolist(),
        "groups": index._group[live].tolist(),
        "group_docs": index._group_docs,
        "group_len": index._group_len,
        "totals": (len(index), index._total_len),
    }


def searches(atlas: ElasticMemoryAtlas) -> list[Any]:
    """BM25 over every memory and each session's (slots, scores), then retrieves."""
    index = atlas._s.lexical
    out: list[Any] = []
    for query in QUERIES:
        for group in (None, *sorted(index._group_docs)):
            scores, slots = index.search(query, 10, group=group)
            out.append((query, group, scores.tolist(), slots.tolist()))
    return out + retrieves(atlas)


def retrieves(atlas: ElasticMemoryAtlas) -> list[Any]:
    """By id (a saved atlas's slots are renumbered on load)."""
    out = []
    for query in QUERIES:
        for kw in ({"session_id": "s0"}, {"session_id": "s1", "cross_session": True}):
            hits = atlas.retrieve(query, top_k=5, reinforce=False, **kw)
            out.append([(h.node.id, h.score, h.breakdown.sources) for h in hits])
    return out


def without_postings(arrays: dict[str, np.ndarray]) -> None:
    """As a file written before the postings were stored."""
    for name in snapshot.lexical.MEMBERS:
        arrays.pop(name)
    set_header(lambda h: {k: v for k, v in h.items() if k != "lexical"})(arrays)


@pytest.mark.parametrize("build", [churned, hnsw_atlas])
def test_stored_postings_load_as_the_texts_would_index(
    make_atlas: AtlasFactory, tmp_path: Path, build: Any
) -> None:
    atlas = build(make_atlas)
    path = atlas.save_snapshot(tmp_path / "a.npz")
    arrays = members(path)
    assert header_of(arrays)["lexical"]["contents_crc32"] > 0
    assert snapshot.read(path).postings is not None
    loaded = load(path)
    rebuilt = load(rewrite(path, tmp_path / "old.npz", without_postings))
    assert snapshot.read(tmp_path / "old.npz").postings is None
    assert bm25_state(loaded._s.lexical) == bm25_state(rebuilt._s.lexical)
    assert searches(loaded) == searches(rebuilt)
    assert retrieves(loaded) == retrieves(atlas)
    assert fields_of(loaded) == fields_of(atlas)
    # the adopted postings keep changing like the rebuilt ones
    for target in (loaded, rebuilt):
        target.add("a fresh note about topic 3 and seats", session_id="s1")
        target.forget(target.nodes()[0].id)
    assert bm25_state(loaded._s.lexical) == bm25_state(rebuilt._s.lexical)
    assert searches(loaded) == searches(rebuilt)
    invariants(loaded)


def test_an_empty_atlas_stores_empty_postings(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    atlas, _ = make_atlas()
    loaded = load(atlas.save_snapshot(tmp_path / "empty.npz"))
    assert len(loaded._s.lexical) == 0


@pytest.mark.parametrize(
    "change",
    [
        set_header(lambda h: {**h, "lexical": {**h["lexical"], "tokenizer": "another"}}),
        set_header(lambda h: {**h, "lexical": None}),
    ],
)
def test_postings_of_another_tokenizer_or_none_are_rebuilt(
    make_atlas: AtlasFactory, tmp_path: Path, change: Any
) -> None:
    atlas = churned(make_atlas)
    path = rewrite(atlas.save_snapshot(tmp_path / "a.npz"), tmp_path / "b.npz", change)
    assert snapshot.read(path).postings is None
    assert retrieves(load(path)) == retrieves(atlas)


def test_postings_of_other_texts_are_rebuilt_from_the_texts(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    """A tool that rewrote the contents but not the postings: the CRC tells, and the
    index is made from the texts the file holds now."""
    atlas = churned(make_atlas)
    path = atlas.save_snapshot(tmp_path / "a.npz")

    def reword(arrays: dict[str, np.ndarray]) -> None:
        blob = arrays["contents_blob"].tobytes().replace(b"peanuts", b"cashews")
        arrays["contents_blob"] = np.frombuffer(blob, dtype=np.uint8)

    loaded = load(rewrite(path, tmp_path / "reworded.npz", reword))
    index = loaded._s.lexical
    assert index.postings("peanut")[0].size == 0
    assert index.postings("cashew")[0].size == 1


def set_terms(terms: list[str]) -> Any:
    def apply(arrays: dict[str, np.ndarray]) -> None:
        offsets, blob = snapshot.layout.pack_texts(terms)
        arrays["lexical_terms_offsets"], arrays["lexical_terms_blob"] = offsets, blob

    return apply


def first_terms(path: Path) -> list[str]:
    arrays = members(path)
    return snapshot.layout.read_texts(arrays, "lexical_terms")


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (set_header(lambda h: {**h, "lexical": "yes"}), "lexical is 'yes'; allowed: null or"),
        (lambda a: a.pop("lexical_tf"), "lacks the member 'lexical_tf'"),
        (set_row("lexical_rows", 0, 10_000), "lexical_rows must hold memory rows from 0 to"),
        (set_row("lexical_rows", 0, -1), "lexical_rows must hold memory rows from 0 to"),
        (set_row("lexical_tf", 0, 0), "lexical_tf must hold term frequencies >= 1"),
        (set_row("lexical_counts", 0, 0), "lexical_counts must be"),
        (set_row("lexical_counts", 0, 2), "lexical_rows must be int32 of shape"),
        (
            lambda a: a.update(lexical_tf=a["lexical_tf"].astype(np.float32)),
            "lexical_tf must be int32",
        ),
        (set_row("lexical_terms_offsets", 1, 10**9), "lexical_terms_offsets must rise"),
    ],
)
def test_malformed_postings_are_refused(
    make_atlas: AtlasFactory, tmp_path: Path, change: Any, fragment: str
) -> None:
    path = churned(make_atlas).save_snapshot(tmp_path / "a.npz")
    bad = rewrite(path, tmp_path / "bad.npz", change)
    with pytest.raises(InputError) as info:
        load(bad)
    assert info.value.field == "snapshot"
    assert fragment in str(info.value)


def test_a_term_named_twice_is_refused(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    path = churned(make_atlas).save_snapshot(tmp_path / "a.npz")
    terms = first_terms(path)
    bad = rewrite(path, tmp_path / "bad.npz", set_terms([terms[1], *terms[1:]]))
    with pytest.raises(InputError, match="lexical_terms must be distinct non-empty terms"):
        load(bad)


def test_a_freeze_keeps_its_postings_while_the_index_changes() -> None:
    index = LexicalIndex()
    texts = ["red apples and pears", "green apples", "apples in a red bowl", "pears only"]
    index.add_many(np.arange(4), texts, np.array([0, 0, 1, 1]))
    index.add(4, "red red wine", 1)
    before = posting_columns(dict(index._postings))
    frozen = index.freeze()
    index.remove(0)  # shifts the postings of "apple", "red" and "pear" down
    index.add(5, "apples and red wine", 0)  # appends to them
    index.remove_many([2, 3])
    index.add_many(np.array([6, 7]), ["pears", "red apples"], np.array([1, 1]))
    after = posting_columns(frozen)
    assert after.terms == before.terms
    for name in ("counts", "slots", "tf"):
        np.testing.assert_array_equal(getattr(after, name), getattr(before, name))
    # the live index is the one the same history builds without a freeze
    fresh = LexicalIndex()
    fresh.add_many(np.arange(4), texts, np.array([0, 0, 1, 1]))
    fresh.add(4, "red red wine", 1)
    fresh.remove(0)
    fresh.add(5, "apples and red wine", 0)
    fresh.remove_many([2, 3])
    fresh.add_many(np.array([6, 7]), ["pears", "red apples"], np.array([1, 1]))
    assert bm25_state(index) == bm25_state(fresh)


def test_restore_builds_what_add_many_builds() -> None:
    texts = ["red apples and pears", "green apples", "apples in a red bowl", "pears", "a the"]
    slots, groups = np.array([3, 0, 7, 2, 5]), np.array([1, 0, 1, 2, 0])
    built = LexicalIndex()
    built.add_many(slots, texts, groups)
    restored = LexicalIndex()
    restored.restore(slots, texts, groups, posting_columns(built.freeze()))
    assert bm25_state(restored) == bm25_state(built)
    for query in ("red apples", "pears", "bowl", "the"):
        for group in (None, 0, 1, 2):
            got, want = restored.search(query, 5, group=group), built.search(query, 5, group=group)
            assert [a.tolist() for a in got] == [a.tolist() for a in want]
    with pytest.raises(IndexError_, match="needs an empty index"):
        restored.restore(slots, texts, groups, posting_columns(built.freeze()))
