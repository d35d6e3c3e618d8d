"""The ``atlas`` command. Each subcommand lives in its own module with ``register(subparsers)``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from memory_core.errors import AtlasError

# module names under memory_core.cli; each defines register(subparsers) which sets func=...
COMMAND_MODULES: tuple[str, ...] = (
    "config",
    "validate",
    "import_cmd",
    "knowledge",
    "eval_conflicts",
    "mcp",
    "simulate",
    "compare",
    "sweep",
    "users",
    "context",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="atlas", description="Elastic Atlas memory engine tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"memory_core.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except AtlasError as exc:
        print(f"atlas: error: {exc}", file=sys.stderr)
        return 2
