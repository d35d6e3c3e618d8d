"""The contrast pair set (issue #27 point 5, session 15): both parts load and the split is clean.

Each contrast group is one base pair plus minimal edits of its second side, and every edit flips
the label of the pair it was made from (the base, or for ``x+y`` the pair made by edit ``x``). A
judge is scored per group as well as per pair, so the groups must stay whole: the split is by
group, drawn with a fixed seed, and rechecked here. The test part is held out: it is read only
for its shape and hashed against the older sets, never judged, and no text of another set is
printed (a failing check names the line of this set only).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from .pair_sets import (
    Record,
    assert_loads_with_schema,
    assert_sizes_and_shares,
    digest,
    older_pairs,
    pair_key,
    read_records,
    words,
)

DATA = Path(__file__).resolve().parents[2] / "data"
PARTS = {
    "dev": DATA / "conflict_pairs_contrast_dev.jsonl",
    "test": DATA / "conflict_pairs_contrast_test.jsonl",
}
FIRST_SEED = 2715
SEED = 2719
DEV_SHARE = 0.4
SHINGLE_WORDS = 6
KEYS = {"a", "b", "label", "kind", "style", "group", "edit"}
STYLES = {"casual", "assistant"}
EDITS = {
    "subject",
    "time_mark",
    "attribute",
    "elaboration",
    "synonym",
    "opposite",
    "negation",
    "status",
    "number",
    "unit",
    "date",
    "value",
    "topic",
    "hedge",
}
LABEL_OF_KIND = {
    "opposite_no_negation": "contradiction",
    "status_change_world": "contradiction",
    "value_reworded": "contradiction",
    "value_change": "contradiction",
    "number_change": "contradiction",
    "date_change": "contradiction",
    "third_person_change": "contradiction",
    "overlapping_time": "contradiction",
    "negation": "contradiction",
    "other_subject_trap": "compatible",
    "marked_time_trap": "compatible",
    "other_attribute_trap": "compatible",
    "elaboration": "compatible",
    "restatement": "compatible",
    "plan_or_question": "compatible",
    "unrelated": "unrelated",
}


def _records(part: str) -> list[Record]:
    return read_records(PARTS[part])


def _all_records() -> list[Record]:
    return _records("dev") + _records("test")


def _shingles(text: str) -> set[str]:
    """The digests of every run of SHINGLE_WORDS folded words."""
    folded = words(text)
    return {digest(folded[i : i + SHINGLE_WORDS]) for i in range(len(folded) - SHINGLE_WORDS + 1)}


def _split(groups: set[str], seed: int) -> set[str]:
    order = sorted(groups)
    random.Random(seed).shuffle(order)
    return set(order[: round(DEV_SHARE * len(order))])


def _covers(records: list[Record], dev: set[str]) -> bool:
    """Every kind, and every label in both styles, falls in both parts."""
    for inside in (True, False):
        part = [r for r in records if (r["group"] in dev) == inside]
        if {r["kind"] for r in part} != set(LABEL_OF_KIND):
            return False
        if len({(r["label"], r["style"]) for r in part}) != 3 * len(STYLES):
            return False
    return True


@pytest.mark.parametrize("part", sorted(PARTS))
def test_part_loads_through_the_eval_loader_with_the_schema(part: str) -> None:
    records = assert_loads_with_schema(PARTS[part], KEYS, LABEL_OF_KIND, STYLES)
    for number, record in enumerate(records, start=1):
        assert record["edit"] == "base" or set(record["edit"].split("+")) <= EDITS, number


def test_every_edit_flips_the_label_of_the_pair_it_was_made_from() -> None:
    groups: dict[str, dict[str, Record]] = {}
    for record in _all_records():
        edits = groups.setdefault(record["group"], {})
        assert record["edit"] not in edits, (record["group"], record["edit"])
        edits[record["edit"]] = record
    for group, edits in groups.items():
        assert "base" in edits and len(edits) >= 3, group
        assert len({r["a"] for r in edits.values()}) == 1, group
        for edit, record in edits.items():
            if edit == "base":
                continue
            parent = edit.rsplit("+", 1)[0] if "+" in edit else "base"
            assert parent in edits, (group, edit)
            assert record["label"] != edits[parent]["label"], (group, edit)


def test_the_split_is_by_group_with_the_first_seed_that_covers_every_kind() -> None:
    records = _all_records()
    groups = {part: {r["group"] for r in _records(part)} for part in PARTS}
    assert not groups["dev"] & groups["test"]
    every = groups["dev"] | groups["test"]
    assert _split(every, SEED) == groups["dev"]
    assert _covers(records, groups["dev"])
    assert not any(_covers(records, _split(every, seed)) for seed in range(FIRST_SEED, SEED))


def test_sizes_and_label_shares() -> None:
    assert_sizes_and_shares(_records("dev"), _records("test"), at_least=260)


def test_no_pair_repeats_and_no_sentence_is_in_two_groups() -> None:
    seen: set[frozenset[str]] = set()
    owner: dict[str, str] = {}
    for part in sorted(PARTS):
        for number, record in enumerate(_records(part), start=1):
            key = pair_key(record["a"], record["b"])
            assert key not in seen, (part, number)
            seen.add(key)
            for text_digest in key:
                assert owner.setdefault(text_digest, record["group"]) == record["group"], (
                    part,
                    number,
                )


def test_no_sentence_shares_a_long_word_run_with_an_older_set() -> None:
    """Older sets are compared by digest only; their texts never reach the output."""
    older: set[str] = set()
    pairs = older_pairs(DATA, set(PARTS.values()))
    assert len(pairs) > 1000  # the older sets were found
    for text in {text for pair in pairs for text in pair}:
        older.add(digest(words(text)))
        older |= _shingles(text)
    for part in sorted(PARTS):
        clashes = [
            number
            for number, record in enumerate(_records(part), start=1)
            if any(
                digest(words(text)) in older or _shingles(text) & older
                for text in (record["a"], record["b"])
            )
        ]
        assert not clashes, (part, clashes)
