"""The anchored pair sets: references only, the fixed split, and the loader's checks.

The structure tests read both files (no judge runs on the test split here); the loader is
exercised on a small made-up conversation, and on the real dev folder when it is present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import anchored_pairs
from benchmarks.anchored_pairs import (
    KIND_LABELS,
    load_anchored,
    render,
    split_of,
    tally,
    text_digest,
)
from memory_core.conflicts.evaluation import evaluate
from memory_core.conflicts.verdict import BaseJudge, Verdict
from memory_core.errors import InputError

DATA = Path(__file__).resolve().parents[3] / "tests" / "data"
SPLITS = {"dev": DATA / "anchored_pairs_dev.jsonl", "test": DATA / "anchored_pairs_test.jsonl"}
KEYS = {"conversation", "dia_id", "a_sha256", "b", "label", "kind", "style"}


def records(split: str) -> list[dict[str, Any]]:
    lines = SPLITS[split].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_lines_hold_a_reference_not_the_turn_and_a_label_that_fits_the_kind(split: str) -> None:
    for record in records(split):
        assert set(record) == KEYS, record  # no "a": the real turn stays in ../shared
        assert record["label"] == KIND_LABELS[record["kind"]], record
        assert record["style"] in ("casual", "assistant")
        assert len(record["a_sha256"]) == anchored_pairs.HASH_DIGITS


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_every_line_sits_on_the_side_the_fixed_rule_gives_its_anchor(split: str) -> None:
    assert {split_of(r["conversation"], r["dia_id"]) for r in records(split)} == {split}


def test_both_sides_cover_every_kind_in_both_styles_and_no_pair_repeats() -> None:
    everything = [r for split in SPLITS for r in records(split)]
    for split in SPLITS:
        cells = {(r["kind"], r["style"]) for r in records(split)}
        assert cells == {(k, s) for k in KIND_LABELS for s in ("casual", "assistant")}, split
    keys = [(r["conversation"], r["dia_id"], r["b"]) for r in everything]
    assert len(keys) == len(set(keys))
    assert len(everything) >= 200


def fake_conversation(folder: Path) -> None:
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I live in Oslo with my two cats."},
        {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a cat"},
    ]
    conversation = {"speaker_a": "Ann", "speaker_b": "Bo", "session_1": turns}
    (folder / "7.json").write_text(json.dumps(conversation), encoding="utf-8")


def write_pairs(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def row(b: str, kind: str, digest: str | None = None, dia_id: str = "D1:1") -> dict[str, Any]:
    text = "I live in Oslo with my two cats."
    return {
        "conversation": "7",
        "dia_id": dia_id,
        "a_sha256": digest or text_digest(text),
        "b": b,
        "label": KIND_LABELS[kind],
        "kind": kind,
        "style": "casual",
    }


def test_loader_resolves_the_turn_and_keeps_kind_style_and_line(tmp_path: Path) -> None:
    fake_conversation(tmp_path)
    path = write_pairs(tmp_path / "p.jsonl", row("I live in Lima", "value_reworded"))
    (item,) = load_anchored(path, tmp_path) or []
    assert item.pair.a == "I live in Oslo with my two cats."
    assert (item.pair.label, item.kind, item.style, item.anchor) == (
        "contradiction",
        "value_reworded",
        "casual",
        "7:D1:1",
    )
    assert item.pair.line == 1


def test_a_changed_turn_or_an_unknown_turn_is_an_error_naming_the_line(tmp_path: Path) -> None:
    fake_conversation(tmp_path)
    changed = write_pairs(tmp_path / "c.jsonl", row("x", "elaboration", digest="0" * 16))
    with pytest.raises(InputError, match=r"c\.jsonl:1"):
        load_anchored(changed, tmp_path)
    unknown = write_pairs(tmp_path / "u.jsonl", row("x", "elaboration", dia_id="D9:9"))
    with pytest.raises(InputError, match="no turn 'D9:9'"):
        load_anchored(unknown, tmp_path)
    no_reference = write_pairs(tmp_path / "n.jsonl", {"a": "text", "b": "x", "label": "compatible"})
    with pytest.raises(InputError, match=r"n\.jsonl:1: .*conversation, dia_id, a_sha256"):
        load_anchored(no_reference, tmp_path)


def test_without_the_data_folder_nothing_is_loaded_and_the_command_exits_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_pairs(tmp_path / "p.jsonl", row("x", "elaboration"))
    assert load_anchored(path, tmp_path / "missing") is None
    assert anchored_pairs.main([str(path), "--data", str(tmp_path / "missing")]) == 0
    assert "nothing to evaluate" in capsys.readouterr().err


class SaysContradiction(BaseJudge):
    """A judge that calls every pair mentioning Lima a contradiction."""

    name = "lima"

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        if "Lima" in b:
            return Verdict("contradiction", 0.9, "Lima")
        return Verdict("compatible", 0.1, "no")


def test_tally_counts_per_kind_style_shape_and_all(tmp_path: Path) -> None:
    fake_conversation(tmp_path)
    path = write_pairs(
        tmp_path / "p.jsonl",
        row("I live in Lima now", "value_reworded"),
        row("my sister lives in Lima", "other_person"),
        row("I live in Paris", "value_reworded"),
    )
    pairs = load_anchored(path, tmp_path) or []
    rows = {
        r.group: r for r in tally(pairs, evaluate(SaysContradiction(), [p.pair for p in pairs]))
    }
    value = rows["kind: value_reworded"]
    assert (value.pairs, value.contradictions, value.true_pos, value.false_pos) == (2, 2, 1, 0)
    assert rows["kind: other_person"].false_pos == 1
    assert rows["anchor: one sentence"].pairs == 3
    assert (rows["all"].precision, rows["all"].recall) == (0.5, 0.5)
    assert "| kind: value_reworded | 2 | 2 | 1.00 | 0.50 (1/2) | 0 |" in render(rows.values())


@pytest.mark.skipif(not anchored_pairs.DEFAULT_DATA.is_dir(), reason="no LoCoMo dev folder")
@pytest.mark.parametrize("split", sorted(SPLITS))
def test_every_reference_resolves_in_the_real_dev_folder(split: str) -> None:
    loaded = load_anchored(SPLITS[split])
    assert loaded is not None and len(loaded) == len(records(split))
