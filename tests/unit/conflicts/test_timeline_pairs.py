"""The timeline pair set (issue #27 point 5, session 14): both parts load and the split is clean.

The pairs were derived from fictional people's timelines (a user and the people around them,
facts that change over time), so every pair of one profile shares a life: the split is by
profile, drawn with a fixed seed, and rechecked here. The test part is held out: it is read
only for its shape and hashed against the older sets, never judged, and no text of another
set is printed (a failing check names the line of this set only).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from .pair_sets import (
    assert_loads_with_schema,
    assert_sizes_and_shares,
    older_pairs,
    pair_key,
    read_records,
)

DATA = Path(__file__).resolve().parents[2] / "data"
PARTS = {
    "dev": DATA / "conflict_pairs_timelines_dev.jsonl",
    "test": DATA / "conflict_pairs_timelines_test.jsonl",
}
SEED = 1406
DEV_SHARE = 0.4
KEYS = {"a", "b", "label", "kind", "style", "profile"}
STYLES = {"casual", "assistant"}
LABEL_OF_KIND = {
    "opposite_no_negation": "contradiction",
    "status_change_world": "contradiction",
    "reworded_value": "contradiction",
    "number_change": "contradiction",
    "date_change": "contradiction",
    "third_person_change": "contradiction",
    "overlapping_time": "contradiction",
    "other_subject_trap": "compatible",
    "marked_time_trap": "compatible",
    "other_attribute_trap": "compatible",
    "elaboration": "compatible",
    "unrelated": "unrelated",
}


def _records(part: str) -> list[dict[str, str]]:
    return read_records(PARTS[part])


@pytest.mark.parametrize("part", sorted(PARTS))
def test_part_loads_through_the_eval_loader_with_the_schema(part: str) -> None:
    assert_loads_with_schema(PARTS[part], KEYS, LABEL_OF_KIND, STYLES)


@pytest.mark.parametrize("part", sorted(PARTS))
def test_every_kind_is_in_both_parts_and_each_label_in_both_styles(part: str) -> None:
    records = _records(part)
    assert {r["kind"] for r in records} == set(LABEL_OF_KIND)
    for label in set(LABEL_OF_KIND.values()):
        assert {r["style"] for r in records if r["label"] == label} == STYLES, label


def test_the_split_is_by_profile_with_the_fixed_seed() -> None:
    profiles = {part: {r["profile"] for r in _records(part)} for part in PARTS}
    assert not profiles["dev"] & profiles["test"]
    order = sorted(profiles["dev"] | profiles["test"])
    random.Random(SEED).shuffle(order)
    assert set(order[: round(DEV_SHARE * len(order))]) == profiles["dev"]


def test_sizes_and_label_shares() -> None:
    assert_sizes_and_shares(_records("dev"), _records("test"), at_least=250)


def test_no_pair_repeats_and_no_sentence_is_in_both_parts() -> None:
    seen: set[frozenset[str]] = set()
    sentences: dict[str, set[str]] = {}
    for part in sorted(PARTS):
        sentences[part] = set()
        for number, record in enumerate(_records(part), start=1):
            key = pair_key(record["a"], record["b"])
            assert key not in seen, (part, number)
            seen.add(key)
            sentences[part] |= key
    assert not sentences["dev"] & sentences["test"]


def test_no_pair_is_in_an_older_set() -> None:
    """Older sets are compared by digest only; their texts never reach the output."""
    older = {pair_key(a, b) for a, b in older_pairs(DATA, set(PARTS.values()))}
    assert len(older) > 1000  # the older sets were found
    for part in sorted(PARTS):
        clashes = [
            number
            for number, record in enumerate(_records(part), start=1)
            if pair_key(record["a"], record["b"]) in older
        ]
        assert not clashes, (part, clashes)
