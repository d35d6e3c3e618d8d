"""Arguments and helpers shared by ``atlas simulate``, ``compare`` and ``sweep``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from memory_core.cli.options import LazyChoices, add_embedder_option, positive_int

if TYPE_CHECKING:
    from memory_core.harness.replay import Progress, ProgressCallback, ReplaySettings
    from memory_core.harness.session_format import Conversation


def _policies() -> list[str]:
    from memory_core.harness.policies import POLICIES

    return list(POLICIES)


POLICY_CHOICES = LazyChoices(_policies)


def add_replay_arguments(parser: argparse.ArgumentParser, *, policy: bool = True) -> None:
    """``--policy``, ``--top-k``, ``--context-k``, ``--capacity-fraction``, ``--embedder``."""
    if policy:
        parser.add_argument(
            "--policy",
            choices=POLICY_CHOICES,
            metavar="POLICY",
            default="atlas",
            help="memory policy to replay: %(choices)s (default atlas; the others are baselines)",
        )
    parser.add_argument(
        "--top-k", type=positive_int, default=10, help="probe depth for recall@k (default 10)"
    )
    parser.add_argument(
        "--context-k",
        type=positive_int,
        default=5,
        help="memories retrieved per turn by the simulated agent (default 5)",
    )
    parser.add_argument(
        "--capacity-fraction",
        type=float,
        help="set max_nodes per conversation to this share of its turns, e.g. 0.25",
    )
    parser.add_argument(
        "--conflicts",
        action="store_true",
        help="write through the conflict guard: contradictions resolved automatically",
    )
    add_embedder_option(parser)


def replay_settings(args: argparse.Namespace, policy: str | None = None) -> ReplaySettings:
    from memory_core.harness.replay import ReplaySettings

    return ReplaySettings(
        policy=policy or str(getattr(args, "policy", "atlas")),
        top_k=args.top_k,
        context_k=args.context_k,
        link_top=min(3, args.context_k),
        capacity_fraction=args.capacity_fraction,
        conflicts=bool(getattr(args, "conflicts", False)),
    )


@contextmanager
def progress_bar(
    conversations: Sequence[Conversation], *, enabled: bool = True, label: str = "replay"
) -> Iterator[ProgressCallback | None]:
    """A tqdm bar on stderr counting turns; None when disabled or stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    total = sum(len(s.turns) for c in conversations for s in c.sessions)
    with tqdm(total=total, desc=label, unit="turn", file=sys.stderr, leave=False) as bar:

        def update(p: Progress) -> None:
            bar.set_postfix_str(p.conversation_id, refresh=False)
            bar.update(1)

        yield update
