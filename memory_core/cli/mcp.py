"""``atlas mcp``: serve one atlas to MCP clients over stdio or streamable HTTP (loopback)."""

from __future__ import annotations

import argparse
import logging
import sys

from memory_core.cli.options import add_config_options, config_from_args, embedder_from_args


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout belongs to the protocol
    from memory_core.cli.mcp_server import (
        build_server,  # the MCP SDK is slow to import: only when serving
    )
    from memory_core.engine.atlas import ElasticMemoryAtlas

    atlas = ElasticMemoryAtlas(config_from_args(args), embedder=embedder_from_args(args))
    server = build_server(atlas)
    if atlas.config.context_graph:  # the context graph's parser and examples: not on turn 1
        from memory_core.context import warm

        warm(atlas.embedder)
    recorder = None
    if args.record:
        from memory_core.store.live import LiveRecorder

        recorder = LiveRecorder.start(
            atlas,
            url=args.database,
            name=args.name,
            snapshot_every=args.snapshot_every,
            snapshot_events=args.snapshot_events,
            keep_snapshots=args.keep_snapshots,
        )
    try:
        if args.transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=args.host, port=args.port)
    finally:
        if recorder is not None:
            recorder.close()
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("mcp", help="serve an atlas over the Model Context Protocol")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument(
        "--host", default="127.0.0.1", help="HTTP bind address (loopback by default)"
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--record",
        action="store_true",
        help="record events (replayable by a follower) and checkpoint snapshots to the database",
    )
    parser.add_argument(
        "--database",
        default=None,
        help="database URL (default: ATLAS_DATABASE_URL or data/atlas.db)",
    )
    parser.add_argument("--name", default="mcp", help="name of the recorded atlas in the dashboard")
    parser.add_argument(
        "--snapshot-every",
        type=float,
        default=60.0,
        help="seconds between checkpoint snapshots while the atlas changes "
        "(default 60; followers apply the events between)",
    )
    parser.add_argument(
        "--snapshot-events",
        type=int,
        default=20_000,
        help="checkpoint early once this many events accumulated (default 20000)",
    )
    parser.add_argument(
        "--keep-snapshots",
        type=int,
        default=5,
        help="live snapshots kept in the database; older ones are deleted (default 5)",
    )
    add_config_options(parser)
    parser.set_defaults(func=run)
