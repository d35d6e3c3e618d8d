"""Contradiction pairs anchored on real chat, scored per kind (issue #27 point 5).

``tests/data/anchored_pairs_dev.jsonl`` and ``_test.jsonl`` pair a real first-person turn
of the LoCoMo dev split with a later message written for it. The turn is stored as a
reference only (``conversation`` + ``dia_id`` + ``a_sha256``, the first 16 hex digits of
the SHA-256 of its text): the data's README forbids copies in the repository. This module
resolves the references from ``../shared/datasets/locomo-dev`` (a missing turn or a
changed text is an error, not a silent skip), runs a judge on every pair as ``atlas
eval-conflicts`` does, and prints precision / recall per kind and per style. Without the
data folder it says so and exits 0.

    python -m benchmarks.anchored_pairs tests/data/anchored_pairs_dev.jsonl --judge nli
    python -m benchmarks.anchored_pairs FILE --option cross_encoder=true --mistakes

The split rule (``split_of``): a pair belongs to dev when the first hex digit of
SHA-256(``"<conversation>:<dia_id>"``) is 0-7, else to test; all pairs of one anchor turn
share a side.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memory_core.cli.eval_conflicts import judge_option
from memory_core.conflicts.evaluation import (
    POSITIVE,
    EvalReport,
    LabelledPair,
    evaluate,
    parse_pairs,
)
from memory_core.conflicts.judge import DEFAULT_JUDGE, JUDGES, make_judge
from memory_core.conflicts.verdict import Label
from memory_core.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "datasets" / "locomo-dev"
HASH_DIGITS = 16
DEV_DIGITS = frozenset("01234567")
REFERENCE_KEYS = ("conversation", "dia_id", "a_sha256")
KIND_LABELS: dict[str, Label] = {
    "opposite": "contradiction",  # an opposite said without a negation word
    "status": "contradiction",  # a status change only world knowledge links (married / single)
    "value_reworded": "contradiction",  # another value of the same attribute, in other words
    "numeric": "contradiction",  # another count, age, duration or date
    "time_marked": "compatible",  # a different value at a clearly marked other time
    "other_person": "compatible",  # the clashing value belongs to someone else
    "elaboration": "compatible",  # more detail that fits
    "unrelated": "unrelated",  # another topic, sometimes sharing a word or number
}
"""What each kind tests and the label every pair of that kind carries."""
_SESSION = re.compile(r"session_\d+")
_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")

Split = Literal["dev", "test"]


@dataclass(frozen=True, slots=True)
class AnchoredPair:
    """A resolved pair, with what it tests (``kind``) and how the later message is written."""

    pair: LabelledPair
    kind: str
    style: str
    anchor: str  # "<conversation>:<dia_id>"


@dataclass(frozen=True, slots=True)
class Row:
    """Contradiction precision / recall of one group of pairs."""

    group: str
    pairs: int
    contradictions: int
    true_pos: int
    false_pos: int

    @property
    def precision(self) -> float | None:
        flagged = self.true_pos + self.false_pos
        return self.true_pos / flagged if flagged else None

    @property
    def recall(self) -> float | None:
        return self.true_pos / self.contradictions if self.contradictions else None


def split_of(conversation: str, dia_id: str) -> Split:
    """The fixed dev / test rule: by anchor turn, so contrast siblings stay together."""
    digest = hashlib.sha256(f"{conversation}:{dia_id}".encode()).hexdigest()
    return "dev" if digest[0] in DEV_DIGITS else "test"


def text_digest(text: str) -> str:
    """What ``a_sha256`` holds: enough of the text's hash to notice a different turn."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_DIGITS]


def conversation_turns(data: Path, conversation: str) -> dict[str, str]:
    """``dia_id`` -> the turn's own words (a shared photo's caption is not part of them).

    Raises:
        InputError: the conversation file is missing or not a LoCoMo conversation.
    """
    source = data / f"{conversation}.json"
    try:
        root = json.loads(source.read_text(encoding="utf-8"))
        return {
            turn["dia_id"]: turn["text"]
            for key, session in root.items()
            if _SESSION.fullmatch(key)
            for turn in session
        }
    except (OSError, ValueError, AttributeError, KeyError, TypeError) as exc:
        raise InputError(str(source), f"cannot read LoCoMo turns: {exc!r}") from exc


def load_anchored(path: Path, data: Path = DEFAULT_DATA) -> list[AnchoredPair] | None:
    """Resolve every reference of ``path``; None when ``data`` does not exist.

    Raises:
        InputError: a line is not a valid record, names a turn that does not exist, or
            the turn's text no longer has the recorded digest (message names file:line).
    """
    if not data.is_dir():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    turns: dict[str, dict[str, str]] = {}
    resolved: list[str] = []
    extras: list[tuple[str, str, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            resolved.append("")
            continue
        where = f"{path}:{number}"
        record = _record(line, where)
        conversation, dia_id = record["conversation"], record["dia_id"]
        if conversation not in turns:
            turns[conversation] = conversation_turns(data, conversation)
        text = turns[conversation].get(dia_id)
        if text is None:
            raise InputError(where, f"conversation {conversation} has no turn {dia_id!r}")
        if text_digest(text) != record["a_sha256"]:
            raise InputError(where, f"turn {conversation}:{dia_id} is not the text written for")
        resolved.append(json.dumps({**record, "a": text}))
        extras.append(
            (str(record.get("kind")), str(record.get("style")), f"{conversation}:{dia_id}")
        )
    pairs = list(parse_pairs(resolved, source=str(path)))
    return [
        AnchoredPair(pair, kind, style, anchor)
        for pair, (kind, style, anchor) in zip(pairs, extras, strict=True)
    ]


def _record(line: str, where: str) -> dict[str, Any]:
    """The line's object, once its reference is three non-empty strings; parse_pairs checks the rest."""
    try:
        record: dict[str, Any] = json.loads(line)
        reference = [record[key] for key in REFERENCE_KEYS]
    except (ValueError, TypeError, KeyError) as exc:
        raise InputError(where, f"expected an object with {', '.join(REFERENCE_KEYS)}") from exc
    if not all(isinstance(value, str) and value for value in reference):
        raise InputError(where, f"{', '.join(REFERENCE_KEYS)} must be non-empty strings")
    return record


def anchor_shape(text: str) -> str:
    """Whether the real turn is one sentence or a chatty turn of several (a judge's hard case)."""
    return "one sentence" if len(_SENTENCE_END.findall(text.strip())) <= 1 else "2+ sentences"


def tally(pairs: Sequence[AnchoredPair], report: EvalReport) -> list[Row]:
    """Rows per kind, per style, per anchor shape and for all pairs, from the report's mistakes."""
    predicted = {m.pair.line: m.verdict.label for m in report.mistakes}
    counts: dict[str, list[int]] = {}
    for item in pairs:
        gold = item.pair.label == POSITIVE
        flagged = predicted.get(item.pair.line, item.pair.label) == POSITIVE
        shape = anchor_shape(item.pair.a)
        for group in (f"kind: {item.kind}", f"style: {item.style}", f"anchor: {shape}", "all"):
            n = counts.setdefault(group, [0, 0, 0, 0])
            n[0] += 1
            n[1] += gold
            n[2] += gold and flagged
            n[3] += flagged and not gold
    order = sorted(counts, key=lambda g: (g == "all", not g.startswith("kind"), g))
    return [Row(g, *counts[g]) for g in order]


def render(rows: Iterable[Row]) -> str:
    """A markdown table: group, pairs, contradictions, P, R (found / all), false alarms."""
    lines = ["| group | pairs | C | P | R (found) | false alarms |", "|---|---:|---:|---|---|---:|"]
    for row in rows:
        p = "-" if row.precision is None else f"{row.precision:.2f}"
        r = "-" if row.recall is None else f"{row.recall:.2f} ({row.true_pos}/{row.contradictions})"
        lines.append(
            f"| {row.group} | {row.pairs} | {row.contradictions} | {p} | {r} | {row.false_pos} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, metavar="FILE.jsonl", help="anchored pairs")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo dev folder")
    parser.add_argument("--judge", default=DEFAULT_JUDGE, choices=sorted(JUDGES))
    parser.add_argument("--option", action="append", default=[], type=judge_option, metavar="K=V")
    parser.add_argument("--json", action="store_true", help="also print the eval-conflicts JSON")
    parser.add_argument("--mistakes", action="store_true", help="list the pairs judged wrong")
    args = parser.parse_args(argv)
    pairs = load_anchored(args.file, args.data)
    if pairs is None:
        print(f"no LoCoMo dev data at {args.data}: nothing to evaluate", file=sys.stderr)
        return 0
    judge = make_judge(args.judge, **dict(args.option))
    try:
        report = evaluate(judge, [item.pair for item in pairs])
    finally:
        judge.close()  # judges holding connections release them
    print(f"judge {report.judge} {dict(args.option)} on {args.file.name}: {report.n} pairs")
    print(render(tally(pairs, report)))
    if args.json:
        print(json.dumps(report.to_dict()))
    if args.mistakes:
        kinds = {item.pair.line: item.kind for item in pairs}
        for m in report.mistakes:
            print(
                f"line {m.pair.line} [{kinds[m.pair.line]}] expected {m.pair.label}, got "
                f"{m.verdict.label} ({m.verdict.score:.2f}): {m.pair.b!r} - {m.verdict.reason}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
