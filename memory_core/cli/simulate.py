"""``atlas simulate PATH...``: replay conversations and print recall, retention and more."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_core.cli.harness_args import add_replay_arguments, progress_bar, replay_settings
from memory_core.cli.options import add_overrides, load_config

if TYPE_CHECKING:
    from memory_core.harness.metrics import ConversationResult


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="replay conversations and measure key-fact recall",
        description="Replay atlas-session/1 conversations through a memory policy and "
        "report recall@k, retention, MRR and forgetting precision of their key facts.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="file or folder")
    parser.add_argument("--params", type=Path, help="TOML file of AtlasConfig fields")
    add_overrides(parser)
    add_replay_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--trajectories",
        action="store_true",
        help="include per-fact weight trajectories in --json output",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from memory_core.embedding.registry import make_embedder
    from memory_core.harness.metrics import summarize
    from memory_core.harness.replay import replay_all
    from memory_core.harness.session_format import load_conversations

    config = load_config(args.params, args.overrides)
    settings = replay_settings(args)
    conversations = load_conversations(args.paths)
    embedder = make_embedder(args.embedder)
    with progress_bar(conversations, enabled=not args.json) as progress:
        results = replay_all(
            conversations, config, settings=settings, embedder=embedder, progress=progress
        )
    summary = summarize(results)
    if args.json:
        payload = {
            "policy": settings.policy,
            "top_k": settings.top_k,
            "config": config.to_dict(),
            "summary": summary.to_dict(),
            "conversations": [r.to_dict(trajectories=args.trajectories) for r in results],
        }
        json.dump(payload, sys.stdout, indent=2, default=str)
        print()
    else:
        print(render_table(results))
        s = summary
        print(
            f"\nall {s.conversations} conversations ({s.facts} facts): "
            f"recall@{settings.top_k} {_pct(s.recall_at_k)}  retention {_pct(s.retention)}  "
            f"MRR {_num(s.mrr)}  forgetting precision {_pct(s.forgetting_precision)}  "
            f"mean final nodes {s.final_nodes:.1f}  {s.wall_seconds:.2f} s"
        )
        if s.reads:
            print(
                f"agreement@k {_pct(s.agreement_at_k)} over {s.reads} recorded reads: "
                "of the memories the agent got back, the share that comes back here too"
            )
    return 0


def render_table(results: list[ConversationResult]) -> str:
    """One line per conversation."""
    head = (
        f"{'conversation':30} {'turns':>5} {'max':>5} {'recall':>7} {'retain':>7} "
        f"{'MRR':>6} {'forget':>7} {'nodes':>6} {'secs':>6}  evictions"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        evictions = ", ".join(f"{k} {v}" for k, v in sorted(r.evictions.items())) or "-"
        lines.append(
            f"{r.conversation_id[:30]:30} {r.turns:5d} {r.max_nodes or '-':>5} "
            f"{_pct(r.recall_at_k):>7} {_pct(r.retention):>7} {_num(r.mrr):>6} "
            f"{_pct(r.forgetting_precision):>7} {r.final_nodes:6d} {r.wall_seconds:6.2f}  "
            f"{evictions}"
        )
    return "\n".join(lines)


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"
