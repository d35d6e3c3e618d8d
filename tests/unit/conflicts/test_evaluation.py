"""Scoring arithmetic and the labelled-pairs loader with its line-numbered errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.conflicts import LabelledPair, Verdict, evaluate, load_pairs, parse_pairs
from memory_core.conflicts.verdict import BaseJudge
from memory_core.errors import InputError


class TableJudge(BaseJudge):
    """Answers from a fixed table: lets the tests know the exact confusion matrix."""

    name = "table"

    def __init__(self, answers: dict[str, str]) -> None:
        self._answers = answers

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        label = self._answers[a]
        return Verdict(label, 0.9 if label == "contradiction" else 0.1, "table")  # type: ignore[arg-type]


def _pairs(*rows: tuple[str, str]) -> list[LabelledPair]:
    return [LabelledPair(a, "b", label, n) for n, (a, label) in enumerate(rows, 1)]  # type: ignore[arg-type]


def test_metrics_and_confusion_matrix() -> None:
    pairs = _pairs(
        ("c1", "contradiction"),
        ("c2", "contradiction"),
        ("c3", "contradiction"),
        ("p1", "compatible"),
        ("p2", "compatible"),
        ("u1", "unrelated"),
    )
    judge = TableJudge(
        {
            "c1": "contradiction",
            "c2": "contradiction",
            "c3": "compatible",
            "p1": "contradiction",
            "p2": "compatible",
            "u1": "compatible",
        }
    )
    report = evaluate(judge, pairs)
    assert report.n == 6
    assert report.precision == pytest.approx(2 / 3)
    assert report.recall == pytest.approx(2 / 3)
    assert report.f1 == pytest.approx(2 / 3)
    assert report.accuracy == pytest.approx(3 / 6)
    assert report.confusion == {
        "contradiction": {"contradiction": 2, "compatible": 1, "unrelated": 0},
        "compatible": {"contradiction": 1, "compatible": 1, "unrelated": 0},
        "unrelated": {"contradiction": 0, "compatible": 1, "unrelated": 0},
    }
    assert [m.pair.a for m in report.mistakes] == ["c3", "p1", "u1"]
    summary = report.to_dict()
    assert set(summary) == {"judge", "precision", "recall", "f1", "n", "accuracy", "confusion"}
    assert summary["precision"] == 0.6667


def test_no_predicted_contradictions_gives_zero_precision_not_a_crash() -> None:
    report = evaluate(TableJudge({"c": "compatible"}), _pairs(("c", "contradiction")))
    assert (report.precision, report.recall, report.f1) == (0.0, 0.0, 0.0)


def test_evaluate_needs_pairs() -> None:
    with pytest.raises(InputError, match="at least one"):
        evaluate(TableJudge({}), [])


def test_load_pairs_reads_lines_and_skips_blanks(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        '{"a": "x", "b": "y", "label": "compatible"}\n\n'
        '{"a": "p", "b": "q", "label": "unrelated", "note": "extra keys are fine"}\n',
        encoding="utf-8",
    )
    assert load_pairs(path) == [
        LabelledPair("x", "y", "compatible", 1),
        LabelledPair("p", "q", "unrelated", 3),
    ]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('["a", "b"]', "expected an object with keys a, b, label"),
        ('{"b": "y", "label": "compatible"}', "'a' must be a non-empty string"),
        ('{"a": "x", "b": " ", "label": "compatible"}', "'b' must be a non-empty string"),
        ('{"a": "x", "b": "y", "label": "maybe"}', "'label' is 'maybe'; allowed: contradiction"),
        ('{"a": "x", "b": "y"}', "'label' is None"),
    ],
)
def test_bad_lines_are_reported_with_their_line_number(line: str, problem: str) -> None:
    good = '{"a": "x", "b": "y", "label": "compatible"}'
    with pytest.raises(InputError) as info:
        list(parse_pairs([good, good, line], source="set.jsonl"))
    assert info.value.field == "set.jsonl:3"
    assert problem in info.value.problem


def test_load_pairs_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read labelled pairs"):
        load_pairs(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="contains no labelled pairs"):
        load_pairs(empty)


@pytest.mark.parametrize(
    "name",
    [
        "conflict_pairs.jsonl",
        "conflict_pairs_holdout.jsonl",
        "conflict_pairs_fresh.jsonl",
        "conflict_pairs_long_turns.jsonl",
    ],
)
def test_shipped_sets_are_valid_and_balanced(name: str) -> None:
    pairs = load_pairs(Path(__file__).resolve().parents[2] / "data" / name)
    share = {
        label: sum(p.label == label for p in pairs) / len(pairs)
        for label in ("contradiction", "compatible", "unrelated")
    }
    assert 0.3 <= share["contradiction"] <= 0.5
    assert 0.25 <= share["compatible"] <= 0.45
    assert 0.15 <= share["unrelated"] <= 0.35
    assert len({(p.a, p.b) for p in pairs}) == len(pairs)
