"""``atlas eval-conflicts FILE.jsonl``: precision, recall and confusion matrix of a judge."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memory_core.conflicts.evaluation import EvalReport, evaluate, load_pairs
from memory_core.conflicts.judge import DEFAULT_JUDGE, JUDGES, make_judge
from memory_core.conflicts.verdict import LABELS


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "eval-conflicts",
        help="measure a contradiction judge on labelled pairs",
        description="Run a contradiction judge on a JSONL file of labelled pairs "
        '({"a": ..., "b": ..., "label": "contradiction"|"compatible"|"unrelated"}) and '
        "print precision/recall/F1 for contradictions, accuracy and the confusion matrix.",
    )
    parser.add_argument("file", type=Path, metavar="FILE.jsonl", help="labelled pairs")
    parser.add_argument(
        "--judge",
        default=DEFAULT_JUDGE,
        choices=sorted(JUDGES),
        help=f"judge to evaluate (default {DEFAULT_JUDGE})",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        type=judge_option,
        metavar="KEY=VALUE",
        help="judge option, repeatable; VALUE is read as JSON when it parses "
        "(e.g. --option base_url=http://127.0.0.1:8000/v1 --option timeout=10)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--mistakes", action="store_true", help="also list every pair the judge got wrong"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    pairs = load_pairs(args.file)
    judge = make_judge(args.judge, **dict(args.option))
    try:
        report = evaluate(judge, pairs)
    finally:
        judge.close()  # judges holding connections release them
    if args.json:
        summary = report.to_dict()
        if args.mistakes:
            summary["mistakes"] = _mistake_records(report)
        print(json.dumps(summary, indent=2))
    else:
        print(format_report(report, mistakes=args.mistakes))
    return 0


def format_report(report: EvalReport, *, mistakes: bool = False) -> str:
    """The human-readable table printed without ``--json``."""
    width = max(len(label) for label in LABELS) + 2
    lines = [
        f"judge {report.judge}: {report.n} pairs",
        f"contradiction precision {report.precision:.3f}  recall {report.recall:.3f}  "
        f"f1 {report.f1:.3f}  accuracy {report.accuracy:.3f}",
        "",
        "expected \\ predicted".ljust(22) + "".join(label.rjust(width) for label in LABELS),
    ]
    for expected in LABELS:
        row = report.confusion[expected]
        lines.append(expected.ljust(22) + "".join(str(row[p]).rjust(width) for p in LABELS))
    if mistakes:
        lines += ["", f"{len(report.mistakes)} mistake(s):"]
        for record in _mistake_records(report):
            lines.append(
                f"  line {record['line']}: expected {record['expected']}, got "
                f"{record['predicted']} ({record['score']:.2f}): {record['a']!r} / "
                f"{record['b']!r} - {record['reason']}"
            )
    return "\n".join(lines)


def _mistake_records(report: EvalReport) -> list[dict[str, Any]]:
    return [
        {
            "line": m.pair.line,
            "a": m.pair.a,
            "b": m.pair.b,
            "expected": m.pair.label,
            "predicted": m.verdict.label,
            "score": round(m.verdict.score, 4),
            "reason": m.verdict.reason,
        }
        for m in report.mistakes
    ]


def judge_option(text: str) -> tuple[str, Any]:
    """A judge option given as ``KEY=VALUE`` on the command line (VALUE read as JSON when it
    parses: ``cross_encoder=false``, ``threshold=0.6``), for argparse."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value
