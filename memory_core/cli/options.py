"""Options shared by subcommands: ``--params FILE.toml``, ``--set key=value``, ``--embedder``."""

from __future__ import annotations

import argparse

from memory_core.config import AtlasConfig
from memory_core.embedding.base import Embedder

EMBEDDERS = ("minilm", "hashing")


def add_config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params", help="TOML file with AtlasConfig fields (an [atlas] table or top level)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config field, e.g. --set max_nodes=150 (repeatable)",
    )
    parser.add_argument(
        "--embedder",
        choices=EMBEDDERS,
        default="minilm",
        help="minilm (default, real model) or hashing (fast fake for tests only)",
    )


def config_from_args(args: argparse.Namespace) -> AtlasConfig:
    config = AtlasConfig.from_toml(args.params) if args.params else AtlasConfig()
    return config.with_overrides(list(args.overrides))


def embedder_from_args(args: argparse.Namespace) -> Embedder:
    if args.embedder == "hashing":
        from memory_core.embedding.hashing import HashingEmbedder

        return HashingEmbedder()
    from memory_core.embedding.minilm import default_embedder

    embedder: Embedder = default_embedder()
    return embedder
