"""Measure a judge on labelled pairs: precision/recall for contradictions, a confusion matrix.

Pairs are JSONL lines ``{"a": "...", "b": "...", "label": "contradiction" | "compatible" |
"unrelated"}``; ``tests/data/conflict_pairs*.jsonl`` are the project's sets.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from memory_core.conflicts.verdict import LABELS, ContradictionJudge, Label, Verdict
from memory_core.errors import InputError

POSITIVE: Label = "contradiction"


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """One labelled pair; ``line`` is its 1-based line in the source file (0 if none)."""

    a: str
    b: str
    label: Label
    line: int = 0


@dataclass(frozen=True, slots=True)
class Mistake:
    """A pair the judge got wrong, with its verdict for inspection."""

    pair: LabelledPair
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Quality of one judge on one set of pairs.

    ``confusion[expected][predicted]`` counts pairs; precision, recall and f1 are for the
    contradiction class (0.0 when undefined, e.g. no predicted contradictions).
    """

    judge: str
    n: int
    precision: float
    recall: float
    f1: float
    accuracy: float
    confusion: dict[str, dict[str, int]]
    mistakes: tuple[Mistake, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON summary printed by ``atlas eval-conflicts --json``."""
        return {
            "judge": self.judge,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "n": self.n,
            "accuracy": round(self.accuracy, 4),
            "confusion": self.confusion,
        }


def evaluate(judge: ContradictionJudge, pairs: Sequence[LabelledPair]) -> EvalReport:
    """Run ``judge`` on every pair and score it.

    Raises:
        InputError: ``pairs`` is empty.
    """
    if not pairs:
        raise InputError("pairs", "need at least one labelled pair to evaluate")
    confusion: dict[str, dict[str, int]] = {e: dict.fromkeys(LABELS, 0) for e in LABELS}
    mistakes: list[Mistake] = []
    for pair in pairs:
        verdict = judge.judge(pair.a, pair.b)
        confusion[pair.label][verdict.label] += 1
        if verdict.label != pair.label:
            mistakes.append(Mistake(pair, verdict))
    true_pos = confusion[POSITIVE][POSITIVE]
    predicted = sum(row[POSITIVE] for row in confusion.values())
    actual = sum(confusion[POSITIVE].values())
    precision = true_pos / predicted if predicted else 0.0
    recall = true_pos / actual if actual else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    correct = sum(confusion[label][label] for label in LABELS)
    return EvalReport(
        judge=judge.name,
        n=len(pairs),
        precision=precision,
        recall=recall,
        f1=f1,
        accuracy=correct / len(pairs),
        confusion=confusion,
        mistakes=tuple(mistakes),
    )


def load_pairs(path: str | Path) -> list[LabelledPair]:
    """Read a JSONL file of labelled pairs; blank lines are skipped.

    Raises:
        InputError: the file cannot be read, or a line is not a valid pair (the message
            names the file and line number; nothing is returned).
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(source), f"cannot read labelled pairs: {exc}") from exc
    pairs = list(parse_pairs(text.splitlines(), source=str(source)))
    if not pairs:
        raise InputError(str(source), "contains no labelled pairs")
    return pairs


def parse_pairs(lines: Iterable[str], *, source: str = "<pairs>") -> Iterable[LabelledPair]:
    """Parse JSONL lines into pairs, raising on the first bad line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(where, f"not valid JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise InputError(where, "expected an object with keys a, b, label")
        for key in ("a", "b"):
            value = record.get(key)
            if not isinstance(value, str) or not value.strip():
                raise InputError(where, f"'{key}' must be a non-empty string")
        label = record.get("label")
        if label not in LABELS:
            raise InputError(where, f"'label' is {label!r}; allowed: {', '.join(LABELS)}")
        yield LabelledPair(record["a"], record["b"], cast(Label, label), number)
