"""``atlas sweep PATH... --trials N``: Optuna search for recall vs memory size."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memory_core.cli.harness_args import add_replay_arguments, replay_settings
from memory_core.cli.options import add_overrides, load_config

if TYPE_CHECKING:
    from memory_core.harness.sweep import SweepResult


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="Optuna sweep: maximise recall, minimise memory size",
        description="Multi-objective Optuna study over the engine's parameters. Workers on "
        "this or other machines join one study through --storage (an SQLAlchemy URL: "
        "sqlite:///sweeps.sqlite locally, postgresql+psycopg://... for a team).",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="file or folder")
    parser.add_argument("--trials", type=int, required=True, help="trials to run (in total)")
    parser.add_argument("--storage", help="Optuna RDB storage URL (default: in memory)")
    parser.add_argument("--study", default="atlas-sweep", help="study name (default atlas-sweep)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--params", type=Path, help="TOML file or preset: the fixed base")
    add_overrides(parser, "override a base config field, e.g. --set max_nodes=150")
    parser.add_argument(
        "--search",
        help="comma-separated fields to search (default: the whole search space; "
        "an unknown name is refused with the list of sweepable fields)",
    )
    parser.add_argument("--seed", type=int, default=0, help="sampler seed (default 0)")
    parser.add_argument("--export-best", type=Path, help="write the best trial's config as TOML")
    add_replay_arguments(parser, policy=False)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from memory_core.harness.sweep import best_config, spec_for, sweep  # Optuna: slow to import

    base = load_config(args.params, args.overrides)
    settings = replay_settings(args)
    search = [s.strip() for s in args.search.split(",") if s.strip()] if args.search else None
    spec = spec_for(
        args.paths, base, settings, embedder=args.embedder, params=search, seed=args.seed
    )
    show = not args.json and sys.stderr.isatty()
    result = sweep(
        spec,
        trials=args.trials,
        storage=args.storage,
        study_name=args.study,
        workers=args.workers,
        on_trial=(lambda n: print(f"\rtrials finished: {n}", end="", file=sys.stderr))
        if show
        else None,
    )
    if show:
        print(file=sys.stderr)
    if args.export_best and result.pareto:
        args.export_best.write_text(best_config(result, base).to_toml(), encoding="utf-8")
    if args.json:
        json.dump(result.to_dict(), sys.stdout, indent=2, default=str)
        print()
    else:
        print(render(result))
    return 0


def render(result: SweepResult) -> str:
    lines = [
        f"study {result.study_name!r}: {result.trials} finished trials "
        f"({result.wall_seconds:.1f} s this run)",
        "\nPareto front (recall@k up, memory fraction down):",
        f"{'trial':>6} {'recall':>7} {'memory':>7}  params",
    ]
    for row in result.pareto:
        params = ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.params.items()
        )
        lines.append(f"{row.number:6d} {row.recall_at_k:7.3f} {row.memory_fraction:7.3f}  {params}")
    if result.importances:
        lines.append("\nparameter importance for recall (fANOVA):")
        lines.extend(f"  {k:24} {v:.3f}" for k, v in result.importances.items())
    return "\n".join(lines)
