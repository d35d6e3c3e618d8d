"""The independent contradiction set (issue #27): both splits load, and the split is clean.

The test split is held out: it is read here only for its shape (labels, kinds, overlap with
the dev split), never judged. A pair or sentence in both splits would let work tuned on the
dev split score on the test split without generalising.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from memory_core.conflicts import load_pairs
from memory_core.conflicts.verdict import LABELS

DATA = Path(__file__).resolve().parents[2] / "data"
SPLITS = {
    "dev": DATA / "conflict_pairs_independent_dev.jsonl",
    "test": DATA / "conflict_pairs_independent_test.jsonl",
}
STYLES = {"casual", "assistant"}
KINDS_WITH_BOTH_LABELS = {
    "opposite_no_negation",
    "status_world_knowledge",
    "value_reworded",
    "numeric_amount",
    "time_date",
    "person_confusion",
    "time_marked",
    "negation",
    "preference_reversal",
    "refinement_addition",
    "implied_exclusion",
    "plan_event",
    "aside_in_long_turn",
    "pleasantry",
}
NEVER_CONTRADICTION = {"question_request", "unrelated"}


def _records(split: str) -> list[dict[str, str]]:
    lines = SPLITS[split].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", text.lower()).strip()


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_split_loads_through_the_eval_loader_with_valid_labels(split: str) -> None:
    pairs = load_pairs(SPLITS[split])
    records = _records(split)
    assert len(pairs) == len(records)
    assert {p.label for p in pairs} <= set(LABELS)
    assert [(p.a, p.b, p.label) for p in pairs] == [(r["a"], r["b"], r["label"]) for r in records]
    assert {r["style"] for r in records} == STYLES
    assert {r["kind"] for r in records} == KINDS_WITH_BOTH_LABELS | NEVER_CONTRADICTION


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_every_kind_has_both_labels_and_both_styles(split: str) -> None:
    records = _records(split)
    for kind in KINDS_WITH_BOTH_LABELS | NEVER_CONTRADICTION:
        rows = [r for r in records if r["kind"] == kind]
        labels = {r["label"] for r in rows}
        assert {r["style"] for r in rows} == STYLES, kind
        if kind in NEVER_CONTRADICTION:
            assert "contradiction" not in labels, kind
        else:
            assert "contradiction" in labels, kind
            assert labels - {"contradiction"}, kind


def test_sizes_and_label_shares() -> None:
    dev, test = _records("dev"), _records("test")
    assert len(dev) + len(test) >= 360
    assert 0.35 <= len(dev) / (len(dev) + len(test)) <= 0.45
    labels = Counter(r["label"] for r in dev + test)
    assert 0.40 <= labels["contradiction"] / (len(dev) + len(test)) <= 0.50


def test_no_duplicate_pairs_and_nothing_shared_between_splits() -> None:
    seen: set[frozenset[str]] = set()
    sentences = {}
    for split in sorted(SPLITS):
        sentences[split] = set()
        for record in _records(split):
            key = frozenset((_norm(record["a"]), _norm(record["b"])))
            assert key not in seen, (split, record["a"], record["b"])
            seen.add(key)
            sentences[split] |= key
    assert not sentences["dev"] & sentences["test"]
