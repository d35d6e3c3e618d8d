"""Benchmark data: generated atlases hold the number of memories they are named after."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.datasets import MAX_TEXTS, apart, copy_tag, random_dataset, synthetic_texts
from benchmarks.operations import START, Plan, build_engine, check_held
from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine.families import template


def test_texts_are_distinct_in_their_words_and_reproducible() -> None:
    texts = synthetic_texts(20_000, seed=7)
    assert len({template(t)[0] for t in texts}) == 20_000  # not only in their numbers
    assert synthetic_texts(50, seed=7) == synthetic_texts(50, seed=7)
    assert synthetic_texts(50, seed=7) != synthetic_texts(50, seed=8)


def test_texts_refuse_more_than_the_distinct_combinations() -> None:
    with pytest.raises(ValueError, match=f"between 0 and {MAX_TEXTS:,} distinct texts, got -1"):
        synthetic_texts(-1, seed=7)
    with pytest.raises(ValueError, match="distinct texts"):
        synthetic_texts(MAX_TEXTS + 1, seed=7)


def test_a_generated_atlas_holds_every_memory_with_the_default_config() -> None:
    data = random_dataset(2_000, 1)
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(), clock=ManualClock(START))
    for start in range(0, 2_000, 500):
        atlas.add_many(
            data.texts[start : start + 500],
            session_id="bench",
            embeddings=data.vectors[start : start + 500],
        )
    assert len(atlas) == 2_000
    assert atlas.stats()["sessions"] == 1


def test_the_scenario_build_holds_its_size() -> None:
    plan = Plan.for_size(2_000)
    atlas = build_engine(random_dataset(2_000, 1), plan, ManualClock(START))
    assert len(atlas) == plan.size == 2_000


def test_an_atlas_of_templated_lines_is_refused() -> None:
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(), clock=ManualClock(START))
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((40, HashingEmbedder().dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    atlas.add_many([f"memory {i} of the bench" for i in range(40)], embeddings=vectors)
    assert len(atlas) < 40  # the family folded
    with pytest.raises(ValueError, match=r"holds \d+ memories, expected 40"):
        check_held(atlas, 40)


def test_copy_tags_are_distinct_words() -> None:
    tags = [copy_tag(k) for k in range(500)]
    assert len({template(t)[0] for t in tags}) == 500
    with pytest.raises(ValueError, match="k must be between 0 and"):
        copy_tag(-1)


def test_apart_skips_the_later_row_of_each_close_pair_only() -> None:
    base = np.eye(6, dtype=np.float32)
    near = base[1] + 0.1 * base[2]
    rows = np.vstack([base[:4], near / np.linalg.norm(near), base[4:], base[1]])
    # row 4 is close to row 1 (0.995), row 7 a copy of row 1; blocks of 3 cross the pairs
    np.testing.assert_array_equal(apart(rows, 0.92, block=3), [0, 1, 2, 3, 5, 6])
    np.testing.assert_array_equal(apart(rows, 0.999, block=3), [0, 1, 2, 3, 4, 5, 6])
