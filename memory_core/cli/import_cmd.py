"""``atlas import FORMAT FILE... --out DIR``: benchmark files and chat logs to atlas-session/1;
``atlas import recording --database URL --atlas ID --out DIR``: a recorded agent with its reads.

File formats (``IMPORTERS``) take FILE arguments; sources (``SOURCE_IMPORTERS``) take
``--database``/``--atlas`` instead. Each kind refuses the other's arguments.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memory_core.cli.options import LazyChoices, positive_int
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.harness.importers import ImportedConversation, ImportOptions
    from memory_core.harness.session_format import Conversation

    Converted = list[tuple[ImportedConversation, Conversation]]

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*")
_UNIT_SECONDS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "import",
        help="convert LoCoMo, LongMemEval, OpenAI chat files or a recorded agent to "
        "atlas-session/1",
        description="Convert conversation files, or an atlas recorded by `atlas mcp --record` "
        "(format 'recording', with --database and --atlas), to validated atlas-session/1 "
        "files named <conversation id>.json in --out. Everything is converted and validated "
        "before anything is written; nothing is written if any input is invalid. See "
        "docs/session-format.md for each format's field mapping.",
    )
    parser.add_argument(
        "format", choices=LazyChoices(_formats), metavar="FORMAT", help="one of %(choices)s"
    )
    parser.add_argument(
        "files", nargs="*", type=Path, metavar="FILE", help="input files (file formats)"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for the converted files")
    parser.add_argument("--force", action="store_true", help="overwrite existing files in --out")
    parser.add_argument(
        "--database",
        default=None,
        metavar="URL",
        help="recording: the database `atlas mcp --record` wrote to (default: "
        "ATLAS_DATABASE_URL or data/atlas.db)",
    )
    parser.add_argument(
        "--atlas",
        default=None,
        metavar="ID",
        help="recording: the recorded atlas, by id or by a name only one atlas has",
    )
    parser.add_argument(
        "--include-unanswerable",
        action="store_true",
        help="locomo, longmemeval: also import unanswerable questions (LoCoMo category 5, "
        "LongMemEval _abs) as key facts",
    )
    parser.add_argument(
        "--include-system",
        action="store_true",
        help="openai-chat: keep system, developer and tool messages as turns",
    )
    parser.add_argument(
        "--session-gap",
        type=duration,
        default=None,
        metavar="DURATION",
        help="openai-chat: a silence this long starts a new session when messages have no "
        "session field (e.g. 30m, 2h, 90s; default 30m)",
    )
    parser.add_argument(
        "--max-bytes",
        type=positive_int,
        default=None,
        help="refuse larger input files (default 1 GiB)",
    )
    parser.set_defaults(func=run)


def duration(text: str) -> float:
    """argparse type: ``90s``, ``30m``, ``2h``, ``1d`` or plain seconds, more than zero."""
    match = _DURATION.fullmatch(text)
    seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)] if match else 0.0
    if seconds <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a positive duration like 90s, 30m, 2h or 1d, got {text!r}"
        )
    return seconds


def run(args: argparse.Namespace) -> int:
    from memory_core.harness.importers import ImportOptions, write_conversations

    defaults = ImportOptions()
    options = ImportOptions(
        include_unanswerable=args.include_unanswerable,
        include_system=args.include_system,
        session_gap=args.session_gap or defaults.session_gap,
        max_bytes=args.max_bytes or defaults.max_bytes,
    )
    converted = _kind(args.format)(args, options)
    written = write_conversations([item for item, _ in converted], args.out, force=args.force)
    for (item, conv), path in zip(converted, written, strict=True):
        warning = item.warning()
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
        turns = sum(len(s.turns) for s in conv.sessions)
        left_out = []
        if item.unanswerable:
            verb = "included" if options.include_unanswerable else "left out"
            left_out.append(f"{item.unanswerable} unanswerable {verb}")
        if item.skipped_messages:
            left_out.append(f"{item.skipped_messages} messages left out")
        if conv.reads is not None:
            left_out.append(f"{len(conv.reads)} recorded reads")
        extra = "".join(f", {text}" for text in left_out)
        print(
            f"{path}: {turns} turns, {len(conv.sessions)} sessions, {len(conv.key_facts)} key "
            f"facts, {item.dropped_evidence} evidence ids and {item.dropped_facts} questions "
            f"dropped{extra} (from {item.source})"
        )
    print(f"{len(written)} conversation(s) written to {args.out}")
    return 0


def _from_files(args: argparse.Namespace, options: ImportOptions) -> Converted:
    from memory_core.harness.importers import IMPORTERS, import_files

    _refuse(args.database, "database", args.format, "FILE arguments")
    _refuse(args.atlas, "atlas", args.format, "FILE arguments")
    if not args.files:
        raise InputError("files", f"{args.format} needs at least one FILE to convert")
    return import_files(IMPORTERS[args.format], args.files, options)


def _from_source(args: argparse.Namespace, options: ImportOptions) -> Converted:
    from memory_core.harness.importers import SOURCE_IMPORTERS, Source, import_source

    _refuse(args.files or None, "files", args.format, "--database and --atlas")
    if not args.atlas:
        raise InputError("atlas", f"{args.format} needs --atlas ID (the recorded atlas)")
    source = Source(database=args.database, atlas=args.atlas)
    return import_source(SOURCE_IMPORTERS[args.format], source, options)


def _refuse(value: object, name: str, fmt: str, takes: str) -> None:
    if value is not None:
        raise InputError(name, f"{fmt} does not take {name}; it takes {takes}")


def _kind(fmt: str) -> Callable[[argparse.Namespace, ImportOptions], Converted]:
    """How a format's inputs are given: files or a source."""
    from memory_core.harness.importers import IMPORTERS, SOURCE_IMPORTERS

    kinds = {name: _from_files for name in IMPORTERS} | {
        name: _from_source for name in SOURCE_IMPORTERS
    }
    return kinds[fmt]


def _formats() -> list[str]:
    from memory_core.harness.importers import IMPORTERS, SOURCE_IMPORTERS

    return [*IMPORTERS, *SOURCE_IMPORTERS]
