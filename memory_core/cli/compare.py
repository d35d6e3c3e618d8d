"""``atlas compare PATH... --a A.toml --b B.toml``: paired A/B over the same key facts."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memory_core.cli.harness_args import (
    POLICY_CHOICES,
    add_replay_arguments,
    progress_bar,
    replay_settings,
)
from memory_core.cli.options import add_overrides, load_config

if TYPE_CHECKING:
    from memory_core.harness.compare import Comparison


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="paired A/B comparison of two parameter sets",
        description="Replay the same conversations under A and B and compare them fact by "
        "fact: B - A with a bootstrap confidence interval, a paired test, and the facts "
        "one kept and the other lost. A and B are TOML files or preset names.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="file or folder")
    parser.add_argument("--a", required=True, help="TOML file or preset name for arm A")
    parser.add_argument("--b", required=True, help="TOML file or preset name for arm B")
    for arm in ("a", "b"):
        parser.add_argument(
            f"--{arm}-policy",
            choices=POLICY_CHOICES,
            metavar="POLICY",
            default="atlas",
            help=f"memory policy of arm {arm.upper()} (default atlas)",
        )
    add_overrides(parser, "override a config field in both arms, e.g. --set max_nodes=150")
    add_replay_arguments(parser, policy=False)
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument("--confidence", type=float, default=0.95, help="CI level (default 0.95)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from memory_core.embedding.registry import make_embedder
    from memory_core.harness.compare import Arm, compare  # SciPy: slow to import
    from memory_core.harness.session_format import load_conversations

    conversations = load_conversations(args.paths)
    arm_a = Arm(
        _label(args.a, args.a_policy),
        load_config(args.a, args.overrides),
        replay_settings(args, args.a_policy),
    )
    arm_b = Arm(
        _label(args.b, args.b_policy),
        load_config(args.b, args.overrides),
        replay_settings(args, args.b_policy),
    )
    with progress_bar(conversations * 2, enabled=not args.json, label="compare") as progress:
        result = compare(
            conversations,
            arm_a,
            arm_b,
            embedder=make_embedder(args.embedder),
            resamples=args.resamples,
            confidence=args.confidence,
            progress=progress,
        )
    if args.json:
        json.dump(result.to_dict(), sys.stdout, indent=2, default=str)
        print()
    else:
        print(render(result))
    return 0


def render(result: Comparison) -> str:
    """The differences, then the facts that changed sides."""
    level = f"{100 * result.confidence:g}% CI"
    lines = [f"A = {result.a}\nB = {result.b}\n"]
    lines.append(f"{'metric':22} {'n':>4} {'A':>7} {'B':>7} {'B-A':>8}  {level:>19}  p (test)")
    for d in result.diffs:
        lines.append(
            f"{d.metric:22} {d.n:4d} {d.mean_a:7.3f} {d.mean_b:7.3f} {d.diff:+8.3f}  "
            f"[{d.ci_low:+.3f}, {d.ci_high:+.3f}]  {d.p_value:.4f} ({d.test})"
        )
    for title, swings in (("A right, B wrong", result.a_only), ("B right, A wrong", result.b_only)):
        lines.append(f"\n{title}: {len(swings)}")
        lines.extend(
            f"  {s.conversation_id}/{s.fact_id} [{s.expect}] rank A {s.rank_a or '-'}, "
            f"B {s.rank_b or '-'}: {s.fact}"
            for s in swings
        )
    return "\n".join(lines)


def _label(source: str, policy: str) -> str:
    return source if policy == "atlas" else f"{policy} ({source})"
