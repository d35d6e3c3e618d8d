"""``atlas context FILE... [--json]``: replay atlas-session/1 files into task context graphs.

Each conversation's turns (all its sessions, in order) are extracted in one batch and
inserted into one graph; ``--json`` prints ``{"conversations": [{"id", "nodes", "edges"}]}``
for tools and tests, otherwise a table per conversation. Invalid files are refused with
the session format's errors, before anything is parsed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memory_core.cli.options import add_embedder_option, positive_int
from memory_core.harness.session_format import DEFAULT_MAX_BYTES, load_conversations, session_files


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "context",
        help="replay session files into task context graphs",
        description="Replay atlas-session/1 files (or folders of them) into task context "
        "graphs: goals, constraints (the one in force and the ones it replaced), entities.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="FILE", help="file or folder")
    parser.add_argument("--json", action="store_true", help="print the graphs as JSON")
    parser.add_argument(
        "--max-bytes",
        type=positive_int,
        default=DEFAULT_MAX_BYTES,
        help=f"refuse files larger than this (default {DEFAULT_MAX_BYTES})",
    )
    add_embedder_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from memory_core.context import Extractor
    from memory_core.context.replay import TurnInput, graph_json, replay
    from memory_core.embedding.registry import make_embedder

    conversations = load_conversations(session_files(args.paths), max_bytes=args.max_bytes)
    extractor = Extractor(make_embedder(args.embedder))
    out: list[dict[str, Any]] = []
    for conversation in conversations:
        turns = [
            TurnInput(t.id, t.speaker, t.text, t.at) for s in conversation.sessions for t in s.turns
        ]
        context, _ = replay(turns, extractor, user=conversation.id)
        out.append({"id": conversation.id, **graph_json(context, [t.id for t in turns])})
    if args.json:
        print(json.dumps({"conversations": out}, ensure_ascii=False, indent=1))
    else:
        for graph in out:
            _print_table(graph)
    return 0


def _print_table(conversation: dict[str, Any]) -> None:
    nodes = conversation["nodes"]
    print(
        f"conversation {conversation['id']}: {len(nodes)} nodes, {len(conversation['edges'])} edges"
    )
    print(f"  {'type':<11} {'state':<12} {'turns':<14} label")
    for node in nodes:
        state = (
            "forgotten"
            if node["soft_deleted"]
            else "replaced"
            if node["deprecated"]
            else "in force"
        )
        turns = ",".join(str(t) for t in node["turns"][:4]) + (
            "…" if len(node["turns"]) > 4 else ""
        )
        print(f"  {node['type']:<11} {state:<12} {turns:<14} {node['label']}")
    labels = {n["id"]: n["label"] for n in nodes}
    for edge in conversation["edges"]:
        if edge["deprecated"] or edge["soft_deleted"]:
            continue
        print(f"  {labels[edge['source']]} -[{edge['type']}]-> {labels[edge['target']]}")
