"""The timeline pair set (issue #27 point 5, session 14): both parts load and the split is clean.

The pairs were derived from fictional people's timelines (a user and the people around them,
facts that change over time), so every pair of one profile shares a life: the split is by
profile, drawn with a fixed seed, and rechecked here. The test part is held out: it is read
only for its shape and hashed against the older sets, never judged, and no text of another
set is printed (a failing check names the line of this set only).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from memory_core.conflicts import load_pairs

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
    lines = PARTS[part].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _digest(text: str) -> str:
    """Case, punctuation and spacing do not make two texts different."""
    folded = " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())
    return hashlib.sha256(folded.encode()).hexdigest()


def _pair_key(a: str, b: str) -> frozenset[str]:
    return frozenset((_digest(a), _digest(b)))


@pytest.mark.parametrize("part", sorted(PARTS))
def test_part_loads_through_the_eval_loader_with_the_schema(part: str) -> None:
    records = _records(part)
    pairs = load_pairs(PARTS[part])
    assert [(p.a, p.b, p.label) for p in pairs] == [(r["a"], r["b"], r["label"]) for r in records]
    for number, record in enumerate(records, start=1):
        assert set(record) == KEYS, number
        assert record["label"] == LABEL_OF_KIND[record["kind"]], number
        assert record["style"] in STYLES, number
        assert _digest(record["a"]) != _digest(record["b"]), number


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
    records = _records("dev") + _records("test")
    assert len(records) >= 250
    assert 0.35 <= len(_records("dev")) / len(records) <= 0.45
    share = Counter(r["label"] for r in records)["contradiction"] / len(records)
    assert 0.40 <= share <= 0.50


def test_no_pair_repeats_and_no_sentence_is_in_both_parts() -> None:
    seen: set[frozenset[str]] = set()
    sentences: dict[str, set[str]] = {}
    for part in sorted(PARTS):
        sentences[part] = set()
        for number, record in enumerate(_records(part), start=1):
            key = _pair_key(record["a"], record["b"])
            assert key not in seen, (part, number)
            seen.add(key)
            sentences[part] |= key
    assert not sentences["dev"] & sentences["test"]


def test_no_pair_is_in_an_older_set() -> None:
    """Older sets are compared by digest only; their texts never reach the output."""
    older: set[frozenset[str]] = set()
    for path in sorted(DATA.glob("*.jsonl")):
        if path in PARTS.values():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            if isinstance(record.get("a"), str) and isinstance(record.get("b"), str):
                older.add(_pair_key(record["a"], record["b"]))
    assert len(older) > 1000  # the older sets were found
    for part in sorted(PARTS):
        clashes = [
            number
            for number, record in enumerate(_records(part), start=1)
            if _pair_key(record["a"], record["b"]) in older
        ]
        assert not clashes, (part, clashes)
